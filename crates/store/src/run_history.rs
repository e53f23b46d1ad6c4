//! Reading runs back: the row types and their decoding, one run with its
//! tasks, the runs of a window, and pages of history (writes are in `runs`).

use chrono::{DateTime, Utc};
use sqlx::postgres::PgRow;
use sqlx::types::Json;
use sqlx::{Postgres, Row};
use uuid::Uuid;

use super::keys::confirm_key;
use super::runs::RunStore;
use super::{StoreError, StoreResult};
use acp_domain::auth::UnconfirmedKey;
use acp_domain::misfire::SkipReason;
use acp_domain::project::ProjectId;
use acp_domain::query::RunFilter;
use acp_domain::run::{
    Cancellation, Run, RunFlow, RunStatus, RunTrigger, TaskInstance, TaskStatus,
};

/// The columns of [`RunRow`], in its order, for the statement built at run
/// time (`list_runs_query`); the others name them in full.
const RUN_COLUMNS: &str = "run_id, activity_id, workflow_id, trigger_type, scheduled_for, event_id, \
    status, skip_reason, window_start, window_end, definition_version, context, started_at, \
    finished_at, error, tasks_total, tasks_succeeded, tasks_failed, created_at, \
    cancel_requested_at, cancel_reason, cancelled_by, cancel_forced, attempt, flow_key, queued_at";

/// Columns read one after the other, by position: a page decodes thousands
/// of values, and a lookup by name for each is a hash of its name.
struct Columns<'r> {
    row: &'r PgRow,
    next: usize,
}

impl<'r> Columns<'r> {
    fn new(row: &'r PgRow) -> Self {
        Self { row, next: 0 }
    }

    fn take<T>(&mut self) -> StoreResult<T>
    where
        T: sqlx::Decode<'r, Postgres> + sqlx::Type<Postgres>,
    {
        self.next += 1;
        // The columns' types are the schema's, known: a value that does not
        // decode is still an error.
        Ok(self.row.try_get_unchecked(self.next - 1)?)
    }
}

/// A column holding a name the domain does not know: the database was
/// written by something else (or a newer version); never a client's fault.
pub(super) fn named<T>(column: &str, parsed: Result<T, String>) -> StoreResult<T> {
    parsed.map_err(|m| StoreError::Other(anyhow::anyhow!("{column}: {m}")))
}

/// An `activity_runs` row: `RUN_COLUMNS`, in their order.
struct RunRow {
    run_id: Uuid,
    activity_id: Uuid,
    workflow_id: String,
    trigger_type: String,
    scheduled_for: Option<DateTime<Utc>>,
    event_id: Option<String>,
    status: String,
    skip_reason: Option<String>,
    window_start: Option<DateTime<Utc>>,
    window_end: Option<DateTime<Utc>>,
    definition_version: Option<i64>,
    context: serde_json::Value,
    started_at: Option<DateTime<Utc>>,
    finished_at: Option<DateTime<Utc>>,
    error: Option<String>,
    tasks_total: i32,
    tasks_succeeded: i32,
    tasks_failed: i32,
    created_at: DateTime<Utc>,
    cancel_requested_at: Option<DateTime<Utc>>,
    cancel_reason: Option<String>,
    cancelled_by: Option<Uuid>,
    cancel_forced: bool,
    attempt: i32,
    flow_key: Option<String>,
    queued_at: Option<DateTime<Utc>>,
}

/// A run from a row of `RUN_COLUMNS` (the statement built at run time),
/// in their order.
fn run_from_row(row: &PgRow) -> StoreResult<Run> {
    let mut c = Columns::new(row);
    RunRow {
        run_id: c.take()?,
        activity_id: c.take()?,
        workflow_id: c.take()?,
        trigger_type: c.take()?,
        scheduled_for: c.take()?,
        event_id: c.take()?,
        status: c.take()?,
        skip_reason: c.take()?,
        window_start: c.take()?,
        window_end: c.take()?,
        definition_version: c.take()?,
        context: c.take::<Json<serde_json::Value>>()?.0,
        started_at: c.take()?,
        finished_at: c.take()?,
        error: c.take()?,
        tasks_total: c.take()?,
        tasks_succeeded: c.take()?,
        tasks_failed: c.take()?,
        created_at: c.take()?,
        cancel_requested_at: c.take()?,
        cancel_reason: c.take()?,
        cancelled_by: c.take()?,
        cancel_forced: c.take()?,
        attempt: c.take()?,
        flow_key: c.take()?,
        queued_at: c.take()?,
    }
    .try_into()
}

