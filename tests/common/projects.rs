//! Projects and their keys, created as the operator key a `TestApp` with
//! authentication holds: the setup every multi-project test begins with.

use serde_json::{Value, json};

use super::{TestApp, json};

impl TestApp {
    /// Creates project `id` with `quotas` (`{}` for none).
    pub async fn create_project(&self, id: &str, quotas: Value) {
        let (status, body) = json(
            self.post(
                "/v1/projects",
                &json!({"id": id, "name": format!("Team {id}"), "quotas": quotas}),
            )
            .await,
        )
        .await;
        assert_eq!(status, 201, "POST /v1/projects {id}: {body}");
    }

    /// Creates a key of `project` named `{project}-{name}` with `scope`:
    /// its ID and token.
    pub async fn project_key(&self, project: &str, name: &str, scope: &str) -> (String, String) {
        let (status, key) = json(
            self.post(
                "/v1/keys",
                &json!({"name": format!("{project}-{name}"), "scope": scope, "project": project}),
            )
            .await,
        )
        .await;
        assert_eq!(status, 201, "POST /v1/keys for {project}: {key}");
        let field = |name: &str| key[name].as_str().unwrap_or_default().to_owned();
        (field("id"), field("token"))
    }

    /// Creates project `id` with `quotas` and returns the token of an
    /// admin key of it.
    pub async fn project_with_admin(&self, id: &str, quotas: Value) -> String {
        self.create_project(id, quotas).await;
        self.project_key(id, "admin", "admin").await.1
    }
}
