//! Ingest in one statement: events, their dispatch rows and their callers'
//! key checks, for the common case (a new event whose subscribers the caller
//! knows), several events at a time (`service::group_commit` gathers those
//! that arrive together). Anything else (a re-delivery, subscribers that
//! changed, a debounced subscriber, a revoked key) writes nothing here and
//! takes the general path in `EventStore`.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serialize;
use serde_json::value::RawValue;
use uuid::Uuid;

use super::events::EventStore;
use super::keys::confirm_key;
use super::{StoreError, StoreResult};
use acp_domain::auth::UnconfirmedKey;
use acp_domain::event::EventIdOrigin;
use acp_domain::project::ProjectId;

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
    /// The project it is received for: its ID is unique there, and it
    /// reaches that project's activities only.
    pub project: ProjectId,
    pub event_id: String,
    pub origin: EventIdOrigin,
    pub event_type: String,
    pub source: String,
    pub occurred_at: Option<DateTime<Utc>>,
    /// The payload, as JSON text.
    pub payload: Box<RawValue>,
    /// The caller's key, when it is still to be confirmed live.
    pub key: Option<Uuid>,
    /// The project's enabled event activities subscribed to `event_type`,
    /// as the caller knows them: none debounced.
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

/// One event as the statement reads it.
#[derive(Serialize)]
struct EventIn<'a> {
    idx: i64,
    project_id: &'a str,
    event_id: &'a str,
    origin: &'a str,
    event_type: &'a str,
    source: &'a str,
    /// To the microsecond, as PostgreSQL keeps it.
    occurred_at: Option<String>,
    payload: &'a RawValue,
    key_id: Option<Uuid>,
    expected: String,
}

/// One dispatch row as the statement reads it; `idx` is its event's.
#[derive(Serialize)]
struct DispatchIn<'a> {
    idx: i64,
    activity_id: Uuid,
    workflow_id: &'a str,
    run_id: Uuid,
    version: i64,
}

struct RoutedRow {
    idx: i64,
    received_at: DateTime<Utc>,
    dispatched: i64,
}

impl EventStore {
    /// Records each new event with one pending dispatch per expected
    /// subscriber, in one statement, each only if every condition holds for
    /// it in the statement's snapshot: its ID is new in its project, the
    /// project's enabled event activities subscribed to its type are
    /// exactly those expected (same
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
            .filter(|(_, e)| seen.insert((e.project.as_str(), e.event_id.as_str())))
            .map(|(i, e)| (i as i64, e))
            .collect();
        let mut dispatches = Vec::new();
        let events_in: Vec<EventIn<'_>> = unique
            .iter()
            .map(|&(idx, e)| {
                dispatches.extend(e.expected.iter().map(|d| DispatchIn {
                    idx,
                    activity_id: d.activity_id,
                    workflow_id: &d.workflow_id,
                    run_id: d.run_id,
                    version: d.version,
                }));
                EventIn {
                    idx,
                    project_id: e.project.as_str(),
                    event_id: &e.event_id,
                    origin: e.origin.as_str(),
                    event_type: &e.event_type,
                    source: &e.source,
                    occurred_at: e
                        .occurred_at
                        .map(|t| t.to_rfc3339_opts(SecondsFormat::Micros, true)),
                    payload: &e.payload,
                    key_id: e.key,
                    expected: e.expected_subscribers(),
                }
            })
            .collect();
        let events_in =
            serde_json::to_string(&events_in).map_err(|e| StoreError::Other(e.into()))?;
        let dispatches =
            serde_json::to_string(&dispatches).map_err(|e| StoreError::Other(e.into()))?;
        // The rows come as JSON rather than arrays: the planner cannot see
        // into it, so after its first few executions PostgreSQL keeps one
        // generic plan for the statement instead of planning it again for
        // every batch (arrays make each batch's size part of the plan).
        let rows = sqlx::query_as!(
            RoutedRow,
            r#"WITH input AS (
                 SELECT * FROM json_to_recordset($1::json)
                     AS i(idx int8, project_id text, event_id text, origin text, event_type text,
                          source text, occurred_at timestamptz, payload jsonb, key_id uuid,
                          expected text)
             ), subs AS (
                 SELECT t.project_id, t.event_type,
                        coalesce((SELECT string_agg(a.id::text || ':' || a.version, ',' ORDER BY a.id)
                                  FROM activities a
                                  WHERE a.deleted_at IS NULL AND a.trigger_type = 'event'
                                    AND a.enabled AND NOT a.paused
                                    AND a.event_types @> ARRAY[t.event_type]
                                    AND a.project_id = t.project_id), '') AS actual
                 FROM (SELECT DISTINCT project_id, event_type FROM input) t
             ), go AS (
                 SELECT i.* FROM input i
                 JOIN subs s ON s.project_id = i.project_id AND s.event_type = i.event_type
                 WHERE s.actual = i.expected
                   AND (i.key_id IS NULL
                        OR EXISTS (SELECT 1 FROM api_keys k
                                   WHERE k.id = i.key_id AND k.revoked_at IS NULL))
             ), ev AS (
                 INSERT INTO events
                     (project_id, event_id, event_id_origin, event_type, source, occurred_at, payload)
                 SELECT project_id, event_id, origin, event_type, source, occurred_at, payload
                 FROM go ORDER BY project_id, event_id
                 ON CONFLICT (project_id, event_id) DO NOTHING
                 RETURNING project_id, event_id, received_at
             ), d AS (
                 INSERT INTO event_dispatches
                     (project_id, event_id, activity_id, workflow_id, run_id, state,
                      definition_version)
                 SELECT ev.project_id, ev.event_id, s.activity_id, s.workflow_id, s.run_id,
                        'pending', s.version
                 FROM json_to_recordset($2::json)
                          AS s(idx int8, activity_id uuid, workflow_id text, run_id uuid, version int8)
                 JOIN input i ON i.idx = s.idx
                 JOIN ev ON ev.project_id = i.project_id AND ev.event_id = i.event_id
                 ORDER BY ev.event_id, s.activity_id
                 ON CONFLICT (event_id, activity_id) DO NOTHING
                 RETURNING project_id, event_id
             )
             SELECT i.idx AS "idx!", ev.received_at AS "received_at!",
                    (SELECT count(*) FROM d
                      WHERE d.project_id = ev.project_id AND d.event_id = ev.event_id) AS "dispatched!"
             FROM input i JOIN ev ON ev.project_id = i.project_id AND ev.event_id = i.event_id"#,
            // Bound as text, cast by the statement.
            events_in as _,
            dispatches as _,
        )
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
