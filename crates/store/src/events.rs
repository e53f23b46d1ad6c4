//! `events` and `event_dispatches`: the event intake's memory, which outlives
//! Temporal's retention.

use chrono::{DateTime, Utc};
use sqlx::types::Json;
use sqlx::{FromRow, PgPool, Postgres};
use uuid::Uuid;

mod rows;

use super::{StoreError, StoreResult, Text};
use acp_domain::event::{Dispatch, DispatchOutcome, DispatchState, EventRecord};
use acp_domain::flow::{Arrival, Debounce, Settle, settle_debounce};
use acp_domain::project::ProjectId;
use acp_domain::query::EventFilter;
use rows::{DispatchRow, EventRow};

/// An enabled event activity subscribed to an event type.
#[derive(Debug, Clone, FromRow)]
pub struct Subscriber {
    pub id: Uuid,
    pub version: i64,
    /// Its `flow.debounce`, if any.
    pub debounce: Option<Json<Debounce>>,
}

/// What settling a debounced dispatch found (see [`settle_debounce`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Settled {
    /// It is no longer pending (settled by another dispatcher, or absorbed
    /// by its burst's run): nothing to start.
    Done(Option<DispatchOutcome>),
    /// Absorbed now: completed `debounced`, recorded as a skipped run.
    Absorbed,
    /// It runs, carrying the events it absorbed (oldest first, each now
    /// completed `debounced` naming this dispatch's run).
    Run { absorbed: Vec<String> },
}

/// Separates the debounce locks from the other users of advisory locks.
const DEBOUNCE_LOCK_CLASS: i32 = 0x0f10_0016;

#[derive(Clone)]
pub struct EventStore {
    pub(super) pool: PgPool,
}

