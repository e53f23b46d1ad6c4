//! `/v1/keys`: API keys, for `admin` keys. A token is shown once, at creation.

use crate::api::caller::Caller;
use axum::Json;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use super::AppState;
use super::extract::{IdParam, JsonBody};
use crate::api::error::{ApiError, ApiResult};
use crate::api::problems;
use acp_domain::auth::{ApiKey, Scope};

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateKeyRequest {
    /// Who or what holds the key, e.g. `crm-webhooks`.
    #[schema(example = "crm-webhooks", min_length = 1, max_length = 200)]
    pub name: String,
    pub scope: Scope,
}

/// A key as listed: its secret is never shown again.
#[derive(Debug, Serialize, ToSchema)]
pub struct KeyResponse {
    pub id: Uuid,
    pub name: String,
    pub scope: Scope,
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
        created_at: key.created_at,
        revoked_at: key.revoked_at,
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
    Caller(actor): Caller,
    JsonBody(request): JsonBody<CreateKeyRequest>,
) -> ApiResult<Response> {
    let name = validate_name(&request.name)?;
    let (key, token) = state.keys.create(name, request.scope, &actor).await?;
    tracing::info!(key_id = %key.id, scope = %key.scope, "API key created");
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

/// List API keys, newest first, revoked ones included.
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
pub async fn list_keys(State(state): State<AppState>) -> ApiResult<Json<KeyList>> {
    let items = state.keys.list().await?.into_iter().map(render).collect();
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
    IdParam(id): IdParam,
) -> ApiResult<Json<KeyResponse>> {
    Ok(Json(render(state.keys.get(id).await?)))
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
    Caller(actor): Caller,
    IdParam(id): IdParam,
) -> ApiResult<Json<KeyResponse>> {
    let key = state.keys.revoke(id, &actor).await?;
    tracing::info!(key_id = %key.id, "API key revoked");
    Ok(Json(render(key)))
}
