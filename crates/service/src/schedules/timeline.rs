//! The historical view of a schedule: every nominal time of a range with its
//! run, or why there is none.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{Error, MAX_TIMES, Result, Schedules, is_time, scheduled};
use acp_domain::backfill::declined_reason;
use acp_domain::business_calendar::{Named, Outcome, Planned, near_range, plan};
use acp_domain::calendar::{NominalTime, TimeNote, dst_declined, times_after};
use acp_domain::ids;
use acp_domain::misfire::SkipReason;
use acp_domain::run::Run;
use acp_domain::timeline::{
    History, TimelineReason, TimelineStatus, reason_without_run, skipped_by_span,
};
use acp_domain::trigger::ScheduledTrigger;

/// One nominal time and what became of it.
#[derive(Debug, Clone)]
pub struct TimelineEntry {
    pub scheduled_for: DateTime<Utc>,
    pub workflow_id: String,
    pub run_id: Option<Uuid>,
    pub status: TimelineStatus,
    pub reason: Option<TimelineReason>,
    /// How many attempts the time's run has had (more than 1 once retried);
    /// `None` without an executed run.
    pub attempts: Option<i32>,
    /// `dst_gap` (shifted past a gap, or declined there) or `dst_repeat`
    /// (a wall time that happened twice); `None` for an ordinary time.
    pub dst: Option<TimeNote>,
    /// What the trigger's business calendar did with the time (excluded
    /// it, rolled it away, rolled another time here); `None` otherwise.
    pub calendar: Option<String>,
}

impl Schedules {
    /// Every nominal time in `[from, to)` (at most `MAX_TIMES`) with its run,
    /// or why there is none; with them, the times the DST policy declines
    /// (`dst_gap`, `dst_repeat`), so every time the engine or the wall clock
    /// offers is accounted for.
    pub async fn timeline(
        &self,
        id: Uuid,
        project: &acp_domain::project::ProjectId,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
    ) -> Result<Vec<TimelineEntry>> {
        if to <= from {
            return Err(Error::invalid("to", "must be after from"));
        }
        let activity = self.activities.get_any_in(id, project).await?;
        let trigger = scheduled(&activity)?;
        let (wanted, declined) = timeline_times(trigger, from, to)?;
        let runs: HashMap<DateTime<Utc>, Run> = self
            .runs
            .scheduled_between(id, from, to)
            .await?
            .into_iter()
            .filter_map(|r| r.scheduled_for.map(|t| (t, r)))
            .collect();
        let spans = self.runs.skipped_spans(id, from, to).await?;
        let store = self.activities.store();
        let pauses = store.pauses(id).await?;
        let outages = store.temporal_outages(from, to).await?;
        let history = History {
            created_at: activity.created_at,
            start_at: trigger.start_at,
            pauses: &pauses,
            temporal_outages: &outages,
            enabled: activity.definition.enabled,
            updated_at: activity.updated_at,
            now: Utc::now(),
        };
        let dst = |note: TimeNote| (note != TimeNote::Normal).then_some(note);
        let with_run = |t: &NominalTime, run: &Run, declined: bool| TimelineEntry {
            scheduled_for: t.at,
            workflow_id: ids::scheduled_run_workflow_id(id, t.at),
            run_id: Some(run.run_id),
            status: run.status.into(),
            reason: match run.skip_reason {
                // The launcher refused the engine's fire: say which kind.
                Some(SkipReason::DstPolicy) if declined => Some(declined_reason(t.note)),
                other => other.map(Into::into),
            },
            attempts: run.executed().then_some(run.attempt),
            dst: dst(t.note),
            calendar: None,
        };
        let without_run = |t: &NominalTime, status, reason| TimelineEntry {
            scheduled_for: t.at,
            workflow_id: ids::scheduled_run_workflow_id(id, t.at),
            run_id: None,
            status,
            reason: Some(reason),
            attempts: None,
            dst: dst(t.note),
            calendar: None,
        };
        let calendar = self.activities.calendar_of(&activity).await?;
        let planned = match (&trigger.calendar, &calendar) {
            (Some(rule), Some(record)) => {
                let near = match near_range(&record.calendar, rule, from, to) {
                    // Bounded like the range itself; a longer run of
                    // non-business days shows only its latest rolls.
                    Some((a, b)) => {
                        times_after(&trigger.cadence, a - chrono::Duration::nanoseconds(1))
                            .take_while(|t| t.at < b)
                            .take(MAX_TIMES)
                            .collect()
                    }
                    None => Vec::new(),
                };
                let named = Named {
                    calendar: &record.calendar,
                    version: record.version,
                };
                plan(named, rule, &wanted, &near, from, to)
            }
            _ => wanted
                .iter()
                .map(|t| Planned {
                    at: t.at,
                    note: t.note,
                    outcome: Outcome::Run,
                    detail: None,
                })
                .collect(),
        };
        let mut entries: Vec<TimelineEntry> = planned
            .into_iter()
            .map(|p| {
                let t = NominalTime {
                    at: p.at,
                    note: p.note,
                };
                let mut entry = match (&p.outcome, runs.get(&t.at)) {
                    (_, Some(run)) => with_run(&t, run, false),
                    (Outcome::Excluded(reason) | Outcome::RolledAway(reason), None) => {
                        let reason = match p.outcome {
                            Outcome::RolledAway(_) => TimelineReason::Rolled,
                            _ => SkipReason::from(reason).into(),
                        };
                        without_run(&t, TimelineStatus::None, reason)
                    }
                    (Outcome::Run | Outcome::RolledHere, None) => {
                        match skipped_by_span(t.at, &spans) {
                            Some(reason) => without_run(&t, TimelineStatus::Skipped, reason.into()),
                            None => without_run(
                                &t,
                                TimelineStatus::None,
                                reason_without_run(t.at, &history),
                            ),
                        }
                    }
                };
                entry.calendar = p.detail;
                entry
            })
            .chain(
                declined
                    .iter()
                    .filter(|t| is_time(trigger, calendar.as_ref(), t.at))
                    .map(|t| match runs.get(&t.at) {
                        Some(run) => with_run(t, run, true),
                        None => without_run(t, TimelineStatus::None, declined_reason(t.note)),
                    }),
            )
            .collect();
        entries.sort_by_key(|e| e.scheduled_for);
        Ok(entries)
    }
}

/// The policy's times in `[from, to)` (refusing more than `MAX_TIMES`, named
/// by `to`), and the times its DST policy declines there.
fn timeline_times(
    trigger: &ScheduledTrigger,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> Result<(Vec<NominalTime>, Vec<NominalTime>)> {
    let tick = chrono::Duration::nanoseconds(1);
    let (Some(after), Some(until)) = (from.checked_sub_signed(tick), to.checked_sub_signed(tick))
    else {
        return Ok((Vec::new(), Vec::new()));
    };
    let wanted: Vec<NominalTime> = times_after(&trigger.cadence, after)
        .take_while(|t| t.at <= until)
        .take(MAX_TIMES + 1)
        .collect();
    if wanted.len() > MAX_TIMES {
        return Err(Error::invalid(
            "to",
            format!("the range holds more than {MAX_TIMES} nominal times"),
        ));
    }
    Ok((wanted, dst_declined(&trigger.cadence, after, until)))
}
