//! Keys, the session and projects: team-a's admin key manages its own
//! project's keys only, and projects are the operator's.

use reqwest::Method;
use serde_json::json;

use super::world::World;

pub async fn walk(world: &World) -> Vec<&'static str> {
    let (a, b) = (&world.a, &world.b);

    world
        .assert_listed_only_own("/v1/keys?limit=200", "id", &a.key, &b.key)
        .await;
    world
        .assert_hidden(Method::GET, &format!("/v1/keys/{}", b.key), None)
        .await;
    world
        .assert_hidden(Method::POST, &format!("/v1/keys/{}/revoke", b.key), None)
        .await;
    let (status, problem) = world
        .call(
            &a.token,
            Method::POST,
            "/v1/keys",
            Some(&json!({"name": "planted", "scope": "admin", "project": b.project})),
        )
        .await;
    assert_eq!(status, 403, "{problem}");
    let (status, session) = world.call(&a.token, Method::GET, "/v1/session", None).await;
    assert_eq!(
        (status, &session["project"]),
        (200, &json!(a.project)),
        "{session}"
    );

    // Projects are the operator's: an admin key is refused whichever
    // project it names, so the refusal says nothing of B.
    let project = format!("/v1/projects/{}", b.project);
    let body = json!({"name": "Taken over"});
    for (method, path, body) in [
        (Method::GET, "/v1/projects", None),
        (
            Method::POST,
            "/v1/projects",
            Some(json!({"id": "team-c", "name": "C"})),
        ),
        (Method::GET, project.as_str(), None),
        (Method::PUT, project.as_str(), Some(body.clone())),
        (Method::PATCH, project.as_str(), Some(body.clone())),
        (Method::DELETE, project.as_str(), None),
    ] {
        let (status, problem) = world
            .call(&a.token, method.clone(), path, body.as_ref())
            .await;
        assert_eq!(status, 403, "{method} {path}: {problem}");
    }

    // Nothing of B changed: its key is live, it has no planted key, its
    // project keeps its name.
    let keys: Vec<(String, Option<chrono::DateTime<chrono::Utc>>)> =
        sqlx::query_as("SELECT name, revoked_at FROM api_keys WHERE project_id = $1 ORDER BY name")
            .bind(&b.project)
            .fetch_all(&world.app.pool)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        keys,
        vec![
            ("team-b-admin".to_owned(), None),
            ("team-b-reader".to_owned(), None)
        ]
    );
    let name: String = sqlx::query_scalar("SELECT name FROM projects WHERE id = $1")
        .bind(&b.project)
        .fetch_one(&world.app.pool)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(name, "Team team-b");

    vec![
        "list_keys",
        "get_key",
        "revoke_key",
        "create_key",
        "get_session",
        "list_projects",
        "create_project",
        "get_project",
        "put_project",
        "patch_project",
        "delete_project",
    ]
}
