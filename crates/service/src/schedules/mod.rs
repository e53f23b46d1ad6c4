//! Pause, resume, backfill, and the live and historical views of a schedule.
//! Resume applies the activity's misfire policy to the times missed while
//! paused; a time Temporal cannot take now is recorded as asked for and
//! handed over by the reconciler later.

use std::collections::HashSet;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::activities::{Activities, SyncOutcome};
use super::{Error, Result};
use acp_domain::activity::Activity;
use acp_domain::audit::Actor;
use acp_domain::backfill::{Route, route};
use acp_domain::ids;
use acp_domain::project::ProjectId;
use acp_domain::run::{Run, RunTrigger};
use acp_domain::timeline::{TimeAction, TimelineReason};
use acp_domain::trigger::{Cadence, ScheduledTrigger};
use acp_store::RunStore;
use acp_store::audit::Audit;
use acp_temporal::{GatewayError, ScheduleView};

/// The most nominal times one backfill or one timeline page covers.
pub const MAX_TIMES: usize = 1000;

/// The longest note a pause may carry.
pub const MAX_NOTE_CHARS: usize = 500;

/// What a resume or backfill did with one nominal time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeOutcome {
    pub scheduled_for: DateTime<Utc>,
    /// The contract workflow ID the time runs (or would run) under.
    pub workflow_id: String,
    pub action: TimeAction,
    /// For `skipped`: `paused`, `catchup_limit`, `compressed`, `dst_gap`,
    /// `dst_repeat`, or the calendar's `holiday`, `weekend`, `blackout`,
    /// `rolled` or `beyond_coverage`.
    pub reason: Option<TimelineReason>,
    /// What the trigger's business calendar did with the time (as the
    /// timeline says it); `None` for an ordinary time.
    pub calendar: Option<String>,
}

/// What a backfill decided on the times of its range.
#[derive(Debug, Clone)]
pub struct BackfillOutcome {
    /// Every time decided, oldest first.
    pub times: Vec<TimeOutcome>,
    /// `None` when the whole range was decided; otherwise the range held more
    /// than `MAX_TIMES` of the policy's times and was cut before this one: a
    /// backfill from here continues it.
    pub next_start: Option<DateTime<Utc>>,
    /// Nothing was run: the answer says what a backfill would do.
    pub dry_run: bool,
    /// The note the backfill paused the activity with (in a dry run, would
    /// pause it with): a time of the range is past its calendar's coverage
    /// under `beyond_coverage: pause`.
    pub paused: Option<String>,
}

/// A pause or a resume, and (for a resume of a pause) what became of the
/// missed times.
#[derive(Debug, Clone)]
pub struct PauseOutcome {
    pub activity: Activity,
    pub sync: SyncOutcome,
    pub missed: Option<MissedTimes>,
    /// A resume's dry run: nothing changed.
    pub dry_run: bool,
}

mod backfill;
mod extras;
mod resume;
mod timeline;
pub use extras::EXTRAS_LOOKBACK;
pub use resume::{MissedTimes, SkippedTimes};
pub use timeline::TimelineEntry;

#[derive(Clone)]
pub struct Schedules {
    activities: Activities,
    runs: RunStore,
    #[cfg(feature = "fault-injection")]
    pub faults: std::sync::Arc<crate::faults::Faults>,
}

fn scheduled(activity: &Activity) -> Result<&ScheduledTrigger> {
    activity
        .definition
        .trigger
        .as_scheduled()
        .ok_or_else(|| Error::Conflict("event-triggered activities have no schedule".into()))
}

/// The run trigger type of a scheduled activity's runs.
pub fn run_trigger(trigger: &ScheduledTrigger) -> RunTrigger {
    match trigger.cadence {
        Cadence::Cron { .. } => RunTrigger::Cron,
        Cadence::Interval { .. } => RunTrigger::Interval,
    }
}

/// Whether `at`, a time of the trigger's plain cadence, is one of its own
/// times (see `business_calendar::is_time`); without its calendar, every
/// time is.
fn is_time(
    trigger: &ScheduledTrigger,
    calendar: Option<&acp_domain::business_calendar::CalendarRecord>,
    at: DateTime<Utc>,
) -> bool {
    match (&trigger.calendar, calendar) {
        (Some(rule), Some(record)) => {
            acp_domain::business_calendar::is_time(&record.calendar, rule, at)
        }
        _ => true,
    }
}

