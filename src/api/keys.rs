//! `/v1/keys`: API keys, for `admin` keys (their own project's) and
//! `operator` keys (every key). A token is shown once, at creation.

use crate::api::caller::Caller;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use super::AppState;
use super::auth::CallerKey;
use super::extract::{IdParam, JsonBody};
use crate::api::error::{ApiError, ApiResult};
use crate::api::problems;
use acp_domain::audit::Actor;
use acp_domain::auth::{ApiKey, Scope};
use acp_domain::project::ProjectId;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateKeyRequest {
    /// Who or what holds the key, e.g. `crm-webhooks`.
    #[schema(example = "crm-webhooks", min_length = 1, max_length = 200)]
    pub name: String,
    /// `operator` makes a key of no project, which manages projects; only
    /// an operator key may make one.
    pub scope: Scope,
    /// The project the key acts in. Absent: the caller's own project (for
    /// an operator, the one `Acp-Project` names, else `default`). `null` asks for an operator key (scope
    /// `admin` or `operator`); only an operator key may ask for that, or
    /// for a key of another project.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>, nullable = true, pattern = "^[a-z][a-z0-9-]{0,62}$", example = "payments")]
    pub project: Option<Option<String>>,
}

/// A field that is present, `null` included (`Some(None)`), as against
/// absent (`None`, from `#[serde(default)]`).
fn present<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}

/// A key as listed: its secret is never shown again.
#[derive(Debug, Serialize, ToSchema)]
pub struct KeyResponse {
    pub id: Uuid,
    pub name: String,
    pub scope: Scope,
    /// The project the key acts in; `null` for an operator key.
    pub project: Option<String>,
    pub created_at: DateTime<Utc>,
    /// Set once the key is revoked; a revoked key authenticates nothing.
    pub revoked_at: Option<DateTime<Utc>>,
}

/// A new key with its token: store the token now, it is not shown again.
#[derive(Debug, Serialize, ToSchema)]
pub struct CreatedKeyResponse {
    #[serde(flatten)]
    pub key: KeyResponse,
    /// `Authorization: Bearer <token>`.
    pub token: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct KeyList {
    pub items: Vec<KeyResponse>,
}

pub fn render(key: ApiKey) -> KeyResponse {
    KeyResponse {
        id: key.id,
        name: key.name,
        scope: key.scope,
        project: key.project.map(|p| p.to_string()),
        created_at: key.created_at,
        revoked_at: key.revoked_at,
    }
}

/// Whose keys the caller manages: `None` for every key (an operator key,
/// or authentication disabled), else its own project's.
async fn managed_project(
    state: &AppState,
    caller: Option<Extension<CallerKey>>,
) -> ApiResult<Option<ProjectId>> {
    let Some(Extension(CallerKey(id))) = caller else {
        return Ok(None);
    };
    let key = state.keys.get(id).await?;
    Ok(match key.scope {
        Scope::Operator => None,
        _ => key.project,
    })
}

/// The caller may see and change `key` (another project's key is as good
/// as absent to it).
fn visible(key: ApiKey, managed: &Option<ProjectId>) -> ApiResult<ApiKey> {
    match managed {
        Some(project) if key.project.as_ref() != Some(project) => {
            Err(ApiError::NotFound("API key"))
        }
        _ => Ok(key),
    }
}

/// The scope and project a new key gets, and whether the caller (managing
/// `managed`, `None` for all; acting in `acting`) may make it.
fn new_key_project(
    request: &CreateKeyRequest,
    managed: &Option<ProjectId>,
    acting: &ProjectId,
) -> ApiResult<(Scope, Option<ProjectId>)> {
    let forbidden = || ApiError::Forbidden {
        needed: Scope::Operator,
        have: Scope::Admin,
    };
    let project = match &request.project {
        None if request.scope == Scope::Operator => None,
        None => Some(managed.clone().unwrap_or_else(|| acting.clone())),
        Some(None) => None,
        Some(Some(text)) => {
            Some(ProjectId::parse(text).map_err(|e| ApiError::invalid_field("project", e))?)
        }
    };
    let scope = match (request.scope, &project) {
        (Scope::Admin, None) => Scope::Operator,
        (Scope::Operator, Some(_)) => {
            return Err(ApiError::invalid_field(
                "project",
                "an operator key belongs to no project: leave `project` out or null",
            ));
        }
        (scope, None) if scope != Scope::Operator => {
            return Err(ApiError::invalid_field(
                "project",
                "only an admin key may have no project (it is then an operator key)",
            ));
        }
        (scope, _) => scope,
    };
    if let Some(managed) = managed
        && (project.as_ref() != Some(managed))
    {
        return Err(forbidden());
    }
    Ok((scope, project))
}

/// A key's audit entry belongs to the key's project, where that project's
/// admins read it, whichever project an operator acted in; an operator
/// key's (of no project) to the project the request acts in.
fn in_key_project(actor: Actor, project: Option<&ProjectId>) -> Actor {
    match project {
        Some(project) => Actor {
            project: project.clone(),
            ..actor
        },
        None => actor,
    }
}

/// A key name: 1 to 200 characters, no control characters.
pub fn validate_name(name: &str) -> ApiResult<&str> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 200 || name.chars().any(char::is_control) {
        return Err(ApiError::invalid_field(
            "name",
            "must be 1 to 200 characters, no control characters",
        ));
    }
    Ok(name)
}

