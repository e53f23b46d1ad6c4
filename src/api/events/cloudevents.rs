//! CloudEvents 1.0 over HTTP on `POST /v1/events`: structured mode
//! (`application/cloudevents+json`), binary mode (`ce-*` headers, the data
//! as the body) and batch mode (`application/cloudevents-batch+json`). The
//! mapping onto events is `domain::cloudevent`'s.

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::HeaderMap;
use axum::http::header::CONTENT_TYPE;
use serde::Serialize;
use utoipa::ToSchema;

use crate::api::error::{ApiError, Problem};
use crate::api::extract::{from_json_slice, read_body};
use acp_domain::cloudevent::{self, MappedEvent, is_json_media_type};
use acp_domain::event::EventIdOrigin;
use acp_domain::message::ce_attributes;
use acp_service::events::NewEvent;

pub const STRUCTURED: &str = "application/cloudevents+json";
pub const BATCH: &str = "application/cloudevents-batch+json";
/// The most events one batch may hold.
pub const MAX_BATCH: usize = 1000;

/// A CloudEvent in structured mode (the JSON event format). Attributes
/// other than these are extensions: accepted, not stored.
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct CloudEventRequest {
    #[schema(example = "1.0", pattern = r"^1\.0$")]
    specversion: String,
    /// Unique within `source`; (`source`, `id`) becomes the event ID.
    #[schema(example = "A234-1234-1234", min_length = 1)]
    id: String,
    /// Becomes the event's `source`: 1 to 200 characters, no control characters.
    #[schema(
        example = "https://crm.example.com/orders",
        min_length = 1,
        max_length = 200
    )]
    source: String,
    /// Becomes the event's `event_type`.
    #[schema(
        example = "com.example.order.created",
        pattern = r"^[A-Za-z0-9._:/-]{1,200}$"
    )]
    r#type: String,
    /// Becomes the event's `occurred_at` (RFC 3339).
    #[schema(format = DateTime)]
    time: Option<String>,
    datacontenttype: Option<String>,
    dataschema: Option<String>,
    subject: Option<String>,
    /// Becomes the event's `payload`, whatever JSON it is; `{}` when absent.
    data: Option<serde_json::Value>,
    /// Binary data (base64); the payload is then `{"data_base64": …}`.
    #[schema(format = Byte)]
    data_base64: Option<String>,
}

/// The data of a binary-mode CloudEvent, in whatever content type it has
/// (the `ce-*` headers carry the attributes).
#[derive(ToSchema)]
#[schema(value_type = String, format = Binary)]
#[allow(dead_code)]
pub struct CloudEventData(Vec<u8>);

/// The outcome of one event of a batch: `result` when `status` is 200 or
/// 202, `problem` otherwise.
#[derive(Debug, Serialize, ToSchema)]
pub struct BatchItemResponse {
    /// Position in the batch, from 0.
    pub index: usize,
    /// The status this event would have had on its own.
    pub status: u16,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<super::handlers::IngestResponse>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<Problem>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct BatchResponse {
    pub items: Vec<BatchItemResponse>,
}

/// `POST /v1/events`'s body, by content type and headers.
pub enum IngestBody {
    /// This API's own event JSON.
    Native(Bytes),
    One(NewEvent),
    /// Each item parsed on its own: one bad item fails only itself.
    Batch(Vec<Result<NewEvent, ApiError>>),
}

fn essence(headers: &HeaderMap) -> String {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

fn new_event(event: MappedEvent) -> NewEvent {
    NewEvent {
        event_id: event.event_id,
        origin: EventIdOrigin::Cloudevent,
        event_type: event.event_type.as_str().to_owned(),
        source: event.source,
        occurred_at: event.occurred_at,
        payload: event.payload,
    }
}

fn structured(value: &serde_json::Value, prefix: &str) -> Result<NewEvent, ApiError> {
    cloudevent::from_structured(value, prefix)
        .map(new_event)
        .map_err(ApiError::Validation)
}

impl<S: Send + Sync> FromRequest<S> for IngestBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let headers = req.headers().clone();
        let essence = essence(&headers);
        let binary = headers.contains_key("ce-specversion");
        let native =
            !binary && is_json_media_type(&essence) && essence != STRUCTURED && essence != BATCH;
        if !(binary || native || essence == STRUCTURED || essence == BATCH) {
            return Err(ApiError::UnsupportedMediaType(format!(
                "expected application/json, {STRUCTURED}, {BATCH}, or a binary-mode CloudEvent (ce-specversion and the other ce-* headers), got `{}`",
                if essence.is_empty() {
                    "nothing"
                } else {
                    &essence
                }
            )));
        }
        let bytes = read_body(req, state).await?;
        if native {
            return Ok(Self::Native(bytes));
        }
        if binary {
            let attributes = ce_attributes(
                headers
                    .iter()
                    .filter_map(|(k, v)| Some((k.as_str(), v.to_str().ok()?))),
            );
            let content_type = (!essence.is_empty()).then_some(essence.as_str());
            if content_type.is_some_and(is_json_media_type) && !bytes.is_empty() {
                // Reads JSON as the native body does (NUL characters named).
                from_json_slice::<serde_json::Value>(&bytes)?;
            }
            return cloudevent::from_binary(&attributes, content_type, &bytes, &|f| {
                format!("ce-{f}")
            })
            .map(|event| Self::One(new_event(event)))
            .map_err(ApiError::Validation);
        }
        let value: serde_json::Value = from_json_slice(&bytes)?;
        if essence == STRUCTURED {
            return structured(&value, "").map(Self::One);
        }
        let Some(items) = value.as_array() else {
            return Err(ApiError::bad_field("body", "a batch must be a JSON array"));
        };
        if items.len() > MAX_BATCH {
            return Err(ApiError::invalid_field(
                "body",
                format!("a batch holds at most {MAX_BATCH} events"),
            ));
        }
        Ok(Self::Batch(
            items
                .iter()
                .enumerate()
                .map(|(i, item)| structured(item, &format!("[{i}].")))
                .collect(),
        ))
    }
}
