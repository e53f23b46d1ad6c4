//! Bearer-token authentication for `/v1`. Which scope a route needs is read
//! from the OpenAPI document's `security` of its operation, so the document
//! and the enforcement cannot disagree; a `/v1` route the document does not
//! cover needs `operator`.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use axum::extract::{MatchedPath, Request, State};
use axum::http::{Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::api::error::ApiError;
use acp_domain::auth::{self, KeyFacts, Rejection, Scope, UnconfirmedKey};
use acp_service::Keys;

/// The security scheme's name in the OpenAPI document.
pub const SCHEME: &str = "bearer";

/// Scope needed by each documented operation, keyed by method and route template.
#[derive(Debug, Default, Clone)]
pub struct ScopeTable(HashMap<(Method, String), Scope>);

impl ScopeTable {
    /// Reads `paths.*.*.security[*].bearer[0]` from the document.
    pub fn from_document(document: &serde_json::Value) -> Self {
        let mut table = HashMap::new();
        let paths = document["paths"].as_object().into_iter().flatten();
        for (path, item) in paths {
            for (method, operation) in item.as_object().into_iter().flatten() {
                let Ok(method) = Method::from_bytes(method.to_ascii_uppercase().as_bytes()) else {
                    continue;
                };
                let scope = operation["security"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|req| req[SCHEME].as_array()?.first()?.as_str())
                    .find_map(Scope::parse);
                if let Some(scope) = scope {
                    table.insert((method, path.clone()), scope);
                }
            }
        }
        Self(table)
    }

    /// The scope a request to `route` needs; `None` for open routes.
    pub fn needed(&self, method: &Method, route: &str) -> Option<Scope> {
        if !route.starts_with("/v1/") {
            return None;
        }
        let method = if method == Method::HEAD {
            &Method::GET
        } else {
            method
        };
        Some(
            self.0
                .get(&(method.clone(), route.to_owned()))
                .copied()
                .unwrap_or(Scope::Operator),
        )
    }
}

/// The routes whose handlers confirm the caller's key in the statement that
/// serves them (see [`UnconfirmedKey`]): the busiest, where a lookup of its
/// own would be a second round trip per request.
const CONFIRMED_IN_STATEMENT: [(Method, &str); 4] = [
    (Method::GET, "/v1/runs"),
    (Method::GET, "/v1/activities/{id}/runs"),
    (Method::POST, "/v1/events"),
    (Method::POST, "/v1/cloudevents"),
];

fn confirmed_in_statement(method: &Method, route: &str) -> bool {
    let method = if method == Method::HEAD {
        &Method::GET
    } else {
        method
    };
    CONFIRMED_IN_STATEMENT
        .iter()
        .any(|(m, r)| m == method && *r == route)
}

/// The [`KeyFacts`] of keys seen live, by key ID. Bounded: when full it
/// starts again empty (a key not found here costs one lookup).
#[derive(Debug, Default)]
pub struct KnownKeys(RwLock<HashMap<uuid::Uuid, KeyFacts>>);

impl KnownKeys {
    const CAPACITY: usize = 10_000;

    fn get(&self, id: uuid::Uuid) -> Option<KeyFacts> {
        self.0.read().ok()?.get(&id).cloned()
    }

    fn remember(&self, id: uuid::Uuid, facts: KeyFacts) {
        if let Ok(mut known) = self.0.write() {
            if known.len() >= Self::CAPACITY {
                known.clear();
            }
            known.insert(id, facts);
        }
    }
}

/// How the API authenticates: by keys, or (explicitly) not at all.
#[derive(Clone)]
pub enum Auth {
    Keys {
        /// The keys, and the stream tokens of `GET /v1/stream`.
        keys: Keys,
        table: Arc<ScopeTable>,
        known: Arc<KnownKeys>,
    },
    Disabled,
}

/// The one route that takes a stream token (as `?token=`) instead of an
/// `Authorization` header.
const STREAM_ROUTE: &str = "/v1/stream";

/// The `token` query parameter, if the request has one.
fn stream_token(request: &Request) -> Option<String> {
    let query = request.uri().query()?;
    url::form_urlencoded::parse(query.as_bytes())
        .find(|(name, _)| name == "token")
        .map(|(_, value)| value.into_owned())
}

fn bearer(request: &Request) -> Result<&str, ApiError> {
    let value = request
        .headers()
        .get(header::AUTHORIZATION)
        .ok_or(ApiError::Unauthorized("no bearer token"))?;
    let value = value
        .to_str()
        .map_err(|_| ApiError::Unauthorized("the Authorization header is not ASCII"))?;
    let (scheme, token) = value.split_once(' ').ok_or(ApiError::Unauthorized(
        "the Authorization header is not `Bearer <token>`",
    ))?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(ApiError::Unauthorized(
            "the Authorization header is not `Bearer <token>`",
        ));
    }
    Ok(token.trim())
}

/// The API key a request was authenticated with, for handlers that record
/// who asked (`Option<Extension<CallerKey>>`: absent when auth is disabled).
#[derive(Debug, Clone, Copy)]
pub struct CallerKey(pub uuid::Uuid);

