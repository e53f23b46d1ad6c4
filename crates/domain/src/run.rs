//! Runs and their task instances, as history records them, and the input
//! that starts one.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::misfire::SkipReason;

named_enum! {
    /// What fired a run.
    pub enum RunTrigger ("trigger type") {
        Cron = "cron",
        Interval = "interval",
        Event = "event",
        Manual = "manual",
    }
}

named_enum! {
    /// Where a run is in its life.
    pub enum RunStatus ("run status") {
        /// Waiting for a concurrency slot (`flow.concurrency`), first in
        /// first out per key.
        Queued = "queued",
        Running = "running",
        Succeeded = "succeeded",
        Failed = "failed",
        Cancelled = "cancelled",
        /// Cancelled because it ran longer than its activity's `run_timeout`.
        TimedOut = "timed_out",
        /// Not executed; `skip_reason` says why.
        Skipped = "skipped",
    }
}

named_enum! {
    /// Where a task instance is in its life.
    pub enum TaskStatus ("task status") {
        Running = "running",
        Succeeded = "succeeded",
        Failed = "failed",
        /// Interrupted, or never started, because its run was cancelled.
        Cancelled = "cancelled",
    }
}

named_enum! {
    /// What starting a run under its contract workflow ID did.
    pub enum StartOutcome ("start outcome") {
        Started = "started",
        /// The ID was already started (running or closed): at most one
        /// execution, by contract.
        Duplicate = "duplicate",
    }
}

/// One run as history records it.
#[derive(Debug, Clone)]
pub struct Run {
    pub run_id: Uuid,
    pub activity_id: Uuid,
    pub workflow_id: String,
    pub trigger_type: RunTrigger,
    pub scheduled_for: Option<DateTime<Utc>>,
    pub event_id: Option<String>,
    pub status: RunStatus,
    pub skip_reason: Option<SkipReason>,
    pub window_start: Option<DateTime<Utc>>,
    pub window_end: Option<DateTime<Utc>>,
    pub definition_version: Option<i64>,
    pub context: serde_json::Value,
    pub started_at: Option<DateTime<Utc>>,
    pub finished_at: Option<DateTime<Utc>>,
    pub error: Option<String>,
    pub tasks_total: i32,
    pub tasks_succeeded: i32,
    pub tasks_failed: i32,
    pub created_at: DateTime<Utc>,
    /// 1, then one more for each retry; the run describes its latest attempt.
    pub attempt: i32,
    /// Set once someone asked to cancel the run.
    pub cancellation: Option<Cancellation>,
    /// For a run of a flow-controlled activity: its key and when it joined
    /// the key's queue.
    pub flow: Option<RunFlow>,
}

/// A flow-controlled run's place: its key, and when it joined the key's
/// queue (the queue's order; `started_at` is when it got its slot).
#[derive(Debug, Clone, PartialEq)]
pub struct RunFlow {
    pub key: String,
    pub queued_at: DateTime<Utc>,
}

/// A request to cancel a run: when, why, by whom, and whether it terminated.
#[derive(Debug, Clone, PartialEq)]
pub struct Cancellation {
    pub requested_at: DateTime<Utc>,
    pub reason: Option<String>,
    /// The API key that asked; `None` when authentication is disabled.
    pub requested_by: Option<Uuid>,
    /// Terminated in Temporal instead of cancelled (no cleanup ran).
    pub forced: bool,
}

impl Run {
    /// Whether the run executed (or is executing), as opposed to a recorded skip.
    pub fn executed(&self) -> bool {
        self.status != RunStatus::Skipped
    }
}

#[derive(Debug, Clone)]
pub struct TaskInstance {
    pub id: Uuid,
    pub run_id: Uuid,
    pub workflow_id: String,
    pub task_type: String,
    pub index: i32,
    pub name: Option<String>,
    pub status: TaskStatus,
    pub attempts: i32,
    pub started_at: Option<DateTime<Utc>>,
    pub finished_at: Option<DateTime<Utc>>,
    pub output: Option<serde_json::Value>,
    pub error: Option<String>,
    /// The run attempt that last started this task.
    pub run_attempt: i32,
    /// What earlier run attempts did with it, oldest first.
    pub previous_attempts: Vec<super::retry::TaskAttempt>,
}

