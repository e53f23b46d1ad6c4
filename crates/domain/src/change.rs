//! A change to what the product holds, as the change log keeps it and the
//! stream (`GET /v1/stream`) serves it.

use chrono::{DateTime, Utc};
use uuid::Uuid;

/// One logged change.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub seq: i64,
    pub at: DateTime<Utc>,
    pub kind: String,
    pub activity_id: Option<Uuid>,
    pub subject: String,
    pub data: serde_json::Value,
    /// The project the change belongs to: its activity's, its calendar's,
    /// its audit entry's.
    pub project: String,
}
