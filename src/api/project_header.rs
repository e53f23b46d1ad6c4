//! The `Acp-Project` request header: which project a request acts in. An
//! `operator` key belongs to no project, so it names the one it acts in
//! (absent: `default`); with authentication disabled the header does the
//! same. A project's key acts in its own project only: naming it is
//! allowed, naming any other answers the 404 of a project that does not
//! exist, so a key learns nothing of the projects it cannot reach.
//!
//! Which operations take the header is read from the OpenAPI document (the
//! header parameter of each operation), as the scopes are, so the document
//! and what is honoured cannot disagree.

use std::collections::HashSet;

use axum::extract::{MatchedPath, Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::AppState;
use super::auth::KeyProject;
use super::error::ApiError;
use acp_domain::project::ProjectId;
use acp_service::Error as ServiceError;

/// The header's name as documented (HTTP header names are case-blind).
pub const HEADER: &str = "Acp-Project";

/// The project a request acts in, once [`select_project`] has chosen it.
#[derive(Debug, Clone)]
pub struct SelectedProject(pub ProjectId);

/// The operations (method and route template) whose document declares the
/// header.
#[derive(Debug, Default)]
pub struct ProjectRoutes(HashSet<(Method, String)>);

impl ProjectRoutes {
    /// Reads `paths.*.*.parameters[?(@.in == "header" && @.name == HEADER)]`.
    pub fn from_document(document: &serde_json::Value) -> Self {
        let mut routes = HashSet::new();
        let paths = document["paths"].as_object().into_iter().flatten();
        for (path, item) in paths {
            for (method, operation) in item.as_object().into_iter().flatten() {
                let Ok(method) = Method::from_bytes(method.to_ascii_uppercase().as_bytes()) else {
                    continue;
                };
                let declares = operation["parameters"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|p| p["in"] == "header" && p["name"] == HEADER);
                if declares {
                    routes.insert((method, path.clone()));
                }
            }
        }
        Self(routes)
    }

    fn takes_header(&self, method: &Method, route: &str) -> bool {
        let method = if method == Method::HEAD {
            &Method::GET
        } else {
            method
        };
        self.0.contains(&(method.clone(), route.to_owned()))
    }
}

/// What the middleware needs: the projects, and where the header counts.
#[derive(Clone)]
pub struct Selection {
    pub state: AppState,
    pub routes: std::sync::Arc<ProjectRoutes>,
}

fn unknown(name: &str) -> ApiError {
    ApiError::UnknownProject(name.to_owned())
}

/// The project `header` names, as the caller may act in it. `bound` is the
/// caller's key's project (`None`: an operator key, or no key at all).
async fn choose(
    state: &AppState,
    bound: Option<&ProjectId>,
    header: Option<&axum::http::HeaderValue>,
) -> Result<ProjectId, ApiError> {
    let Some(value) = header else {
        return Ok(bound.cloned().unwrap_or_else(ProjectId::default_project));
    };
    let text = value
        .to_str()
        .map_err(|_| ApiError::bad_field(HEADER, "is not ASCII text"))?;
    let named = ProjectId::parse(text.trim()).map_err(|e| ApiError::bad_field(HEADER, e))?;
    if let Some(own) = bound {
        // Whether another project exists is none of this key's business.
        return if *own == named {
            Ok(named)
        } else {
            Err(unknown(named.as_str()))
        };
    }
    match state.services.projects.get(&named).await {
        Ok(_) => Ok(named),
        Err(ServiceError::NotFound(_)) => Err(unknown(named.as_str())),
        Err(err) => Err(err.into()),
    }
}

/// Middleware (inside authentication): puts the request's
/// [`SelectedProject`] in its extensions on the operations that take the
/// header, or answers the header's 400 or 404.
pub async fn select_project(
    State(selection): State<Selection>,
    mut request: Request,
    next: Next,
) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_default();
    if !selection.routes.takes_header(request.method(), &route) {
        return next.run(request).await;
    }
    let bound = request
        .extensions()
        .get::<KeyProject>()
        .and_then(|k| k.0.clone());
    let chosen = choose(
        &selection.state,
        bound.as_ref(),
        request.headers().get(HEADER),
    )
    .await;
    match chosen {
        Ok(project) => {
            request.extensions_mut().insert(SelectedProject(project));
            next.run(request).await
        }
        Err(err) => err.into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_routes_that_declare_the_header_take_it() {
        let doc = serde_json::json!({"paths": {
            "/v1/things": {
                "get": {"parameters": [{"in": "header", "name": "Acp-Project"}]},
                "post": {"parameters": [{"in": "query", "name": "Acp-Project"}]}
            },
            "/v1/projects": {"get": {}}
        }});
        let routes = ProjectRoutes::from_document(&doc);
        assert!(routes.takes_header(&Method::GET, "/v1/things"));
        assert!(routes.takes_header(&Method::HEAD, "/v1/things"));
        assert!(!routes.takes_header(&Method::POST, "/v1/things"));
        assert!(!routes.takes_header(&Method::GET, "/v1/projects"));
    }
}
