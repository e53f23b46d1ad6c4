//! `/v1/sources`: brokers the service consumes events from (scope `admin`),
//! with their live status and their rejected (poison) messages.

use crate::api::caller::Caller;
use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use super::schema::SourceRequestDoc;
use crate::api::AppState;
use crate::api::error::{ApiError, ApiResult};
use crate::api::extract::{IdParam, JsonBody, etag, if_match};
use crate::api::merge_patch::{patched, require_object};
use crate::api::pagination::{Cursor, Listing, Page, page};
use crate::api::problems;
use acp_domain::FieldError;
use acp_domain::message::RejectReason;
use acp_domain::source::{
    RejectionRecord, SourceConfig, SourceKind, SourceRecord, StatusRecord, parse_name,
    parse_secret_ref,
};
use acp_service::sources::{RAW_KEPT, SourceInput};

/// Sources' cursor: the last source's creation time and ID.
pub struct SourceCursor;

impl Cursor for SourceCursor {
    const SCOPE: &'static str = "sources";
    type Key = (DateTime<Utc>, Uuid);
}
/// Rejected messages' cursor: the last one's sequence number.
pub struct RejectedCursor;

impl Cursor for RejectedCursor {
    const SCOPE: &'static str = "rejected";
    type Key = i64;
}

/// A broker to consume events from. Messages may be CloudEvents (structured
/// or binary mode) or this API's event JSON. Its schema in the document is
/// [`SourceRequestDoc`]'s: one per kind, each with its `config`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceRequest {
    /// Unique, 1 to 200 characters.
    pub name: String,
    pub kind: SourceKind,
    /// `NatsConfig` for `nats`, `RabbitmqConfig` for `rabbitmq`.
    pub config: serde_json::Value,
    /// Name of an environment variable of the consuming processes holding
    /// the credentials (NATS: a token or `user:password`; RabbitMQ: the
    /// password or `user:password`). The value is never stored.
    #[serde(default)]
    pub secret_ref: Option<String>,
    /// Consumed when true (default).
    #[serde(default)]
    pub enabled: Option<bool>,
}

impl utoipa::PartialSchema for SourceRequest {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        SourceRequestDoc::schema()
    }
}

impl ToSchema for SourceRequest {
    fn schemas(
        schemas: &mut Vec<(
            String,
            utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>,
        )>,
    ) {
        SourceRequestDoc::schemas(schemas);
    }
}

/// What the consuming process last reported.
#[derive(Debug, Serialize, ToSchema)]
pub struct SourceStatus {
    /// Whether a consumer is connected to the broker.
    pub connected: bool,
    /// Messages waiting: JetStream pending plus unacknowledged; RabbitMQ
    /// ready messages in the queue.
    pub pending: Option<i64>,
    pub last_error: Option<String>,
    pub last_error_at: Option<DateTime<Utc>>,
    /// Messages that became events (duplicates included).
    pub accepted: i64,
    /// Poison messages, acknowledged and listed under `/rejected`.
    pub rejected: i64,
    /// Re-deliveries of a known event ID with other content.
    pub conflicts: i64,
    /// The process that reported last (`host:pid`).
    pub reported_by: Option<String>,
    /// Null until a consumer has reported.
    pub reported_at: Option<DateTime<Utc>>,
}

/// A source's settings in a response: `NatsConfig` or `RabbitmqConfig`, by
/// its `kind`.
fn config_schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
    use utoipa::openapi::Ref;
    use utoipa::openapi::schema::OneOfBuilder;
    OneOfBuilder::new()
        .item(Ref::from_schema_name("NatsConfig"))
        .item(Ref::from_schema_name("RabbitmqConfig"))
        .into()
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SourceResponse {
    pub id: Uuid,
    pub name: String,
    pub kind: SourceKind,
    #[schema(schema_with = config_schema)]
    pub config: serde_json::Value,
    pub secret_ref: Option<String>,
    pub enabled: bool,
    pub version: i64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// In `GET /v1/sources/{id}` only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<SourceStatus>,
}

/// A poison message: acknowledged, never delivered again, kept here.
#[derive(Debug, Serialize, ToSchema)]
pub struct RejectedMessage {
    pub id: i64,
    pub received_at: DateTime<Utc>,
    pub reason: RejectReason,
    pub detail: String,
    /// Size of the whole message in bytes.
    pub size: i32,
    /// Whether `raw_base64` holds only the first 4 KiB.
    pub truncated: bool,
    /// The message's bytes (at most the first 4 KiB), base64.
    pub raw_base64: String,
    /// The same bytes as text, when they are UTF-8.
    pub raw_text: Option<String>,
    /// The message's text headers.
    #[schema(value_type = Object)]
    pub headers: serde_json::Value,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Page size, 1 to 200 (default 50).
    #[param(value_type = Option<i32>, minimum = 1, maximum = 200)]
    pub limit: Option<String>,
    /// `next_cursor` of the previous page.
    pub cursor: Option<String>,
}

