//! Ingest in one statement: events, their dispatch rows and their callers'
//! key checks, for the common case (a new event whose subscribers the caller
//! knows), several events at a time (`service::group_commit` gathers those
//! that arrive together). Anything else (a re-delivery, subscribers that
//! changed, a debounced subscriber, a revoked key) writes nothing here and
//! takes the general path in `EventStore`.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use sqlx::FromRow;
use uuid::Uuid;

use super::StoreResult;
use super::events::EventStore;
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

/// A new event as `record_routed` takes it: owned, so that it can wait for
/// the statement that writes it together with others.
#[derive(Debug, Clone)]
pub struct RoutedEvent {
    pub event_id: String,
    pub origin: EventIdOrigin,
    pub event_type: String,
    pub source: String,
    pub occurred_at: Option<DateTime<Utc>>,
    /// The payload as JSON text.
    pub payload: String,
    /// The caller's key, when it is still to be confirmed live.
    pub key: Option<Uuid>,
    /// The enabled event activities subscribed to `event_type`, as the
    /// caller knows them: none debounced.
    pub expected: Vec<ExpectedDispatch>,
}

impl RoutedEvent {
    /// The subscribers expected, as the statement renders the table's:
    /// `id:version` by ID, comma-separated.
    fn expected_subscribers(&self) -> String {
        let mut known: Vec<(Uuid, i64)> = self
            .expected
            .iter()
            .map(|d| (d.activity_id, d.version))
            .collect();
        known.sort_unstable();
        known
            .iter()
            .map(|(id, version)| format!("{id}:{version}"))
            .collect::<Vec<_>>()
            .join(",")
    }
}

#[derive(FromRow)]
struct RoutedRow {
    idx: i64,
    received_at: DateTime<Utc>,
    dispatched: i64,
}

impl EventStore {
    /// Records each new event with one pending dispatch per expected
    /// subscriber, in one statement, each only if every condition holds for
    /// it in the statement's snapshot: its ID is new, the enabled event
    /// activities subscribed to its type are exactly those expected (same
    /// IDs and versions: every change to a definition, its `flow.debounce`
    /// included, makes a new version), and its key (if any) is live.
    ///
    /// One answer per event, in order: its `received_at`, or `None` when a
    /// condition did not hold (nothing was written for it, or, in a race
    /// with a concurrent first delivery, only what that one wrote) or when
    /// its ID came twice here (the second is left to the general path,
    /// which sees the first as a re-delivery).
    pub async fn record_routed(
        &self,
        events: &[RoutedEvent],
    ) -> StoreResult<Vec<Option<DateTime<Utc>>>> {
        let mut seen = HashSet::with_capacity(events.len());
        let unique: Vec<(i64, &RoutedEvent)> = events
            .iter()
            .enumerate()
            .filter(|(_, e)| seen.insert(e.event_id.as_str()))
            .map(|(i, e)| (i as i64, e))
            .collect();
        let mut idx = Vec::with_capacity(unique.len());
        let mut event_ids = Vec::with_capacity(unique.len());
        let mut origins = Vec::with_capacity(unique.len());
        let mut types = Vec::with_capacity(unique.len());
        let mut sources = Vec::with_capacity(unique.len());
        let mut occurred = Vec::with_capacity(unique.len());
        let mut payloads = Vec::with_capacity(unique.len());
        let mut keys = Vec::with_capacity(unique.len());
        let mut expected = Vec::with_capacity(unique.len());
        let (mut d_idx, mut d_activity, mut d_workflow, mut d_run, mut d_version) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for &(i, e) in &unique {
            idx.push(i);
            event_ids.push(e.event_id.as_str());
            origins.push(e.origin.as_str());
            types.push(e.event_type.as_str());
            sources.push(e.source.as_str());
            occurred.push(e.occurred_at);
            payloads.push(e.payload.as_str());
            keys.push(e.key);
            expected.push(e.expected_subscribers());
            for d in &e.expected {
                d_idx.push(i);
                d_activity.push(d.activity_id);
                d_workflow.push(d.workflow_id.as_str());
                d_run.push(d.run_id);
                d_version.push(d.version);
            }
        }
        let rows: Vec<RoutedRow> = sqlx::query_as(
            "WITH input AS (
                 SELECT * FROM unnest($1::int8[], $2::text[], $3::text[], $4::text[], $5::text[],
                                      $6::timestamptz[], $7::text[], $8::uuid[], $9::text[])
                     AS i(idx, event_id, origin, event_type, source, occurred_at, payload, key_id,
                          expected)
             ), subs AS (
                 SELECT t.event_type,
                        coalesce((SELECT string_agg(a.id::text || ':' || a.version, ',' ORDER BY a.id)
                                  FROM activities a
                                  WHERE a.deleted_at IS NULL AND a.trigger_type = 'event'
                                    AND a.enabled AND NOT a.paused
                                    AND a.event_types @> ARRAY[t.event_type]), '') AS actual
                 FROM (SELECT DISTINCT event_type FROM input) t
             ), go AS (
                 SELECT i.* FROM input i JOIN subs s ON s.event_type = i.event_type
                 WHERE s.actual = i.expected
                   AND (i.key_id IS NULL
                        OR EXISTS (SELECT 1 FROM api_keys k
                                   WHERE k.id = i.key_id AND k.revoked_at IS NULL))
             ), ev AS (
                 INSERT INTO events (event_id, event_id_origin, event_type, source, occurred_at, payload)
                 SELECT event_id, origin, event_type, source, occurred_at, payload::jsonb
                 FROM go ORDER BY event_id
                 ON CONFLICT (event_id) DO NOTHING
                 RETURNING event_id, received_at
             ), d AS (
                 INSERT INTO event_dispatches
                     (event_id, activity_id, workflow_id, run_id, state, definition_version)
                 SELECT ev.event_id, s.activity_id, s.workflow_id, s.run_id, 'pending', s.version
                 FROM unnest($10::int8[], $11::uuid[], $12::text[], $13::uuid[], $14::int8[])
                          AS s(idx, activity_id, workflow_id, run_id, version)
                 JOIN input i ON i.idx = s.idx
                 JOIN ev ON ev.event_id = i.event_id
                 ORDER BY ev.event_id, s.activity_id
                 ON CONFLICT (event_id, activity_id) DO NOTHING
                 RETURNING event_id
             )
             SELECT i.idx, ev.received_at,
                    (SELECT count(*) FROM d WHERE d.event_id = ev.event_id) AS dispatched
             FROM input i JOIN ev ON ev.event_id = i.event_id",
        )
        .bind(&idx)
        .bind(&event_ids)
        .bind(&origins)
        .bind(&types)
        .bind(&sources)
        .bind(&occurred)
        .bind(&payloads)
        .bind(&keys)
        .bind(&expected)
        .bind(&d_idx)
        .bind(&d_activity)
        .bind(&d_workflow)
        .bind(&d_run)
        .bind(&d_version)
        .fetch_all(&self.pool)
        .await?;
        let written: HashMap<i64, RoutedRow> = rows.into_iter().map(|r| (r.idx, r)).collect();
        Ok(events
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let row = written.get(&(i as i64))?;
                // A dispatch row that was there before its event (not
                // written by this service): the general path reads it.
                (row.dispatched == e.expected.len() as i64).then_some(row.received_at)
            })
            .collect())
    }

    /// Confirms the caller's key with a statement of its own, before the
    /// general path writes anything.
    pub async fn confirm_key(&self, key: Option<&UnconfirmedKey>) -> StoreResult<()> {
        confirm_key(&self.pool, key).await
    }
}
