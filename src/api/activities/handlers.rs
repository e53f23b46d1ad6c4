//! `/v1/activities`: definitions and their schedules.

use crate::api::caller::Caller;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use utoipa::IntoParams;

use super::model::{ActivityRequest, ActivityResponse, render, request_of};
use super::trigger_model::parse_trigger_type;
use crate::api::AppState;
use crate::api::error::{ApiError, ApiResult};
use crate::api::extract::{ApiQuery, IdParam, JsonBody, etag, idempotency_key, if_match};
use crate::api::merge_patch::{patched, require_object};
use crate::api::pagination::{Cursor, Listing, Page, page};
use crate::api::problems;
use acp_domain::activity::Activity;
use acp_domain::query::{ActivityFilter, Keyset};
use acp_service::activities::{Written, next_fire_times};

mod trigger;

pub use trigger::{__path_trigger_activity, TriggerResponse, trigger_activity};

/// Activities' cursor: where the last activity sorts.
pub struct ActivityCursor;

impl Cursor for ActivityCursor {
    const SCOPE: &'static str = "activities";
    type Key = Keyset;
}

fn respond(
    status: StatusCode,
    activity: Activity,
    next: Vec<chrono::DateTime<chrono::Utc>>,
) -> Response {
    let id = activity.id;
    let tag = etag(activity.version);
    let mut response = (status, axum::Json(render(activity, next))).into_response();
    let headers = response.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&tag) {
        headers.insert(header::ETAG, v);
    }
    if status == StatusCode::CREATED
        && let Ok(v) = HeaderValue::from_str(&format!("/v1/activities/{id}"))
    {
        headers.insert(header::LOCATION, v);
    }
    response
}

/// A write's answer: the activity, its ETag, and `Location` for a create.
fn respond_written(written: Written) -> Response {
    let status = if written.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    let mut response = respond(status, written.activity, written.next_fire_times);
    if written.replayed {
        response
            .headers_mut()
            .insert("idempotent-replayed", HeaderValue::from_static("true"));
    }
    response
}

fn parse_definition(
    request: ActivityRequest,
) -> ApiResult<acp_domain::activity::ActivityDefinition> {
    request.into_definition().map_err(ApiError::Validation)
}

