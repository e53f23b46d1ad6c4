//! Activity definitions: one trigger plus an ordered list of tasks.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::FieldError;
use super::task::Task;
use super::trigger::Trigger;

/// A task type name: `noop`, `webhook`, or the name of an activity type that
/// another service's worker implements on its own task queue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct TaskType(String);

impl TaskType {
    pub fn parse(text: &str) -> Result<Self, String> {
        if text.is_empty() || text.len() > 100 {
            return Err("must be 1 to 100 characters".into());
        }
        // The type becomes part of a workflow ID (`task-{run_id}:{type}:{index}`),
        // so `:` would make IDs ambiguous.
        if !text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        {
            return Err(format!(
                "`{text}` may contain only letters, digits and _ - ."
            ));
        }
        Ok(Self(text.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn kind(&self) -> TaskKind {
        match self.0.as_str() {
            "noop" => TaskKind::Noop,
            "webhook" => TaskKind::Webhook,
            _ => TaskKind::External,
        }
    }
}

impl TryFrom<String> for TaskType {
    type Error = String;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

impl From<TaskType> for String {
    fn from(value: TaskType) -> Self {
        value.0
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskKind {
    Noop,
    Webhook,
    /// Dispatched as a Temporal activity of the task's type on `config.task_queue`.
    External,
}

/// One task as the user wrote it, and as it is stored and carried to the
/// worker; [`TaskSpec::parse`] gives what it means (`domain::task`). Every
/// stored spec parsed when it was written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskSpec {
    pub task_type: TaskType,
    pub name: Option<String>,
    pub config: serde_json::Map<String, serde_json::Value>,
    /// One attempt's limit, ISO-8601 (absent in definitions from before
    /// task policies).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    /// The retry settings object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<serde_json::Value>,
}

impl TaskSpec {
    pub fn parse(&self) -> Result<Task, Vec<FieldError>> {
        Task::parse(
            &self.task_type,
            &self.config,
            self.timeout.as_deref(),
            self.retry.as_ref(),
        )
    }
}

/// What a user asked for. Once built it is valid: every constructor path goes
/// through the API model's parsing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActivityDefinition {
    pub name: String,
    pub description: Option<String>,
    pub enabled: bool,
    pub labels: BTreeMap<String, String>,
    pub trigger: Trigger,
    pub tasks: Vec<TaskSpec>,
    /// Legacy compatibility metadata. Stored and returned, read by no execution path.
    pub dedupe_key_strategy: Option<String>,
    /// What the alert evaluator expects of this activity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alerts: Option<super::alert::Expectations>,
    /// Where this activity's run and alert notifications go.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notify: Vec<super::notify::NotifyTarget>,
    /// The longest a run may take (ISO-8601, as written); one that takes
    /// longer is cancelled and recorded `timed_out`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_timeout: Option<String>,
    /// Flow control of this activity's runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow: Option<super::flow::Flow>,
}

/// Whether Temporal matches the database for this activity's schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SyncState {
    /// Temporal holds exactly the desired schedule.
    Synced,
    /// A change is waiting for Temporal (it did not answer); the reconciler retries.
    Pending,
    /// Temporal refused the schedule; the reconciler retries, the error says why.
    Error,
    /// Event-triggered activities have no schedule.
    NotApplicable,
}

impl SyncState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Synced => "synced",
            Self::Pending => "pending",
            Self::Error => "error",
            Self::NotApplicable => "not_applicable",
        }
    }

    pub fn from_db(text: &str) -> Self {
        match text {
            "synced" => Self::Synced,
            "error" => Self::Error,
            "not_applicable" => Self::NotApplicable,
            _ => Self::Pending,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncStatus {
    pub state: SyncState,
    pub last_synced_at: Option<DateTime<Utc>>,
    pub last_error: Option<String>,
    /// The definition version Temporal was last brought to.
    pub synced_version: Option<i64>,
    /// Temporal's conflict token right after our last write to the schedule.
    pub conflict_token: Option<Vec<u8>>,
}

/// A stored activity.
#[derive(Debug, Clone)]
pub struct Activity {
    pub id: Uuid,
    pub version: i64,
    pub definition: ActivityDefinition,
    pub paused: bool,
    pub pause_note: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub sync: SyncStatus,
    pub deleted: bool,
}

impl Activity {
    /// Whether Temporal should hold a schedule for this activity at all.
    pub fn wants_schedule(&self) -> bool {
        self.definition.trigger.as_scheduled().is_some()
    }

    /// Whether Temporal was last brought to this very version.
    pub fn is_synced(&self) -> bool {
        matches!(
            self.sync.state,
            SyncState::Synced | SyncState::NotApplicable
        ) && self.sync.synced_version == Some(self.version)
    }

    /// Whether the schedule should be paused: disabled, or paused by a user.
    pub fn schedule_paused(&self) -> bool {
        !self.definition.enabled || self.paused
    }
}
