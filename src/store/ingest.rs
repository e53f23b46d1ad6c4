//! Ingest in one statement: the event, its dispatch rows and the caller's
//! key check, for the common case (a new event whose subscribers the caller
//! knows). Anything else (a re-delivery, subscribers that changed, a
//! debounced subscriber, a revoked key) writes nothing here and takes the
//! general path in `EventStore`.

use chrono::{DateTime, Utc};
use sqlx::FromRow;
use uuid::Uuid;

use super::StoreResult;
use super::events::{EventRecord, EventStore};
use super::keys::confirm_key;
use crate::auth::UnconfirmedKey;
use crate::domain::event::EventIdOrigin;

/// One dispatch the caller expects to write: a subscriber as it knows it,
/// with the run identities derived from it.
#[derive(Debug, Clone)]
pub struct ExpectedDispatch {
    pub activity_id: Uuid,
    pub version: i64,
    pub workflow_id: String,
    pub run_id: Uuid,
}

/// The event as `record` takes it.
#[derive(Debug, Clone, Copy)]
pub struct EventFields<'a> {
    pub event_id: &'a str,
    pub origin: EventIdOrigin,
    pub event_type: &'a str,
    pub source: &'a str,
    pub occurred_at: Option<DateTime<Utc>>,
    pub payload: &'a serde_json::Value,
}

#[derive(FromRow)]
struct RoutedRow {
    received_at: DateTime<Utc>,
    dispatched: i64,
}

impl EventStore {
    /// Records a new event with one pending dispatch per `expected`
    /// subscriber, in one statement and only if every condition holds in
    /// its snapshot: the event ID is new, the enabled event activities
    /// subscribed to its type are exactly `expected` (same IDs and versions:
    /// every change to a definition, its `flow.debounce` included, makes a
    /// new version; the caller expects none debounced), and `key` (if still
    /// unconfirmed) is live.
    /// `None` when any does not: nothing was written (or, in a race with a
    /// concurrent first delivery, only what that one wrote), and the caller
    /// takes the general path. `Some` confirms `key`.
    pub async fn record_routed(
        &self,
        event: EventFields<'_>,
        expected: &[ExpectedDispatch],
        key: Option<&UnconfirmedKey>,
    ) -> StoreResult<Option<EventRecord>> {
        let ids: Vec<Uuid> = expected.iter().map(|d| d.activity_id).collect();
        let versions: Vec<i64> = expected.iter().map(|d| d.version).collect();
        let workflow_ids: Vec<&str> = expected.iter().map(|d| d.workflow_id.as_str()).collect();
        let run_ids: Vec<Uuid> = expected.iter().map(|d| d.run_id).collect();
        let row: Option<RoutedRow> = sqlx::query_as(
            "WITH subs AS (
                 SELECT coalesce(array_agg(id ORDER BY id), '{}') AS ids,
                        coalesce(array_agg(version ORDER BY id), '{}') AS versions
                 FROM activities
                 WHERE deleted_at IS NULL AND trigger_type = 'event' AND enabled AND NOT paused
                   AND event_types @> ARRAY[$3]::text[]
             ), go AS (
                 SELECT 1 FROM subs
                 WHERE subs.ids = $7::uuid[] AND subs.versions = $8::int8[]
                   AND ($11::uuid IS NULL
                        OR EXISTS (SELECT 1 FROM api_keys WHERE id = $11 AND revoked_at IS NULL))
             ), ev AS (
                 INSERT INTO events (event_id, event_id_origin, event_type, source, occurred_at, payload)
                 SELECT $1, $2, $3, $4, $5, $6 FROM go
                 ON CONFLICT (event_id) DO NOTHING
                 RETURNING event_id, received_at
             ), d AS (
                 INSERT INTO event_dispatches
                     (event_id, activity_id, workflow_id, run_id, state, definition_version)
                 SELECT ev.event_id, s.activity_id, s.workflow_id, s.run_id, 'pending', s.version
                 FROM ev, unnest($7::uuid[], $9::text[], $10::uuid[], $8::int8[])
                          AS s(activity_id, workflow_id, run_id, version)
                 ON CONFLICT (event_id, activity_id) DO NOTHING
                 RETURNING 1
             )
             SELECT ev.received_at, (SELECT count(*) FROM d) AS dispatched FROM ev",
        )
        .bind(event.event_id)
        .bind(event.origin.as_str())
        .bind(event.event_type)
        .bind(event.source)
        .bind(event.occurred_at)
        .bind(sqlx::types::Json(event.payload))
        .bind(&ids)
        .bind(&versions)
        .bind(&workflow_ids)
        .bind(&run_ids)
        .bind(UnconfirmedKey::pending(key))
        .fetch_optional(&self.pool)
        .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        if let Some(key) = key {
            key.confirm();
        }
        // A dispatch row that was there before its event (not written by
        // this service): the general path reads what it holds.
        if row.dispatched != expected.len() as i64 {
            return Ok(None);
        }
        Ok(Some(EventRecord {
            event_id: event.event_id.to_owned(),
            event_id_origin: event.origin,
            event_type: event.event_type.to_owned(),
            source: event.source.to_owned(),
            occurred_at: event.occurred_at,
            payload: sqlx::types::Json(event.payload.clone()),
            received_at: row.received_at,
        }))
    }

    /// Confirms the caller's key with a statement of its own, before the
    /// general path writes anything.
    pub async fn confirm_key(&self, key: Option<&UnconfirmedKey>) -> StoreResult<()> {
        confirm_key(&self.pool, key).await
    }
}
