//! Resume: every nominal time missed while paused is decided, at any scale.
//! The answer and what is stored stay bounded: the times that run are
//! listed (at most `catchup_limit`), the others are one recorded span that
//! the timeline expands.

use chrono::{DateTime, Utc};

use super::{PauseOutcome, Result, Schedules, TimeOutcome, executed_times, scheduled};
use crate::activities::SyncOutcome;
use acp_domain::activity::{Activity, SyncState};
use acp_domain::business_calendar::{
    BeyondCoverage, Named, apply_to_catch_up, plan as plan_calendar,
};
use acp_domain::calendar::{NominalTime, TimeNote};
use acp_domain::ids;
use acp_domain::misfire::SkipReason;
use acp_domain::resume::plan_resume;
use acp_domain::timeline::{TimeAction, TimelineReason};
use acp_domain::trigger::ScheduledTrigger;
use acp_domain::window::nominal_times_between;

/// The missed times a resume did not run, as one span.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SkippedTimes {
    pub first: DateTime<Utc>,
    pub last: DateTime<Utc>,
    pub count: u64,
    /// `paused` (policy `skip`), `catchup_limit` or `compressed`.
    pub reason: TimelineReason,
}

/// What a resume decided on the times in `(from, until]`.
#[derive(Debug, Clone)]
pub struct MissedTimes {
    /// Where the pause began.
    pub from: DateTime<Utc>,
    /// When the resume was asked for: the policy decides up to here.
    pub until: DateTime<Utc>,
    /// When Temporal had taken the unpause: later times are the engine's.
    pub unpaused_at: DateTime<Utc>,
    /// Nominal times in `(from, until]` that had not run.
    pub total: u64,
    pub backfilled: u64,
    pub pending: u64,
    pub skipped: u64,
    pub skipped_span: Option<SkippedTimes>,
    /// The times the policy runs, oldest first (under a business
    /// calendar: the policy's times it runs, and the business days in the
    /// pause its times roll to).
    pub runs: Vec<TimeOutcome>,
    /// The times the policy would run that the trigger's business calendar
    /// keeps from running: recorded as skipped runs with its reason.
    pub calendar_skipped: Vec<TimeOutcome>,
    /// Times in `(until, unpaused_at]` that had not run: due whatever the
    /// policy, asked for as well (the engine may have fired them too; the
    /// contract workflow ID runs each once).
    pub in_flight: Vec<TimeOutcome>,
    /// Set when a time the policy would run is past the calendar's
    /// coverage under `beyond_coverage: pause`: the note the resume paused
    /// the activity again with (a dry run only answers it).
    pub paused: Option<String>,
}

fn tick() -> chrono::Duration {
    chrono::Duration::nanoseconds(1)
}

impl Schedules {
    /// Resumes the schedule and applies the misfire policy to the nominal
    /// times missed while paused: `skip` runs none, `catchup` the most
    /// recent `catchup_limit`, `compress` one for the latest with a window
    /// reaching back over the whole pause.
    pub async fn resume(
        &self,
        id: uuid::Uuid,
        note: Option<&str>,
        actor: &acp_domain::audit::Actor,
    ) -> Result<PauseOutcome> {
        // Asked for now: the times missed up to here are the policy's.
        let asked = Utc::now();
        let (activity, paused_since, sync) = self.set_paused(id, false, note, actor).await?;
        // Temporal has taken the unpause by now (when the sync reached it). A
        // time between `asked` and here fell after the resume was asked for,
        // so it is due whatever the policy; the paused engine dropped it or
        // the unpaused one fired it, and no one can tell which: the resume
        // asks for it too, and its contract workflow ID runs it once.
        // If Temporal did not take it (unreachable), the schedule stays
        // paused until the reconciler unpauses it: the resume then decides
        // up to `asked`, as before.
        let unpaused = if sync.state == SyncState::Synced {
            Utc::now()
        } else {
            asked
        };
        let trigger = scheduled(&activity)?;
        let missed = match paused_since {
            Some(since) => Some(
                self.decide_missed(&activity, trigger, since, asked, unpaused, false)
                    .await?,
            ),
            None => None,
        };
        // Its catch-up reached past the calendar's coverage under
        // `beyond_coverage: pause`: paused again, as the launcher would.
        let (activity, sync) = match missed.as_ref().and_then(|m| m.paused.as_deref()) {
            Some(note) => {
                let (activity, _, sync) = self.set_paused(id, true, Some(note), actor).await?;
                (activity, sync)
            }
            None => (activity, sync),
        };
        Ok(PauseOutcome {
            activity,
            sync,
            missed,
            dry_run: false,
        })
    }

    /// What `resume` would decide if asked now, changing nothing: the
    /// activity stays paused, no span is recorded and nothing runs. The
    /// times the policy would run are answered as `backfilled`. `missed` is
    /// `null` when the activity is not paused.
    pub async fn resume_dry_run(
        &self,
        id: uuid::Uuid,
        project: &acp_domain::project::ProjectId,
    ) -> Result<PauseOutcome> {
        let activity = self.activities.get_in(id, project).await?;
        let trigger = scheduled(&activity)?;
        let now = Utc::now();
        let since = if activity.paused {
            self.activities.store().paused_since(id).await?
        } else {
            None
        };
        let missed = match since {
            Some(since) => Some(
                self.decide_missed(&activity, trigger, since, now, now, true)
                    .await?,
            ),
            None => None,
        };
        let sync = SyncOutcome {
            state: activity.sync.state,
            error: activity.sync.last_error.clone(),
            view: None,
        };
        Ok(PauseOutcome {
            activity,
            sync,
            missed,
            dry_run: true,
        })
    }

