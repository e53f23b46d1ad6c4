//! `/v1/projects` handlers. Every operation needs scope `operator`.

use axum::Json;
use axum::extract::{FromRequestParts, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use serde::Deserialize;
use utoipa::IntoParams;

use super::model::{CreateProjectRequest, ProjectRequest, ProjectResponse, render};
use crate::api::AppState;
use crate::api::caller::Caller;
use crate::api::error::{ApiError, ApiResult};
use crate::api::extract::{JsonBody, etag, if_match};
use crate::api::merge_patch::{patched, require_object};
use crate::api::pagination::{Cursor, Listing, Page, page};
use crate::api::problems;
use acp_domain::project::{Project, ProjectId, ProjectRecord};

/// Projects' cursor: the last project's creation time and ID.
pub struct ProjectCursor;

impl Cursor for ProjectCursor {
    const SCOPE: &'static str = "projects";
    type Key = (DateTime<Utc>, String);
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

/// The project ID of the path; one that is not a slug is a 422 naming `id`.
pub struct ProjectIdParam(pub ProjectId);

impl<S: Send + Sync> FromRequestParts<S> for ProjectIdParam {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let params = axum::extract::RawPathParams::from_request_parts(parts, state)
            .await
            .map_err(|_| ApiError::bad_field("id", "is not valid UTF-8"))?;
        let text = params
            .iter()
            .find(|(name, _)| *name == "id")
            .map(|(_, value)| value.to_owned())
            .unwrap_or_default();
        parse_id(&text).map(ProjectIdParam)
    }
}

fn parse_id(text: &str) -> ApiResult<ProjectId> {
    ProjectId::parse(text).map_err(|e| ApiError::invalid_field("id", e))
}

fn parse(request: ProjectRequest) -> ApiResult<Project> {
    Project::parse(&request.into_input()).map_err(ApiError::Validation)
}

/// The project with its usage and `ETag`, and `Location` when created.
async fn respond(
    state: &AppState,
    status: StatusCode,
    record: ProjectRecord,
) -> ApiResult<Response> {
    let usage = state
        .services
        .projects
        .usage(std::slice::from_ref(&record))
        .await?
        .remove(&record.id)
        .unwrap_or_default();
    let location = format!("/v1/projects/{}", record.id);
    let tag = etag(record.version);
    let mut response = (status, Json(render(record, usage))).into_response();
    let headers = response.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&tag) {
        headers.insert(header::ETAG, v);
    }
    if status == StatusCode::CREATED
        && let Ok(v) = HeaderValue::from_str(&location)
    {
        headers.insert(header::LOCATION, v);
    }
    Ok(response)
}

/// Create a project under the ID the body names.
#[utoipa::path(
    post,
    path = "/v1/projects",
    security(("bearer" = ["operator"])),
    tag = "projects",
    request_body = CreateProjectRequest,
    responses(
        (status = 201, description = "Created", body = ProjectResponse,
         headers(("Location" = String, description = "The new project"), ("ETag" = String, description = "Its version"))),
        problems::UnreadableBody,
        problems::ProjectIdTaken,
        problems::BodyTooLarge,
        problems::NotJson,
        problems::InvalidFields,
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip_all)]
pub async fn create_project(
    State(state): State<AppState>,
    Caller(actor): Caller,
    JsonBody(request): JsonBody<CreateProjectRequest>,
) -> ApiResult<Response> {
    let (id, request) = request.split();
    let id = parse_id(&id);
    let project = parse(request);
    let (id, project) = match (id, project) {
        (Ok(id), Ok(project)) => (id, project),
        (Err(ApiError::Validation(mut a)), Err(ApiError::Validation(b))) => {
            a.extend(b);
            return Err(ApiError::Validation(a));
        }
        (Err(e), _) | (_, Err(e)) => return Err(e),
    };
    let record = state
        .services
        .projects
        .create(&id, &project, &actor)
        .await?;
    tracing::info!(project = %id, "project created");
    respond(&state, StatusCode::CREATED, record).await
}

/// List projects, newest first, each with its usage.
#[utoipa::path(
    get,
    path = "/v1/projects",
    security(("bearer" = ["operator"])),
    tag = "projects",
    params(ListQuery),
    responses(
        (status = 200, description = "A page of projects", body = Page<ProjectResponse>),
        problems::BadParameter,
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip_all)]
pub async fn list_projects(
    State(state): State<AppState>,
    Listing { limit, after, .. }: Listing<ListQuery, ProjectCursor>,
) -> ApiResult<Json<Page<ProjectResponse>>> {
    let rows = state.services.projects.list(after, limit + 1).await?;
    // The row past the limit is counted too: one more set of index reads
    // is simpler than a cursor of its own.
    let mut usage = state.services.projects.usage(&rows).await?;
    let rows: Vec<_> = rows
        .into_iter()
        .map(|r| {
            let u = usage.remove(&r.id).unwrap_or_default();
            (r, u)
        })
        .collect();
    Ok(Json(page(
        rows,
        limit,
        ProjectCursor::SCOPE,
        |(r, _)| (r.created_at, r.id.to_string()),
        |(r, u)| render(r, u),
    )))
}

