//! `activity_runs` and `task_instances`: every write is an upsert keyed by
//! the derived IDs, so Temporal activity retries never duplicate a row.

use chrono::{DateTime, Utc};
use sqlx::PgPool;
use sqlx::types::Json;
use uuid::Uuid;

use super::audit::{self, Audit};
use super::run_history::named;
use super::{StoreError, StoreResult};
use acp_domain::activity::ActivityDefinition;
use acp_domain::misfire::SkipReason;
use acp_domain::run::{Cancellation, RunStatus, RunTrigger};

mod requested;
mod tasks;

/// A task row written without its task having started.
#[derive(Debug, Clone)]
pub struct NewTask {
    pub id: Uuid,
    pub workflow_id: String,
    pub task_type: String,
    pub index: i32,
    pub name: Option<String>,
}

impl NewTask {
    /// Task `index` of a run, under its contract IDs.
    pub fn of_run(run_id: Uuid, index: u32, task_type: &str, name: Option<String>) -> Self {
        let workflow_id = acp_domain::ids::task_workflow_id(run_id, task_type, index as usize);
        Self {
            id: acp_domain::ids::task_instance_id(&workflow_id),
            workflow_id,
            task_type: task_type.to_owned(),
            index: index as i32,
            name,
        }
    }
}

/// The row a run starts as.
#[derive(Debug, Clone)]
pub struct NewRun<'a> {
    pub run_id: Uuid,
    pub activity_id: Uuid,
    pub workflow_id: &'a str,
    pub trigger: RunTrigger,
    pub scheduled_for: Option<DateTime<Utc>>,
    pub event_id: Option<&'a str>,
    pub window_start: Option<DateTime<Utc>>,
    pub window_end: Option<DateTime<Utc>>,
    pub definition_version: i64,
    pub context: &'a serde_json::Value,
    pub tasks_total: i32,
    /// Flow-controlled: it starts `queued`, and `running` once it has a slot.
    pub queued: bool,
}

#[derive(Clone)]
pub struct RunStore {
    pub(super) pool: PgPool,
}