fn render(source: SourceRecord, status: Option<Option<StatusRecord>>) -> SourceResponse {
    SourceResponse {
        id: source.id,
        name: source.name,
        kind: source.kind,
        config: source.config,
        secret_ref: source.secret_ref,
        enabled: source.enabled,
        version: source.version,
        created_at: source.created_at,
        updated_at: source.updated_at,
        status: status.map(|s| {
            let s = s.unwrap_or_default();
            SourceStatus {
                connected: s.connected,
                pending: s.pending,
                last_error: s.last_error,
                last_error_at: s.last_error_at,
                accepted: s.accepted,
                rejected: s.rejected,
                conflicts: s.conflicts,
                reported_by: s.reported_by,
                reported_at: s.reported_at,
            }
        }),
    }
}

fn render_rejection(r: RejectionRecord) -> RejectedMessage {
    RejectedMessage {
        id: r.id,
        received_at: r.received_at,
        reason: r.reason,
        detail: r.detail,
        size: r.size,
        truncated: usize::try_from(r.size).unwrap_or(0) > r.raw.len() && r.raw.len() == RAW_KEPT,
        raw_base64: base64::engine::general_purpose::STANDARD.encode(&r.raw),
        raw_text: String::from_utf8(r.raw).ok(),
        headers: r.headers,
    }
}

/// Parses a request into a source, naming every bad field.
fn parse(request: SourceRequest) -> ApiResult<SourceInput> {
    let mut errors = Vec::new();
    let name = parse_name(&request.name)
        .map_err(|m| errors.push(FieldError::new("name", m)))
        .ok();
    let secret_ref = match request.secret_ref.as_deref().map(parse_secret_ref) {
        None => None,
        Some(Ok(s)) => Some(s),
        Some(Err(m)) => {
            errors.push(FieldError::new("secret_ref", m));
            None
        }
    };
    let config = SourceConfig::parse(request.kind, request.config)
        .map_err(|mut e| errors.append(&mut e))
        .ok();
    match (name, config) {
        (Some(name), Some(config)) if errors.is_empty() => Ok(SourceInput {
            name,
            config,
            secret_ref,
            enabled: request.enabled.unwrap_or(true),
        }),
        _ => Err(ApiError::Validation(errors)),
    }
}

fn with_etag(status: StatusCode, version: i64, body: SourceResponse) -> Response {
    (status, [(header::ETAG, etag(version))], Json(body)).into_response()
}

/// Define a source.
///
/// Every `acp serve` and `acp worker` process starts consuming it within a
/// few seconds (`ACP_SOURCE_REFRESH_SECS`).
#[utoipa::path(
    post,
    path = "/v1/sources",
    security(("bearer" = ["admin"])),
    tag = "sources",
    request_body = SourceRequest,
    responses(
        (status = 201, description = "Created", body = SourceResponse,
         headers(("Location" = String, description = "The new source"), ("ETag" = String, description = "Its version"))),
        problems::SourceNameTaken,
        problems::QuotaExceeded,
        problems::InvalidFields,
    )
)]
#[tracing::instrument(skip_all)]
pub async fn create_source(
    State(state): State<AppState>,
    Caller(actor): Caller,
    JsonBody(request): JsonBody<SourceRequest>,
) -> ApiResult<Response> {
    let input = parse(request)?;
    let source = state.services.sources.create(&input, &actor).await?;
    let location = format!("/v1/sources/{}", source.id);
    let version = source.version;
    let mut response = with_etag(StatusCode::CREATED, version, render(source, Some(None)));
    if let Ok(value) = location.parse() {
        response.headers_mut().insert(header::LOCATION, value);
    }
    Ok(response)
}

/// List sources, newest first.
#[utoipa::path(
    get,
    path = "/v1/sources",
    security(("bearer" = ["admin"])),
    tag = "sources",
    params(ListQuery),
    responses((status = 200, description = "A page of sources", body = Page<SourceResponse>))
)]
#[tracing::instrument(skip_all)]
pub async fn list_sources(
    State(state): State<AppState>,
    Caller(actor): Caller,
    Listing { limit, after, .. }: Listing<ListQuery, SourceCursor>,
) -> ApiResult<Json<Page<SourceResponse>>> {
    let rows = state
        .services
        .sources
        .list(&actor.project, after, limit + 1)
        .await?;
    Ok(Json(page(
        rows,
        limit,
        SourceCursor::SCOPE,
        |s| (s.created_at, s.id),
        |s| render(s, None),
    )))
}