    /// Decides the missed times: with `dry_run`, only answers what would
    /// become of them.
    async fn decide_missed(
        &self,
        activity: &Activity,
        trigger: &ScheduledTrigger,
        since: DateTime<Utc>,
        asked: DateTime<Utc>,
        unpaused: DateTime<Utc>,
        dry_run: bool,
    ) -> Result<MissedTimes> {
        let id = activity.id;
        // A time fired in the moment before the pause took effect, or by
        // the engine as it unpaused, has run: it was not missed.
        let ran = executed_times(
            self.runs
                .scheduled_between(id, since, unpaused + chrono::Duration::seconds(1))
                .await?,
        );
        let last_window_end = self.runs.last_window_end(id).await?;
        let calendar = self.activities.calendar_of(activity).await?;
        let is_time = |t: DateTime<Utc>| super::is_time(trigger, calendar.as_ref(), t);
        let plan = plan_resume(trigger, since, asked, &ran, last_window_end, &is_time);
        let in_flight: Vec<DateTime<Utc>> =
            nominal_times_between(&trigger.cadence, asked, unpaused, super::MAX_TIMES)
                .into_iter()
                .filter(|t| {
                    is_time(*t)
                        && !ran.contains(t)
                        && trigger.start_at.is_none_or(|s| *t >= s)
                        && trigger.end_at.is_none_or(|e| *t <= e)
                })
                .collect();
        if let Some(span) = plan.skipped.as_ref().filter(|_| !dry_run) {
            self.runs
                .insert_skipped_span(id, span, activity.version)
                .await?;
        }
        // The trigger's calendar has its say on the times the policy runs:
        // those it keeps from running are recorded skipped, as the launcher
        // would, and a time it rolls runs on its business day.
        let (run, calendar_skipped) = match (&trigger.calendar, &calendar) {
            (Some(rule), Some(record)) => {
                let c = apply_to_catch_up(&record.calendar, rule, &plan.run, since, asked, &ran);
                let named = Named {
                    calendar: &record.calendar,
                    version: record.version,
                };
                let skipped: Vec<(DateTime<Utc>, SkipReason, Option<String>)> = c
                    .skipped
                    .into_iter()
                    .map(|(at, reason)| {
                        let one = [NominalTime {
                            at,
                            note: TimeNote::Normal,
                        }];
                        let detail = plan_calendar(named, rule, &one, &[], at, at + tick())
                            .into_iter()
                            .find_map(|p| p.detail);
                        (at, reason, detail)
                    })
                    .collect();
                (c.run, skipped)
            }
            _ => (plan.run.clone(), Vec::new()),
        };
        if !dry_run {
            for (at, reason, _) in &calendar_skipped {
                let workflow_id = ids::scheduled_run_workflow_id(id, *at);
                self.runs
                    .insert_skipped(
                        ids::run_id(&workflow_id),
                        id,
                        &workflow_id,
                        super::run_trigger(trigger),
                        *at,
                        *reason,
                        activity.version,
                    )
                    .await?;
            }
        }
        let mut times = run.clone();
        times.extend(&in_flight);
        // A compressed run's window belongs to the latest time, if it runs.
        let window = run
            .last()
            .copied()
            .filter(|t| plan.run.last() == Some(t))
            .zip(plan.window_start);
        let action = if dry_run {
            TimeAction::Backfilled
        } else {
            self.request_backfill(activity, &times, window, None)
                .await?
        };
        let count = |wanted: TimeAction| {
            if action == wanted {
                run.len() as u64
            } else {
                0
            }
        };
        let outcome = |t: &DateTime<Utc>| TimeOutcome {
            scheduled_for: *t,
            workflow_id: ids::scheduled_run_workflow_id(id, *t),
            action,
            reason: None,
            calendar: None,
        };
        let skipped = plan.skipped.map_or(0, |s| s.count);
        let paused = match (&trigger.calendar, &calendar) {
            (Some(rule), Some(record))
                if rule.beyond_coverage == BeyondCoverage::Pause
                    && calendar_skipped
                        .iter()
                        .any(|(_, reason, _)| *reason == SkipReason::BeyondCoverage) =>
            {
                Some(record.calendar.coverage_pause_note())
            }
            _ => None,
        };
        Ok(MissedTimes {
            from: since,
            until: asked,
            unpaused_at: unpaused,
            total: plan.missed,
            backfilled: count(TimeAction::Backfilled),
            pending: count(TimeAction::Pending),
            skipped,
            skipped_span: plan.skipped.map(|s| SkippedTimes {
                first: s.first,
                last: s.last,
                count: s.count,
                reason: s.reason.map_or(TimelineReason::Paused, Into::into),
            }),
            runs: run.iter().map(outcome).collect(),
            calendar_skipped: calendar_skipped
                .into_iter()
                .map(|(at, reason, detail)| TimeOutcome {
                    scheduled_for: at,
                    workflow_id: ids::scheduled_run_workflow_id(id, at),
                    action: TimeAction::Skipped,
                    reason: Some(reason.into()),
                    calendar: detail,
                })
                .collect(),
            in_flight: in_flight.iter().map(outcome).collect(),
            paused,
        })
    }
}
