//! `/v1/runs/{run_id}/cancel`: run control (issue 13).

use axum::extract::State;
use axum::http::StatusCode;
use axum::{Extension, Json};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use super::AppState;
use super::auth::CallerKey;
use super::extract::{IdParam, OptionalJsonBody};
use super::runs::CancellationResponse;
use crate::domain::run::RunStatus;
use crate::error::{ApiError, ApiResult, Problem};
use crate::service::run_control::{CancelRequest, Cancelled};

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
        (status = 400, description = "Bad request", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such run", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The run is not running; the problem names its status", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid reason", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "PostgreSQL or Temporal unavailable", body = Problem, content_type = "application/problem+json"),
    )
)]
#[tracing::instrument(skip(state, request, caller))]
pub async fn cancel_run(
    State(state): State<AppState>,
    caller: Option<Extension<CallerKey>>,
    IdParam(run_id): IdParam,
    OptionalJsonBody(request): OptionalJsonBody<CancelRunRequest>,
) -> ApiResult<(StatusCode, Json<CancelRunResponse>)> {
    if request
        .reason
        .as_ref()
        .is_some_and(|r| r.chars().count() > MAX_REASON)
    {
        return Err(ApiError::invalid_field(
            "reason",
            format!("is longer than {MAX_REASON} characters"),
        ));
    }
    let cancelled = state
        .services
        .runs
        .cancel(
            run_id,
            CancelRequest {
                reason: request.reason,
                force: request.force,
                requested_by: caller.map(|Extension(CallerKey(id))| id),
            },
        )
        .await?;
    Ok((StatusCode::ACCEPTED, Json(cancelled.into())))
}
