//! `events` and `event_dispatches`: the event router's memory, which outlives
//! Temporal's retention.

use chrono::{DateTime, Utc};
use sqlx::types::Json;
use sqlx::{FromRow, PgPool, Postgres};
use uuid::Uuid;

use super::{StoreError, StoreResult};
use crate::domain::event::{DispatchOutcome, DispatchState, EventIdOrigin};
use crate::domain::run::RunStatus;

#[derive(Debug, Clone, FromRow)]
pub struct EventRecord {
    pub event_id: String,
    pub event_id_origin: EventIdOrigin,
    pub event_type: String,
    pub source: String,
    pub occurred_at: Option<DateTime<Utc>>,
    pub payload: Json<serde_json::Value>,
    pub received_at: DateTime<Utc>,
}

#[derive(Debug, Clone, FromRow)]
pub struct Dispatch {
    pub event_id: String,
    pub activity_id: Uuid,
    pub workflow_id: String,
    pub run_id: Uuid,
    pub state: DispatchState,
    pub outcome: Option<DispatchOutcome>,
    pub attempts: i32,
    pub last_error: Option<String>,
    pub created_at: DateTime<Utc>,
    pub completed_at: Option<DateTime<Utc>>,
    /// The run's status, when its row exists.
    pub run_status: Option<RunStatus>,
    /// The definition version the dispatch runs.
    pub definition_version: i64,
}

/// A pending dispatch leased for starting, with what its run needs of the event.
#[derive(Debug, Clone, FromRow)]
pub struct LeasedDispatch {
    pub event_id: String,
    pub activity_id: Uuid,
    pub workflow_id: String,
    pub definition_version: i64,
    pub event_type: String,
    pub source: String,
    pub occurred_at: Option<DateTime<Utc>>,
    pub payload: Json<serde_json::Value>,
}

/// An enabled event activity subscribed to an event type.
#[derive(Debug, Clone, FromRow)]
pub struct Subscriber {
    pub id: Uuid,
    pub version: i64,
}

#[derive(Debug, Clone, Default)]
pub struct EventFilter {
    pub event_type: Option<String>,
    pub source: Option<String>,
    pub received_from: Option<DateTime<Utc>>,
    pub received_to: Option<DateTime<Utc>>,
}

#[derive(FromRow)]
struct LeasedRow {
    #[sqlx(flatten)]
    dispatch: LeasedDispatch,
    created_at: DateTime<Utc>,
}

#[derive(Clone)]
pub struct EventStore {
    pool: PgPool,
}

const DISPATCH_COLUMNS: &str = "d.event_id, d.activity_id, d.workflow_id, d.run_id, d.state, d.outcome, \
    d.attempts, d.last_error, d.created_at, d.completed_at, r.status AS run_status, d.definition_version";