impl EventStore {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }

    /// Records an event once in its project; a re-delivery keeps the first
    /// record.
    #[allow(clippy::too_many_arguments)]
    pub async fn record(
        &self,
        project: &ProjectId,
        event_id: &str,
        origin: &str,
        event_type: &str,
        source: &str,
        occurred_at: Option<DateTime<Utc>>,
        payload: &serde_json::Value,
    ) -> StoreResult<EventRecord> {
        let inserted = sqlx::query_as!(
            EventRow,
            r#"INSERT INTO events
                 (event_id, event_id_origin, event_type, source, occurred_at, payload, project_id)
             VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (project_id, event_id) DO NOTHING
             RETURNING event_id, event_id_origin AS "event_id_origin: _", event_type, source,
                 occurred_at, payload, received_at"#,
            event_id,
            origin,
            event_type,
            source,
            occurred_at,
            payload,
            project.as_str(),
        )
        .fetch_optional(&self.pool)
        .await?;
        // Only a re-delivery pays for the second round trip.
        match inserted {
            Some(record) => Ok(record.into()),
            None => self.get(project, event_id).await,
        }
    }

    /// The project's event of this ID.
    pub async fn get(&self, project: &ProjectId, event_id: &str) -> StoreResult<EventRecord> {
        sqlx::query_as!(
            EventRow,
            r#"SELECT event_id, event_id_origin AS "event_id_origin: _", event_type, source,
                 occurred_at, payload, received_at
             FROM events WHERE project_id = $1 AND event_id = $2"#,
            project.as_str(),
            event_id,
        )
        .fetch_optional(&self.pool)
        .await?
        .map(Into::into)
        .ok_or(StoreError::NotFound)
    }

    /// The project's enabled, live event activities subscribed to
    /// `event_type`: an event reaches its own project's activities only.
    pub async fn subscribers(
        &self,
        project: &ProjectId,
        event_type: &str,
    ) -> StoreResult<Vec<Subscriber>> {
        Ok(sqlx::query_as!(
            Subscriber,
            r#"SELECT id, version, definition -> 'flow' -> 'debounce' AS "debounce: _" FROM activities
             WHERE deleted_at IS NULL AND trigger_type = 'event' AND enabled AND NOT paused
               AND event_types @> ARRAY[$1]::text[] AND project_id = $2
             ORDER BY id"#,
            event_type,
            project.as_str(),
        )
        .fetch_all(&self.pool)
        .await?)
    }

    /// Writes the dispatch row before the start, leased for `lease` when
    /// the caller starts it itself (no dispatcher takes it meanwhile).
    /// Returns the row as it now stands (this call's, or an earlier
    /// delivery's).
    #[allow(clippy::too_many_arguments)]
    pub async fn claim(
        &self,
        project: &ProjectId,
        event_id: &str,
        activity_id: Uuid,
        workflow_id: &str,
        run_id: Uuid,
        definition_version: i64,
        lease: Option<std::time::Duration>,
    ) -> StoreResult<Dispatch> {
        let claimed = sqlx::query_as!(
            DispatchRow,
            r#"INSERT INTO event_dispatches AS d
                 (event_id, activity_id, workflow_id, run_id, state, definition_version, leased_until,
                  project_id)
             VALUES ($1, $2, $3, $4, 'pending', $5, now() + $6::interval, $7)
             ON CONFLICT (event_id, activity_id) DO NOTHING
             RETURNING d.event_id, d.activity_id, d.workflow_id, d.run_id, d.state AS "state: _",
                 d.outcome AS "outcome: _", d.attempts, d.last_error, d.created_at, d.completed_at,
                 NULL::text AS "run_status?: _", d.definition_version, d.absorbed_by"#,
            event_id,
            activity_id,
            workflow_id,
            run_id,
            definition_version,
            lease as _,
            project.as_str(),
        )
        .fetch_optional(&self.pool)
        .await?;
        match claimed {
            Some(dispatch) => Ok(dispatch.into()),
            None => self.dispatch(event_id, activity_id).await,
        }
    }

    /// Writes a debounced dispatch: not taken by a dispatcher before
    /// `period` has passed (its lease starts there), when it is settled.
    /// Its arrival time is read under the key's lock (shared with other
    /// arrivals, exclusive to a settle), so a settle sees every arrival of
    /// its key up to its own `debounce_until`: one it does not see arrived
    /// after the settle began, so after that time.
    #[allow(clippy::too_many_arguments)]
    pub async fn claim_debounced(
        &self,
        project: &ProjectId,
        event_id: &str,
        activity_id: Uuid,
        workflow_id: &str,
        run_id: Uuid,
        definition_version: i64,
        key: &str,
        period: std::time::Duration,
    ) -> StoreResult<Dispatch> {
        let mut tx = self.pool.begin().await?;
        sqlx::query!(
            "SELECT pg_advisory_xact_lock_shared($1, hashtext($2))",
            DEBOUNCE_LOCK_CLASS,
            format!("{activity_id}/{key}"),
        )
        .fetch_one(&mut *tx)
        .await?;
        let claimed = sqlx::query_as!(
            DispatchRow,
            r#"WITH t AS (SELECT clock_timestamp() AS at)
             INSERT INTO event_dispatches AS d
                 (event_id, activity_id, workflow_id, run_id, state, definition_version,
                  created_at, leased_until, debounce_key, debounce_until, project_id)
             SELECT $1, $2, $3, $4, 'pending', $5, t.at, t.at + $6::interval, $7, t.at + $6::interval, $8
               FROM t
             ON CONFLICT (event_id, activity_id) DO NOTHING
             RETURNING d.event_id, d.activity_id, d.workflow_id, d.run_id, d.state AS "state: _",
                 d.outcome AS "outcome: _", d.attempts, d.last_error, d.created_at, d.completed_at,
                 NULL::text AS "run_status?: _", d.definition_version, d.absorbed_by"#,
            event_id,
            activity_id,
            workflow_id,
            run_id,
            definition_version,
            period as _,
            key,
            project.as_str(),
        )
        .fetch_optional(&mut *tx)
        .await?;
        tx.commit().await?;
        match claimed {
            Some(dispatch) => Ok(dispatch.into()),
            None => self.dispatch(event_id, activity_id).await,
        }
    }

    /// Settles a debounced dispatch whose period has passed, under its key's
    /// lock: absorbed (a later event of the key came within its period), or
    /// the last of its burst, which runs and takes the burst's events. Every
    /// event absorbed is recorded as a `skipped` run (`debounced`) under its
    /// own contract workflow ID, which therefore never runs.
    pub async fn settle_debounced(
        &self,
        event_id: &str,
        activity_id: Uuid,
    ) -> StoreResult<Settled> {
        let key = sqlx::query_scalar!(
            "SELECT debounce_key FROM event_dispatches WHERE event_id = $1 AND activity_id = $2",
            event_id,
            activity_id,
        )
        .fetch_optional(&self.pool)
        .await?;
        let Some(Some(key)) = key else {
            return Ok(Settled::Run {
                absorbed: Vec::new(),
            });
        };
        let mut tx = self.pool.begin().await?;
        // The key's lock before any row lock: a settle that runs updates the
        // rows of its burst.
        sqlx::query!(
            "SELECT pg_advisory_xact_lock($1, hashtext($2))",
            DEBOUNCE_LOCK_CLASS,
            format!("{activity_id}/{key}"),
        )
        .fetch_one(&mut *tx)
        .await?;
        let current = sqlx::query!(
            r#"SELECT state AS "state: Text<DispatchState>", outcome AS "outcome: Text<DispatchOutcome>",
                 created_at, debounce_until, run_id
             FROM event_dispatches WHERE event_id = $1 AND activity_id = $2 FOR UPDATE"#,
            event_id,
            activity_id,
        )
        .fetch_one(&mut *tx)
        .await?;
        if current.state.0 != DispatchState::Pending {
            tx.commit().await?;
            return Ok(Settled::Done(current.outcome.map(|o| o.0)));
        }
        let (created_at, run_id) = (current.created_at, current.run_id);
        let until = current.debounce_until.unwrap_or(created_at);
        // The key's arrivals since its last run that started (the end of an
        // earlier burst) up to this one's `until`, in order.
        let rows = sqlx::query!(
            "SELECT event_id, created_at, debounce_until FROM event_dispatches
              WHERE activity_id = $1 AND debounce_key = $2 AND created_at <= $4
                AND created_at > coalesce((
                    SELECT max(created_at) FROM event_dispatches
                     WHERE activity_id = $1 AND debounce_key = $2 AND created_at < $3
                       AND outcome IN ('started', 'duplicate')), '-infinity')
              ORDER BY created_at, event_id",
            activity_id,
            key,
            created_at,
            until,
        )
        .fetch_all(&mut *tx)
        .await?;
        let me = rows
            .iter()
            .position(|r| r.event_id == event_id)
            .unwrap_or(rows.len());
        let arrivals: Vec<Arrival> = rows
            .iter()
            .map(|r| Arrival {
                at: r.created_at,
                until: r.debounce_until.unwrap_or(r.created_at),
            })
            .collect();
        let settled = match settle_debounce(&arrivals, me) {
            Settle::Absorbed => {
                absorb(&mut tx, activity_id, &[event_id.to_owned()], None).await?;
                Settled::Absorbed
            }
            Settle::Run { from } => {
                let absorbed: Vec<String> = rows
                    .get(from..me)
                    .unwrap_or_default()
                    .iter()
                    .map(|r| r.event_id.clone())
                    .collect();
                absorb(&mut tx, activity_id, &absorbed, Some(run_id)).await?;
                Settled::Run { absorbed }
            }
        };
        tx.commit().await?;
        Ok(settled)
    }

    pub async fn dispatch(&self, event_id: &str, activity_id: Uuid) -> StoreResult<Dispatch> {
        sqlx::query_as!(
            DispatchRow,
            r#"SELECT d.event_id, d.activity_id, d.workflow_id, d.run_id, d.state AS "state: _",
                 d.outcome AS "outcome: _", d.attempts, d.last_error, d.created_at, d.completed_at,
                 r.status AS "run_status?: _", d.definition_version, d.absorbed_by
             FROM event_dispatches d
             LEFT JOIN activity_runs r ON r.workflow_id = d.workflow_id
             WHERE d.event_id = $1 AND d.activity_id = $2"#,
            event_id,
            activity_id,
        )
        .fetch_optional(&self.pool)
        .await?
        .map(Into::into)
        .ok_or(StoreError::NotFound)
    }

    /// The dispatches of the project's event of this ID.
    pub async fn dispatches_of(
        &self,
        project: &ProjectId,
        event_id: &str,
    ) -> StoreResult<Vec<Dispatch>> {
        Ok(sqlx::query_as!(
            DispatchRow,
            r#"SELECT d.event_id, d.activity_id, d.workflow_id, d.run_id, d.state AS "state: _",
                 d.outcome AS "outcome: _", d.attempts, d.last_error, d.created_at, d.completed_at,
                 r.status AS "run_status?: _", d.definition_version, d.absorbed_by
             FROM event_dispatches d
             LEFT JOIN activity_runs r ON r.workflow_id = d.workflow_id
             WHERE d.project_id = $1 AND d.event_id = $2 ORDER BY d.activity_id"#,
            project.as_str(),
            event_id,
        )
        .fetch_all(&self.pool)
        .await?
        .into_iter()
        .map(Into::into)
        .collect())
    }

    /// The project's events, newest first.
    pub async fn list(
        &self,
        project: &ProjectId,
        filter: &EventFilter,
        after: Option<(DateTime<Utc>, String)>,
        limit: i64,
    ) -> StoreResult<Vec<EventRecord>> {
        let mut qb =
            sqlx::QueryBuilder::<Postgres>::new("SELECT * FROM events WHERE project_id = ");
        qb.push_bind(project.as_str().to_owned());
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
        Ok(qb
            .build_query_as::<EventRow>()
            .fetch_all(&self.pool)
            .await?
            .into_iter()
            .map(EventRecord::from)
            .collect())
    }
}