/// The calling key's project (`None`: an `operator` key, of no project); a
/// stream token's is the project it was made in.
#[derive(Debug, Clone)]
pub struct KeyProject(pub Option<acp_domain::project::ProjectId>);

/// The calling key's name, when authenticating it read its row (a key
/// checked in memory on the busiest routes has only its ID here).
#[derive(Debug, Clone)]
pub struct KeyName(pub String);

fn refused(rejection: Rejection) -> Response {
    tracing::info!(?rejection, "bearer token refused");
    let why = match rejection {
        Rejection::Revoked => "the API key has been revoked",
        Rejection::Malformed | Rejection::UnknownKey | Rejection::WrongSecret => {
            "the bearer token is not a valid API key"
        }
    };
    ApiError::Unauthorized(why).into_response()
}

/// Middleware: lets a request through only with a live key whose scope
/// covers its route. On the routes that confirm the key in their own
/// statement, a key seen before is checked in memory and its liveness left
/// to that statement; whatever the handler did not confirm is confirmed
/// here once it ends, and refused if it was revoked.
pub async fn require_key(State(auth): State<Auth>, mut request: Request, next: Next) -> Response {
    let Auth::Keys { keys, table, known } = auth else {
        return next.run(request).await;
    };
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_default();
    let Some(needed) = table.needed(request.method(), &route) else {
        return next.run(request).await;
    };
    // A browser's EventSource cannot send a header: the stream takes a
    // short-lived stream token instead, bound to a key that must be live.
    if route == STREAM_ROUTE
        && request.headers().get(header::AUTHORIZATION).is_none()
        && let Some(token) = stream_token(&request)
    {
        return match keys.stream_token_key(&token).await {
            Ok(Some(key)) if key.scope.grants(needed) => {
                tracing::Span::current().record("key_id", tracing::field::display(key.id));
                request.extensions_mut().insert(CallerKey(key.id));
                // The stream shows the changes of the token's project only:
                // the one its request acted in, for an operator key too.
                request.extensions_mut().insert(KeyProject(key.project));
                next.run(request).await
            }
            Ok(Some(key)) => ApiError::Forbidden {
                needed,
                have: key.scope,
            }
            .into_response(),
            Ok(None) => ApiError::Unauthorized(
                "the stream token is unknown, expired, or its API key was revoked",
            )
            .into_response(),
            Err(err) => ApiError::from(err).into_response(),
        };
    }
    let token = match bearer(&request) {
        Ok(token) => token,
        Err(err) => return err.into_response(),
    };
    let Some((id, secret)) = auth::parse(token) else {
        return refused(Rejection::Malformed);
    };
    let facts = confirmed_in_statement(request.method(), &route)
        .then(|| known.get(id))
        .flatten();
    let (scope, pending, name, project) = match facts {
        Some(facts) => {
            if !auth::verify(secret, &facts.secret_sha256) {
                return refused(Rejection::WrongSecret);
            }
            (
                facts.scope,
                Some(UnconfirmedKey::new(id)),
                None,
                facts.project,
            )
        }
        None => match keys.authenticate(id, secret).await {
            Ok(Ok((key, facts))) => {
                if let Some(facts) = facts {
                    known.remember(key.id, facts);
                }
                (key.scope, None, Some(key.name), key.project)
            }
            Ok(Err(rejection)) => return refused(rejection),
            Err(err) => return ApiError::from(err).into_response(),
        },
    };
    tracing::Span::current().record("key_id", tracing::field::display(id));
    if !scope.grants(needed) {
        // A revoked key is refused as revoked, whatever its scope.
        if let Some(pending) = &pending
            && let Err(err) = keys.confirm(pending).await
        {
            return ApiError::from(err).into_response();
        }
        return ApiError::Forbidden {
            needed,
            have: scope,
        }
        .into_response();
    }
    request.extensions_mut().insert(CallerKey(id));
    request.extensions_mut().insert(KeyProject(project));
    if let Some(name) = name {
        request.extensions_mut().insert(KeyName(name));
    }
    let Some(pending) = pending else {
        return next.run(request).await;
    };
    request.extensions_mut().insert(pending.clone());
    let response = next.run(request).await;
    match keys.confirm(&pending).await {
        Ok(()) => response,
        Err(err) => ApiError::from(err).into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undocumented_v1_routes_need_operator_and_others_are_open() {
        let doc = serde_json::json!({"paths": {
            "/v1/things": {"get": {"security": [{"bearer": ["read"]}]}, "post": {}},
            "/healthz": {"get": {}}
        }});
        let table = ScopeTable::from_document(&doc);
        assert_eq!(table.needed(&Method::GET, "/v1/things"), Some(Scope::Read));
        assert_eq!(table.needed(&Method::HEAD, "/v1/things"), Some(Scope::Read));
        assert_eq!(
            table.needed(&Method::POST, "/v1/things"),
            Some(Scope::Operator)
        );
        assert_eq!(
            table.needed(&Method::GET, "/v1/other"),
            Some(Scope::Operator)
        );
        assert_eq!(table.needed(&Method::GET, "/healthz"), None);
    }
}