impl EventStore {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }

    /// Records an event once; a re-delivery keeps the first record.
    pub async fn record(
        &self,
        event_id: &str,
        origin: &str,
        event_type: &str,
        source: &str,
        occurred_at: Option<DateTime<Utc>>,
        payload: &serde_json::Value,
    ) -> StoreResult<EventRecord> {
        let inserted: Option<EventRecord> = sqlx::query_as(
            "INSERT INTO events (event_id, event_id_origin, event_type, source, occurred_at, payload)
             VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (event_id) DO NOTHING RETURNING *",
        )
        .bind(event_id)
        .bind(origin)
        .bind(event_type)
        .bind(source)
        .bind(occurred_at)
        .bind(Json(payload))
        .fetch_optional(&self.pool)
        .await?;
        // Only a re-delivery pays for the second round trip.
        match inserted {
            Some(record) => Ok(record),
            None => self.get(event_id).await,
        }
    }

    pub async fn get(&self, event_id: &str) -> StoreResult<EventRecord> {
        sqlx::query_as("SELECT * FROM events WHERE event_id = $1")
            .bind(event_id)
            .fetch_optional(&self.pool)
            .await?
            .ok_or(StoreError::NotFound)
    }

    /// Enabled, live event activities subscribed to `event_type`.
    pub async fn subscribers(&self, event_type: &str) -> StoreResult<Vec<Subscriber>> {
        Ok(sqlx::query_as(
            "SELECT id, version FROM activities
             WHERE deleted_at IS NULL AND trigger_type = 'event' AND enabled AND NOT paused
               AND event_types @> ARRAY[$1]::text[]
             ORDER BY id",
        )
        .bind(event_type)
        .fetch_all(&self.pool)
        .await?)
    }

    /// Writes the dispatch row before the start, leased for `lease` when
    /// the caller starts it itself (no dispatcher takes it meanwhile).
    /// Returns the row as it now stands (this call's, or an earlier
    /// delivery's).
    pub async fn claim(
        &self,
        event_id: &str,
        activity_id: Uuid,
        workflow_id: &str,
        run_id: Uuid,
        definition_version: i64,
        lease: Option<std::time::Duration>,
    ) -> StoreResult<Dispatch> {
        let claimed: Option<Dispatch> = sqlx::query_as(
            "INSERT INTO event_dispatches AS d
                 (event_id, activity_id, workflow_id, run_id, state, definition_version, leased_until)
             VALUES ($1, $2, $3, $4, 'pending', $5, now() + $6::interval)
             ON CONFLICT (event_id, activity_id) DO NOTHING
             RETURNING d.event_id, d.activity_id, d.workflow_id, d.run_id, d.state, d.outcome, d.attempts,
                 d.last_error, d.created_at, d.completed_at, NULL::text AS run_status, d.definition_version",
        )
        .bind(event_id)
        .bind(activity_id)
        .bind(workflow_id)
        .bind(run_id)
        .bind(definition_version)
        .bind(lease)
        .fetch_optional(&self.pool)
        .await?;
        match claimed {
            Some(dispatch) => Ok(dispatch),
            None => self.dispatch(event_id, activity_id).await,
        }
    }

    /// Leases up to `limit` pending dispatches whose lease (if any) lapsed,
    /// oldest first, for `lease`; rows another dispatcher is leasing right
    /// now are skipped, not waited for.
    pub async fn lease_due(
        &self,
        limit: i64,
        lease: std::time::Duration,
    ) -> StoreResult<Vec<LeasedDispatch>> {
        let mut rows: Vec<(LeasedDispatch, DateTime<Utc>)> = sqlx::query_as::<_, LeasedRow>(
            "WITH due AS (
                 SELECT event_id, activity_id FROM event_dispatches
                 WHERE state = 'pending' AND (leased_until IS NULL OR leased_until < now())
                 ORDER BY created_at LIMIT $1
                 FOR UPDATE SKIP LOCKED
             )
             UPDATE event_dispatches d SET leased_until = now() + $2::interval
             FROM due, events e
             WHERE d.event_id = due.event_id AND d.activity_id = due.activity_id
               AND e.event_id = d.event_id
             RETURNING d.event_id, d.activity_id, d.workflow_id, d.definition_version,
                 e.event_type, e.source, e.occurred_at, e.payload, d.created_at",
        )
        .bind(limit)
        .bind(lease)
        .fetch_all(&self.pool)
        .await?
        .into_iter()
        .map(|r| (r.dispatch, r.created_at))
        .collect();
        // UPDATE ... RETURNING keeps no order: arrival order again.
        rows.sort_by_key(|(_, created_at)| *created_at);
        Ok(rows.into_iter().map(|(d, _)| d).collect())
    }

    /// Gives a leased dispatch back to be retried no sooner than `after`.
    pub async fn release(
        &self,
        event_id: &str,
        activity_id: Uuid,
        after: std::time::Duration,
    ) -> StoreResult<()> {
        sqlx::query(
            "UPDATE event_dispatches SET leased_until = now() + $3::interval
             WHERE event_id = $1 AND activity_id = $2 AND state = 'pending'",
        )
        .bind(event_id)
        .bind(activity_id)
        .bind(after)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    pub async fn dispatch(&self, event_id: &str, activity_id: Uuid) -> StoreResult<Dispatch> {
        sqlx::query_as(&format!(
            "SELECT {DISPATCH_COLUMNS} FROM event_dispatches d
             LEFT JOIN activity_runs r ON r.workflow_id = d.workflow_id
             WHERE d.event_id = $1 AND d.activity_id = $2"
        ))
        .bind(event_id)
        .bind(activity_id)
        .fetch_optional(&self.pool)
        .await?
        .ok_or(StoreError::NotFound)
    }

    /// Marks a dispatch done: its workflow exists in Temporal.
    pub async fn complete(&self, event_id: &str, activity_id: Uuid) -> StoreResult<()> {
        sqlx::query(
            "UPDATE event_dispatches SET state = 'completed', outcome = 'started', completed_at = now(),
                 attempts = attempts + 1, last_error = NULL
             WHERE event_id = $1 AND activity_id = $2 AND state = 'pending'",
        )
        .bind(event_id)
        .bind(activity_id)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    pub async fn record_failure(
        &self,
        event_id: &str,
        activity_id: Uuid,
        error: &str,
    ) -> StoreResult<()> {
        sqlx::query(
            "UPDATE event_dispatches SET attempts = attempts + 1, last_error = $3
             WHERE event_id = $1 AND activity_id = $2 AND state = 'pending'",
        )
        .bind(event_id)
        .bind(activity_id)
        .bind(error)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    pub async fn dispatches_of(&self, event_id: &str) -> StoreResult<Vec<Dispatch>> {
        Ok(sqlx::query_as(&format!(
            "SELECT {DISPATCH_COLUMNS} FROM event_dispatches d
             LEFT JOIN activity_runs r ON r.workflow_id = d.workflow_id
             WHERE d.event_id = $1 ORDER BY d.activity_id"
        ))
        .bind(event_id)
        .fetch_all(&self.pool)
        .await?)
    }

    pub async fn list(
        &self,
        filter: &EventFilter,
        after: Option<(DateTime<Utc>, String)>,
        limit: i64,
    ) -> StoreResult<Vec<EventRecord>> {
        let mut qb = sqlx::QueryBuilder::<Postgres>::new("SELECT * FROM events WHERE true");
        if let Some(t) = &filter.event_type {
            qb.push(" AND event_type = ").push_bind(t.clone());
        }
        if let Some(s) = &filter.source {
            qb.push(" AND source = ").push_bind(s.clone());
        }
        if let Some(t) = filter.received_from {
            qb.push(" AND received_at >= ").push_bind(t);
        }
        if let Some(t) = filter.received_to {
            qb.push(" AND received_at < ").push_bind(t);
        }
        if let Some((at, id)) = after {
            qb.push(" AND (received_at, event_id) < (")
                .push_bind(at)
                .push(", ")
                .push_bind(id)
                .push(")");
        }
        qb.push(" ORDER BY received_at DESC, event_id DESC LIMIT ")
            .push_bind(limit);
        Ok(qb.build_query_as().fetch_all(&self.pool).await?)
    }
}