/// One source with its live status.
#[utoipa::path(
    get,
    path = "/v1/sources/{id}",
    security(("bearer" = ["admin"])),
    tag = "sources",
    params(("id" = Uuid, Path, description = "Source ID")),
    responses(
        (status = 200, description = "The source", body = SourceResponse,
         headers(("ETag" = String, description = "Its version"))),
        problems::NoSuchSource,
    )
)]
#[tracing::instrument(skip(state, actor))]
pub async fn get_source(
    State(state): State<AppState>,
    Caller(actor): Caller,
    IdParam(id): IdParam,
) -> ApiResult<Response> {
    let (source, status) = state.services.sources.get(&actor.project, id).await?;
    let version = source.version;
    Ok(with_etag(
        StatusCode::OK,
        version,
        render(source, Some(status)),
    ))
}

/// Change a source (JSON merge patch); its consumers restart with it.
#[utoipa::path(
    patch,
    path = "/v1/sources/{id}",
    security(("bearer" = ["admin"])),
    tag = "sources",
    params(
        ("id" = Uuid, Path, description = "Source ID"),
        ("If-Match" = Option<String>, Header, nullable = false, description = "The ETag last read; 412 if the source changed since", pattern = r#"^(\*|(W/)?"[0-9]{1,18}")$"#),
    ),
    request_body(content = Object, content_type = "application/merge-patch+json",
        description = "RFC 7386 merge patch of the source's fields (`name`, `config`, `secret_ref`, `enabled`)"),
    responses(
        (status = 200, description = "Updated", body = SourceResponse,
         headers(("ETag" = String, description = "Its new version"))),
        problems::NoSuchSource,
        problems::SourceNameTaken,
        problems::ChangedSinceIfMatch,
        problems::InvalidFields,
    )
)]
#[tracing::instrument(skip_all)]
pub async fn patch_source(
    State(state): State<AppState>,
    Caller(actor): Caller,
    IdParam(id): IdParam,
    headers: HeaderMap,
    JsonBody(patch): JsonBody<serde_json::Value>,
) -> ApiResult<Response> {
    let expect = if_match(&headers)?;
    require_object(&patch)?;
    let (current, _) = state.services.sources.get(&actor.project, id).await?;
    let document = serde_json::json!({
        "name": current.name,
        "kind": current.kind,
        "config": current.config,
        "secret_ref": current.secret_ref,
        "enabled": current.enabled,
    });
    let request: SourceRequest = patched(document, &patch)?;
    let input = parse(request)?;
    let source = state
        .services
        .sources
        .update(id, expect, &input, &actor)
        .await?;
    let version = source.version;
    Ok(with_etag(StatusCode::OK, version, render(source, None)))
}

/// Delete a source: its consumers stop; events it delivered stay.
#[utoipa::path(
    delete,
    path = "/v1/sources/{id}",
    security(("bearer" = ["admin"])),
    tag = "sources",
    params(
        ("id" = Uuid, Path, description = "Source ID"),
        ("If-Match" = Option<String>, Header, nullable = false, description = "The ETag last read; 412 if the source changed since", pattern = r#"^(\*|(W/)?"[0-9]{1,18}")$"#),
    ),
    responses(
        (status = 204, description = "Deleted"),
        problems::NoSuchSource,
        problems::ChangedSinceIfMatch,
    )
)]
#[tracing::instrument(skip_all)]
pub async fn delete_source(
    State(state): State<AppState>,
    Caller(actor): Caller,
    IdParam(id): IdParam,
    headers: HeaderMap,
) -> ApiResult<StatusCode> {
    let expect = if_match(&headers)?;
    state.services.sources.delete(id, expect, &actor).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// A source's rejected (poison) messages, newest first.
#[utoipa::path(
    get,
    path = "/v1/sources/{id}/rejected",
    security(("bearer" = ["admin"])),
    tag = "sources",
    params(("id" = Uuid, Path, description = "Source ID"), ListQuery),
    responses(
        (status = 200, description = "A page of rejected messages", body = Page<RejectedMessage>),
        problems::NoSuchSource,
    )
)]
#[tracing::instrument(skip(state, actor, limit, after))]
pub async fn list_rejected(
    State(state): State<AppState>,
    Caller(actor): Caller,
    IdParam(id): IdParam,
    Listing { limit, after, .. }: Listing<ListQuery, RejectedCursor>,
) -> ApiResult<Json<Page<RejectedMessage>>> {
    let rows = state
        .services
        .sources
        .rejections(&actor.project, id, after, limit + 1)
        .await?;
    Ok(Json(page(
        rows,
        limit,
        RejectedCursor::SCOPE,
        |r| r.id,
        render_rejection,
    )))
}