fn executed_times(runs: Vec<Run>) -> HashSet<DateTime<Utc>> {
    runs.into_iter()
        .filter(Run::executed)
        .filter_map(|r| r.scheduled_for)
        .collect()
}

impl Schedules {
    pub fn new(activities: Activities, runs: RunStore) -> Self {
        Self {
            activities,
            runs,
            #[cfg(feature = "fault-injection")]
            faults: Default::default(),
        }
    }

    /// Pauses the schedule. Fires while paused are dropped by Temporal;
    /// `resume` decides what to do about them.
    pub async fn pause(&self, id: Uuid, note: Option<&str>, actor: &Actor) -> Result<PauseOutcome> {
        let (activity, _, sync) = self.set_paused(id, true, note, actor).await?;
        Ok(PauseOutcome {
            activity,
            sync,
            missed: None,
            dry_run: false,
        })
    }

    async fn set_paused(
        &self,
        id: Uuid,
        paused: bool,
        note: Option<&str>,
        actor: &Actor,
    ) -> Result<(Activity, Option<DateTime<Utc>>, SyncOutcome)> {
        if note.is_some_and(|n| n.chars().count() > MAX_NOTE_CHARS) {
            return Err(Error::invalid(
                "note",
                format!("must be at most {MAX_NOTE_CHARS} characters"),
            ));
        }
        let current = self.activities.get_in(id, &actor.project).await?;
        scheduled(&current)?;
        let (activity, paused_since) = super::found(
            self.activities
                .store()
                .set_paused(id, paused, note, actor)
                .await,
            "activity",
        )?;
        #[cfg(feature = "fault-injection")]
        if !paused {
            crate::faults::delay(&self.faults.delay_before_unpause_ms).await;
        }
        let sync = self.activities.sync(&activity).await?;
        #[cfg(feature = "fault-injection")]
        if !paused {
            crate::faults::delay(&self.faults.delay_after_unpause_ms).await;
        }
        Ok((activity, paused_since, sync))
    }

    /// Records `times` as asked for and hands them to Temporal:
    /// `Backfilled` when Temporal accepted, `Pending` when it could not be
    /// reached (the request stays recorded and the reconciler dispatches it
    /// when Temporal returns). A refusal is an error.
    async fn request_backfill(
        &self,
        activity: &Activity,
        times: &[DateTime<Utc>],
        window: Option<(DateTime<Utc>, DateTime<Utc>)>,
        audit: Audit<'_>,
    ) -> Result<TimeAction> {
        let id = activity.id;
        if times.is_empty() {
            // Nothing to run, but a backfill the caller asked for is still
            // one entry.
            if audit.is_some() {
                self.runs.request_times(id, times, audit).await?;
            }
            return Ok(TimeAction::Backfilled);
        }
        self.runs.request_times(id, times, audit).await?;
        // Before Temporal hears of it: the launcher reads the window.
        if let Some((time, window_start)) = window {
            self.runs
                .set_requested_window(id, time, window_start)
                .await?;
        }
        match self
            .hand_over(id, activity.definition.trigger.as_scheduled(), times)
            .await?
        {
            Ok(()) => Ok(TimeAction::Backfilled),
            Err(err @ GatewayError::Rejected(_)) => Err(err.into()),
            Err(err) => {
                tracing::warn!(error = %err, "backfill recorded; Temporal unreachable, the reconciler will dispatch it");
                Ok(TimeAction::Pending)
            }
        }
    }