impl TryFrom<RunRow> for Run {
    type Error = StoreError;
    fn try_from(r: RunRow) -> StoreResult<Self> {
        Ok(Run {
            run_id: r.run_id,
            activity_id: r.activity_id,
            workflow_id: r.workflow_id,
            trigger_type: named("trigger_type", RunTrigger::parse(&r.trigger_type))?,
            scheduled_for: r.scheduled_for,
            event_id: r.event_id,
            status: named("status", RunStatus::parse(&r.status))?,
            skip_reason: r
                .skip_reason
                .map(|s| named("skip_reason", SkipReason::parse(&s)))
                .transpose()?,
            window_start: r.window_start,
            window_end: r.window_end,
            definition_version: r.definition_version,
            context: r.context,
            started_at: r.started_at,
            finished_at: r.finished_at,
            error: r.error,
            tasks_total: r.tasks_total,
            tasks_succeeded: r.tasks_succeeded,
            tasks_failed: r.tasks_failed,
            created_at: r.created_at,
            attempt: r.attempt,
            cancellation: r.cancel_requested_at.map(|requested_at| Cancellation {
                requested_at,
                reason: r.cancel_reason,
                requested_by: r.cancelled_by,
                forced: r.cancel_forced,
            }),
            flow: r
                .flow_key
                .zip(r.queued_at)
                .map(|(key, queued_at)| RunFlow { key, queued_at }),
        })
    }
}

struct TaskRow {
    id: Uuid,
    run_id: Uuid,
    workflow_id: String,
    task_type: String,
    task_index: i32,
    name: Option<String>,
    status: String,
    attempts: i32,
    started_at: Option<DateTime<Utc>>,
    finished_at: Option<DateTime<Utc>>,
    output: Option<serde_json::Value>,
    error: Option<String>,
    run_attempt: i32,
    previous_attempts: Json<Vec<acp_domain::retry::TaskAttempt>>,
}

impl TryFrom<TaskRow> for TaskInstance {
    type Error = StoreError;
    fn try_from(t: TaskRow) -> StoreResult<Self> {
        Ok(TaskInstance {
            id: t.id,
            run_id: t.run_id,
            workflow_id: t.workflow_id,
            task_type: t.task_type,
            index: t.task_index,
            name: t.name,
            status: named("status", TaskStatus::parse(&t.status))?,
            attempts: t.attempts,
            started_at: t.started_at,
            finished_at: t.finished_at,
            output: t.output,
            error: t.error,
            run_attempt: t.run_attempt,
            previous_attempts: t.previous_attempts.0,
        })
    }
}

impl RunStore {
    /// Runs of an activity at nominal times in `[from, to)`.
    pub async fn scheduled_between(
        &self,
        activity_id: Uuid,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
    ) -> StoreResult<Vec<Run>> {
        let rows = sqlx::query_as!(
            RunRow,
            "SELECT run_id, activity_id, workflow_id, trigger_type, scheduled_for, event_id, status,
                 skip_reason, window_start, window_end, definition_version, context, started_at,
                 finished_at, error, tasks_total, tasks_succeeded, tasks_failed, created_at,
                 cancel_requested_at, cancel_reason, cancelled_by, cancel_forced, attempt, flow_key,
                 queued_at
             FROM activity_runs
             WHERE activity_id = $1 AND scheduled_for >= $2 AND scheduled_for < $3 ORDER BY scheduled_for",
            activity_id,
            from,
            to,
        )
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter().map(TryInto::try_into).collect()
    }

