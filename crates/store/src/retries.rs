//! Retries of runs: the conditional update that begins an attempt, and the
//! attempts a run has had.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::audit::{self, Audit};
use super::runs::RunStore;
use super::{StoreError, StoreResult};
use acp_domain::retry::RunAttempt;
use acp_domain::run::{RunStatus, RunTrigger, TaskStatus};

/// The filters of a bulk request, beside the statuses its action takes.
#[derive(Debug, Clone, Default)]
pub struct BulkFilter {
    pub trigger_type: Option<RunTrigger>,
    pub scheduled_from: Option<DateTime<Utc>>,
    pub scheduled_to: Option<DateTime<Utc>>,
}

/// What a retry request found on the run's row.
#[derive(Debug, Clone, PartialEq)]
pub enum RetryBegun {
    /// This call began attempt `attempt`; nobody else can for this attempt.
    Begun { attempt: i32 },
    /// The run's status does not allow a retry (any more).
    Refused(RunStatus),
}

fn status_of(name: &str) -> StoreResult<RunStatus> {
    RunStatus::parse(name).map_err(|m| StoreError::Other(anyhow::anyhow!("status: {m}")))
}

impl RunStore {
    /// Begins the next attempt of a failed or cancelled run: under the row's
    /// lock, so of any number of concurrent requests exactly one sees the
    /// run retryable; the others wait for it and then see it `running`.
    /// Records the attempt that ended (for a first retry, attempt 1 from the
    /// row) and the new one; the row describes the new attempt from now on.
    pub async fn begin_retry(
        &self,
        run_id: Uuid,
        requested_by: Option<Uuid>,
    ) -> StoreResult<RetryBegun> {
        let mut tx = self.pool.begin().await?;
        let row = sqlx::query!(
            "SELECT status, attempt, error, started_at, finished_at, created_at
             FROM activity_runs WHERE run_id = $1 FOR UPDATE",
            run_id,
        )
        .fetch_optional(&mut *tx)
        .await?
        .ok_or(StoreError::NotFound)?;
        let status = status_of(&row.status)?;
        let attempt = row.attempt;
        if acp_domain::retry::not_retryable(status).is_some() {
            return Ok(RetryBegun::Refused(status));
        }
        // Attempt 1 has no row until the first retry: write it from the run.
        sqlx::query!(
            "INSERT INTO run_attempts (run_id, attempt, requested_at, dispatched_at, status, error,
                 finished_at)
             VALUES ($1, $2, $3, $3, $4, $5, $6)
             ON CONFLICT (run_id, attempt) DO UPDATE SET status = EXCLUDED.status,
                 error = EXCLUDED.error, finished_at = EXCLUDED.finished_at",
            run_id,
            attempt,
            row.started_at.unwrap_or(row.created_at),
            status.as_str(),
            row.error.as_deref(),
            row.finished_at,
        )
        .execute(&mut *tx)
        .await?;
        let next = attempt + 1;
        sqlx::query!(
            "INSERT INTO run_attempts (run_id, attempt, requested_at, requested_by, status)
             VALUES ($1, $2, now(), $3, 'running')",
            run_id,
            next,
            requested_by,
        )
        .execute(&mut *tx)
        .await?;
        sqlx::query!(
            "UPDATE activity_runs SET attempt = $2, status = 'running', error = NULL,
                 finished_at = NULL, started_at = now(), tasks_succeeded = 0, tasks_failed = 0,
                 cancel_requested_at = NULL, cancel_reason = NULL, cancelled_by = NULL,
                 cancel_forced = false, cancel_timed_out = false
             WHERE run_id = $1",
            run_id,
            next,
        )
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(RetryBegun::Begun { attempt: next })
    }

    /// Temporal accepted the start of `attempt`.
    /// The retry is then what it did: its entry, when it has one, is
    /// appended here.
    pub async fn mark_attempt_dispatched(
        &self,
        run_id: Uuid,
        attempt: i32,
        audit: Audit<'_>,
    ) -> StoreResult<()> {
        let mut tx = self.pool.begin().await?;
        sqlx::query!(
            "UPDATE run_attempts SET dispatched_at = COALESCE(dispatched_at, now())
             WHERE run_id = $1 AND attempt = $2",
            run_id,
            attempt,
        )
        .execute(&mut *tx)
        .await?;
        audit::append_if(&mut tx, audit).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Takes back an attempt Temporal did not start: the run is again what
    /// the attempt before left it.
    pub async fn undo_retry(&self, run_id: Uuid, attempt: i32) -> StoreResult<()> {
        let mut tx = self.pool.begin().await?;
        let undone = sqlx::query!(
            "DELETE FROM run_attempts
             WHERE run_id = $1 AND attempt = $2 AND dispatched_at IS NULL",
            run_id,
            attempt,
        )
        .execute(&mut *tx)
        .await?;
        if undone.rows_affected() == 1 {
            sqlx::query!(
                "UPDATE activity_runs r SET attempt = p.attempt, status = p.status,
                     error = p.error, finished_at = p.finished_at, started_at = p.requested_at
                 FROM run_attempts p
                 WHERE r.run_id = $1 AND r.attempt = $2 AND r.status = 'running'
                   AND p.run_id = $1 AND p.attempt = $2 - 1",
                run_id,
                attempt,
            )
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// The recorded attempts of a run, oldest first (none for a run never
    /// retried).
    pub async fn attempts(&self, run_id: Uuid) -> StoreResult<Vec<RunAttempt>> {
        let rows = sqlx::query!(
            "SELECT attempt, requested_at, requested_by, status, error, finished_at
             FROM run_attempts WHERE run_id = $1 ORDER BY attempt",
            run_id,
        )
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter()
            .map(|r| {
                Ok(RunAttempt {
                    attempt: r.attempt,
                    requested_at: r.requested_at,
                    requested_by: r.requested_by,
                    status: status_of(&r.status)?,
                    error: r.error,
                    finished_at: r.finished_at,
                })
            })
            .collect()
    }

    /// A task's status and output, `None` when it has no row.
    pub async fn task_state(
        &self,
        task_id: Uuid,
    ) -> StoreResult<Option<(TaskStatus, Option<serde_json::Value>)>> {
        let row = sqlx::query!(
            "SELECT status, output FROM task_instances WHERE id = $1",
            task_id,
        )
        .fetch_optional(&self.pool)
        .await?;
        row.map(|r| {
            let status = TaskStatus::parse(&r.status)
                .map_err(|m| StoreError::Other(anyhow::anyhow!("status: {m}")))?;
            Ok((status, r.output))
        })
        .transpose()
    }

    /// The runs of one activity a bulk request acts on: in `statuses`, of
    /// `trigger` if given, nominal time in `[from, to)` if given; oldest
    /// nominal time first, at most `limit`.
    pub async fn bulk_candidates(
        &self,
        activity_id: Uuid,
        statuses: &[RunStatus],
        filter: &BulkFilter,
        limit: i64,
    ) -> StoreResult<Vec<(Uuid, String, Option<DateTime<Utc>>)>> {
        let statuses: Vec<&str> = statuses.iter().map(|s| s.as_str()).collect();
        let rows = sqlx::query!(
            "SELECT run_id, workflow_id, scheduled_for FROM activity_runs
             WHERE activity_id = $1 AND status = ANY($2)
               AND ($3::text IS NULL OR trigger_type = $3)
               AND ($4::timestamptz IS NULL OR scheduled_for >= $4)
               AND ($5::timestamptz IS NULL OR scheduled_for < $5)
             ORDER BY scheduled_for NULLS LAST, created_at, run_id LIMIT $6",
            activity_id,
            statuses as _,
            filter.trigger_type.map(|t| t.as_str()),
            filter.scheduled_from,
            filter.scheduled_to,
            limit,
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|r| (r.run_id, r.workflow_id, r.scheduled_for))
            .collect())
    }

    /// Running runs whose definition has a `run_timeout`: run ID, when the
    /// current attempt started, and the timeout as written. At most `limit`,
    /// longest running first.
    pub async fn running_with_deadline(
        &self,
        limit: i64,
    ) -> StoreResult<Vec<(Uuid, DateTime<Utc>, String)>> {
        let rows = sqlx::query!(
            r#"SELECT r.run_id, r.started_at AS "started_at!",
                 v.definition ->> 'run_timeout' AS "run_timeout!"
             FROM activity_runs r
             JOIN activity_versions v
               ON v.activity_id = r.activity_id AND v.version = r.definition_version
             WHERE r.status = 'running' AND r.started_at IS NOT NULL
               AND v.definition ->> 'run_timeout' IS NOT NULL
             ORDER BY r.started_at LIMIT $1"#,
            limit,
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|r| (r.run_id, r.started_at, r.run_timeout))
            .collect())
    }

    /// Marks a running run's cancellation as its deadline's: it will end
    /// `timed_out`.
    pub async fn mark_timed_out(&self, run_id: Uuid) -> StoreResult<()> {
        sqlx::query!(
            "UPDATE activity_runs SET cancel_timed_out = true
             WHERE run_id = $1 AND status = 'running'",
            run_id,
        )
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// The current attempt of a run (1 for a run never retried).
    pub async fn current_attempt(&self, run_id: Uuid) -> StoreResult<i32> {
        let row = sqlx::query_scalar!(
            "SELECT attempt FROM activity_runs WHERE run_id = $1",
            run_id
        )
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.unwrap_or(1))
    }
}
