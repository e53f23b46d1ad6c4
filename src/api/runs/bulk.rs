//! `/v1/activities/{id}/runs/retry` and `/runs/cancel`: run control in bulk.

use crate::api::caller::Caller;
use axum::extract::State;
use axum::{Extension, Json};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use super::control::cancel_request;
use crate::api::AppState;
use crate::api::auth::CallerKey;
use crate::api::error::ApiResult;
use crate::api::extract::{IdParam, OptionalJsonBody, query_instant};
use crate::api::problems;
use acp_domain::retry::{BULK_LIMIT, BulkOutcome};
use acp_domain::run::{RunStatus, RunTrigger};
use acp_service::run_bulk::{BulkDone, BulkItem, BulkRequest};

/// Which of the activity's runs to retry. Every filter is optional.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BulkRetryRequest {
    /// `failed` or `cancelled`; both when left out.
    pub status: Option<RunStatus>,
    pub trigger_type: Option<RunTrigger>,
    /// Nominal time at or after (RFC 3339).
    #[schema(format = DateTime)]
    pub scheduled_after: Option<String>,
    /// Nominal time before (RFC 3339).
    #[schema(format = DateTime)]
    pub scheduled_before: Option<String>,
    /// Only answer which runs would be retried (outcome `matched`).
    #[serde(default)]
    pub dry_run: bool,
}

/// Which of the activity's running runs to cancel, and how.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BulkCancelRequest {
    /// `running` (the only status a cancel acts on) or left out.
    pub status: Option<RunStatus>,
    pub trigger_type: Option<RunTrigger>,
    /// Nominal time at or after (RFC 3339).
    #[schema(format = DateTime)]
    pub scheduled_after: Option<String>,
    /// Nominal time before (RFC 3339).
    #[schema(format = DateTime)]
    pub scheduled_before: Option<String>,
    /// Recorded on each run and passed to Temporal.
    pub reason: Option<String>,
    /// Only answer which runs would be cancelled (outcome `matched`).
    #[serde(default)]
    pub dry_run: bool,
    /// Terminate instead of cancel.
    #[serde(default)]
    pub force: bool,
}

/// What the request did with one run.
#[derive(Debug, Serialize, ToSchema)]
pub struct BulkRunResult {
    pub run_id: Uuid,
    pub workflow_id: String,
    pub scheduled_for: Option<DateTime<Utc>>,
    pub outcome: BulkOutcome,
    /// The attempt a retry began.
    pub attempt: Option<i32>,
    /// Why a run was skipped or not reached.
    pub detail: Option<String>,
}

/// What a bulk request did, run by run (oldest nominal time first).
#[derive(Debug, Serialize, ToSchema)]
pub struct BulkRunsResponse {
    pub results: Vec<BulkRunResult>,
    /// More runs matched than one request acts on (the limit): repeat the
    /// request for the next ones.
    pub more: bool,
    /// The most runs one request acts on.
    pub limit: i64,
    /// `true`: nothing was done; `results` are the runs the request would
    /// act on, each `matched`.
    pub dry_run: bool,
}

impl From<BulkDone> for BulkRunsResponse {
    fn from(done: BulkDone) -> Self {
        Self {
            results: done.items.into_iter().map(render).collect(),
            more: done.more,
            limit: BULK_LIMIT,
            dry_run: done.dry_run,
        }
    }
}

fn render(item: BulkItem) -> BulkRunResult {
    BulkRunResult {
        run_id: item.run_id,
        workflow_id: item.workflow_id,
        scheduled_for: item.scheduled_for,
        outcome: item.outcome,
        attempt: item.attempt,
        detail: item.detail,
    }
}

fn filters(
    status: Option<RunStatus>,
    trigger_type: Option<RunTrigger>,
    after: Option<&str>,
    before: Option<&str>,
    dry_run: bool,
) -> ApiResult<BulkRequest> {
    Ok(BulkRequest {
        status,
        trigger_type,
        scheduled_from: query_instant("scheduled_after", after)?,
        scheduled_to: query_instant("scheduled_before", before)?,
        dry_run,
    })
}

/// Retry the activity's failed and cancelled runs that match the filters,
/// each as `POST /v1/runs/{run_id}/retry` would, at most 100 per request
/// (`more` says when more matched). Safe to repeat, also after a crash in
/// the middle: runs already retried are running or done, and are not
/// matched again. With `dry_run`, nothing is done: the answer lists the
/// runs that would be retried, each `matched`.
#[utoipa::path(
    post,
    path = "/v1/activities/{id}/runs/retry",
    security(("bearer" = ["write"])),
    tag = "runs",
    request_body(content = Option<BulkRetryRequest>, description = "Optional; an empty body retries every failed or cancelled run (up to the limit)"),
    params(("id" = Uuid, Path, description = "Activity ID")),
    responses(
        (status = 200, description = "What was done, run by run (with `dry_run`, what would be)", body = BulkRunsResponse),
        problems::BadRequest,
        problems::NoSuchActivity,
        problems::InvalidFilter,
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip(actor, state, request, caller))]
pub async fn retry_activity_runs(
    State(state): State<AppState>,
    Caller(actor): Caller,
    caller: Option<Extension<CallerKey>>,
    IdParam(id): IdParam,
    OptionalJsonBody(request): OptionalJsonBody<BulkRetryRequest>,
) -> ApiResult<Json<BulkRunsResponse>> {
    let filter = filters(
        request.status,
        request.trigger_type,
        request.scheduled_after.as_deref(),
        request.scheduled_before.as_deref(),
        request.dry_run,
    )?;
    let done = state
        .services
        .runs
        .retry_many(id, &filter, caller.map(|Extension(CallerKey(k))| k), &actor)
        .await?;
    Ok(Json(done.into()))
}

/// Cancel the activity's running runs that match the filters, each as
/// `POST /v1/runs/{run_id}/cancel` would, at most 100 per request (`more`
/// says when more matched). Safe to repeat: cancelled runs are not matched
/// again, and a run whose cancellation still travels is asked again, which
/// is harmless. With `dry_run`, nothing is done: the answer lists the runs
/// that would be cancelled, each `matched`.
#[utoipa::path(
    post,
    path = "/v1/activities/{id}/runs/cancel",
    security(("bearer" = ["write"])),
    tag = "runs",
    request_body(content = Option<BulkCancelRequest>, description = "Optional; an empty body cancels every running run (up to the limit)"),
    params(("id" = Uuid, Path, description = "Activity ID")),
    responses(
        (status = 200, description = "What was done, run by run (with `dry_run`, what would be)", body = BulkRunsResponse),
        problems::BadRequest,
        problems::NoSuchActivity,
        problems::InvalidFilterOrReason,
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip(actor, state, request, caller))]
pub async fn cancel_activity_runs(
    State(state): State<AppState>,
    Caller(actor): Caller,
    caller: Option<Extension<CallerKey>>,
    IdParam(id): IdParam,
    OptionalJsonBody(request): OptionalJsonBody<BulkCancelRequest>,
) -> ApiResult<Json<BulkRunsResponse>> {
    let cancel = cancel_request(request.reason, request.force, caller)?;
    let filter = filters(
        request.status,
        request.trigger_type,
        request.scheduled_after.as_deref(),
        request.scheduled_before.as_deref(),
        request.dry_run,
    )?;
    let done = state
        .services
        .runs
        .cancel_many(id, &filter, cancel, &actor)
        .await?;
    Ok(Json(done.into()))
}
