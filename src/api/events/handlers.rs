//! `/v1/events`: the ingress boundary for external events.

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use super::batch::ingest_batch;
use super::cloudevents::{
    BATCH, BatchResponse, CloudEventData, CloudEventRequest, IngestBody, STRUCTURED,
};
use super::rate;
use crate::api::AppState;
use crate::api::caller::Caller;
use crate::api::error::{ApiError, ApiResult};
use crate::api::extract::from_json_slice;
use crate::api::problems;
use acp_domain::FieldError;
use acp_domain::auth::UnconfirmedKey;
use acp_domain::event::{DispatchOutcome, EventId, EventIdOrigin, parse_source};
use acp_domain::project::ProjectId;
use acp_domain::trigger::EventType;
use acp_service::events::NewEvent;

const MAX_PAYLOAD: usize = 256 * 1024;

/// An inbound event.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EventRequest {
    /// A stable ID from the producer. Without it, the `Idempotency-Key`
    /// header is used, else a digest of the content.
    #[schema(example = "evt_abc123", pattern = r"^[A-Za-z0-9_.:@+=-]{1,200}$")]
    pub event_id: Option<String>,
    #[schema(example = "message.received", pattern = r"^[A-Za-z0-9._:/-]{1,200}$")]
    pub event_type: String,
    /// Who sent it, e.g. `crm`: 1 to 200 characters, no control characters.
    #[schema(example = "crm", pattern = r"^[^\x00-\x1f\x7f-\x9f]{1,200}$")]
    pub source: String,
    /// When it happened (RFC 3339).
    #[schema(format = DateTime)]
    pub occurred_at: Option<String>,
    /// A JSON object, at most 256 KiB.
    #[schema(value_type = Object)]
    pub payload: serde_json::Value,
}