impl RunStore {
    pub(super) fn pool(&self) -> &PgPool {
        &self.pool
    }

    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }

    /// The definition a run executes: exactly the version it was started with.
    pub async fn definition_at(
        &self,
        activity_id: Uuid,
        version: i64,
    ) -> StoreResult<ActivityDefinition> {
        let row = sqlx::query_scalar!(
            r#"SELECT definition AS "definition: Json<ActivityDefinition>"
               FROM activity_versions WHERE activity_id = $1 AND version = $2"#,
            activity_id,
            version,
        )
        .fetch_optional(&self.pool)
        .await?;
        row.map(|d| d.0).ok_or(StoreError::NotFound)
    }

    /// `INSERT … ON CONFLICT`: a retried `log_run` finds its row untouched;
    /// a nominal time recorded as skipped and later run on purpose (a
    /// backfill) becomes a running run. Returns whether this call wrote.
    #[tracing::instrument(skip(self, run), fields(run_id = %run.run_id))]
    pub async fn insert_run(&self, run: &NewRun<'_>) -> StoreResult<bool> {
        let result = sqlx::query!(
            "INSERT INTO activity_runs (run_id, activity_id, workflow_id, trigger_type, scheduled_for,
                 event_id, status, window_start, window_end, definition_version, context, started_at,
                 tasks_total)
             VALUES ($1, $2, $3, $4, $5, $6, $12, $7, $8, $9, $10,
                 CASE WHEN $12 = 'running' THEN now() END, $11)
             ON CONFLICT (run_id) DO UPDATE SET status = EXCLUDED.status, skip_reason = NULL,
                 window_start = EXCLUDED.window_start, window_end = EXCLUDED.window_end,
                 definition_version = EXCLUDED.definition_version, context = EXCLUDED.context,
                 started_at = EXCLUDED.started_at,
                 tasks_total = EXCLUDED.tasks_total
             WHERE activity_runs.status = 'skipped'",
            run.run_id,
            run.activity_id,
            run.workflow_id,
            run.trigger.as_str(),
            run.scheduled_for,
            run.event_id,
            run.window_start,
            run.window_end,
            run.definition_version,
            run.context,
            run.tasks_total,
            if run.queued { "queued" } else { "running" },
        )
        .execute(&self.pool)
        .await?;
        Ok(result.rows_affected() == 1)
    }

    /// Records that a nominal time was not run, and why. A time that already
    /// has a run keeps it.
    #[allow(clippy::too_many_arguments)]
    pub async fn insert_skipped(
        &self,
        run_id: Uuid,
        activity_id: Uuid,
        workflow_id: &str,
        trigger: RunTrigger,
        scheduled_for: DateTime<Utc>,
        reason: SkipReason,
        definition_version: i64,
    ) -> StoreResult<()> {
        sqlx::query!(
            "INSERT INTO activity_runs (run_id, activity_id, workflow_id, trigger_type, scheduled_for,
                 status, skip_reason, definition_version, finished_at)
             VALUES ($1, $2, $3, $4, $5, 'skipped', $6, $7, now())
             ON CONFLICT (run_id) DO NOTHING",
            run_id,
            activity_id,
            workflow_id,
            trigger.as_str(),
            scheduled_for,
            reason.as_str(),
            definition_version,
        )
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Where the last window a run covered ended.
    pub async fn last_window_end(&self, activity_id: Uuid) -> StoreResult<Option<DateTime<Utc>>> {
        let end = sqlx::query_scalar!(
            "SELECT max(window_end) FROM activity_runs WHERE activity_id = $1 AND status <> 'skipped'",
            activity_id,
        )
        .fetch_one(&self.pool)
        .await?;
        Ok(end)
    }

    /// Ends a run, by key. A run already ended keeps its first ending. A
    /// cancellation that the run's deadline asked for ends it `timed_out`.
    /// Returns the run's activity and the status written when this call
    /// ended it.
    pub async fn finish_run(
        &self,
        run_id: Uuid,
        status: RunStatus,
        error: Option<&str>,
        succeeded: i32,
        failed: i32,
    ) -> StoreResult<Option<(Uuid, RunStatus)>> {
        // A retried run keeps a row per attempt: the current one ends too.
        let ended = sqlx::query!(
            r#"WITH ended AS (
                 UPDATE activity_runs SET error = $3, tasks_succeeded = $4,
                     tasks_failed = $5, finished_at = now(),
                     status = CASE WHEN $2 = 'cancelled' AND cancel_timed_out
                                   THEN 'timed_out' ELSE $2 END
                 WHERE run_id = $1 AND status IN ('running', 'queued')
                 RETURNING activity_id, attempt, status),
             attempt AS (
                 UPDATE run_attempts a SET status = ended.status, error = $3, finished_at = now()
                 FROM ended WHERE a.run_id = $1 AND a.attempt = ended.attempt)
             SELECT activity_id AS "activity_id!", status AS "status!" FROM ended"#,
            run_id,
            status.as_str(),
            error,
            succeeded,
            failed,
        )
        .fetch_optional(&self.pool)
        .await?;
        ended
            .map(|r| Ok((r.activity_id, named("status", RunStatus::parse(&r.status))?)))
            .transpose()
    }

    /// Records a request to cancel a running run. The first request's reason
    /// and requester stay; a later `force` is recorded. `None` when the run
    /// is not running (any more).
    pub async fn request_cancel(
        &self,
        run_id: Uuid,
        reason: Option<&str>,
        requested_by: Option<Uuid>,
        force: bool,
        audit: Audit<'_>,
    ) -> StoreResult<Option<Cancellation>> {
        let mut tx = self.pool.begin().await?;
        let row = sqlx::query!(
            r#"UPDATE activity_runs SET cancel_requested_at = COALESCE(cancel_requested_at, now()),
                 cancel_reason = CASE WHEN cancel_requested_at IS NULL THEN $2 ELSE cancel_reason END,
                 cancelled_by = CASE WHEN cancel_requested_at IS NULL THEN $3 ELSE cancelled_by END,
                 cancel_forced = cancel_forced OR $4
             WHERE run_id = $1 AND status IN ('running', 'queued')
             RETURNING cancel_requested_at AS "cancel_requested_at!", cancel_reason, cancelled_by,
                 cancel_forced"#,
            run_id,
            reason,
            requested_by,
            force,
        )
        .fetch_optional(&mut *tx)
        .await?;
        if row.is_some() {
            audit::append_if(&mut tx, audit).await?;
        }
        tx.commit().await?;
        Ok(row.map(|r| Cancellation {
            requested_at: r.cancel_requested_at,
            reason: r.cancel_reason,
            requested_by: r.cancelled_by,
            forced: r.cancel_forced,
        }))
    }
}
