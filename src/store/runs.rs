//! `activity_runs` and `task_instances`: every write is an upsert keyed by
//! the derived IDs, so Temporal activity retries never duplicate a row.

use chrono::{DateTime, Utc};
use sqlx::PgPool;
use sqlx::types::Json;
use uuid::Uuid;

use super::run_history::named;
use super::{StoreError, StoreResult};
use crate::domain::activity::ActivityDefinition;
use crate::domain::misfire::SkipReason;
use crate::domain::run::{Cancellation, RunStatus, RunTrigger, TaskStatus};

/// `cancel_requested_at, cancel_reason, cancelled_by, cancel_forced`.
type CancelRow = (DateTime<Utc>, Option<String>, Option<Uuid>, bool);

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
        let workflow_id = crate::domain::ids::task_workflow_id(run_id, task_type, index as usize);
        Self {
            id: crate::domain::ids::task_instance_id(&workflow_id),
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
        let row: Option<(Json<ActivityDefinition>,)> = sqlx::query_as(
            "SELECT definition FROM activity_versions WHERE activity_id = $1 AND version = $2",
        )
        .bind(activity_id)
        .bind(version)
        .fetch_optional(&self.pool)
        .await?;
        row.map(|r| r.0.0).ok_or(StoreError::NotFound)
    }

    /// `INSERT … ON CONFLICT`: a retried `log_run` finds its row untouched;
    /// a nominal time recorded as skipped and later run on purpose (a
    /// backfill) becomes a running run. Returns whether this call wrote.
    #[tracing::instrument(skip(self, run), fields(run_id = %run.run_id))]
    pub async fn insert_run(&self, run: &NewRun<'_>) -> StoreResult<bool> {
        let result = sqlx::query(
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
        )
        .bind(run.run_id)
        .bind(run.activity_id)
        .bind(run.workflow_id)
        .bind(run.trigger.as_str())
        .bind(run.scheduled_for)
        .bind(run.event_id)
        .bind(run.window_start)
        .bind(run.window_end)
        .bind(run.definition_version)
        .bind(Json(run.context))
        .bind(run.tasks_total)
        .bind(if run.queued { "queued" } else { "running" })
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
        sqlx::query(
            "INSERT INTO activity_runs (run_id, activity_id, workflow_id, trigger_type, scheduled_for,
                 status, skip_reason, definition_version, finished_at)
             VALUES ($1, $2, $3, $4, $5, 'skipped', $6, $7, now())
             ON CONFLICT (run_id) DO NOTHING",
        )
        .bind(run_id)
        .bind(activity_id)
        .bind(workflow_id)
        .bind(trigger.as_str())
        .bind(scheduled_for)
        .bind(reason.as_str())
        .bind(definition_version)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Where the last window a run covered ended.
    pub async fn last_window_end(&self, activity_id: Uuid) -> StoreResult<Option<DateTime<Utc>>> {
        let (end,): (Option<DateTime<Utc>>,) = sqlx::query_as(
            "SELECT max(window_end) FROM activity_runs WHERE activity_id = $1 AND status <> 'skipped'",
        )
        .bind(activity_id)
        .fetch_one(&self.pool)
        .await?;
        Ok(end)
    }

    /// Whether a nominal time was asked for explicitly: `None` if not, else
    /// the window start the request chose for its run, if it chose one.
    pub async fn requested(
        &self,
        activity_id: Uuid,
        scheduled_for: DateTime<Utc>,
    ) -> StoreResult<Option<Option<DateTime<Utc>>>> {
        let row: Option<(Option<DateTime<Utc>>,)> = sqlx::query_as(
            "SELECT window_start FROM backfill_requests WHERE activity_id = $1 AND scheduled_for = $2",
        )
        .bind(activity_id)
        .bind(scheduled_for)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(|(window_start,)| window_start))
    }

    /// Records times asked for explicitly, to be handed to Temporal. Asking
    /// again for a time recorded before (a catch-up's plan, an earlier
    /// backfill) makes it undispatched again until this request's backfill
    /// is accepted.
    pub async fn request_times(
        &self,
        activity_id: Uuid,
        times: &[DateTime<Utc>],
    ) -> StoreResult<()> {
        sqlx::query(
            "INSERT INTO backfill_requests (activity_id, scheduled_for)
             SELECT $1, t FROM unnest($2::timestamptz[]) AS t
             ON CONFLICT (activity_id, scheduled_for)
             DO UPDATE SET requested_at = now(), dispatched_at = NULL",
        )
        .bind(activity_id)
        .bind(times)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Records the times a catch-up decided to run as asked for. Temporal
    /// already holds their fires (buffered behind the backlog), so they count
    /// as dispatched: nothing hands them over again.
    pub async fn plan_catch_up(
        &self,
        activity_id: Uuid,
        times: &[DateTime<Utc>],
    ) -> StoreResult<()> {
        sqlx::query(
            "INSERT INTO backfill_requests (activity_id, scheduled_for, dispatched_at)
             SELECT $1, t, now() FROM unnest($2::timestamptz[]) AS t ON CONFLICT DO NOTHING",
        )
        .bind(activity_id)
        .bind(times)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Marks requested times as accepted by Temporal.
    pub async fn mark_dispatched(
        &self,
        activity_id: Uuid,
        times: &[DateTime<Utc>],
    ) -> StoreResult<()> {
        sqlx::query(
            "UPDATE backfill_requests SET dispatched_at = now()
             WHERE activity_id = $1 AND scheduled_for = ANY($2) AND dispatched_at IS NULL",
        )
        .bind(activity_id)
        .bind(times)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Requested times that Temporal has not accepted yet, asked for at least
    /// `older_than` ago (younger ones may still be in their request), by
    /// activity, for live scheduled activities. Times that ran meanwhile are
    /// left out.
    pub async fn undispatched(
        &self,
        older_than: std::time::Duration,
    ) -> StoreResult<Vec<(Uuid, Vec<DateTime<Utc>>)>> {
        let rows: Vec<(Uuid, Vec<DateTime<Utc>>)> = sqlx::query_as(
            "SELECT b.activity_id, array_agg(b.scheduled_for ORDER BY b.scheduled_for)
             FROM backfill_requests b JOIN activities a ON a.id = b.activity_id
             WHERE b.dispatched_at IS NULL AND a.deleted_at IS NULL
               AND b.requested_at < now() - make_interval(secs => $1)
               AND NOT EXISTS (SELECT 1 FROM activity_runs r
                               WHERE r.activity_id = b.activity_id AND r.scheduled_for = b.scheduled_for
                                 AND r.status <> 'skipped')
             GROUP BY b.activity_id",
        )
        .bind(older_than.as_secs_f64())
        .fetch_all(&self.pool)
        .await?;
        Ok(rows)
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
        let ended: Option<(Uuid, String)> = sqlx::query_as(
            "WITH ended AS (
                 UPDATE activity_runs SET error = $3, tasks_succeeded = $4,
                     tasks_failed = $5, finished_at = now(),
                     status = CASE WHEN $2 = 'cancelled' AND cancel_timed_out
                                   THEN 'timed_out' ELSE $2 END
                 WHERE run_id = $1 AND status IN ('running', 'queued')
                 RETURNING activity_id, attempt, status),
             attempt AS (
                 UPDATE run_attempts a SET status = ended.status, error = $3, finished_at = now()
                 FROM ended WHERE a.run_id = $1 AND a.attempt = ended.attempt)
             SELECT activity_id, status FROM ended",
        )
        .bind(run_id)
        .bind(status.as_str())
        .bind(error)
        .bind(succeeded)
        .bind(failed)
        .fetch_optional(&self.pool)
        .await?;
        ended
            .map(|(activity_id, status)| {
                Ok((activity_id, named("status", RunStatus::parse(&status))?))
            })
            .transpose()
    }

    /// Upserts a task instance as started. A task that failed or was
    /// cancelled in an earlier attempt of its run starts again, its earlier
    /// outcome kept in `previous_attempts`; within one attempt (an activity
    /// retry) the row is left as it is.
    #[allow(clippy::too_many_arguments)]
    pub async fn start_task(
        &self,
        id: Uuid,
        run_id: Uuid,
        workflow_id: &str,
        task_type: &str,
        index: i32,
        name: Option<&str>,
    ) -> StoreResult<()> {
        sqlx::query(
            "INSERT INTO task_instances (id, run_id, workflow_id, task_type, task_index, name, status,
                 started_at, run_attempt)
             VALUES ($1, $2, $3, $4, $5, $6, 'running', now(),
                 COALESCE((SELECT attempt FROM activity_runs WHERE run_id = $2), 1))
             ON CONFLICT (id) DO UPDATE SET status = 'running', started_at = now(),
                 finished_at = NULL, output = NULL, error = NULL, attempts = 0,
                 run_attempt = EXCLUDED.run_attempt,
                 previous_attempts = task_instances.previous_attempts || jsonb_build_array(
                     jsonb_build_object('run_attempt', task_instances.run_attempt,
                         'status', task_instances.status, 'attempts', task_instances.attempts,
                         'started_at', task_instances.started_at,
                         'finished_at', task_instances.finished_at,
                         'error', task_instances.error))
             WHERE task_instances.status IN ('failed', 'cancelled')
               AND task_instances.run_attempt < EXCLUDED.run_attempt",
        )
        .bind(id)
        .bind(run_id)
        .bind(workflow_id)
        .bind(task_type)
        .bind(index)
        .bind(name)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Records that attempt `attempt` of a task's work began.
    pub async fn record_attempt(&self, id: Uuid, attempt: i32) -> StoreResult<()> {
        sqlx::query("UPDATE task_instances SET attempts = GREATEST(attempts, $2) WHERE id = $1")
            .bind(id)
            .bind(attempt)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    pub async fn finish_task(
        &self,
        id: Uuid,
        status: TaskStatus,
        attempts: i32,
        output: Option<&serde_json::Value>,
        error: Option<&str>,
    ) -> StoreResult<()> {
        sqlx::query(
            "UPDATE task_instances SET status = $2, attempts = GREATEST(attempts, $3), output = $4,
                 error = $5, finished_at = now()
             WHERE id = $1 AND status = 'running'",
        )
        .bind(id)
        .bind(status.as_str())
        .bind(attempts)
        .bind(output.map(Json))
        .bind(error)
        .execute(&self.pool)
        .await?;
        Ok(())
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
    ) -> StoreResult<Option<Cancellation>> {
        let row: Option<CancelRow> = sqlx::query_as(
            "UPDATE activity_runs SET cancel_requested_at = COALESCE(cancel_requested_at, now()),
                 cancel_reason = CASE WHEN cancel_requested_at IS NULL THEN $2 ELSE cancel_reason END,
                 cancelled_by = CASE WHEN cancel_requested_at IS NULL THEN $3 ELSE cancelled_by END,
                 cancel_forced = cancel_forced OR $4
             WHERE run_id = $1 AND status IN ('running', 'queued')
             RETURNING cancel_requested_at, cancel_reason, cancelled_by, cancel_forced",
        )
        .bind(run_id)
        .bind(reason)
        .bind(requested_by)
        .bind(force)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(
            |(requested_at, reason, requested_by, forced)| Cancellation {
                requested_at,
                reason,
                requested_by,
                forced,
            },
        ))
    }

    /// Marks a cancelled run's task rows: the one it interrupted (still
    /// `running`) and those it never started (inserted as `cancelled`).
    pub async fn cancel_tasks(&self, run_id: Uuid, unstarted: &[NewTask]) -> StoreResult<()> {
        let mut tx = self.pool.begin().await?;
        sqlx::query(
            "UPDATE task_instances SET status = 'cancelled', finished_at = now()
             WHERE run_id = $1 AND status = 'running'",
        )
        .bind(run_id)
        .execute(&mut *tx)
        .await?;
        for task in unstarted {
            sqlx::query(
                "INSERT INTO task_instances (id, run_id, workflow_id, task_type, task_index, name, status,
                     finished_at, run_attempt)
                 VALUES ($1, $2, $3, $4, $5, $6, 'cancelled', now(),
                     COALESCE((SELECT attempt FROM activity_runs WHERE run_id = $2), 1))
                 ON CONFLICT (id) DO NOTHING",
            )
            .bind(task.id)
            .bind(run_id)
            .bind(&task.workflow_id)
            .bind(&task.task_type)
            .bind(task.index)
            .bind(task.name.as_deref())
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// The workflow IDs of a run's tasks that are running.
    pub async fn running_task_workflows(&self, run_id: Uuid) -> StoreResult<Vec<String>> {
        let rows: Vec<(String,)> = sqlx::query_as(
            "SELECT workflow_id FROM task_instances WHERE run_id = $1 AND status = 'running'",
        )
        .bind(run_id)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.into_iter().map(|r| r.0).collect())
    }
}
