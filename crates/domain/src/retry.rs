//! Retrying a run: which runs may run again, and what a retry request does
//! with the run in front of it. Pure decisions, table-tested.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::run::{Run, RunInput, RunStatus, TaskStatus};

/// Why a run cannot be retried: a 409 naming its status.
pub fn not_retryable(status: RunStatus) -> Option<String> {
    match status {
        RunStatus::Failed | RunStatus::Cancelled | RunStatus::TimedOut => None,
        other => Some(format!(
            "the run is {}: only a failed, cancelled or timed-out run can be retried",
            other.as_str()
        )),
    }
}

/// One attempt of a run: when and by whom it was asked for, how it ended.
#[derive(Debug, Clone, PartialEq)]
pub struct RunAttempt {
    pub attempt: i32,
    pub requested_at: DateTime<Utc>,
    /// The API key that asked for the retry; `None` for the first attempt
    /// (its trigger started it) and when authentication is disabled.
    pub requested_by: Option<Uuid>,
    pub status: RunStatus,
    pub error: Option<String>,
    pub finished_at: Option<DateTime<Utc>>,
}

/// Whether a run that started at `started_at` has outlived its activity's
/// `run_timeout` at `now`.
pub fn exceeded(
    started_at: DateTime<Utc>,
    run_timeout: std::time::Duration,
    now: DateTime<Utc>,
) -> bool {
    chrono::Duration::from_std(run_timeout).is_ok_and(|limit| now - started_at > limit)
}

/// What one earlier run attempt did with a task that ran again.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TaskAttempt {
    pub run_attempt: i32,
    pub status: TaskStatus,
    /// Attempts of the task's work within that run attempt.
    pub attempts: i32,
    pub started_at: Option<DateTime<Utc>>,
    pub finished_at: Option<DateTime<Utc>>,
    pub error: Option<String>,
}

/// A run's attempts as the API shows them: the recorded ones, or, for a run
/// never retried, its one attempt read off the run itself.
pub fn attempts_of(run: &Run, recorded: Vec<RunAttempt>) -> Vec<RunAttempt> {
    if !recorded.is_empty() || !run.executed() {
        return recorded;
    }
    vec![RunAttempt {
        attempt: 1,
        requested_at: run.started_at.unwrap_or(run.created_at),
        requested_by: None,
        status: run.status,
        error: run.error.clone(),
        finished_at: run.finished_at,
    }]
}

/// The input that runs `run` again: the same trigger occurrence, window,
/// event and definition version. `None` for a run that never executed.
pub fn input_of(run: &Run) -> Option<RunInput> {
    let definition_version = run.definition_version?;
    if !run.executed() {
        return None;
    }
    let event = run.context.get("event").filter(|e| !e.is_null()).cloned();
    Some(RunInput {
        activity_id: run.activity_id,
        trigger: run.trigger_type,
        scheduled_for: run.scheduled_for,
        event_id: run.event_id.clone(),
        event,
        window_start: run.window_start,
        window_end: run.window_end,
        definition_version,
    })
}

/// The most runs one bulk request acts on; a request that matches more
/// says so (`more`), and repeating it handles the next ones.
pub const BULK_LIMIT: i64 = 100;

named_enum! {
    /// What a bulk request did with one run.
    pub enum BulkOutcome ("bulk outcome") {
        /// A new attempt started.
        Retried = "retried",
        /// Temporal is delivering the cancellation.
        CancelRequested = "cancel_requested",
        /// Ended here: terminated (`force`), or nothing was left running.
        Cancelled = "cancelled",
        /// Its state changed before the action reached it; `detail` says how.
        Skipped = "skipped",
        /// Temporal or PostgreSQL did not answer; repeat the request.
        Unavailable = "unavailable",
        /// A dry run: the request would act on this run.
        Matched = "matched",
    }
}

