//! `/v1/runs/{run_id}/cancel` and `/retry`: run control.

use crate::api::caller::Caller;
use axum::extract::State;
use axum::http::StatusCode;
use axum::{Extension, Json};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use super::handlers::CancellationResponse;
use crate::api::AppState;
use crate::api::auth::CallerKey;
use crate::api::error::{ApiError, ApiResult};
use crate::api::extract::{IdParam, OptionalJsonBody};
use crate::api::problems;
use acp_domain::retry::{RunAttempt, TaskAttempt};
use acp_domain::run::RunStatus;
use acp_domain::run::TaskStatus;
use acp_service::run_control::{CancelRequest, Cancelled};
use acp_service::run_retry::Retried;

/// The longest accepted `reason`, in characters.
const MAX_REASON: usize = 1000;

/// Why a run is cancelled, and how.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CancelRunRequest {
    /// Recorded on the run and passed to Temporal.
    pub reason: Option<String>,
    /// Terminate the workflows instead of cancelling them: nothing in them
    /// runs any more, not even their cleanup.
    #[serde(default)]
    pub force: bool,
}

/// What a cancel request did.
#[derive(Debug, Serialize, ToSchema)]
pub struct CancelRunResponse {
    pub run_id: Uuid,
    pub workflow_id: String,
    /// `running` while Temporal delivers the cancellation (the run then ends
    /// `cancelled`), `cancelled` once it has ended.
    pub status: RunStatus,
    /// `terminated` (with `force`) or `cancel_requested`.
    pub action: String,
    pub cancellation: CancellationResponse,
}

impl From<Cancelled> for CancelRunResponse {
    fn from(c: Cancelled) -> Self {
        Self {
            run_id: c.run_id,
            workflow_id: c.workflow_id,
            status: c.status,
            action: if c.cancellation.forced {
                "terminated"
            } else {
                "cancel_requested"
            }
            .to_owned(),
            cancellation: c.cancellation.into(),
        }
    }
}

/// Cancel a running run: its workflow and the task workflow it waits for get
/// cancellation, tasks it did not finish end `cancelled`, and the run ends
/// `cancelled` with the reason and the API key that asked. Repeating the
/// request while it travels is harmless. `force: true` terminates instead.
#[utoipa::path(
    post,
    path = "/v1/runs/{run_id}/cancel",
    security(("bearer" = ["write"])),
    tag = "runs",
    request_body(content = Option<CancelRunRequest>, description = "Optional; an empty body cancels without a reason"),
    params(("run_id" = Uuid, Path, description = "Run ID")),
    responses(
        (status = 202, description = "Cancellation requested (or done)", body = CancelRunResponse),
        problems::BadRequest,
        problems::NoSuchRun,
        problems::RunNotRunning,
        problems::InvalidReason,
        problems::PostgresOrTemporalUnavailable,
    )
)]
#[tracing::instrument(skip(actor, state, request, caller))]
pub async fn cancel_run(
    State(state): State<AppState>,
    Caller(actor): Caller,
    caller: Option<Extension<CallerKey>>,
    IdParam(run_id): IdParam,
    OptionalJsonBody(request): OptionalJsonBody<CancelRunRequest>,
) -> ApiResult<(StatusCode, Json<CancelRunResponse>)> {
    let cancel = cancel_request(request.reason, request.force, caller)?;
    let cancelled = state.services.runs.cancel(run_id, cancel, &actor).await?;
    Ok((StatusCode::ACCEPTED, Json(cancelled.into())))
}

/// The cancellation both cancel routes (one run, and an activity's runs in
/// bulk) hand to the use case, its reason checked.
pub(super) fn cancel_request(
    reason: Option<String>,
    force: bool,
    caller: Option<Extension<CallerKey>>,
) -> ApiResult<CancelRequest> {
    if reason
        .as_ref()
        .is_some_and(|r| r.chars().count() > MAX_REASON)
    {
        return Err(ApiError::invalid_field(
            "reason",
            format!("is longer than {MAX_REASON} characters"),
        ));
    }
    Ok(CancelRequest {
        reason,
        force,
        requested_by: caller.map(|Extension(CallerKey(id))| id),
    })
}

