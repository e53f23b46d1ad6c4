//! Runs and their task instances, as history records them.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// What fired a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunTrigger {
    Cron,
    Interval,
    Event,
    Manual,
}

impl RunTrigger {
    pub const ALL: [RunTrigger; 4] = [Self::Cron, Self::Interval, Self::Event, Self::Manual];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Cron => "cron",
            Self::Interval => "interval",
            Self::Event => "event",
            Self::Manual => "manual",
        }
    }

    pub fn parse(text: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|t| t.as_str() == text)
            .ok_or_else(|| {
                format!("`{text}` is not a trigger type; expected cron, interval, event or manual")
            })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    Running,
    Succeeded,
    Failed,
    Cancelled,
    Skipped,
}

impl RunStatus {
    pub const ALL: [RunStatus; 5] = [
        Self::Running,
        Self::Succeeded,
        Self::Failed,
        Self::Cancelled,
        Self::Skipped,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Succeeded => "succeeded",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
            Self::Skipped => "skipped",
        }
    }

    pub fn parse(text: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|t| t.as_str() == text)
            .ok_or_else(|| {
                format!("`{text}` is not a run status; expected running, succeeded, failed, cancelled or skipped")
            })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskStatus {
    Running,
    Succeeded,
    Failed,
}

impl TaskStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Succeeded => "succeeded",
            Self::Failed => "failed",
        }
    }
}

/// One run as history records it.
#[derive(Debug, Clone)]
pub struct Run {
    pub run_id: Uuid,
    pub activity_id: Uuid,
    pub workflow_id: String,
    pub trigger_type: String,
    pub scheduled_for: Option<DateTime<Utc>>,
    pub event_id: Option<String>,
    pub status: String,
    pub skip_reason: Option<String>,
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
}

#[derive(Debug, Clone)]
pub struct TaskInstance {
    pub id: Uuid,
    pub run_id: Uuid,
    pub workflow_id: String,
    pub task_type: String,
    pub index: i32,
    pub name: Option<String>,
    pub status: String,
    pub attempts: i32,
    pub started_at: Option<DateTime<Utc>>,
    pub finished_at: Option<DateTime<Utc>>,
    pub output: Option<serde_json::Value>,
    pub error: Option<String>,
}
