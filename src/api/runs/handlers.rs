//! `/v1/runs` and `/v1/activities/{id}/runs`: the run history.

use axum::extract::State;
use axum::{Extension, Json};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use super::control::{RunAttemptResponse, TaskAttemptResponse};
use crate::api::AppState;
use crate::api::caller::Caller;
use crate::api::error::{ApiError, ApiResult};
use crate::api::extract::{IdParam, path_uuid, query_instant};
use crate::api::instant;
use crate::api::pagination::{Cursor, Listing, Page, page};
use crate::api::problems;
use acp_domain::auth::UnconfirmedKey;
use acp_domain::misfire::SkipReason;
use acp_domain::project::ProjectId;
use acp_domain::query::RunFilter;
use acp_domain::retry::RunAttempt;
use acp_domain::run::{Cancellation, Run, RunStatus, RunTrigger, TaskInstance, TaskStatus};

/// Runs' cursor: the last run's creation time and ID.
pub struct RunCursor;

impl Cursor for RunCursor {
    const SCOPE: &'static str = "runs";
    type Key = (DateTime<Utc>, Uuid);
}

/// One task of a run.
#[derive(Debug, Serialize, ToSchema)]
pub struct TaskInstanceResponse {
    /// UUIDv5 over `workflow_id`.
    pub id: Uuid,
    /// `task-{run_id}:{task_type}:{index}`
    pub workflow_id: String,
    pub task_type: String,
    pub index: i32,
    pub name: Option<String>,
    pub status: TaskStatus,
    pub attempts: i32,
    pub started_at: Option<DateTime<Utc>>,
    pub finished_at: Option<DateTime<Utc>>,
    #[schema(value_type = Option<Object>)]
    pub output: Option<serde_json::Value>,
    pub error: Option<String>,
    /// The run attempt that last started this task (1 unless it ran again
    /// in a retry).
    pub run_attempt: i32,
    /// What earlier attempts of the run did with this task, oldest first.
    pub previous_attempts: Vec<TaskAttemptResponse>,
}

/// One execution of an activity for one trigger occurrence.
#[derive(Debug, Serialize, ToSchema)]
pub struct RunResponse {
    /// UUIDv5 over `workflow_id`.
    pub run_id: Uuid,
    pub activity_id: Uuid,
    /// `activity-{activity_id}:{scheduled_for.isoformat()}` or `activity-{activity_id}:{event_id}`.
    pub workflow_id: String,
    pub trigger_type: RunTrigger,
    /// The nominal fire time, for scheduled runs.
    #[serde(serialize_with = "instant::serialize_option")]
    pub scheduled_for: Option<DateTime<Utc>>,
    pub event_id: Option<String>,
    pub status: RunStatus,
    /// Why a `skipped` run did not execute.
    pub skip_reason: Option<SkipReason>,
    #[serde(serialize_with = "instant::serialize_option")]
    pub window_start: Option<DateTime<Utc>>,
    #[serde(serialize_with = "instant::serialize_option")]
    pub window_end: Option<DateTime<Utc>>,
    pub definition_version: Option<i64>,
    #[serde(serialize_with = "instant::serialize_option")]
    pub started_at: Option<DateTime<Utc>>,
    #[serde(serialize_with = "instant::serialize_option")]
    pub finished_at: Option<DateTime<Utc>>,
    pub error: Option<String>,
    pub tasks_total: i32,
    pub tasks_succeeded: i32,
    pub tasks_failed: i32,
    #[serde(serialize_with = "instant::serialize")]
    pub created_at: DateTime<Utc>,
    /// 1, then one more for each retry: the run shows its latest attempt.
    pub attempt: i32,
    /// Set once someone asked to cancel the current attempt.
    pub cancellation: Option<CancellationResponse>,
    /// The run's tasks (in `GET /v1/runs/{run_id}` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tasks: Option<Vec<TaskInstanceResponse>>,
    /// Every attempt of the run, oldest first (in `GET /v1/runs/{run_id}`
    /// only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attempts: Option<Vec<RunAttemptResponse>>,
    /// For a run of an activity with `flow.concurrency`: its key and when it
    /// joined that key's queue (`started_at` is when it got its slot).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flow: Option<RunFlowResponse>,
}

/// A flow-controlled run's key and place in its queue.
#[derive(Debug, Serialize, ToSchema)]
pub struct RunFlowResponse {
    /// The concurrency key (`flow.concurrency.key` resolved for this run).
    pub key: String,
    /// When it joined its key's queue; the queue is first in first out.
    #[serde(serialize_with = "instant::serialize")]
    pub queued_at: DateTime<Utc>,
}