/// One routed (activity, event) pair.
#[derive(Debug, Serialize, ToSchema)]
pub struct DispatchResponse {
    pub activity_id: Uuid,
    /// `activity-{activity_id}:{event_id}`
    pub workflow_id: String,
    /// UUIDv5 over `workflow_id`.
    pub run_id: Uuid,
    /// `started`; `duplicate` when this event already ran for this activity;
    /// `pending` when Temporal did not answer (it is recorded and will be
    /// started, exactly once, when Temporal returns) or when the activity
    /// debounces (`flow.debounce`: settled once the period has passed);
    /// `debounced` for a re-delivery of an event a later event's run took.
    pub outcome: DispatchOutcome,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct IngestResponse {
    pub event_id: String,
    pub event_id_origin: EventIdOrigin,
    pub dispatches: Vec<DispatchResponse>,
}

pub(super) fn parse_event(request: EventRequest, headers: &HeaderMap) -> ApiResult<NewEvent> {
    let mut errors = Vec::new();
    let event_type = EventType::parse(&request.event_type)
        .map_err(|m| errors.push(FieldError::new("event_type", m)))
        .ok();
    let source = parse_source(&request.source)
        .map_err(|m| errors.push(FieldError::new("source", m)))
        .unwrap_or_default();
    let occurred_at = match request.occurred_at.as_deref() {
        None => None,
        Some(text) => match DateTime::parse_from_rfc3339(text) {
            Ok(t) => Some(t.with_timezone(&Utc)),
            Err(_) => {
                errors.push(FieldError::new(
                    "occurred_at",
                    format!("`{text}` is not an RFC 3339 timestamp"),
                ));
                None
            }
        },
    };
    if !request.payload.is_object() {
        errors.push(FieldError::new("payload", "must be a JSON object"));
    } else if serde_json::to_vec(&request.payload)
        .map(|v| v.len())
        .unwrap_or(0)
        > MAX_PAYLOAD
    {
        errors.push(FieldError::new(
            "payload",
            format!("must be at most {MAX_PAYLOAD} bytes of JSON"),
        ));
    }
    let header_key = match headers.get("idempotency-key") {
        None => None,
        Some(value) => match value.to_str().ok().map(EventId::parse) {
            Some(Ok(id)) => Some(id),
            Some(Err(m)) => {
                errors.push(FieldError::new("Idempotency-Key", m));
                None
            }
            None => {
                errors.push(FieldError::new("Idempotency-Key", "must be ASCII"));
                None
            }
        },
    };
    let client_id = match request.event_id.as_deref() {
        None => None,
        Some(text) => match EventId::parse(text) {
            Ok(id) => Some(id),
            Err(m) => {
                errors.push(FieldError::new("event_id", m));
                None
            }
        },
    };
    let Some(event_type) = event_type.filter(|_| errors.is_empty()) else {
        return Err(ApiError::Validation(errors));
    };
    let (event_id, origin) = match (client_id, header_key) {
        (Some(id), _) => (id, EventIdOrigin::Client),
        (None, Some(id)) => (id, EventIdOrigin::IdempotencyKey),
        (None, None) => (
            EventId::digest(&source, event_type.as_str(), occurred_at, &request.payload),
            EventIdOrigin::ContentDigest,
        ),
    };
    Ok(NewEvent {
        event_id,
        origin,
        event_type: event_type.as_str().to_owned(),
        source,
        occurred_at,
        payload: request.payload,
    })
}

/// Whether the client asked to wait for the starts: RFC 7240 `Prefer:
/// wait=N` (any N above 0; the request timeout bounds the wait). Other
/// preferences are ignored, as the RFC says.
pub(super) fn prefers_wait(headers: &HeaderMap) -> ApiResult<bool> {
    let mut wait = false;
    for value in headers.get_all("prefer") {
        let text = value
            .to_str()
            .map_err(|_| ApiError::bad_field("Prefer", "must be ASCII"))?;
        for preference in text.split(',') {
            let preference = preference.split(';').next().unwrap_or_default().trim();
            let Some((name, value)) = preference.split_once('=') else {
                continue;
            };
            if name.trim().eq_ignore_ascii_case("wait") {
                let seconds: u32 = value.trim().trim_matches('"').parse().map_err(|_| {
                    ApiError::bad_field("Prefer", "wait takes a whole number of seconds")
                })?;
                wait = seconds > 0;
            }
        }
    }
    Ok(wait)
}

/// Ingest an event.
///
/// Routes it to every enabled event activity subscribed to its type, at most
/// once per (activity, event), however often it is delivered: the workflow ID
/// `activity-{activity_id}:{event_id}` is started with RejectDuplicate, and
/// the dispatch is recorded in PostgreSQL so the guarantee outlives Temporal's
/// retention. Events that match no activity are recorded too. A re-delivery
/// of a known event ID with other content (type, source, time or payload) is
/// refused with 409; the first content stands.
///
/// The answer comes as soon as the event and its dispatches are committed:
/// 202 with new dispatches `pending` (a dispatcher starts them, oldest first,
/// within moments), or 200 when every dispatch had already started. With
/// `Prefer: wait=N` the starts are made within the request and the answer
/// says what Temporal did (`started`, `duplicate`, or `pending` when it
/// could not be reached).
///
/// CloudEvents 1.0 are accepted in structured mode
/// (`application/cloudevents+json`), binary mode (`ce-specversion`, `ce-id`,
/// `ce-source`, `ce-type`, optional `ce-time` headers; the body is the data,
/// in any media type) and batch mode (`application/cloudevents-batch+json`,
/// answered 200 with one result per event). `type` becomes `event_type`,
/// `source` `source`, `time` `occurred_at`, `data` `payload`, and
/// (`source`, `id`) the event ID: `ce:{source}:{id}` when both are plain
/// and short, else `ce-sha256:` + a digest of the pair.
#[utoipa::path(
    post,
    path = "/v1/events",
    security(("bearer" = ["events"])),
    tag = "events",
    description = "Ingests one event of this API's JSON. CloudEvents (structured, binary and batch mode) have an operation of their own, `POST /v1/cloudevents`; this URL accepts them too, for producers configured with one URL.",
    request_body(content = EventRequest, content_type = "application/json"),
    params(
        ("Idempotency-Key" = Option<String>, Header, nullable = false, description = "The event ID when the body has none", pattern = r"^[A-Za-z0-9_.:@+=-]{1,200}$"),
        ("Prefer" = Option<String>, Header, nullable = false, description = "`wait=N` (N > 0): start the runs within the request and answer with their outcomes", example = "wait=10"),
    ),
    responses(
        (status = 200, description = "Recorded; every dispatch had already started (or none matched)", body = IngestResponse),
        (status = 202, description = "Recorded; dispatches marked `pending` start shortly", body = IngestResponse,
         headers(("Preference-Applied" = String, description = "`wait` when the starts were made within the request"))),
        problems::UnreadableBody,
        problems::EventConflict,
        problems::BodyTooLarge,
        problems::NotJson,
        problems::InvalidFields,
        problems::QuotaExceeded,
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip_all)]
pub async fn ingest_event(
    State(state): State<AppState>,
    Caller(actor): Caller,
    key: Option<Extension<UnconfirmedKey>>,
    headers: HeaderMap,
    body: IngestBody,
) -> ApiResult<Response> {
    ingest(&state, &actor.project, key, &headers, body).await
}