/// Get one project, with its quotas and usage.
#[utoipa::path(
    get,
    path = "/v1/projects/{id}",
    security(("bearer" = ["operator"])),
    tag = "projects",
    params(("id" = String, Path, description = "Project ID", pattern = "^[a-z][a-z0-9-]{0,62}$")),
    responses(
        (status = 200, description = "The project", body = ProjectResponse,
         headers(("ETag" = String, description = "Its version"))),
        problems::NoSuchProject,
        problems::InvalidFields,
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip(state))]
pub async fn get_project(
    State(state): State<AppState>,
    ProjectIdParam(id): ProjectIdParam,
) -> ApiResult<Response> {
    let record = state.services.projects.get(&id).await?;
    respond(&state, StatusCode::OK, record).await
}

/// Create or replace a project under the ID of the path.
///
/// `If-Match` makes the replace conditional (412 on a stale version, or
/// when the project does not exist); `If-Match: *` requires that it exists.
#[utoipa::path(
    put,
    path = "/v1/projects/{id}",
    security(("bearer" = ["operator"])),
    tag = "projects",
    request_body = ProjectRequest,
    params(
        ("id" = String, Path, description = "Project ID, chosen by the client", pattern = "^[a-z][a-z0-9-]{0,62}$"),
        ("If-Match" = Option<String>, Header, nullable = false, description = "ETag of the version being replaced", pattern = r#"^(\*|(W/)?"[0-9]{1,18}")$"#),
    ),
    responses(
        (status = 200, description = "Replaced", body = ProjectResponse, headers(("ETag" = String))),
        (status = 201, description = "Created", body = ProjectResponse, headers(("ETag" = String), ("Location" = String))),
        problems::UnreadableBody,
        problems::ProjectIdTaken,
        problems::StaleIfMatch,
        problems::BodyTooLarge,
        problems::NotJson,
        problems::InvalidFields,
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip(state, actor, headers, request))]
pub async fn put_project(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ProjectIdParam(id): ProjectIdParam,
    headers: HeaderMap,
    JsonBody(request): JsonBody<ProjectRequest>,
) -> ApiResult<Response> {
    let expect = if_match(&headers)?;
    let project = parse(request)?;
    let (record, created) = state
        .services
        .projects
        .put(&id, &project, expect, &actor)
        .await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    respond(&state, status, record).await
}

/// Change a project with a JSON merge patch (RFC 7386).
///
/// The patch applies to the project's request form (what `PUT` takes);
/// `null` removes a field: a quota set to `null` is unlimited again.
#[utoipa::path(
    patch,
    path = "/v1/projects/{id}",
    security(("bearer" = ["operator"])),
    tag = "projects",
    request_body(content = Object, content_type = "application/merge-patch+json",
                 description = "Fields to change, in the shape of ProjectRequest"),
    params(
        ("id" = String, Path, description = "Project ID", pattern = "^[a-z][a-z0-9-]{0,62}$"),
        ("If-Match" = Option<String>, Header, nullable = false, description = "ETag of the version being patched", pattern = r#"^(\*|(W/)?"[0-9]{1,18}")$"#),
    ),
    responses(
        (status = 200, description = "Patched", body = ProjectResponse, headers(("ETag" = String))),
        problems::UnreadableBody,
        problems::NoSuchProject,
        problems::StaleIfMatch,
        problems::BodyTooLarge,
        problems::NotJson,
        problems::InvalidFields,
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip(state, actor, headers, patch))]
pub async fn patch_project(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ProjectIdParam(id): ProjectIdParam,
    headers: HeaderMap,
    JsonBody(patch): JsonBody<serde_json::Value>,
) -> ApiResult<Response> {
    let expect = if_match(&headers)?;
    require_object(&patch)?;
    let record = state
        .services
        .projects
        .patch(&id, expect, &actor, |current| {
            parse(patched(current, &patch)?)
        })
        .await?;
    respond(&state, StatusCode::OK, record).await
}

/// Delete a project that owns nothing.
///
/// A project that still owns live activities, sources, subscriptions,
/// calendars or unrevoked keys is a 409 counting them; `default` is never
/// deleted. A deleted project's ID is not given out again.
#[utoipa::path(
    delete,
    path = "/v1/projects/{id}",
    security(("bearer" = ["operator"])),
    tag = "projects",
    params(
        ("id" = String, Path, description = "Project ID", pattern = "^[a-z][a-z0-9-]{0,62}$"),
        ("If-Match" = Option<String>, Header, nullable = false, description = "ETag of the version being deleted", pattern = r#"^(\*|(W/)?"[0-9]{1,18}")$"#),
    ),
    responses(
        (status = 204, description = "Deleted"),
        problems::BadRequest,
        problems::NoSuchProject,
        problems::ProjectNotEmpty,
        problems::StaleIfMatch,
        problems::InvalidFields,
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip(state, actor, headers))]
pub async fn delete_project(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ProjectIdParam(id): ProjectIdParam,
    headers: HeaderMap,
) -> ApiResult<StatusCode> {
    let expect = if_match(&headers)?;
    state.services.projects.delete(&id, expect, &actor).await?;
    tracing::info!(project = %id, "project deleted");
    Ok(StatusCode::NO_CONTENT)
}
