//! `/v1/calendars`: create, list, read, replace, patch and delete business
//! calendars, each write at a new version (`ETag`, `If-Match` as for
//! activities). Reading needs scope `read`; writing, `admin`.

use crate::api::caller::Caller;
use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use serde::Deserialize;
use utoipa::IntoParams;
use uuid::Uuid;

use super::model::{CalendarRequest, CalendarResponse, render};
use crate::api::AppState;
use crate::api::error::{ApiError, ApiResult};
use crate::api::extract::{IdParam, JsonBody, etag, if_match};
use crate::api::merge_patch::{patched, require_object};
use crate::api::pagination::{Cursor, Listing, Page, page};
use crate::api::problems;
use acp_domain::business_calendar::{BusinessCalendar, CalendarRecord};

/// Calendars' cursor: the last calendar's creation time and ID.
pub struct CalendarCursor;

impl Cursor for CalendarCursor {
    const SCOPE: &'static str = "calendars";
    type Key = (DateTime<Utc>, Uuid);
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

pub(super) fn parse(request: CalendarRequest) -> ApiResult<BusinessCalendar> {
    BusinessCalendar::parse(&request.into_input()).map_err(ApiError::Validation)
}

/// The calendar with its `ETag`, and `Location` when it was created.
pub(super) fn respond(status: StatusCode, record: CalendarRecord) -> Response {
    let id = record.id;
    let tag = etag(record.version);
    respond_with(status, id, &tag, Json(render(record)))
}

pub(super) fn respond_with(
    status: StatusCode,
    id: Uuid,
    tag: &str,
    body: impl IntoResponse,
) -> Response {
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    if let Ok(v) = HeaderValue::from_str(tag) {
        headers.insert(header::ETAG, v);
    }
    if status == StatusCode::CREATED
        && let Ok(v) = HeaderValue::from_str(&format!("/v1/calendars/{id}"))
    {
        headers.insert(header::LOCATION, v);
    }
    response
}

/// Create a calendar.
#[utoipa::path(
    post,
    path = "/v1/calendars",
    security(("bearer" = ["admin"])),
    tag = "calendars",
    request_body = CalendarRequest,
    responses(
        (status = 201, description = "Created", body = CalendarResponse,
         headers(("Location" = String, description = "The new calendar"), ("ETag" = String, description = "Its version"))),
        problems::UnreadableBody,
        problems::CalendarNameTaken,
        problems::BodyTooLarge,
        problems::NotJson,
        problems::InvalidFields,
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip_all)]
pub async fn create_calendar(
    State(state): State<AppState>,
    Caller(actor): Caller,
    JsonBody(request): JsonBody<CalendarRequest>,
) -> ApiResult<Response> {
    let calendar = parse(request)?;
    let record = state.services.calendars.create(&calendar, &actor).await?;
    Ok(respond(StatusCode::CREATED, record))
}

/// List calendars, newest first.
#[utoipa::path(
    get,
    path = "/v1/calendars",
    security(("bearer" = ["read"])),
    tag = "calendars",
    params(ListQuery),
    responses(
        (status = 200, description = "A page of calendars", body = Page<CalendarResponse>),
        problems::BadParameter,
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip_all)]
pub async fn list_calendars(
    State(state): State<AppState>,
    Caller(actor): Caller,
    Listing { limit, after, .. }: Listing<ListQuery, CalendarCursor>,
) -> ApiResult<Json<Page<CalendarResponse>>> {
    let rows = state
        .services
        .calendars
        .list(&actor.project, after, limit + 1)
        .await?;
    Ok(Json(page(
        rows,
        limit,
        CalendarCursor::SCOPE,
        |c| (c.created_at, c.id),
        render,
    )))
}

/// Get one calendar.
#[utoipa::path(
    get,
    path = "/v1/calendars/{id}",
    security(("bearer" = ["read"])),
    tag = "calendars",
    params(("id" = Uuid, Path, description = "Calendar ID")),
    responses(
        (status = 200, description = "The calendar", body = CalendarResponse,
         headers(("ETag" = String, description = "Its version"))),
        problems::BadId,
        problems::NoSuchCalendar,
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip(actor, state))]
pub async fn get_calendar(
    State(state): State<AppState>,
    Caller(actor): Caller,
    IdParam(id): IdParam,
) -> ApiResult<Response> {
    let record = state.services.calendars.get(id, &actor.project).await?;
    Ok(respond(StatusCode::OK, record))
}