/// CloudEvents 1.0 over HTTP, the three modes on one URL as the HTTP
/// binding wants: structured (`application/cloudevents+json`), batch
/// (`application/cloudevents-batch+json`) and binary (the `ce-*` headers
/// carry the attributes, the body is the data in its own content type).
#[utoipa::path(
    post,
    path = "/v1/cloudevents",
    security(("bearer" = ["events"])),
    tag = "events",
    request_body(
        description = "A CloudEvent in structured mode, a batch of them, or the data of a binary-mode CloudEvent (with its ce-* headers)",
        content(
            (CloudEventRequest = "application/cloudevents+json"),
            (Vec<CloudEventRequest> = "application/cloudevents-batch+json"),
            (CloudEventData = "application/octet-stream"),
        )
    ),
    params(
        ("Prefer" = Option<String>, Header, nullable = false, description = "`wait=N` (N > 0): start the runs within the request and answer with their outcomes", example = "wait=10"),
        ("ce-specversion" = Option<String>, Header, nullable = false, pattern = r"^1\.0$", description = "Binary mode: `1.0`; with it, the body is the event's data"),
        ("ce-id" = Option<String>, Header, nullable = false, min_length = 1, description = "Binary mode: the CloudEvent's id"),
        ("ce-source" = Option<String>, Header, nullable = false, pattern = r"^[^\x00-\x1f\x7f-\x9f]{1,200}$", description = "Binary mode: the CloudEvent's source: 1 to 200 characters, no control characters"),
        ("ce-type" = Option<String>, Header, nullable = false, pattern = r"^[A-Za-z0-9._:/-]{1,200}$", description = "Binary mode: the CloudEvent's type: 1 to 200 of letters, digits and `. _ - : /`"),
        ("ce-time" = Option<String>, Header, nullable = false, pattern = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?(?:[Zz]|[+-][0-9]{2}:[0-9]{2})$", description = "Binary mode: the CloudEvent's time (RFC 3339)"),
    ),
    responses(
        (status = 200, description = "Recorded; every dispatch had already started (or none matched). A batch: one result per event", content(
            (IngestResponse = "application/json"),
            (BatchResponse = "application/cloudevents-batch+json"),
        )),
        (status = 202, description = "Recorded; dispatches marked `pending` start shortly", body = IngestResponse,
         headers(("Preference-Applied" = String, description = "`wait` when the starts were made within the request"))),
        problems::UnreadableBody,
        problems::EventConflict,
        problems::BodyTooLarge,
        problems::NotCloudEvent,
        problems::InvalidFields,
        problems::QuotaExceeded,
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip_all)]
pub async fn ingest_cloudevent(
    State(state): State<AppState>,
    Caller(actor): Caller,
    key: Option<Extension<UnconfirmedKey>>,
    headers: HeaderMap,
    body: IngestBody,
) -> ApiResult<Response> {
    if let IngestBody::Native(_) = body {
        return Err(ApiError::UnsupportedMediaType(format!(
            "expected {STRUCTURED}, {BATCH}, or a binary-mode CloudEvent (ce-specversion and the other ce-* headers); this API's own event JSON goes to POST /v1/events"
        )));
    }
    ingest(&state, &actor.project, key, &headers, body).await
}

/// Events are received for the caller's project: their IDs are unique
/// there, and they reach its activities only.
async fn ingest(
    state: &AppState,
    project: &ProjectId,
    key: Option<Extension<UnconfirmedKey>>,
    headers: &HeaderMap,
    body: IngestBody,
) -> ApiResult<Response> {
    let key = key.as_ref().map(|Extension(k)| k);
    let wait = prefers_wait(headers)?;
    let event = match body {
        IngestBody::Native(bytes) => parse_event(from_json_slice(&bytes)?, headers)?,
        IngestBody::One(event) => event,
        IngestBody::Batch(items) => {
            let items = rate::take(state, project, items).await?;
            return Ok(ingest_batch(state, project, items, wait, BATCH, key).await);
        }
    };
    rate::take_one(state, project).await?;
    let (status, body) = ingest_one(state, project, event, wait, key).await?;
    let mut response = (status, Json(body)).into_response();
    if wait {
        response.headers_mut().insert(
            "preference-applied",
            axum::http::HeaderValue::from_static("wait"),
        );
    }
    Ok(response)
}

pub(super) async fn ingest_one(
    state: &AppState,
    project: &ProjectId,
    event: NewEvent,
    wait: bool,
    key: Option<&UnconfirmedKey>,
) -> ApiResult<(StatusCode, IngestResponse)> {
    let origin = event.origin;
    let result = state
        .services
        .events
        .ingest(project, event, wait, key)
        .await?;
    let pending = result.pending();
    let body = IngestResponse {
        event_id: result.event.event_id,
        event_id_origin: origin,
        dispatches: result
            .dispatches
            .into_iter()
            .map(|d| DispatchResponse {
                activity_id: d.activity_id,
                workflow_id: d.workflow_id,
                run_id: d.run_id,
                outcome: d.outcome,
            })
            .collect(),
    };
    let status = if pending {
        StatusCode::ACCEPTED
    } else {
        StatusCode::OK
    };
    Ok((status, body))
}