/// Create an activity.
///
/// The schedule (for `cron` and `interval` triggers) is created in Temporal
/// within the request; if Temporal does not answer, the activity is still
/// stored with `schedule.sync_state: pending` and the reconciler finishes the job.
/// A repeated `Idempotency-Key` with the same body returns the same activity.
#[utoipa::path(
    post,
    path = "/v1/activities",
    security(("bearer" = ["write"])),
    tag = "activities",
    request_body = ActivityRequest,
    params(("Idempotency-Key" = Option<String>, Header, nullable = false, description = "Replays the first response for a repeated key", pattern = r"^[!-~]{1,255}$")),
    responses(
        (status = 201, description = "Created", body = ActivityResponse,
         headers(("Location" = String), ("ETag" = String))),
        problems::UnreadableBody,
        problems::IdempotencyKeyReused,
        problems::QuotaExceeded,
        problems::BodyTooLarge,
        problems::NotJson,
        problems::InvalidFields,
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip_all)]
pub async fn create_activity(
    State(state): State<AppState>,
    Caller(actor): Caller,
    headers: HeaderMap,
    JsonBody(request): JsonBody<ActivityRequest>,
) -> ApiResult<Response> {
    let key = idempotency_key(&headers)?;
    let request_hash = key.as_ref().map(|_| {
        hex::encode(Sha256::digest(
            serde_json::to_vec(&request).unwrap_or_default(),
        ))
    });
    let definition = parse_definition(request)?;
    let idempotency = key.as_deref().zip(request_hash.as_deref());
    let written = state
        .services
        .activities
        .create(&definition, idempotency, &actor)
        .await?;
    Ok(respond_written(written))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListActivitiesQuery {
    /// Page size, 1 to 200 (default 50).
    #[param(value_type = Option<i32>, minimum = 1, maximum = 200)]
    pub limit: Option<String>,
    /// `next_cursor` of the previous page.
    pub cursor: Option<String>,
    /// `cron`, `interval` or `event`.
    pub trigger_type: Option<String>,
    /// `true` or `false`.
    pub enabled: Option<String>,
    /// `key=value`: activities carrying this label.
    pub label: Option<String>,
    /// Case-insensitive substring of the name or description.
    pub q: Option<String>,
    /// `summary`: each activity's last run, next fire, runs and success
    /// rate over 24 hours and open alerts.
    #[param(pattern = "^summary$")]
    pub include: Option<String>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct GetActivityQuery {
    /// `summary`: the activity's last run, next fire, runs and success rate
    /// over 24 hours and open alerts.
    #[param(pattern = "^summary$")]
    pub include: Option<String>,
}

/// List activities, newest first.
#[utoipa::path(
    get,
    path = "/v1/activities",
    security(("bearer" = ["read"])),
    tag = "activities",
    params(ListActivitiesQuery),
    responses(
        (status = 200, description = "A page of activities", body = Page<ActivityResponse>),
        problems::BadParameter,
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip_all)]
pub async fn list_activities(
    State(state): State<AppState>,
    Caller(actor): Caller,
    Listing {
        query,
        limit,
        after,
    }: Listing<ListActivitiesQuery, ActivityCursor>,
) -> ApiResult<axum::Json<Page<ActivityResponse>>> {
    let trigger_type = query
        .trigger_type
        .as_deref()
        .map(|t| parse_trigger_type(t).map_err(|m| ApiError::bad_field("trigger_type", m)))
        .transpose()?;
    let enabled = match query.enabled.as_deref() {
        None => None,
        Some("true") => Some(true),
        Some("false") => Some(false),
        Some(_) => return Err(ApiError::bad_field("enabled", "must be true or false")),
    };
    let label = query
        .label
        .as_deref()
        .map(|l| {
            l.split_once('=')
                .filter(|(k, _)| !k.is_empty())
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .ok_or_else(|| ApiError::bad_field("label", "must be key=value"))
        })
        .transpose()?;
    if query.q.as_ref().is_some_and(|q| q.chars().count() > 200) {
        return Err(ApiError::bad_field("q", "must be at most 200 characters"));
    }
    let filter = ActivityFilter {
        trigger_type,
        enabled,
        label,
        q: query.q.filter(|q| !q.is_empty()),
        project: Some(actor.project),
    };
    let summary = crate::api::stats::wants_summary(query.include.as_deref())?;
    let now = chrono::Utc::now();
    let rows = state
        .services
        .activities
        .list(&filter, after, limit + 1)
        .await?;
    let calendars = state
        .services
        .activities
        .calendars_of(&rows[..rows.len().min(limit as usize)])
        .await?;
    let summaries = if summary {
        let ids: Vec<uuid::Uuid> = rows.iter().take(limit as usize).map(|a| a.id).collect();
        state.services.runs.summaries(&ids, now).await?
    } else {
        Default::default()
    };
    Ok(axum::Json(page(
        rows,
        limit,
        ActivityCursor::SCOPE,
        |a| (a.created_at, a.id),
        |a| {
            let calendar = a
                .definition
                .trigger
                .as_scheduled()
                .and_then(|t| t.calendar)
                .and_then(|rule| calendars.get(&rule.id));
            let next = next_fire_times(&a, calendar, now);
            let found = summaries.get(&a.id).cloned();
            let mut body = render(a, next);
            if let Some(s) = found {
                let next_fire = body.schedule.next_fire_times.first().copied();
                body.summary = Some(crate::api::stats::render_summary(s, next_fire));
            }
            body
        },
    )))
}

/// Get one activity, with its schedule's sync state and next fire times.
#[utoipa::path(
    get,
    path = "/v1/activities/{id}",
    security(("bearer" = ["read"])),
    tag = "activities",
    params(("id" = Uuid, Path, description = "Activity ID"), GetActivityQuery),
    responses(
        (status = 200, description = "The activity", body = ActivityResponse, headers(("ETag" = String))),
        problems::BadId,
        problems::NoSuchActivity,
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip(state, actor))]
pub async fn get_activity(
    State(state): State<AppState>,
    Caller(actor): Caller,
    IdParam(id): IdParam,
    ApiQuery(query): ApiQuery<GetActivityQuery>,
) -> ApiResult<Response> {
    let summary = crate::api::stats::wants_summary(query.include.as_deref())?;
    let (activity, next) = state
        .services
        .activities
        .get_with_next_fire_times(id, &actor.project)
        .await?;
    let open_alerts = state.services.alerts.open_of(id).await?;
    let flow_controlled = activity.definition.flow.is_some();
    let tag = etag(activity.version);
    let mut body = render(activity, next);
    body.open_alerts = Some(
        open_alerts
            .into_iter()
            .map(crate::api::alerts::handlers::render)
            .collect(),
    );
    if flow_controlled {
        let usage = state.services.flow.usage(id).await?;
        body.flow_state = Some(super::flow::flow_state(usage));
    }
    if summary
        && let Some(s) = state
            .services
            .runs
            .summaries(&[id], chrono::Utc::now())
            .await?
            .remove(&id)
    {
        let next_fire = body.schedule.next_fire_times.first().copied();
        body.summary = Some(crate::api::stats::render_summary(s, next_fire));
    }
    let mut response = axum::Json(body).into_response();
    if let Ok(v) = HeaderValue::from_str(&tag) {
        response.headers_mut().insert(header::ETAG, v);
    }
    Ok(response)
}