/// The statuses a bulk retry (`cancel == false`) or cancel acts on, given
/// the `status` filter of the request: a retry takes failed and cancelled
/// runs, a cancel running ones; a filter outside those is refused.
pub fn bulk_statuses(cancel: bool, filter: Option<RunStatus>) -> Result<Vec<RunStatus>, String> {
    let allowed: &[RunStatus] = if cancel {
        &[RunStatus::Running]
    } else {
        &[RunStatus::Failed, RunStatus::Cancelled, RunStatus::TimedOut]
    };
    match filter {
        None => Ok(allowed.to_vec()),
        Some(status) if allowed.contains(&status) => Ok(vec![status]),
        Some(status) => Err(format!(
            "a bulk {} acts on {} runs only, not {}",
            if cancel { "cancel" } else { "retry" },
            allowed
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(" or "),
            status.as_str()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::RunTrigger;
    use chrono::TimeZone;
    use serde_json::json;

    fn run(status: RunStatus) -> Run {
        let at = Utc.with_ymd_and_hms(2026, 3, 1, 9, 0, 0).unwrap();
        Run {
            run_id: Uuid::from_u128(2),
            activity_id: Uuid::from_u128(1),
            workflow_id: "activity-1:evt".into(),
            trigger_type: RunTrigger::Event,
            scheduled_for: None,
            event_id: Some("evt".into()),
            status,
            skip_reason: None,
            window_start: None,
            window_end: None,
            definition_version: Some(4),
            context: json!({"window": {"start": null, "end": null}, "event": {"event_id": "evt"}}),
            started_at: Some(at),
            finished_at: Some(at),
            error: Some("boom".into()),
            tasks_total: 2,
            tasks_succeeded: 1,
            tasks_failed: 1,
            created_at: at,
            attempt: 1,
            cancellation: None,
            flow: None,
        }
    }

    #[test]
    fn only_failed_and_cancelled_runs_are_retried() {
        let table = [
            (RunStatus::Failed, true),
            (RunStatus::Cancelled, true),
            (RunStatus::TimedOut, true),
            (RunStatus::Running, false),
            (RunStatus::Succeeded, false),
            (RunStatus::Skipped, false),
        ];
        for (status, retryable) in table {
            let refusal = not_retryable(status);
            assert_eq!(refusal.is_none(), retryable, "{status:?}");
            if let Some(message) = refusal {
                assert!(message.contains(status.as_str()), "{message}");
            }
        }
    }

    #[test]
    fn a_retry_runs_the_same_occurrence_again() {
        let failed = run(RunStatus::Failed);
        let input = input_of(&failed).unwrap();
        assert_eq!(input.trigger, RunTrigger::Event);
        assert_eq!(input.event_id.as_deref(), Some("evt"));
        assert_eq!(input.event, Some(json!({"event_id": "evt"})));
        assert_eq!(input.definition_version, 4);
        let mut manual = run(RunStatus::Failed);
        manual.trigger_type = RunTrigger::Manual;
        manual.event_id = None;
        manual.context = json!({"window": {"start": null, "end": null}, "event": null});
        assert_eq!(input_of(&manual).unwrap().event, None);
        let mut unversioned = run(RunStatus::Failed);
        unversioned.definition_version = None;
        assert_eq!(input_of(&unversioned), None);
        assert_eq!(input_of(&run(RunStatus::Skipped)), None);
    }

    #[test]
    fn a_run_never_retried_has_one_attempt_read_off_the_run() {
        let failed = run(RunStatus::Failed);
        let attempts = attempts_of(&failed, Vec::new());
        assert_eq!(attempts.len(), 1);
        assert_eq!(attempts[0].attempt, 1);
        assert_eq!(attempts[0].status, RunStatus::Failed);
        assert_eq!(attempts[0].error.as_deref(), Some("boom"));
        assert!(attempts_of(&run(RunStatus::Skipped), Vec::new()).is_empty());
        let recorded = vec![
            attempts[0].clone(),
            RunAttempt {
                attempt: 2,
                ..attempts[0].clone()
            },
        ];
        assert_eq!(attempts_of(&failed, recorded.clone()), recorded);
    }

    #[test]
    fn bulk_requests_act_on_the_statuses_their_action_can_change() {
        use RunStatus::*;
        let table = [
            (false, None, Ok(vec![Failed, Cancelled, TimedOut])),
            (false, Some(Failed), Ok(vec![Failed])),
            (false, Some(Cancelled), Ok(vec![Cancelled])),
            (false, Some(Succeeded), Err("succeeded")),
            (false, Some(Running), Err("running")),
            (true, None, Ok(vec![Running])),
            (true, Some(Running), Ok(vec![Running])),
            (true, Some(Failed), Err("failed")),
        ];
        for (cancel, filter, expected) in table {
            match (bulk_statuses(cancel, filter), expected) {
                (Ok(got), Ok(want)) => assert_eq!(got, want, "{cancel} {filter:?}"),
                (Err(message), Err(names)) => assert!(message.contains(names), "{message}"),
                (got, want) => panic!("{cancel} {filter:?}: {got:?}, expected {want:?}"),
            }
        }
    }

    #[test]
    fn a_run_times_out_only_once_past_its_limit() {
        let at = Utc.with_ymd_and_hms(2026, 3, 1, 9, 0, 0).unwrap();
        let limit = std::time::Duration::from_secs(60);
        let table = [
            (0, false),
            (59, false),
            (60, false),
            (61, true),
            (3600, true),
        ];
        for (seconds, expected) in table {
            let now = at + chrono::Duration::seconds(seconds);
            assert_eq!(exceeded(at, limit, now), expected, "{seconds}");
        }
    }
}
