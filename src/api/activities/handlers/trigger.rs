//! `POST /v1/activities/{id}/trigger`: run an activity once, now.

use crate::api::caller::Caller;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use uuid::Uuid;

use crate::api::AppState;
use crate::api::error::ApiResult;
use crate::api::extract::{IdParam, idempotency_key};
use crate::api::problems;
use acp_domain::run::StartOutcome;

/// What a manual trigger did.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub struct TriggerResponse {
    /// `activity-{id}:manual-{key}`
    pub workflow_id: String,
    /// UUIDv5 over `workflow_id`: the run's ID in `GET /v1/runs/{run_id}`.
    pub run_id: Uuid,
    /// The key of this trigger: the `Idempotency-Key` header, or generated.
    pub key: String,
    /// `started`, or `duplicate` when this key already triggered a run.
    pub outcome: StartOutcome,
}

/// Run the activity once, now.
///
/// The run's workflow ID is `activity-{id}:manual-{key}`, with the key from
/// `Idempotency-Key` (or generated), so a retried request starts nothing new.
#[utoipa::path(
    post,
    path = "/v1/activities/{id}/trigger",
    security(("bearer" = ["write"])),
    tag = "activities",
    params(
        ("id" = Uuid, Path, description = "Activity ID"),
        ("Idempotency-Key" = Option<String>, Header, nullable = false, description = "Makes retries of this trigger start one run", pattern = r"^[!-~]{1,255}$"),
    ),
    responses(
        (status = 202, description = "Run started", body = TriggerResponse),
        (status = 200, description = "This key already started a run", body = TriggerResponse),
        problems::BadIdOrKey,
        problems::NoSuchActivity,
        problems::StartRefused,
        problems::PostgresOrTemporalUnavailable,
    )
)]
#[tracing::instrument(skip(actor, state, headers))]
pub async fn trigger_activity(
    State(state): State<AppState>,
    Caller(actor): Caller,
    IdParam(id): IdParam,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let key = idempotency_key(&headers)?;
    let triggered = state.services.runs.trigger(id, key, &actor).await?;
    let status = match triggered.outcome {
        StartOutcome::Started => StatusCode::ACCEPTED,
        StartOutcome::Duplicate => StatusCode::OK,
    };
    let body = TriggerResponse {
        workflow_id: triggered.workflow_id,
        run_id: triggered.run_id,
        key: triggered.key,
        outcome: triggered.outcome,
    };
    Ok((status, axum::Json(body)).into_response())
}
