//! `POST /v1/events:batch`: many events of this API's own JSON in one
//! request, for producers that send many. Each event is ingested exactly as
//! `POST /v1/events` would ingest it on its own (same event IDs, same
//! dispatch rows, same 409 for a conflicting re-delivery), and answers for
//! itself; the CloudEvents batch mode of `POST /v1/events` shares the loop.

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use utoipa::ToSchema;

use super::cloudevents::{BatchItemResponse, BatchResponse, MAX_BATCH};
use super::handlers::{EventRequest, ingest_one, parse_event, prefers_wait};
use super::rate;
use crate::api::AppState;
use crate::api::caller::Caller;
use crate::api::error::{ApiError, ApiResult};
use crate::api::extract::{JsonBody, from_json_value};
use crate::api::problems;
use acp_domain::FieldError;
use acp_domain::auth::UnconfirmedKey;
use acp_domain::project::ProjectId;
use acp_service::events::NewEvent;

/// Events to ingest, each as `POST /v1/events` takes it.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EventBatchRequest {
    /// 1 to 1000 events (and no more than the body limit). Without an
    /// `event_id`, an event's ID is a digest of its content (the
    /// `Idempotency-Key` header names one event, so a batch refuses it).
    #[schema(value_type = Vec<EventRequest>, min_items = 1, max_items = 1000)]
    pub events: Vec<serde_json::Value>,
}

/// The same error under `events[i]`: `event_type` becomes
/// `events[3].event_type`, the item as a whole (`body`) `events[3]`.
fn under_item(err: ApiError, index: usize) -> ApiError {
    let parent = format!("events[{index}]");
    let rename = |errors: Vec<FieldError>| -> Vec<FieldError> {
        errors
            .into_iter()
            .map(|e| {
                if e.field == "body" {
                    FieldError::new(parent.clone(), e.message)
                } else {
                    e.under(&parent)
                }
            })
            .collect()
    };
    match err {
        ApiError::BadRequest(errors) => ApiError::BadRequest(rename(errors)),
        ApiError::Validation(errors) => ApiError::Validation(rename(errors)),
        other => other,
    }
}

fn parse_item(index: usize, item: serde_json::Value) -> ApiResult<NewEvent> {
    let no_headers = HeaderMap::new();
    from_json_value::<EventRequest>(item)
        .and_then(|request| parse_event(request, &no_headers))
        .map_err(|err| under_item(err, index))
}

/// Ingest up to 1000 events.
///
/// Each event is handled as `POST /v1/events` handles it alone, one after
/// the other in the order given (so the dispatcher starts their runs in that
/// order): exactly one run per (activity, event), a re-delivery a
/// `duplicate`, a known event ID with other content a 409 for that event
/// only. The answer is 200 with one `{index, status, result | problem}` per
/// event, `status` being what that event alone would have been answered
/// (202 while its dispatches are `pending`, 200, 400, 409, 422, 503). A
/// batch none of whose events can be read is a 422 as a whole; a body that
/// is not `{"events": [...]}` with 1 to 1000 items is a 400 or 422 naming
/// `events`. `Prefer: wait=N` makes every start within the request.
#[utoipa::path(
    post,
    path = "/v1/events:batch",
    security(("bearer" = ["events"])),
    tag = "events",
    request_body(content = EventBatchRequest, content_type = "application/json"),
    params(
        ("Prefer" = Option<String>, Header, nullable = false, description = "`wait=N` (N > 0): start the runs within the request and answer with their outcomes", example = "wait=10"),
    ),
    responses(
        (status = 200, description = "One result per event, in the order given", body = BatchResponse,
         headers(("Preference-Applied" = String, description = "`wait` when the starts were made within the request"))),
        problems::UnreadableBodyOrIdempotencyKey,
        problems::BodyTooLarge,
        problems::NotJson,
        problems::InvalidBatch,
        problems::QuotaExceeded,
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip_all)]
pub async fn ingest_events_batch(
    State(state): State<AppState>,
    Caller(actor): Caller,
    headers: HeaderMap,
    JsonBody(request): JsonBody<EventBatchRequest>,
) -> ApiResult<Response> {
    let wait = prefers_wait(&headers)?;
    if headers.contains_key("idempotency-key") {
        return Err(ApiError::bad_field(
            "Idempotency-Key",
            "names one event; in a batch give each event its own event_id",
        ));
    }
    if request.events.is_empty() || request.events.len() > MAX_BATCH {
        return Err(ApiError::invalid_field(
            "events",
            format!(
                "must hold 1 to {MAX_BATCH} events, not {}",
                request.events.len()
            ),
        ));
    }
    let items = request
        .events
        .into_iter()
        .enumerate()
        .map(|(index, item)| parse_item(index, item))
        .collect();
    let items = rate::take(&state, &actor.project, items).await?;
    let mut response = ingest_batch(
        &state,
        &actor.project,
        items,
        wait,
        "application/json",
        None,
    )
    .await;
    if wait && response.status() == StatusCode::OK {
        response
            .headers_mut()
            .insert("preference-applied", HeaderValue::from_static("wait"));
    }
    Ok(response)
}

/// One event after the other; each item answers for itself. A batch none
/// of whose items can be read is refused as a whole (422), so nothing that
/// accepts no event answers 200.
pub(super) async fn ingest_batch(
    state: &AppState,
    project: &ProjectId,
    items: Vec<ApiResult<NewEvent>>,
    wait: bool,
    content_type: &'static str,
    key: Option<&UnconfirmedKey>,
) -> Response {
    if !items.is_empty() && items.iter().all(Result::is_err) {
        let errors = items
            .into_iter()
            .filter_map(Result::err)
            .flat_map(|err| err.to_problem().errors)
            .collect();
        return ApiError::Validation(errors).into_response();
    }
    let mut results = Vec::with_capacity(items.len());
    for (index, item) in items.into_iter().enumerate() {
        let outcome = match item {
            Ok(event) => ingest_one(state, project, event, wait, key).await,
            Err(err) => Err(err),
        };
        results.push(match outcome {
            Ok((status, result)) => BatchItemResponse {
                index,
                status: status.as_u16(),
                result: Some(result),
                problem: None,
            },
            Err(err) => {
                let problem = err.to_problem();
                BatchItemResponse {
                    index,
                    status: problem.status,
                    result: None,
                    problem: Some(problem),
                }
            }
        });
    }
    (
        StatusCode::OK,
        [(axum::http::header::CONTENT_TYPE, content_type)],
        axum::Json(BatchResponse { items: results }),
    )
        .into_response()
}