/// Everything `RunActivityWorkflow` needs; its workflow ID is the contract
/// ID. It travels as JSON and is recorded in workflow histories, so its
/// shape only ever gains optional fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunInput {
    pub activity_id: Uuid,
    pub trigger: RunTrigger,
    pub scheduled_for: Option<DateTime<Utc>>,
    pub event_id: Option<String>,
    /// The event (ID, type, source, occurred_at, payload) for event runs.
    pub event: Option<serde_json::Value>,
    pub window_start: Option<DateTime<Utc>>,
    pub window_end: Option<DateTime<Utc>>,
    /// The definition version the run executes.
    pub definition_version: i64,
}

impl RunInput {
    /// A run for one nominal time, covering `[window_start, scheduled_for)`.
    pub fn scheduled(
        activity_id: Uuid,
        trigger: RunTrigger,
        scheduled_for: DateTime<Utc>,
        window_start: Option<DateTime<Utc>>,
        definition_version: i64,
    ) -> Self {
        Self {
            activity_id,
            trigger,
            scheduled_for: Some(scheduled_for),
            event_id: None,
            event: None,
            window_start,
            window_end: Some(scheduled_for),
            definition_version,
        }
    }

    /// A run asked for by hand: no nominal time, no window.
    pub fn manual(activity_id: Uuid, definition_version: i64) -> Self {
        Self {
            activity_id,
            trigger: RunTrigger::Manual,
            scheduled_for: None,
            event_id: None,
            event: None,
            window_start: None,
            window_end: None,
            definition_version,
        }
    }

    /// A run for one event, which it carries instead of a window.
    pub fn event(
        activity_id: Uuid,
        event_id: &str,
        event: serde_json::Value,
        definition_version: i64,
    ) -> Self {
        Self {
            activity_id,
            trigger: RunTrigger::Event,
            scheduled_for: None,
            event_id: Some(event_id.to_owned()),
            event: Some(event),
            window_start: None,
            window_end: None,
            definition_version,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use serde_json::json;

    #[test]
    fn names_round_trip_and_unknown_names_are_refused() {
        for s in RunStatus::ALL {
            assert_eq!(RunStatus::parse(s.as_str()), Ok(*s));
            assert_eq!(serde_json::to_value(s).ok(), Some(json!(s.as_str())));
        }
        for t in RunTrigger::ALL {
            assert_eq!(RunTrigger::parse(t.as_str()), Ok(*t));
        }
        let err = RunStatus::parse("done").unwrap_err();
        assert!(err.contains("succeeded"), "{err}");
        assert!(TaskStatus::parse("Running").is_err());
    }

    #[test]
    fn run_inputs_by_trigger() {
        let id = Uuid::from_u128(1);
        let at = Utc.with_ymd_and_hms(2026, 3, 1, 9, 0, 0).unwrap();
        let before = Utc.with_ymd_and_hms(2026, 3, 1, 8, 0, 0).unwrap();
        let table = [
            (
                RunInput::scheduled(id, RunTrigger::Cron, at, Some(before), 3),
                RunTrigger::Cron,
                Some(at),
                None,
                (Some(before), Some(at)),
            ),
            (
                RunInput::manual(id, 3),
                RunTrigger::Manual,
                None,
                None,
                (None, None),
            ),
            (
                RunInput::event(id, "evt_1", json!({"event_id": "evt_1"}), 3),
                RunTrigger::Event,
                None,
                Some("evt_1".to_owned()),
                (None, None),
            ),
        ];
        for (input, trigger, scheduled_for, event_id, window) in table {
            assert_eq!(input.trigger, trigger);
            assert_eq!(input.scheduled_for, scheduled_for);
            assert_eq!(input.event_id, event_id);
            assert_eq!((input.window_start, input.window_end), window);
            assert_eq!(input.definition_version, 3);
        }
    }

    #[test]
    fn run_input_json_is_what_histories_hold() {
        // A payload as recorded by runs already in flight must still read.
        let recorded = json!({
            "activity_id": "00000000-0000-0000-0000-000000000001",
            "trigger": "event",
            "scheduled_for": null,
            "event_id": "evt_1",
            "event": {"event_id": "evt_1"},
            "window_start": null,
            "window_end": null,
            "definition_version": 2
        });
        let input: RunInput = serde_json::from_value(recorded.clone()).unwrap();
        assert_eq!(serde_json::to_value(&input).unwrap(), recorded);
    }
}
