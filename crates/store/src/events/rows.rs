//! The rows `events` and `event_dispatches` are read into, and their
//! conversion to the domain's types (which cannot implement sqlx's traits
//! themselves).

use chrono::{DateTime, Utc};
use sqlx::FromRow;
use uuid::Uuid;

use crate::Text;
use acp_domain::event::{Dispatch, DispatchOutcome, DispatchState, EventIdOrigin, EventRecord};
use acp_domain::run::RunStatus;

/// An `events` row, read into the domain's [`EventRecord`].
#[derive(FromRow)]
pub(super) struct EventRow {
    pub(super) event_id: String,
    pub(super) event_id_origin: Text<EventIdOrigin>,
    pub(super) event_type: String,
    pub(super) source: String,
    pub(super) occurred_at: Option<DateTime<Utc>>,
    pub(super) payload: serde_json::Value,
    pub(super) received_at: DateTime<Utc>,
}

impl From<EventRow> for EventRecord {
    fn from(row: EventRow) -> Self {
        Self {
            event_id: row.event_id,
            event_id_origin: row.event_id_origin.0,
            event_type: row.event_type,
            source: row.source,
            occurred_at: row.occurred_at,
            payload: row.payload,
            received_at: row.received_at,
        }
    }
}

/// An `event_dispatches` row (with its run's status), read into the
/// domain's [`Dispatch`].
pub(super) struct DispatchRow {
    pub(super) event_id: String,
    pub(super) activity_id: Uuid,
    pub(super) workflow_id: String,
    pub(super) run_id: Uuid,
    pub(super) state: Text<DispatchState>,
    pub(super) outcome: Option<Text<DispatchOutcome>>,
    pub(super) attempts: i32,
    pub(super) last_error: Option<String>,
    pub(super) created_at: DateTime<Utc>,
    pub(super) completed_at: Option<DateTime<Utc>>,
    pub(super) run_status: Option<Text<RunStatus>>,
    pub(super) definition_version: i64,
    pub(super) absorbed_by: Option<Uuid>,
}

impl From<DispatchRow> for Dispatch {
    fn from(row: DispatchRow) -> Self {
        Self {
            event_id: row.event_id,
            activity_id: row.activity_id,
            workflow_id: row.workflow_id,
            run_id: row.run_id,
            state: row.state.0,
            outcome: row.outcome.map(|o| o.0),
            attempts: row.attempts,
            last_error: row.last_error,
            created_at: row.created_at,
            completed_at: row.completed_at,
            run_status: row.run_status.map(|s| s.0),
            definition_version: row.definition_version,
            absorbed_by: row.absorbed_by,
        }
    }
}
