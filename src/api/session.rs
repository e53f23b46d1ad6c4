//! `GET /v1/session`: who the caller is, for a client (the console) that has
//! to know which actions to offer: whether authentication is on, and the
//! caller's key, scope and project.

use axum::extract::State;
use axum::{Extension, Json};
use serde::Serialize;
use utoipa::ToSchema;

use super::AppState;
use super::auth::CallerKey;
use super::keys::{KeyResponse, render};
use crate::api::error::ApiResult;
use crate::api::problems;
use acp_domain::auth::Scope;
use acp_domain::project::ProjectId;

/// Whether requests need an API key.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Authentication {
    /// Every `/v1` request needs a bearer API key.
    Required,
    /// `ACP_AUTH_DISABLED`: no key is asked for and every action is allowed.
    Disabled,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SessionResponse {
    pub authentication: Authentication,
    /// What the caller may do: its key's scope, or `operator` when
    /// authentication is disabled. `write` covers `read`; `admin` covers
    /// all of its project; `operator` covers all, projects included.
    pub scope: Scope,
    /// The project the caller acts in: its key's, `null` for an operator
    /// key, `default` when authentication is disabled.
    #[schema(pattern = "^[a-z][a-z0-9-]{0,62}$")]
    pub project: Option<String>,
    /// The key the request was made with; `null` when authentication is
    /// disabled.
    pub key: Option<KeyResponse>,
}

/// The caller: whether authentication is on, and the key and scope this
/// request was made with. Any live key with `read` (or a scope covering it)
/// may ask; a revoked or unknown key is a 401.
#[utoipa::path(
    get,
    path = "/v1/session",
    security(("bearer" = ["read"])),
    tag = "keys",
    responses(
        (status = 200, description = "The caller", body = SessionResponse),
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip(state))]
pub async fn get_session(
    State(state): State<AppState>,
    caller: Option<Extension<CallerKey>>,
) -> ApiResult<Json<SessionResponse>> {
    let Some(Extension(CallerKey(id))) = caller else {
        return Ok(Json(SessionResponse {
            authentication: Authentication::Disabled,
            scope: Scope::Operator,
            project: Some(ProjectId::DEFAULT.to_owned()),
            key: None,
        }));
    };
    let key = render(state.keys.get(id).await?);
    Ok(Json(SessionResponse {
        authentication: Authentication::Required,
        scope: key.scope,
        project: key.project.clone(),
        key: Some(key),
    }))
}