/// Create or replace an activity under a client-chosen ID.
///
/// `If-Match` makes the replace conditional (412 on a stale version);
/// `If-Match: *` requires that the activity exists. An ID another project
/// holds (live or deleted) is not found: it is not the caller's to replace.
#[utoipa::path(
    put,
    path = "/v1/activities/{id}",
    security(("bearer" = ["write"])),
    tag = "activities",
    request_body = ActivityRequest,
    params(
        ("id" = Uuid, Path, description = "Activity ID, chosen by the client"),
        ("If-Match" = Option<String>, Header, nullable = false, description = "ETag of the version being replaced", pattern = r#"^(\*|(W/)?"[0-9]{1,18}")$"#),
    ),
    responses(
        (status = 200, description = "Replaced", body = ActivityResponse, headers(("ETag" = String))),
        (status = 201, description = "Created", body = ActivityResponse, headers(("ETag" = String), ("Location" = String))),
        problems::UnreadableBodyOrId,
        problems::NoSuchActivity,
        problems::StaleIfMatch,
        problems::QuotaExceeded,
        problems::BodyTooLarge,
        problems::NotJson,
        problems::InvalidFields,
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip(actor, state, headers, request))]
pub async fn put_activity(
    State(state): State<AppState>,
    Caller(actor): Caller,
    IdParam(id): IdParam,
    headers: HeaderMap,
    JsonBody(request): JsonBody<ActivityRequest>,
) -> ApiResult<Response> {
    let expect = if_match(&headers)?;
    let definition = parse_definition(request)?;
    let written = state
        .services
        .activities
        .put(id, &definition, expect, &actor)
        .await?;
    Ok(respond_written(written))
}

/// Change an activity with a JSON merge patch (RFC 7386).
///
/// The patch applies to the activity's request form (what `PUT` takes); the
/// result is validated as a whole. `null` removes a field (back to its default).
#[utoipa::path(
    patch,
    path = "/v1/activities/{id}",
    security(("bearer" = ["write"])),
    tag = "activities",
    request_body(content = Object, content_type = "application/merge-patch+json",
                 description = "Fields to change, in the shape of ActivityRequest"),
    params(
        ("id" = Uuid, Path, description = "Activity ID"),
        ("If-Match" = Option<String>, Header, nullable = false, description = "ETag of the version being patched", pattern = r#"^(\*|(W/)?"[0-9]{1,18}")$"#),
    ),
    responses(
        (status = 200, description = "Patched", body = ActivityResponse, headers(("ETag" = String))),
        problems::UnreadablePatchOrId,
        problems::NoSuchActivity,
        problems::StaleIfMatch,
        problems::BodyTooLarge,
        problems::NotJson,
        problems::InvalidFields,
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip(actor, state, headers, patch))]
pub async fn patch_activity(
    State(state): State<AppState>,
    Caller(actor): Caller,
    IdParam(id): IdParam,
    headers: HeaderMap,
    JsonBody(patch): JsonBody<serde_json::Value>,
) -> ApiResult<Response> {
    let expect = if_match(&headers)?;
    require_object(&patch)?;
    let written = state
        .services
        .activities
        .patch(
            id,
            expect,
            |current| parse_definition(patched(request_of(current), &patch)?),
            &actor,
        )
        .await?;
    Ok(respond_written(written))
}

/// Delete an activity and its schedule. Its run history stays readable.
#[utoipa::path(
    delete,
    path = "/v1/activities/{id}",
    security(("bearer" = ["write"])),
    tag = "activities",
    params(
        ("id" = Uuid, Path, description = "Activity ID"),
        ("If-Match" = Option<String>, Header, nullable = false, description = "ETag of the version being deleted", pattern = r#"^(\*|(W/)?"[0-9]{1,18}")$"#),
    ),
    responses(
        (status = 204, description = "Deleted"),
        problems::BadId,
        problems::NoSuchActivity,
        problems::StaleIfMatch,
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip(actor, state, headers))]
pub async fn delete_activity(
    State(state): State<AppState>,
    Caller(actor): Caller,
    IdParam(id): IdParam,
    headers: HeaderMap,
) -> ApiResult<StatusCode> {
    let expect = if_match(&headers)?;
    state.services.activities.delete(id, expect, &actor).await?;
    Ok(StatusCode::NO_CONTENT)
}
