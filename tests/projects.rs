//! Projects over HTTP: an operator creates, lists, reads, patches (with
//! If-Match) and deletes them; a project that owns something and `default`
//! are not deleted; bad IDs and quotas name the field; keys belong to a
//! project and only an operator key reaches /v1/projects; usage follows
//! creates and deletes; rows that existed before projects are in `default`.
//! Temporal is not needed (a closed port).

use crate::common;

use std::borrow::Cow;

use common::*;
use reqwest::Method;
use serde_json::{Value, json};
use sqlx::PgPool;

/// The migration that brings projects in.
const PROJECTS_MIGRATION: i64 = 20261208200000;

fn header(response: &reqwest::Response, name: &str) -> String {
    response
        .headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

/// A request with `token` (not the harness's operator key) and an optional
/// `If-Match`; the body is JSON, or a merge patch for PATCH.
async fn call(
    app: &TestApp,
    method: Method,
    path: &str,
    token: &str,
    if_match: Option<&str>,
    body: Option<&Value>,
) -> (u16, Value, String) {
    let mut request = reqwest::Client::new()
        .request(method.clone(), app.url(path))
        .bearer_auth(token);
    if let Some(tag) = if_match {
        request = request.header("if-match", tag);
    }
    if let Some(body) = body {
        let content_type = if method == Method::PATCH {
            "application/merge-patch+json"
        } else {
            "application/json"
        };
        request = request
            .header("content-type", content_type)
            .body(body.to_string());
    }
    let response = request
        .send()
        .await
        .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
    let etag = header(&response, "etag");
    let (status, body) = json(response).await;
    (status, body, etag)
}

async fn project(app: &TestApp, id: &str) -> Value {
    let (status, body) = json(app.get(&format!("/v1/projects/{id}")).await).await;
    assert_eq!(status, 200, "{body}");
    body
}

fn field_names(problem: &Value) -> Vec<String> {
    problem["errors"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["field"].as_str().map(str::to_owned))
        .collect()
}

#[sqlx::test(migrations = "./migrations")]
async fn an_operator_manages_projects(pool: PgPool) {
    let app = TestApp::without_temporal(pool).await;
    let op = app.token.clone();

    let created = app
        .post(
            "/v1/projects",
            &json!({"id": "payments", "name": "Payments", "weight": 2,
                    "quotas": {"activities": 10, "events_per_second": 50, "events_burst": 100}}),
        )
        .await;
    assert_eq!(created.status(), 201);
    assert_eq!(header(&created, "etag"), "\"1\"");
    assert_eq!(header(&created, "location"), "/v1/projects/payments");
    let (_, body) = json(created).await;
    assert_eq!(body["id"], "payments");
    assert_eq!(body["weight"], 2);
    assert_eq!(body["quotas"]["activities"], 10);
    assert_eq!(body["quotas"]["runs_running"], Value::Null, "unlimited");
    assert_eq!(body["usage"]["activities"], 0, "{body}");

    // PUT creates under the path's ID, then replaces at a new version.
    let (status, body, tag) = call(
        &app,
        Method::PUT,
        "/v1/projects/search",
        &op,
        None,
        Some(&json!({"name": "Search"})),
    )
    .await;
    assert_eq!((status, tag.as_str()), (201, "\"1\""), "{body}");
    assert_eq!(body["weight"], 1, "the default weight");
    let (status, body, tag) = call(
        &app,
        Method::PUT,
        "/v1/projects/search",
        &op,
        Some("\"1\""),
        Some(&json!({"name": "Search team", "quotas": {"sources": 1}})),
    )
    .await;
    assert_eq!((status, tag.as_str()), (200, "\"2\""), "{body}");
    assert_eq!(body["quotas"]["sources"], 1);
    // A second POST of the ID is a conflict.
    let (status, body) = json(
        app.post("/v1/projects", &json!({"id": "search", "name": "Again"}))
            .await,
    )
    .await;
    assert_eq!(status, 409, "{body}");

    let (status, list) = json(app.get("/v1/projects?limit=2").await).await;
    assert_eq!(status, 200, "{list}");
    let ids: Vec<&str> = list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["id"].as_str())
        .collect();
    assert_eq!(ids, ["search", "payments"], "newest first: {list}");
    let cursor = list["next_cursor"].as_str().unwrap_or_default();
    let (_, rest) = json(app.get(&format!("/v1/projects?cursor={cursor}")).await).await;
    assert_eq!(rest["items"][0]["id"], "default", "{rest}");
    assert_eq!(rest["next_cursor"], Value::Null);

    // PATCH: a stale If-Match is a 412; `null` lifts a quota.
    let (status, body, _) = call(
        &app,
        Method::PATCH,
        "/v1/projects/payments",
        &op,
        Some("\"7\""),
        Some(&json!({"weight": 5})),
    )
    .await;
    assert_eq!(status, 412, "{body}");
    let (status, body, tag) = call(
        &app,
        Method::PATCH,
        "/v1/projects/payments",
        &op,
        Some("\"1\""),
        Some(&json!({"weight": 5, "quotas": {"activities": null}})),
    )
    .await;
    assert_eq!((status, tag.as_str()), (200, "\"2\""), "{body}");
    assert_eq!(body["weight"], 5);
    assert_eq!(body["quotas"]["activities"], Value::Null);
    assert_eq!(body["quotas"]["events_burst"], 100, "the rest stays");
    assert_eq!(body["name"], "Payments");

    // Bad IDs and quotas are 422s naming the field.
    for (method, path, body, fields) in [
        (
            Method::POST,
            "/v1/projects",
            json!({"id": "Bad_Slug", "name": "x", "weight": 0}),
            vec!["id", "weight"],
        ),
        (
            Method::PUT,
            "/v1/projects/9lives",
            json!({"name": "x"}),
            vec!["id"],
        ),
        (
            Method::PUT,
            "/v1/projects/fine",
            json!({"name": "x", "quotas": {"activities": -1, "events_burst": 5}}),
            vec!["quotas.activities", "quotas.events_burst"],
        ),
        (
            Method::PATCH,
            "/v1/projects/payments",
            json!({"quotas": {"runs_running": 3000000000_i64}}),
            vec!["quotas.runs_running"],
        ),
    ] {
        let (status, problem, _) = call(&app, method.clone(), path, &op, None, Some(&body)).await;
        assert_eq!(status, 422, "{method} {path}: {problem}");
        assert_eq!(field_names(&problem), fields, "{problem}");
    }
    let (status, _) = json(app.get("/v1/projects/fine").await).await;
    assert_eq!(status, 404, "a refused PUT creates nothing");

    // Delete: If-Match is checked, then it is gone and its ID stays taken.
    let (status, _, _) = call(
        &app,
        Method::DELETE,
        "/v1/projects/search",
        &op,
        Some("\"1\""),
        None,
    )
    .await;
    assert_eq!(status, 412);
    let (status, _, _) = call(
        &app,
        Method::DELETE,
        "/v1/projects/search",
        &op,
        Some("\"2\""),
        None,
    )
    .await;
    assert_eq!(status, 204);
    let (status, _) = json(app.get("/v1/projects/search").await).await;
    assert_eq!(status, 404);
    let (status, _) = json(app.delete("/v1/projects/search").await).await;
    assert_eq!(status, 404);
    let (status, problem) = json(
        app.put("/v1/projects/search", &json!({"name": "New"}))
            .await,
    )
    .await;
    assert_eq!(
        status, 409,
        "a deleted project's ID is not reused: {problem}"
    );

    // `default` is never deleted.
    let (status, problem) = json(app.delete("/v1/projects/default").await).await;
    assert_eq!(status, 409, "{problem}");
    assert!(
        problem["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("default"),
        "{problem}"
    );
}

#[sqlx::test(migrations = "./migrations")]
async fn a_project_that_owns_something_is_not_deleted(pool: PgPool) {
    let app = TestApp::without_temporal(pool.clone()).await;
    let (status, _) = json(
        app.post("/v1/projects", &json!({"id": "a", "name": "A"}))
            .await,
    )
    .await;
    assert_eq!(status, 201);
    let activity = app
        .create(&activity_with(
            json!({"type": "event", "event_types": ["order.created"]}),
        ))
        .await;
    let activity_id = activity["id"].as_str().unwrap_or_default().to_owned();
    // The operator's key creates in `default`: move the activity by hand
    // (a key of `a` comes only after, to be counted on its own).
    sqlx::query("UPDATE activities SET project_id = 'a' WHERE id = $1::uuid")
        .bind(&activity_id)
        .execute(&pool)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let (status, key) = json(
        app.post(
            "/v1/keys",
            &json!({"name": "a-writer", "scope": "write", "project": "a"}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 201, "{key}");
    assert_eq!(key["project"], "a");
    assert_eq!(project(&app, "a").await["usage"]["activities"], 1);

    let (status, problem) = json(app.delete("/v1/projects/a").await).await;
    assert_eq!(status, 409, "{problem}");
    let detail = problem["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("1 activity, 1 key"), "{problem}");

    // Once the activity is deleted (by a key of its project: to the
    // operator's, acting in `default`, it does not exist) and the key
    // revoked, it owns nothing.
    let path = format!("/v1/activities/{activity_id}");
    let (status, _) = json(app.delete(&path).await).await;
    assert_eq!(status, 404);
    let token = key["token"].as_str().unwrap_or_default();
    let (status, body, _) = call(&app, Method::DELETE, &path, token, None, None).await;
    assert_eq!(status, 204, "{body}");
    let (status, problem) = json(app.delete("/v1/projects/a").await).await;
    assert_eq!(status, 409, "{problem}");
    assert!(
        problem["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("still owns 1 key:"),
        "{problem}"
    );
    let key_id = key["id"].as_str().unwrap_or_default();
    let (status, _) = json(
        app.post(&format!("/v1/keys/{key_id}/revoke"), &json!({}))
            .await,
    )
    .await;
    assert_eq!(status, 200);
    let (status, problem) = json(app.delete("/v1/projects/a").await).await;
    assert_eq!(status, 204, "{problem}");
    // Its history (the deleted activity) still names it.
    let (project_of_activity,): (String,) =
        sqlx::query_as("SELECT project_id FROM activities WHERE id = $1::uuid")
            .bind(&activity_id)
            .fetch_one(&pool)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(project_of_activity, "a");
}

#[sqlx::test(migrations = "./migrations")]
async fn keys_belong_to_a_project_and_only_operators_manage_projects(pool: PgPool) {
    let app = TestApp::without_temporal(pool).await;
    let op = app.token.clone();
    for id in ["a", "b"] {
        let (status, _) = json(
            app.post("/v1/projects", &json!({"id": id, "name": id}))
                .await,
        )
        .await;
        assert_eq!(status, 201);
    }
    let (status, admin) = json(
        app.post(
            "/v1/keys",
            &json!({"name": "a-admin", "scope": "admin", "project": "a"}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 201, "{admin}");
    let admin_token = admin["token"].as_str().unwrap_or_default().to_owned();

    let (status, session, _) =
        call(&app, Method::GET, "/v1/session", &admin_token, None, None).await;
    assert_eq!(status, 200, "{session}");
    assert_eq!(session["project"], "a", "{session}");
    assert_eq!(session["scope"], "admin", "{session}");
    assert_eq!(session["key"]["project"], "a", "{session}");
    let (_, session, _) = call(&app, Method::GET, "/v1/session", &op, None, None).await;
    assert_eq!(
        (&session["scope"], &session["project"]),
        (&json!("operator"), &Value::Null),
        "{session}"
    );

    // A project's admin key reaches no /v1/projects operation.
    for (method, path, body) in [
        (Method::GET, "/v1/projects", None),
        (
            Method::POST,
            "/v1/projects",
            Some(json!({"id": "c", "name": "c"})),
        ),
        (Method::GET, "/v1/projects/a", None),
        (Method::PUT, "/v1/projects/a", Some(json!({"name": "mine"}))),
        (Method::PATCH, "/v1/projects/a", Some(json!({"weight": 9}))),
        (Method::DELETE, "/v1/projects/b", None),
    ] {
        let (status, problem, _) = call(
            &app,
            method.clone(),
            path,
            &admin_token,
            None,
            body.as_ref(),
        )
        .await;
        assert_eq!(status, 403, "{method} {path}: {problem}");
        assert!(
            problem["detail"]
                .as_str()
                .unwrap_or_default()
                .contains("operator"),
            "{problem}"
        );
    }

    // It makes keys in its own project only, and never an operator key.
    let (status, own, _) = call(
        &app,
        Method::POST,
        "/v1/keys",
        &admin_token,
        None,
        Some(&json!({"name": "a-reader", "scope": "read"})),
    )
    .await;
    assert_eq!(status, 201, "{own}");
    assert_eq!(own["project"], "a", "absent: the caller's project");
    for body in [
        json!({"name": "b-reader", "scope": "read", "project": "b"}),
        json!({"name": "root", "scope": "admin", "project": null}),
        json!({"name": "root", "scope": "operator"}),
    ] {
        let (status, problem, _) = call(
            &app,
            Method::POST,
            "/v1/keys",
            &admin_token,
            None,
            Some(&body),
        )
        .await;
        assert_eq!(status, 403, "{body}: {problem}");
    }
    // It sees its project's keys, not the operator's.
    let (status, list, _) = call(&app, Method::GET, "/v1/keys", &admin_token, None, None).await;
    assert_eq!(status, 200);
    let projects: Vec<&Value> = list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|k| &k["project"])
        .collect();
    assert_eq!(projects, [&json!("a"), &json!("a")], "{list}");

    // An operator may make an operator key (`project: null`), and keys of
    // any project; a key of no project other than an operator's is refused.
    let (status, root) = json(
        app.post(
            "/v1/keys",
            &json!({"name": "root", "scope": "admin", "project": null}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 201, "{root}");
    assert_eq!(
        (&root["scope"], &root["project"]),
        (&json!("operator"), &Value::Null)
    );
    let (status, key) = json(
        app.post("/v1/keys", &json!({"name": "dflt", "scope": "read"}))
            .await,
    )
    .await;
    assert_eq!((status, &key["project"]), (201, &json!("default")), "{key}");
    for (body, field) in [
        (
            json!({"name": "x", "scope": "read", "project": null}),
            "project",
        ),
        (
            json!({"name": "x", "scope": "operator", "project": "a"}),
            "project",
        ),
        (
            json!({"name": "x", "scope": "read", "project": "nope"}),
            "project",
        ),
        (
            json!({"name": "x", "scope": "read", "project": "No"}),
            "project",
        ),
    ] {
        let (status, problem) = json(app.post("/v1/keys", &body).await).await;
        assert_eq!(status, 422, "{body}: {problem}");
        assert_eq!(field_names(&problem), [field], "{problem}");
    }
}

#[sqlx::test(migrations = "./migrations")]
async fn usage_follows_creates_and_deletes(pool: PgPool) {
    let app = TestApp::without_temporal(pool).await;
    let usage = |p: Value| p["usage"].clone();
    assert_eq!(
        usage(project(&app, "default").await),
        json!({"activities": 0, "sources": 0, "subscriptions": 0,
               "runs_running": 0, "events_last_minute": 0})
    );
    let mut ids = Vec::new();
    for _ in 0..2 {
        let activity = app
            .create(&activity_with(
                json!({"type": "event", "event_types": ["usage.tested"]}),
            ))
            .await;
        ids.push(activity["id"].as_str().unwrap_or_default().to_owned());
    }
    let (status, subscription) = json(
        app.post(
            "/v1/subscriptions",
            &json!({"url": "https://hooks.example.com/acp"}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 201, "{subscription}");
    let (status, body) = json(
        app.post(
            "/v1/events",
            &json!({"event_type": "nothing.listens", "source": "tests", "payload": {}}),
        )
        .await,
    )
    .await;
    assert!(status < 300, "{status} {body}");
    let now = usage(project(&app, "default").await);
    assert_eq!(now["activities"], 2, "{now}");
    assert_eq!(now["subscriptions"], 1, "{now}");
    assert_eq!(now["events_last_minute"], 1, "{now}");

    let (status, _) = json(app.delete(&format!("/v1/activities/{}", ids[0])).await).await;
    assert_eq!(status, 204);
    let subscription_id = subscription["id"].as_str().unwrap_or_default();
    let (status, _) = json(
        app.delete(&format!("/v1/subscriptions/{subscription_id}"))
            .await,
    )
    .await;
    assert_eq!(status, 204);
    let now = usage(project(&app, "default").await);
    assert_eq!(now["activities"], 1, "{now}");
    assert_eq!(now["subscriptions"], 0, "{now}");
    // The list reports the same usage as the project itself.
    let (_, list) = json(app.get("/v1/projects").await).await;
    assert_eq!(list["items"][0]["usage"], now, "{list}");
}

/// Rows written before the projects migration land in `default`: an
/// activity (counted in default's usage) and an admin key (which keeps its
/// scope, acts in `default`, and cannot manage projects).
#[sqlx::test(migrations = false)]
async fn rows_from_before_projects_are_in_default(pool: PgPool) {
    let mut before = sqlx::migrate!("./migrations");
    before.migrations = Cow::Owned(
        before
            .migrations
            .iter()
            .filter(|m| m.version < PROJECTS_MIGRATION)
            .cloned()
            .collect(),
    );
    before
        .run(&pool)
        .await
        .unwrap_or_else(|e| panic!("migrations before projects: {e}"));
    let activity_id = uuid::Uuid::new_v4();
    sqlx::query(
        "INSERT INTO activities (id, version, definition, name, enabled, trigger_type, sync_state)
         VALUES ($1, 1, '{}', 'from before', true, 'event', 'not_applicable')",
    )
    .bind(activity_id)
    .execute(&pool)
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let minted = acp_domain::auth::mint().unwrap_or_else(|e| panic!("{e}"));
    sqlx::query(
        "INSERT INTO api_keys (id, name, scope, secret_sha256) VALUES ($1, 'old', 'admin', $2)",
    )
    .bind(minted.key_id)
    .bind(&minted.secret_sha256[..])
    .execute(&pool)
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    sqlx::migrate!("./migrations")
        .run(&pool)
        .await
        .unwrap_or_else(|e| panic!("the projects migration: {e}"));

    let app = TestApp::without_temporal(pool).await;
    assert_eq!(
        project(&app, "default").await["usage"]["activities"],
        1,
        "the activity from before is default's"
    );
    let (status, session, _) =
        call(&app, Method::GET, "/v1/session", &minted.token, None, None).await;
    assert_eq!(status, 200, "{session}");
    assert_eq!(
        (&session["scope"], &session["project"]),
        (&json!("admin"), &json!("default")),
        "{session}"
    );
    let (status, _, _) = call(&app, Method::GET, "/v1/projects", &minted.token, None, None).await;
    assert_eq!(status, 403);
}
