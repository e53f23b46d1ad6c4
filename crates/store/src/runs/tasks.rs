//! `task_instances`: a run's tasks as they start, retry, end or are
//! cancelled with their run.

use uuid::Uuid;

use super::{NewTask, RunStore};
use crate::StoreResult;
use acp_domain::run::TaskStatus;

impl RunStore {
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
        sqlx::query!(
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
            id,
            run_id,
            workflow_id,
            task_type,
            index,
            name,
        )
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Records that attempt `attempt` of a task's work began.
    pub async fn record_attempt(&self, id: Uuid, attempt: i32) -> StoreResult<()> {
        sqlx::query!(
            "UPDATE task_instances SET attempts = GREATEST(attempts, $2) WHERE id = $1",
            id,
            attempt,
        )
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
        sqlx::query!(
            "UPDATE task_instances SET status = $2, attempts = GREATEST(attempts, $3), output = $4,
                 error = $5, finished_at = now()
             WHERE id = $1 AND status = 'running'",
            id,
            status.as_str(),
            attempts,
            output,
            error,
        )
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Marks a cancelled run's task rows: the one it interrupted (still
    /// `running`) and those it never started (inserted as `cancelled`).
    pub async fn cancel_tasks(&self, run_id: Uuid, unstarted: &[NewTask]) -> StoreResult<()> {
        let mut tx = self.pool.begin().await?;
        sqlx::query!(
            "UPDATE task_instances SET status = 'cancelled', finished_at = now()
             WHERE run_id = $1 AND status = 'running'",
            run_id,
        )
        .execute(&mut *tx)
        .await?;
        for task in unstarted {
            sqlx::query!(
                "INSERT INTO task_instances (id, run_id, workflow_id, task_type, task_index, name, status,
                     finished_at, run_attempt)
                 VALUES ($1, $2, $3, $4, $5, $6, 'cancelled', now(),
                     COALESCE((SELECT attempt FROM activity_runs WHERE run_id = $2), 1))
                 ON CONFLICT (id) DO NOTHING",
                task.id,
                run_id,
                task.workflow_id,
                task.task_type,
                task.index,
                task.name.as_deref(),
            )
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// The workflow IDs of a run's tasks that are running.
    pub async fn running_task_workflows(&self, run_id: Uuid) -> StoreResult<Vec<String>> {
        Ok(sqlx::query_scalar!(
            "SELECT workflow_id FROM task_instances WHERE run_id = $1 AND status = 'running'",
            run_id,
        )
        .fetch_all(&self.pool)
        .await?)
    }
}