    /// Hands requested times to Temporal and marks those it took as
    /// dispatched: a schedule backfill of exactly `[t, t]` for each time the
    /// engine fires that way, and the launcher started under the schedule's
    /// own workflow ID for the others (a DST policy's extra times). Either
    /// way the launcher runs the time under its contract workflow ID. The
    /// outer error is the database's, the inner one Temporal's.
    async fn hand_over(
        &self,
        id: Uuid,
        trigger: Option<&ScheduledTrigger>,
        times: &[DateTime<Utc>],
    ) -> Result<std::result::Result<(), GatewayError>> {
        let (by_schedule, by_launcher): (Vec<DateTime<Utc>>, Vec<DateTime<Utc>>) = times
            .iter()
            .partition(|t| trigger.is_none_or(|trigger| route(trigger, **t) == Route::Schedule));
        let gateway = self.activities.gateway();
        if !by_schedule.is_empty() {
            if let Err(err) = gateway.backfill(&ids::schedule_id(id), &by_schedule).await {
                return Ok(Err(err));
            }
            self.runs.mark_dispatched(id, &by_schedule).await?;
        }
        for t in by_launcher {
            if let Err(err) = gateway
                .start_launcher(id, t, self.activities.task_queue(), true)
                .await
            {
                return Ok(Err(err));
            }
            self.runs.mark_dispatched(id, &[t]).await?;
        }
        Ok(Ok(()))
    }

    /// Hands Temporal the requested times it could not take when they were
    /// asked for (a resume's catch-up, a backfill). Five seconds old at
    /// least, so a request still in its handler is left alone. Returns how
    /// many times were handed over.
    pub async fn dispatch_pending_backfills(&self) -> usize {
        let pending = match self
            .runs
            .undispatched(std::time::Duration::from_secs(5))
            .await
        {
            Ok(pending) => pending,
            Err(err) => {
                tracing::warn!(error = %err, "could not read pending backfills");
                return 0;
            }
        };
        let mut dispatched = 0;
        for (activity_id, times) in pending {
            // The trigger decides how each time reaches Temporal; without
            // it (the database did not answer) the times wait for a pass
            // that can read it.
            let activity = match self.activities.get_any(activity_id).await {
                Ok(activity) => activity,
                Err(err) => {
                    tracing::warn!(error = %err, %activity_id, "pending backfill waits: activity not read");
                    continue;
                }
            };
            let trigger = activity.definition.trigger.as_scheduled();
            match self.hand_over(activity_id, trigger, &times).await {
                Ok(Ok(())) => {
                    tracing::info!(%activity_id, times = times.len(), "pending backfill dispatched");
                    dispatched += times.len();
                }
                Ok(Err(err)) => {
                    tracing::warn!(error = %err, %activity_id, "pending backfill still not accepted");
                }
                Err(err) => {
                    tracing::warn!(error = %err, %activity_id, "backfill dispatched but not marked");
                }
            }
        }
        dispatched
    }

    /// The schedule of an activity of `project` as Temporal holds it now.
    pub async fn view(&self, id: Uuid, project: &ProjectId) -> Result<ScheduleView> {
        self.activities.get_in(id, project).await?;
        self.activities
            .gateway()
            .describe(&ids::schedule_id(id))
            .await?
            .ok_or(Error::NotFound("schedule"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use acp_domain::run::RunStatus;

    #[test]
    fn skipped_runs_are_not_executions() {
        // `executed_times` keeps a time that ran, whatever its outcome, and
        // drops recorded skips (those may still be backfilled).
        let at = |s: i64| DateTime::from_timestamp(s, 0).unwrap_or_default();
        let run = |s: i64, status: RunStatus| Run {
            run_id: Uuid::nil(),
            activity_id: Uuid::nil(),
            workflow_id: String::new(),
            trigger_type: RunTrigger::Interval,
            scheduled_for: Some(at(s)),
            event_id: None,
            status,
            skip_reason: None,
            window_start: None,
            window_end: None,
            definition_version: None,
            context: serde_json::Value::Null,
            started_at: None,
            finished_at: None,
            error: None,
            tasks_total: 0,
            tasks_succeeded: 0,
            tasks_failed: 0,
            created_at: at(0),
            attempt: 1,
            cancellation: None,
            flow: None,
        };
        let ran = executed_times(vec![
            run(1, RunStatus::Succeeded),
            run(2, RunStatus::Skipped),
            run(3, RunStatus::Failed),
        ]);
        assert_eq!(ran, HashSet::from([at(1), at(3)]));
    }
}