/// Create an API key.
#[utoipa::path(
    post,
    path = "/v1/keys",
    security(("bearer" = ["admin"])),
    tag = "keys",
    request_body = CreateKeyRequest,
    responses(
        (status = 201, description = "Created; the token is in this response only", body = CreatedKeyResponse, headers(("Location" = String))),
        problems::UnreadableBody,
        problems::BodyTooLarge,
        problems::NotJson,
        problems::InvalidFields,
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip_all)]
pub async fn create_key(
    State(state): State<AppState>,
    caller: Option<Extension<CallerKey>>,
    Caller(actor): Caller,
    JsonBody(request): JsonBody<CreateKeyRequest>,
) -> ApiResult<Response> {
    let name = validate_name(&request.name)?;
    let managed = managed_project(&state, caller).await?;
    let (scope, project) = new_key_project(&request, &managed, &actor.project)?;
    let actor = in_key_project(actor, project.as_ref());
    let (key, token) = state
        .keys
        .create_in(name, scope, project.as_ref(), &actor)
        .await?;
    tracing::info!(key_id = %key.id, scope = %key.scope, project = ?key.project, "API key created");
    let location = format!("/v1/keys/{}", key.id);
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, location)],
        Json(CreatedKeyResponse {
            key: render(key),
            token,
        }),
    )
        .into_response())
}

/// List API keys, newest first, revoked ones included: an admin key's own
/// project's, or every key for an operator key.
#[utoipa::path(
    get,
    path = "/v1/keys",
    security(("bearer" = ["admin"])),
    tag = "keys",
    responses(
        (status = 200, description = "Every key", body = KeyList),
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip_all)]
pub async fn list_keys(
    State(state): State<AppState>,
    caller: Option<Extension<CallerKey>>,
) -> ApiResult<Json<KeyList>> {
    let managed = managed_project(&state, caller).await?;
    let items = state
        .keys
        .list()
        .await?
        .into_iter()
        .filter_map(|key| visible(key, &managed).ok())
        .map(render)
        .collect();
    Ok(Json(KeyList { items }))
}

/// Get one API key.
#[utoipa::path(
    get,
    path = "/v1/keys/{id}",
    security(("bearer" = ["admin"])),
    tag = "keys",
    params(("id" = Uuid, Path, description = "Key ID")),
    responses(
        (status = 200, description = "The key", body = KeyResponse),
        problems::BadId,
        problems::NoSuchKey,
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip(state))]
pub async fn get_key(
    State(state): State<AppState>,
    caller: Option<Extension<CallerKey>>,
    IdParam(id): IdParam,
) -> ApiResult<Json<KeyResponse>> {
    let managed = managed_project(&state, caller).await?;
    Ok(Json(render(visible(state.keys.get(id).await?, &managed)?)))
}

/// Revoke an API key: from now on it authenticates nothing. The key stays
/// listed, with `revoked_at`, for the record; revoking it again changes nothing.
#[utoipa::path(
    post,
    path = "/v1/keys/{id}/revoke",
    security(("bearer" = ["admin"])),
    tag = "keys",
    params(("id" = Uuid, Path, description = "Key ID")),
    responses(
        (status = 200, description = "Revoked", body = KeyResponse),
        problems::BadId,
        problems::NoSuchKey,
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip(actor, state))]
pub async fn revoke_key(
    State(state): State<AppState>,
    caller: Option<Extension<CallerKey>>,
    Caller(actor): Caller,
    IdParam(id): IdParam,
) -> ApiResult<Json<KeyResponse>> {
    let managed = managed_project(&state, caller).await?;
    let key = visible(state.keys.get(id).await?, &managed)?;
    let actor = in_key_project(actor, key.project.as_ref());
    let key = state.keys.revoke(id, &actor).await?;
    tracing::info!(key_id = %key.id, "API key revoked");
    Ok(Json(render(key)))
}
