//! What a listing or a write asks for, as the use cases pass it to the
//! stores: filters (all optional, combined with AND), keyset positions and
//! `If-Match` preconditions. Plain data.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::alert::AlertKind;
use super::project::ProjectId;
use super::run::{RunStatus, RunTrigger};
use super::trigger::TriggerType;

/// What the caller knows about the current version (from `If-Match`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// No precondition.
    Anything,
    /// `If-Match: *`: the resource must exist.
    Exists,
    /// `If-Match: "N"`: the resource must be at version N.
    Version(i64),
}

impl Expect {
    /// The version a conditional write must find, if it names one.
    pub fn version(self) -> Option<i64> {
        match self {
            Expect::Version(v) => Some(v),
            _ => None,
        }
    }
}

/// Filters for listing activities; all optional, combined with AND.
#[derive(Debug, Default, Clone)]
pub struct ActivityFilter {
    pub trigger_type: Option<TriggerType>,
    pub enabled: Option<bool>,
    pub label: Option<(String, String)>,
    pub q: Option<String>,
    /// The caller's project: only its activities. `None` is every
    /// project's, for internal callers only.
    pub project: Option<ProjectId>,
}

/// Where a page starts: strictly after this (created_at, id), newest first.
pub type Keyset = (DateTime<Utc>, Uuid);

/// Filters for listing runs; all optional, combined with AND.
#[derive(Debug, Clone, Default)]
pub struct RunFilter {
    pub activity_id: Option<Uuid>,
    pub status: Option<RunStatus>,
    pub trigger_type: Option<RunTrigger>,
    pub scheduled_from: Option<DateTime<Utc>>,
    pub scheduled_to: Option<DateTime<Utc>>,
    pub started_from: Option<DateTime<Utc>>,
    pub started_to: Option<DateTime<Utc>>,
    /// The caller's project: only runs of its activities. `None` is every
    /// project's, for internal callers only.
    pub project: Option<ProjectId>,
}

/// Filters for listing alerts; all optional, combined with AND.
#[derive(Debug, Clone, Default)]
pub struct AlertFilter {
    pub activity_id: Option<Uuid>,
    pub kind: Option<AlertKind>,
    /// `Some(true)`: open only; `Some(false)`: resolved only.
    pub open: Option<bool>,
    pub opened_from: Option<DateTime<Utc>>,
    pub opened_to: Option<DateTime<Utc>>,
}

/// Filters for listing events; all optional, combined with AND.
#[derive(Debug, Clone, Default)]
pub struct EventFilter {
    pub event_type: Option<String>,
    pub source: Option<String>,
    pub received_from: Option<DateTime<Utc>>,
    pub received_to: Option<DateTime<Utc>>,
}

/// Which runs count.
#[derive(Debug, Clone, Default)]
pub struct StatsFilter {
    pub activity_id: Option<Uuid>,
    pub trigger_type: Option<RunTrigger>,
    /// The caller's project: only runs of its activities. `None` is every
    /// project's, for internal callers only.
    pub project: Option<ProjectId>,
}