/// A request to cancel a run.
#[derive(Debug, Serialize, ToSchema)]
pub struct CancellationResponse {
    #[serde(serialize_with = "instant::serialize")]
    pub requested_at: DateTime<Utc>,
    pub reason: Option<String>,
    /// The API key that asked; null when authentication is disabled.
    pub requested_by: Option<Uuid>,
    /// Terminated in Temporal instead of cancelled: no cleanup ran in the
    /// workflows.
    pub forced: bool,
}

impl From<Cancellation> for CancellationResponse {
    fn from(c: Cancellation) -> Self {
        Self {
            requested_at: c.requested_at,
            reason: c.reason,
            requested_by: c.requested_by,
            forced: c.forced,
        }
    }
}

fn render_task(t: TaskInstance) -> TaskInstanceResponse {
    TaskInstanceResponse {
        id: t.id,
        workflow_id: t.workflow_id,
        task_type: t.task_type,
        index: t.index,
        name: t.name,
        status: t.status,
        attempts: t.attempts,
        started_at: t.started_at,
        finished_at: t.finished_at,
        output: t.output,
        error: t.error,
        run_attempt: t.run_attempt,
        previous_attempts: t.previous_attempts.into_iter().map(Into::into).collect(),
    }
}

fn render(
    run: Run,
    tasks: Option<Vec<TaskInstance>>,
    attempts: Option<Vec<RunAttempt>>,
) -> RunResponse {
    RunResponse {
        run_id: run.run_id,
        activity_id: run.activity_id,
        workflow_id: run.workflow_id,
        trigger_type: run.trigger_type,
        scheduled_for: run.scheduled_for,
        event_id: run.event_id,
        status: run.status,
        skip_reason: run.skip_reason,
        window_start: run.window_start,
        window_end: run.window_end,
        definition_version: run.definition_version,
        started_at: run.started_at,
        finished_at: run.finished_at,
        error: run.error,
        tasks_total: run.tasks_total,
        tasks_succeeded: run.tasks_succeeded,
        tasks_failed: run.tasks_failed,
        created_at: run.created_at,
        attempt: run.attempt,
        cancellation: run.cancellation.map(Into::into),
        tasks: tasks.map(|t| t.into_iter().map(render_task).collect()),
        attempts: attempts.map(|a| a.into_iter().map(Into::into).collect()),
        flow: run.flow.map(|f| RunFlowResponse {
            key: f.key,
            queued_at: f.queued_at,
        }),
    }
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListRunsQuery {
    /// Page size, 1 to 200 (default 50).
    #[param(value_type = Option<i32>, minimum = 1, maximum = 200)]
    pub limit: Option<String>,
    /// `next_cursor` of the previous page.
    pub cursor: Option<String>,
    /// Only this activity's runs.
    pub activity_id: Option<String>,
    #[param(value_type = Option<RunStatus>)]
    pub status: Option<String>,
    #[param(value_type = Option<RunTrigger>)]
    pub trigger_type: Option<String>,
    /// Nominal time at or after (RFC 3339).
    #[param(value_type = Option<String>, format = DateTime)]
    pub scheduled_after: Option<String>,
    /// Nominal time before (RFC 3339).
    #[param(value_type = Option<String>, format = DateTime)]
    pub scheduled_before: Option<String>,
    /// Started at or after (RFC 3339).
    #[param(value_type = Option<String>, format = DateTime)]
    pub started_after: Option<String>,
    /// Started before (RFC 3339).
    #[param(value_type = Option<String>, format = DateTime)]
    pub started_before: Option<String>,
}

/// The same filters for one activity's runs (`activity_id` comes from the path).
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ActivityRunsQuery {
    /// Page size, 1 to 200 (default 50).
    #[param(value_type = Option<i32>, minimum = 1, maximum = 200)]
    pub limit: Option<String>,
    /// `next_cursor` of the previous page.
    pub cursor: Option<String>,
    #[param(value_type = Option<RunStatus>)]
    pub status: Option<String>,
    #[param(value_type = Option<RunTrigger>)]
    pub trigger_type: Option<String>,
    /// Nominal time at or after (RFC 3339).
    #[param(value_type = Option<String>, format = DateTime)]
    pub scheduled_after: Option<String>,
    /// Nominal time before (RFC 3339).
    #[param(value_type = Option<String>, format = DateTime)]
    pub scheduled_before: Option<String>,
    /// Started at or after (RFC 3339).
    #[param(value_type = Option<String>, format = DateTime)]
    pub started_after: Option<String>,
    /// Started before (RFC 3339).
    #[param(value_type = Option<String>, format = DateTime)]
    pub started_before: Option<String>,
}

async fn list(
    state: &AppState,
    Listing {
        query,
        limit,
        after,
    }: Listing<ListRunsQuery, RunCursor>,
    of_activity: bool,
    key: Option<Extension<UnconfirmedKey>>,
    project: ProjectId,
) -> ApiResult<Page<RunResponse>> {
    let key = key.as_ref().map(|Extension(k)| k);
    let filter = RunFilter {
        activity_id: query
            .activity_id
            .as_deref()
            .map(|t| path_uuid("activity_id", t))
            .transpose()?,
        status: query
            .status
            .as_deref()
            .map(|s| RunStatus::parse(s).map_err(|m| ApiError::bad_field("status", m)))
            .transpose()?,
        trigger_type: query
            .trigger_type
            .as_deref()
            .map(|s| RunTrigger::parse(s).map_err(|m| ApiError::bad_field("trigger_type", m)))
            .transpose()?,
        scheduled_from: query_instant("scheduled_after", query.scheduled_after.as_deref())?,
        scheduled_to: query_instant("scheduled_before", query.scheduled_before.as_deref())?,
        started_from: query_instant("started_after", query.started_after.as_deref())?,
        started_to: query_instant("started_before", query.started_before.as_deref())?,
        project: Some(project),
    };
    let runs = &state.services.runs;
    let rows = if of_activity {
        runs.list_of_activity(&filter, after, limit + 1, key)
            .await?
    } else {
        runs.list(&filter, after, limit + 1, key).await?
    };
    Ok(page(
        rows,
        limit,
        RunCursor::SCOPE,
        |r| (r.created_at, r.run_id),
        |r| render(r, None, None),
    ))
}

/// List runs, newest first.
#[utoipa::path(
    get,
    path = "/v1/runs",
    security(("bearer" = ["read"])),
    tag = "runs",
    params(ListRunsQuery),
    responses(
        (status = 200, description = "A page of runs", body = Page<RunResponse>),
        problems::BadParameter,
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip_all)]
pub async fn list_runs(
    State(state): State<AppState>,
    Caller(actor): Caller,
    key: Option<Extension<UnconfirmedKey>>,
    listing: Listing<ListRunsQuery, RunCursor>,
) -> ApiResult<Json<Page<RunResponse>>> {
    Ok(Json(
        list(&state, listing, false, key, actor.project).await?,
    ))
}

