//! What workflows and activities pass to each other. Plain serde types: they
//! travel as JSON payloads and are recorded in workflow history.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use acp_domain::flow::{OnLimit, RateOnLimit};
use acp_domain::run::RunStatus;

/// The launcher asks what to run for one nominal time.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PrepareScheduledRun {
    pub activity_id: Uuid,
    pub scheduled_for: DateTime<Utc>,
}

/// The answer: a run to start (under `workflow_id`, which for a compressed
/// fire is the latest due nominal time's), or why there is none.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Prepared {
    pub run: Option<RunInput>,
    pub workflow_id: Option<String>,
    pub reason: Option<String>,
}

pub use acp_domain::run::RunInput;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LogRunInput {
    pub run_id: Uuid,
    pub workflow_id: String,
    pub run: RunInput,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskSpecMessage {
    pub task_type: String,
    pub name: Option<String>,
    pub config: serde_json::Map<String, serde_json::Value>,
    /// The task's `timeout` and `retry` as written; absent in histories from
    /// before task policies, which then run with the defaults (what they ran
    /// with then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<serde_json::Value>,
}

/// What `log_run` hands back: the tasks of the definition version, and the
/// context every task receives.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LoggedRun {
    pub tasks: Vec<TaskSpecMessage>,
    pub run: serde_json::Value,
    pub context: serde_json::Value,
    /// Set when the definition has `flow.concurrency`: the run is `queued`
    /// and must hold a slot of this key before its tasks run. Absent in
    /// histories from before flow control, which then run as they did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<FlowGate>,
    /// Set when the definition has `flow.rate_limit`: the run is `queued`
    /// and must be granted a start of this key (after its concurrency slot,
    /// if any) before its tasks run. Absent in histories from before rate
    /// limits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<RateGate>,
    /// The run's attempt: 1, or more for a retry. Absent in histories from
    /// before retries, which were all first attempts.
    #[serde(default = "first_attempt")]
    pub attempt: u32,
}

/// The concurrency slot a run must hold before it runs its tasks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlowGate {
    pub key: String,
    pub limit: u32,
    pub on_limit: OnLimit,
}

/// The rate limit a run's start must fit in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RateGate {
    pub key: String,
    pub limit: u32,
    pub period_ms: u64,
    pub on_limit: RateOnLimit,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AcquireSlotInput {
    pub run_id: Uuid,
    pub activity_id: Uuid,
    /// The concurrency slot, asked for first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<FlowGate>,
    /// The rate limit, asked for once the run holds its slot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<RateGate>,
}

/// What asking for a slot gave the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SlotGrant {
    /// It holds a slot and is `running`: run the tasks.
    Acquired,
    /// Still `queued`: wait, then ask again.
    Waiting,
    /// Still `queued` for its rate limit: ask again after this many
    /// milliseconds (when the window has room for it). Never in histories
    /// from before rate limits.
    WaitFor { millis: u64 },
    /// Recorded `skipped` (`concurrency_limit` or `rate_limited`): nothing to run.
    Skipped,
    /// The run ended while queued (cancelled): nothing to run.
    Ended,
}

fn first_attempt() -> u32 {
    1
}

/// A retry asks what an earlier attempt made of a task whose workflow ID
/// Temporal will not run again.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TaskStateInput {
    pub task_id: Uuid,
    pub run_id: Uuid,
}

/// The task's row as the earlier attempt left it; `status` is `None` when
/// there is no row.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TaskState {
    pub status: Option<acp_domain::run::TaskStatus>,
    pub output: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TaskInput {
    pub run_id: Uuid,
    pub index: u32,
    pub task: TaskSpecMessage,
    pub run: serde_json::Value,
    pub context: serde_json::Value,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StartTaskInput {
    pub task_id: Uuid,
    pub run_id: Uuid,
    pub workflow_id: String,
    pub task_type: String,
    pub index: u32,
    pub name: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FinishTaskInput {
    pub task_id: Uuid,
    /// For the activity's span; absent in histories from before it was added.
    #[serde(default)]
    pub run_id: Uuid,
    pub succeeded: bool,
    pub attempts: u32,
    pub output: Option<serde_json::Value>,
    pub error: Option<String>,
    /// The task was interrupted because its run was cancelled.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cancelled: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WebhookInput {
    pub task_id: Uuid,
    /// For the activity's span; absent in histories from before it was added.
    #[serde(default)]
    pub run_id: Uuid,
    pub url: String,
    pub secret_ref: Option<String>,
    pub timeout_ms: u64,
    /// Statuses that are not retried; absent: every 4xx but 408 and 429
    /// (`domain::task::NonRetryable`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub non_retryable: Option<Vec<u16>>,
    /// `{run, task, context}`, posted as JSON.
    pub body: serde_json::Value,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WebhookResponse {
    pub status: u16,
    pub body: serde_json::Value,
    pub attempt: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TaskOutcome {
    pub succeeded: bool,
    pub output: serde_json::Value,
    pub error: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FinishRunInput {
    pub run_id: Uuid,
    pub status: RunStatus,
    pub error: Option<String>,
    pub succeeded: u32,
    pub failed: u32,
    /// For a cancelled run: the tasks from the one it interrupted on, whose
    /// rows end `cancelled` (those never started are written so).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cancelled_tasks: Vec<CancelledTask>,
}

/// A task of a cancelled run that did not finish.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CancelledTask {
    pub index: u32,
    pub task_type: String,
    pub name: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunSummary {
    pub run_id: Uuid,
    pub status: RunStatus,
    pub error: Option<String>,
}

/// What the launcher did with its fire.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LaunchResult {
    pub workflow_id: Option<String>,
    /// `started`, `duplicate` or `skipped`.
    pub outcome: String,
    pub detail: Option<String>,
}
