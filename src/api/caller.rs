//! Who makes a request, as the use cases record it: the caller's API key,
//! the request's ID and the operation (its ID in the OpenAPI document),
//! read once per request by the [`Caller`] extractor.

use std::collections::HashMap;
use std::sync::LazyLock;

use axum::extract::{FromRequestParts, MatchedPath};
use axum::http::Method;
use axum::http::request::Parts;

use super::auth::{CallerKey, KeyName, KeyProject};
use super::error::ApiError;
use super::project_header::SelectedProject;
use acp_domain::audit::Actor;
use acp_domain::project::ProjectId;

/// The operation IDs of the document, by method and route template.
#[derive(Debug, Default)]
pub struct OperationTable(HashMap<(Method, String), String>);

impl OperationTable {
    /// Reads `paths.*.*.operationId` from the document.
    pub fn from_document(document: &serde_json::Value) -> Self {
        let mut table = HashMap::new();
        let paths = document["paths"].as_object().into_iter().flatten();
        for (path, item) in paths {
            for (method, operation) in item.as_object().into_iter().flatten() {
                let Ok(method) = Method::from_bytes(method.to_ascii_uppercase().as_bytes()) else {
                    continue;
                };
                if let Some(id) = operation["operationId"].as_str() {
                    table.insert((method, path.clone()), id.to_owned());
                }
            }
        }
        Self(table)
    }

    pub fn get(&self, method: &Method, route: &str) -> Option<&str> {
        self.0
            .get(&(method.clone(), route.to_owned()))
            .map(String::as_str)
    }
}

static OPERATIONS: LazyLock<OperationTable> = LazyLock::new(|| {
    let document = serde_json::to_value(super::openapi::document()).unwrap_or_default();
    OperationTable::from_document(&document)
});

/// The request's [`Actor`]. With authentication disabled the key is
/// unknown (`key_id` and `key_name` are `None`). The project is the one the
/// `Acp-Project` header selected (see [`super::project_header`]); on an
/// operation that does not take the header, the key's, and `default` for
/// an `operator` key or disabled authentication.
pub struct Caller(pub Actor);

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let route = parts
            .extensions
            .get::<MatchedPath>()
            .map(|p| p.as_str().to_owned())
            .unwrap_or_default();
        // Every handler that takes a `Caller` is a documented route, so the
        // fallback only keeps an undocumented one recordable.
        let operation = OPERATIONS
            .get(&parts.method, &route)
            .map(str::to_owned)
            .unwrap_or_else(|| format!("{} {route}", parts.method));
        let request_id = parts
            .headers
            .get("x-request-id")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        Ok(Self(Actor {
            key_id: parts.extensions.get::<CallerKey>().map(|k| k.0),
            key_name: parts.extensions.get::<KeyName>().map(|n| n.0.clone()),
            request_id,
            operation,
            project: match parts.extensions.get::<SelectedProject>() {
                Some(selected) => selected.0.clone(),
                None => parts
                    .extensions
                    .get::<KeyProject>()
                    .and_then(|p| p.0.clone())
                    .unwrap_or_else(ProjectId::default_project),
            },
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_are_read_by_method_and_route() {
        let doc = serde_json::json!({"paths": {
            "/v1/things/{id}": {
                "get": {"operationId": "get_thing"},
                "delete": {"operationId": "delete_thing"},
                "parameters": []
            }
        }});
        let table = OperationTable::from_document(&doc);
        assert_eq!(
            table.get(&Method::GET, "/v1/things/{id}"),
            Some("get_thing")
        );
        assert_eq!(
            table.get(&Method::DELETE, "/v1/things/{id}"),
            Some("delete_thing")
        );
        assert_eq!(table.get(&Method::POST, "/v1/things/{id}"), None);
    }

    #[test]
    fn the_served_document_names_every_write() {
        assert_eq!(
            OPERATIONS.get(&Method::POST, "/v1/activities/{id}/pause"),
            Some("pause_activity")
        );
    }
}