/// One activity's runs, newest first. History outlives the activity.
#[utoipa::path(
    get,
    path = "/v1/activities/{id}/runs",
    security(("bearer" = ["read"])),
    tag = "runs",
    params(("id" = Uuid, Path, description = "Activity ID"), ActivityRunsQuery),
    responses(
        (status = 200, description = "A page of runs", body = Page<RunResponse>),
        problems::BadParameter,
        problems::NoSuchActivity,
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip(state, actor, query, limit, after, key))]
pub async fn list_activity_runs(
    State(state): State<AppState>,
    Caller(actor): Caller,
    IdParam(id): IdParam,
    key: Option<Extension<UnconfirmedKey>>,
    Listing {
        query,
        limit,
        after,
    }: Listing<ActivityRunsQuery, RunCursor>,
) -> ApiResult<Json<Page<RunResponse>>> {
    let query = ListRunsQuery {
        limit: query.limit,
        cursor: query.cursor,
        activity_id: Some(id.to_string()),
        status: query.status,
        trigger_type: query.trigger_type,
        scheduled_after: query.scheduled_after,
        scheduled_before: query.scheduled_before,
        started_after: query.started_after,
        started_before: query.started_before,
    };
    let listing = Listing {
        query,
        limit,
        after,
    };
    Ok(Json(list(&state, listing, true, key, actor.project).await?))
}

/// One run with its task instances.
#[utoipa::path(
    get,
    path = "/v1/runs/{run_id}",
    security(("bearer" = ["read"])),
    tag = "runs",
    params(("run_id" = Uuid, Path, description = "Run ID")),
    responses(
        (status = 200, description = "The run", body = RunResponse),
        problems::BadId,
        problems::NoSuchRun,
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip(state, actor))]
pub async fn get_run(
    State(state): State<AppState>,
    Caller(actor): Caller,
    IdParam(run_id): IdParam,
) -> ApiResult<Json<RunResponse>> {
    let runs = &state.services.runs;
    let (run, tasks) = runs.get(run_id, &actor.project).await?;
    let attempts = runs.attempts(&run).await?;
    Ok(Json(render(run, Some(tasks), Some(attempts))))
}