/// Completes debounced dispatches as absorbed (naming the run that took
/// them, once known) and records each as a `skipped` run, reason
/// `debounced`, under its own contract workflow ID.
async fn absorb(
    tx: &mut sqlx::Transaction<'_, Postgres>,
    activity_id: Uuid,
    event_ids: &[String],
    by: Option<Uuid>,
) -> StoreResult<()> {
    if event_ids.is_empty() {
        return Ok(());
    }
    sqlx::query!(
        "UPDATE event_dispatches SET state = 'completed', outcome = 'debounced',
             completed_at = coalesce(completed_at, now()), leased_until = NULL,
             absorbed_by = coalesce($3, absorbed_by)
         WHERE activity_id = $1 AND event_id = ANY($2)",
        activity_id,
        event_ids,
        by,
    )
    .execute(&mut **tx)
    .await?;
    sqlx::query!(
        "INSERT INTO activity_runs (run_id, activity_id, workflow_id, trigger_type, event_id,
             status, skip_reason, definition_version, finished_at)
         SELECT run_id, activity_id, workflow_id, 'event', event_id, 'skipped', 'debounced',
             definition_version, now()
           FROM event_dispatches WHERE activity_id = $1 AND event_id = ANY($2)
         ON CONFLICT (run_id) DO NOTHING",
        activity_id,
        event_ids,
    )
    .execute(&mut **tx)
    .await?;
    Ok(())
}
