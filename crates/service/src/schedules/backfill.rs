//! Backfill: every nominal time of a range decided under the trigger's DST
//! policy and business calendar, and the times that run handed to Temporal.

use std::collections::HashSet;

use chrono::{DateTime, Duration, Utc};
use uuid::Uuid;

use super::{
    BackfillOutcome, Error, MAX_TIMES, Result, Schedules, TimeOutcome, executed_times, run_trigger,
    scheduled,
};
use acp_domain::audit::{Actor, Note, Subject};
use acp_domain::backfill::{BackfillPlan, Planned, plan_backfill};
use acp_domain::business_calendar::{
    BeyondCoverage, CalendarRecord, CalendarTime, Named, apply_to_backfill, near_range,
};
use acp_domain::calendar::times_after;
use acp_domain::ids;
use acp_domain::misfire::SkipReason;
use acp_domain::timeline::TimeAction;
use acp_domain::trigger::ScheduledTrigger;

impl Schedules {
    /// Decides every nominal time in `[start, end)` under the trigger's DST
    /// policy and business calendar: the times that have not run yet run
    /// (each under its contract workflow ID), those that ran are
    /// duplicates, the times the DST policy declines are skipped with
    /// `dst_gap` or `dst_repeat`, and those the calendar keeps from running
    /// are recorded skipped with its reason (a time rolled to a business day
    /// of the range runs there, once). At most `MAX_TIMES` of the policy's
    /// times per call: a longer range is cut, and `next_start` says where to
    /// continue. `dry_run` answers the same and changes nothing.
    pub async fn backfill(
        &self,
        id: Uuid,
        start: DateTime<Utc>,
        end: DateTime<Utc>,
        dry_run: bool,
        actor: &Actor,
    ) -> Result<BackfillOutcome> {
        if end <= start {
            return Err(Error::invalid("end", "must be after start"));
        }
        let activity = self.activities.get_in(id, &actor.project).await?;
        let trigger = scheduled(&activity)?;
        // Where the range is cut does not depend on what ran: read only the
        // runs of the part that is decided.
        let cut = plan_backfill(trigger, start, end, &HashSet::new(), MAX_TIMES).next_start;
        let ran = executed_times(
            self.runs
                .scheduled_between(id, start, cut.unwrap_or(end))
                .await?,
        );
        let plan = plan_backfill(trigger, start, end, &ran, MAX_TIMES);
        let calendar = self.activities.calendar_of(&activity).await?;
        let times = decide(trigger, calendar.as_ref(), &plan, start, end, &ran);
        let todo: Vec<DateTime<Utc>> = times
            .iter()
            .filter(|t| matches!(t.time.planned, Planned::Run(_)))
            .map(|t| t.time.at)
            .collect();
        let action = if dry_run {
            TimeAction::Backfilled
        } else {
            // As the launcher records a fire the calendar keeps from
            // running; a skip recorded before stays as it is.
            for t in &times {
                if let Planned::Excluded(reason) = t.time.planned {
                    let workflow_id = ids::scheduled_run_workflow_id(id, t.time.at);
                    self.runs
                        .insert_skipped(
                            ids::run_id(&workflow_id),
                            id,
                            &workflow_id,
                            run_trigger(trigger),
                            t.time.at,
                            reason,
                            activity.version,
                        )
                        .await?;
                }
            }
            let note = Note::action(
                Subject::activity(id),
                serde_json::json!({
                    "start": start,
                    "end": end,
                    "times": todo,
                    "next_start": plan.next_start,
                }),
            );
            self.request_backfill(&activity, &todo, None, Some((actor, &note)))
                .await?
        };
        // As the launcher does with a fire past the coverage under
        // `beyond_coverage: pause`: the activity stops until someone extends
        // the calendar and resumes it.
        let paused = pause_note(trigger, calendar.as_ref(), &times);
        if let Some(note) = paused.as_deref().filter(|_| !dry_run && !activity.paused) {
            self.set_paused(id, true, Some(note), actor).await?;
        }
        let times = times
            .into_iter()
            .map(|t| {
                let (action, reason) = match t.time.planned {
                    Planned::Run(_) => (action, None),
                    Planned::Duplicate => (TimeAction::Duplicate, None),
                    Planned::Declined(reason) => (TimeAction::Skipped, Some(reason)),
                    Planned::Excluded(reason) => (TimeAction::Skipped, Some(reason.into())),
                };
                TimeOutcome {
                    scheduled_for: t.time.at,
                    workflow_id: ids::scheduled_run_workflow_id(id, t.time.at),
                    action,
                    reason,
                    calendar: t.detail,
                }
            })
            .collect();
        Ok(BackfillOutcome {
            times,
            next_start: plan.next_start,
            dry_run,
            paused,
        })
    }
}

/// Why the backfill pauses the activity: a time of it is past the
/// calendar's coverage and the trigger says `beyond_coverage: pause`.
fn pause_note(
    trigger: &ScheduledTrigger,
    calendar: Option<&CalendarRecord>,
    times: &[CalendarTime],
) -> Option<String> {
    let (Some(rule), Some(record)) = (&trigger.calendar, calendar) else {
        return None;
    };
    let beyond = times
        .iter()
        .any(|t| t.time.planned == Planned::Excluded(SkipReason::BeyondCoverage));
    (rule.beyond_coverage == BeyondCoverage::Pause && beyond)
        .then(|| record.calendar.coverage_pause_note())
}

/// The plan's times under the trigger's calendar, when it names one that
/// exists; otherwise the plan as it is.
fn decide(
    trigger: &ScheduledTrigger,
    calendar: Option<&CalendarRecord>,
    plan: &BackfillPlan,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
    ran: &HashSet<DateTime<Utc>>,
) -> Vec<CalendarTime> {
    let (Some(rule), Some(record)) = (&trigger.calendar, calendar) else {
        return plan
            .times
            .iter()
            .map(|t| CalendarTime {
                time: *t,
                detail: None,
            })
            .collect();
    };
    let decided_end = plan.next_start.unwrap_or(end);
    // The cadence's times next to the range that may roll into it, at
    // most as many as one range holds.
    let near: Vec<_> = near_range(&record.calendar, rule, start, decided_end)
        .map(|(a, b)| {
            times_after(&trigger.cadence, a - Duration::nanoseconds(1))
                .take_while(|t| t.at < b)
                .take(MAX_TIMES)
                .collect()
        })
        .unwrap_or_default();
    let named = Named {
        calendar: &record.calendar,
        version: record.version,
    };
    apply_to_backfill(named, rule, plan, &near, start, end, ran)
}
