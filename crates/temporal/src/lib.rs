//! Everything Temporal: the pure translation, the one gateway that holds the
//! client, the workflows and the activities' contract (the worker that runs
//! them is a driver: `src/worker`).

pub mod activities;
pub mod gateway;
pub mod messages;
pub mod notify;
pub mod translate;
pub mod webhook;
pub mod workflows;

use chrono::{DateTime, Utc};

pub use gateway::{GatewayError, StartOutcome, TemporalGateway, TemporalSettings};

/// What Temporal says about a schedule, free of protobuf types.
#[derive(Debug, Clone, Default)]
pub struct ScheduleView {
    pub paused: bool,
    pub note: Option<String>,
    pub spec_hash: Option<String>,
    pub conflict_token: Vec<u8>,
    pub future_action_times: Vec<DateTime<Utc>>,
    pub action_count: i64,
    pub overlap_skipped: i64,
    pub missed_catchup_window: i64,
    pub buffer_dropped: i64,
    pub recent_actions: Vec<ScheduleActionView>,
    pub running_workflow_ids: Vec<String>,
}

impl ScheduleView {
    /// A schedule this service has just created: what it sent, with the
    /// conflict token Temporal answered. Fire times and counters are not
    /// known without asking again, and a fresh schedule has no history.
    pub fn created(desired: &translate::DesiredSchedule, conflict_token: Vec<u8>) -> Self {
        Self {
            paused: desired.paused,
            note: desired
                .schedule
                .state
                .as_ref()
                .map(|s| s.notes.clone())
                .filter(|n| !n.is_empty()),
            spec_hash: Some(desired.spec_hash.clone()),
            conflict_token,
            ..Default::default()
        }
    }
}

#[derive(Debug, Clone)]
pub struct ScheduleActionView {
    pub scheduled_time: Option<DateTime<Utc>>,
    pub actual_time: Option<DateTime<Utc>>,
    pub workflow_id: Option<String>,
}