/// What a retry request did.
#[derive(Debug, Serialize, ToSchema)]
pub struct RetryRunResponse {
    pub run_id: Uuid,
    /// The contract ID, the same for every attempt.
    pub workflow_id: String,
    /// The attempt this request began: 2 for the first retry.
    pub attempt: i32,
    /// `running`: the attempt's execution has started.
    pub status: RunStatus,
    /// The API key that asked; null when authentication is disabled.
    pub requested_by: Option<Uuid>,
}

impl From<Retried> for RetryRunResponse {
    fn from(r: Retried) -> Self {
        Self {
            run_id: r.run_id,
            workflow_id: r.workflow_id,
            attempt: r.attempt,
            status: RunStatus::Running,
            requested_by: r.requested_by,
        }
    }
}

/// Retry a failed or cancelled run under the same contract workflow ID:
/// Temporal starts a new execution of that ID only after a failed, cancelled
/// or terminated one, so a run that succeeded never runs twice. Tasks that
/// succeeded keep their result and do not run again; the failed task and
/// those after it run. Concurrent requests begin one attempt; the others
/// are a 409 naming the status they found.
#[utoipa::path(
    post,
    path = "/v1/runs/{run_id}/retry",
    security(("bearer" = ["write"])),
    tag = "runs",
    params(("run_id" = Uuid, Path, description = "Run ID")),
    responses(
        (status = 202, description = "A new attempt started", body = RetryRunResponse),
        problems::BadRequest,
        problems::NoSuchRun,
        problems::RunNotFailedOrCancelled,
        problems::PostgresOrTemporalUnavailable,
    )
)]
#[tracing::instrument(skip(actor, state, caller))]
pub async fn retry_run(
    State(state): State<AppState>,
    Caller(actor): Caller,
    caller: Option<Extension<CallerKey>>,
    IdParam(run_id): IdParam,
) -> ApiResult<(StatusCode, Json<RetryRunResponse>)> {
    let retried = state
        .services
        .runs
        .retry(run_id, caller.map(|Extension(CallerKey(id))| id), &actor)
        .await?;
    Ok((StatusCode::ACCEPTED, Json(retried.into())))
}

/// One attempt of a run.
#[derive(Debug, Serialize, ToSchema)]
pub struct RunAttemptResponse {
    /// 1 for the run as its trigger started it, then 2, 3, … per retry.
    pub attempt: i32,
    /// When it was asked for (the first: when the run started).
    pub requested_at: DateTime<Utc>,
    /// The API key that asked for the retry; null for the first attempt and
    /// when authentication is disabled.
    pub requested_by: Option<Uuid>,
    /// `running` until the attempt ends.
    pub status: RunStatus,
    pub error: Option<String>,
    pub finished_at: Option<DateTime<Utc>>,
}

impl From<RunAttempt> for RunAttemptResponse {
    fn from(a: RunAttempt) -> Self {
        Self {
            attempt: a.attempt,
            requested_at: a.requested_at,
            requested_by: a.requested_by,
            status: a.status,
            error: a.error,
            finished_at: a.finished_at,
        }
    }
}

/// What an earlier attempt of the run did with a task that ran again.
#[derive(Debug, Serialize, ToSchema)]
pub struct TaskAttemptResponse {
    pub run_attempt: i32,
    pub status: TaskStatus,
    /// Attempts of the task's work within that run attempt.
    pub attempts: i32,
    pub started_at: Option<DateTime<Utc>>,
    pub finished_at: Option<DateTime<Utc>>,
    pub error: Option<String>,
}

impl From<TaskAttempt> for TaskAttemptResponse {
    fn from(a: TaskAttempt) -> Self {
        Self {
            run_attempt: a.run_attempt,
            status: a.status,
            attempts: a.attempts,
            started_at: a.started_at,
            finished_at: a.finished_at,
            error: a.error,
        }
    }
}
