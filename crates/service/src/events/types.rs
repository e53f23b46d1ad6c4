//! What the event intake takes in and answers.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use acp_domain::event::{DispatchOutcome, EventId, EventIdOrigin, EventRecord};

/// An event as it arrives, already validated.
#[derive(Debug, Clone)]
pub struct NewEvent {
    pub event_id: EventId,
    pub origin: EventIdOrigin,
    pub event_type: String,
    pub source: String,
    pub occurred_at: Option<DateTime<Utc>>,
    pub payload: serde_json::Value,
}

#[derive(Debug, Clone)]
pub struct DispatchResult {
    pub activity_id: Uuid,
    pub workflow_id: String,
    pub run_id: Uuid,
    pub outcome: DispatchOutcome,
}

#[derive(Debug, Clone)]
pub struct IngestResult {
    pub event: EventRecord,
    pub dispatches: Vec<DispatchResult>,
}

impl IngestResult {
    /// Whether some dispatch waits for Temporal.
    pub fn pending(&self) -> bool {
        self.dispatches
            .iter()
            .any(|d| d.outcome == DispatchOutcome::Pending)
    }
}