    /// Whether the run belongs to an activity (live or deleted) of
    /// `project`.
    pub async fn run_owned_by(&self, run_id: Uuid, project: &ProjectId) -> StoreResult<bool> {
        let owned = sqlx::query_scalar!(
            r#"SELECT EXISTS (
                 SELECT 1 FROM activity_runs r JOIN activities a ON a.id = r.activity_id
                  WHERE r.run_id = $1 AND a.project_id = $2) AS "owned!""#,
            run_id,
            project.as_str(),
        )
        .fetch_one(&self.pool)
        .await?;
        Ok(owned)
    }

    pub async fn get_run(&self, run_id: Uuid) -> StoreResult<(Run, Vec<TaskInstance>)> {
        let run = sqlx::query_as!(
            RunRow,
            "SELECT run_id, activity_id, workflow_id, trigger_type, scheduled_for, event_id, status,
                 skip_reason, window_start, window_end, definition_version, context, started_at,
                 finished_at, error, tasks_total, tasks_succeeded, tasks_failed, created_at,
                 cancel_requested_at, cancel_reason, cancelled_by, cancel_forced, attempt, flow_key,
                 queued_at
             FROM activity_runs WHERE run_id = $1",
            run_id,
        )
        .fetch_optional(&self.pool)
        .await?;
        let run = run.ok_or(StoreError::NotFound)?;
        let tasks = sqlx::query_as!(
            TaskRow,
            r#"SELECT id, run_id, workflow_id, task_type, task_index, name, status, attempts,
                 started_at, finished_at, output, error, run_attempt,
                 previous_attempts AS "previous_attempts: _"
             FROM task_instances WHERE run_id = $1 ORDER BY task_index"#,
            run_id,
        )
        .fetch_all(&self.pool)
        .await?;
        let tasks = tasks
            .into_iter()
            .map(TryInto::try_into)
            .collect::<StoreResult<_>>()?;
        Ok((run.try_into()?, tasks))
    }

    /// Newest first by (created_at, run_id): keyset pagination, stable under inserts.
    #[tracing::instrument(skip(self))]
    pub async fn list_runs(
        &self,
        filter: &RunFilter,
        after: Option<(DateTime<Utc>, Uuid)>,
        limit: i64,
        key: Option<&UnconfirmedKey>,
    ) -> StoreResult<Vec<Run>> {
        // The caller's key is confirmed live in this statement's snapshot.
        let pending = UnconfirmedKey::pending(key);
        let mut qb = list_runs_query(filter, after, limit, pending);
        let rows = qb.build().fetch_all(&self.pool).await?;
        match (pending, key) {
            // Rows came back: the key was live when they were read.
            (Some(_), Some(key)) if !rows.is_empty() => key.confirm(),
            // No rows: revoked, or nothing to show; ask.
            (Some(_), key) => confirm_key(&self.pool, key).await?,
            _ => {}
        }
        rows.iter().map(run_from_row).collect()
    }
}

/// The statement behind `list_runs` (public so that the benchmark runs the
/// very same SQL in pgbench). Its parameters are bound in this order: the
/// key to confirm live, the filters as `RunFilter` lists them, the cursor
/// (`created_at`, `run_id`), the limit.
pub fn list_runs_query<'a>(
    filter: &RunFilter,
    after: Option<(DateTime<Utc>, Uuid)>,
    limit: i64,
    key: Option<Uuid>,
) -> sqlx::QueryBuilder<'a, Postgres> {
    let mut qb = sqlx::QueryBuilder::<Postgres>::new(format!(
        "SELECT {RUN_COLUMNS} FROM activity_runs WHERE true"
    ));
    if let Some(id) = key {
        qb.push(" AND EXISTS (SELECT 1 FROM api_keys WHERE id = ")
            .push_bind(id)
            .push(" AND revoked_at IS NULL)");
    }
    if let Some(id) = filter.activity_id {
        // Behind a sub-select, so that the plan does not depend on which
        // activity: one plan is kept (no planning per page), and it reads
        // the activity's own index, not the newest runs of every activity
        // filtered (which the planner picks for a busy one, and which reads
        // ten times the rows for an activity holding a tenth of them).
        qb.push(" AND activity_id = (SELECT ")
            .push_bind(id)
            .push("::uuid)");
    }
    if let Some(project) = &filter.project {
        // Runs have no project: they are their activity's (deleted or not).
        qb.push(" AND activity_id IN (SELECT id FROM activities WHERE project_id = ")
            .push_bind(project.as_str().to_owned())
            .push(")");
    }
    if let Some(status) = filter.status {
        qb.push(" AND status = ").push_bind(status.as_str());
    }
    if let Some(t) = filter.trigger_type {
        qb.push(" AND trigger_type = ").push_bind(t.as_str());
    }
    if let Some(t) = filter.scheduled_from {
        qb.push(" AND scheduled_for >= ").push_bind(t);
    }
    if let Some(t) = filter.scheduled_to {
        qb.push(" AND scheduled_for < ").push_bind(t);
    }
    if let Some(t) = filter.started_from {
        qb.push(" AND started_at >= ").push_bind(t);
    }
    if let Some(t) = filter.started_to {
        qb.push(" AND started_at < ").push_bind(t);
    }
    if let Some((created_at, run_id)) = after {
        qb.push(" AND (created_at, run_id) < (")
            .push_bind(created_at)
            .push(", ")
            .push_bind(run_id)
            .push(")");
    }
    qb.push(" ORDER BY created_at DESC, run_id DESC LIMIT ")
        .push_bind(limit);
    qb
}