/// Create or replace a calendar under a client-chosen ID.
///
/// `If-Match` makes the replace conditional (412 on a stale version, or
/// when the calendar does not exist); `If-Match: *` requires that it exists.
#[utoipa::path(
    put,
    path = "/v1/calendars/{id}",
    security(("bearer" = ["admin"])),
    tag = "calendars",
    request_body = CalendarRequest,
    params(
        ("id" = Uuid, Path, description = "Calendar ID, chosen by the client"),
        ("If-Match" = Option<String>, Header, nullable = false, description = "ETag of the version being replaced", pattern = r#"^(\*|(W/)?"[0-9]{1,18}")$"#),
    ),
    responses(
        (status = 200, description = "Replaced", body = CalendarResponse, headers(("ETag" = String))),
        (status = 201, description = "Created", body = CalendarResponse, headers(("ETag" = String), ("Location" = String))),
        problems::UnreadableBodyOrId,
        problems::CalendarNameTaken,
        problems::StaleIfMatch,
        problems::BodyTooLarge,
        problems::NotJson,
        problems::InvalidFields,
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip(actor, state, headers, request))]
pub async fn put_calendar(
    State(state): State<AppState>,
    Caller(actor): Caller,
    IdParam(id): IdParam,
    headers: HeaderMap,
    JsonBody(request): JsonBody<CalendarRequest>,
) -> ApiResult<Response> {
    let expect = if_match(&headers)?;
    let calendar = parse(request)?;
    let (record, created) = state
        .services
        .calendars
        .put(id, &calendar, expect, &actor)
        .await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok(respond(status, record))
}

/// Change a calendar with a JSON merge patch (RFC 7386).
///
/// The patch applies to the calendar's request form (what `PUT` takes; a
/// list such as `holidays` is replaced whole); the result is validated as a
/// whole. `null` removes a field (back to its default).
#[utoipa::path(
    patch,
    path = "/v1/calendars/{id}",
    security(("bearer" = ["admin"])),
    tag = "calendars",
    request_body(content = Object, content_type = "application/merge-patch+json",
                 description = "Fields to change, in the shape of CalendarRequest"),
    params(
        ("id" = Uuid, Path, description = "Calendar ID"),
        ("If-Match" = Option<String>, Header, nullable = false, description = "ETag of the version being patched", pattern = r#"^(\*|(W/)?"[0-9]{1,18}")$"#),
    ),
    responses(
        (status = 200, description = "Patched", body = CalendarResponse, headers(("ETag" = String))),
        problems::UnreadablePatchOrId,
        problems::NoSuchCalendar,
        problems::CalendarNameTaken,
        problems::StaleIfMatch,
        problems::BodyTooLarge,
        problems::NotJson,
        problems::InvalidFields,
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip(actor, state, headers, patch))]
pub async fn patch_calendar(
    State(state): State<AppState>,
    Caller(actor): Caller,
    IdParam(id): IdParam,
    headers: HeaderMap,
    JsonBody(patch): JsonBody<serde_json::Value>,
) -> ApiResult<Response> {
    let expect = if_match(&headers)?;
    require_object(&patch)?;
    let record = state
        .services
        .calendars
        .patch(
            id,
            expect,
            |current| parse(patched(current, &patch)?),
            &actor,
        )
        .await?;
    Ok(respond(StatusCode::OK, record))
}

/// Delete a calendar. A calendar that a live activity's trigger names is
/// kept: 409, naming the activities.
#[utoipa::path(
    delete,
    path = "/v1/calendars/{id}",
    security(("bearer" = ["admin"])),
    tag = "calendars",
    params(
        ("id" = Uuid, Path, description = "Calendar ID"),
        ("If-Match" = Option<String>, Header, nullable = false, description = "ETag of the version being deleted", pattern = r#"^(\*|(W/)?"[0-9]{1,18}")$"#),
    ),
    responses(
        (status = 204, description = "Deleted"),
        problems::BadId,
        problems::NoSuchCalendar,
        problems::CalendarInUse,
        problems::StaleIfMatch,
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip(actor, state, headers))]
pub async fn delete_calendar(
    State(state): State<AppState>,
    Caller(actor): Caller,
    IdParam(id): IdParam,
    headers: HeaderMap,
) -> ApiResult<StatusCode> {
    let expect = if_match(&headers)?;
    state.services.calendars.delete(id, expect, &actor).await?;
    Ok(StatusCode::NO_CONTENT)
}
