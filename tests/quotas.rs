//! Creates land in the caller's project, within its quotas, over HTTP: a
//! project admin key's activities, sources and subscriptions are its
//! project's; one beyond a quota is a 429 with `Retry-After` and the
//! problem's `quota`, `limit` and `usage`, and leaves no row and no audit
//! entry; a delete makes room again; concurrent creates stop exactly at the
//! limit; an operator key creates in `default`. Temporal is not needed (a
//! closed port).

use crate::common;

use common::*;
use reqwest::Method;
use serde_json::{Value, json};
use sqlx::PgPool;

/// A request with `token` (not the harness's operator key); the answer's
/// status, body and `Retry-After`.
pub(crate) async fn call(
    app: &TestApp,
    method: Method,
    path: &str,
    token: &str,
    body: Option<&Value>,
) -> (u16, Value, Option<String>) {
    let mut request = reqwest::Client::new()
        .request(method.clone(), app.url(path))
        .bearer_auth(token);
    if let Some(body) = body {
        request = request.json(body);
    }
    let response = request
        .send()
        .await
        .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
    let retry_after = response
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let (status, body) = json(response).await;
    (status, body, retry_after)
}

async fn usage(app: &TestApp, project: &str) -> Value {
    let (status, body) = json(app.get(&format!("/v1/projects/{project}")).await).await;
    assert_eq!(status, 200, "{body}");
    body["usage"].clone()
}

fn activity(name: &str) -> Value {
    json!({
        "name": name,
        "trigger": {"type": "event", "event_types": ["quota.tested"]},
        "tasks": [{"task_type": "noop"}],
    })
}

fn source(name: &str) -> Value {
    json!({"name": name, "kind": "rabbitmq", "enabled": false,
           "config": {"url": "amqp://guest@127.0.0.1:5672/%2f", "queue": name}})
}

fn subscription() -> Value {
    json!({"url": "https://hooks.example.com/acp", "types": ["run.failed"]})
}

/// A refused create: 429, `Retry-After: 60` and the problem naming the quota.
fn assert_refused(answer: &(u16, Value, Option<String>), quota: &str, limit: i64, usage: i64) {
    let (status, problem, retry_after) = answer;
    assert_eq!(*status, 429, "{problem}");
    assert_eq!(retry_after.as_deref(), Some("60"), "{problem}");
    assert_eq!(
        problem["type"],
        "https://activity-control-plane.dev/problems/quota-exceeded"
    );
    assert_eq!(
        (&problem["quota"], &problem["limit"], &problem["usage"]),
        (&json!(quota), &json!(limit), &json!(usage)),
        "{problem}"
    );
}

async fn audit_entries(pool: &PgPool, operation: &str) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM audit_log WHERE operation = $1")
        .bind(operation)
        .fetch_one(pool)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

#[sqlx::test(migrations = "./migrations")]
async fn creates_land_in_the_keys_project_within_its_quotas(pool: PgPool) {
    let app = TestApp::without_temporal(pool.clone()).await;
    let a = app
        .project_with_admin(
            "a",
            json!({"activities": 2, "sources": 1, "subscriptions": 1}),
        )
        .await;

    // Activities: two fit, in `a` (not `default`).
    let mut ids = Vec::new();
    for name in ["first", "second"] {
        let (status, body, _) = call(
            &app,
            Method::POST,
            "/v1/activities",
            &a,
            Some(&activity(name)),
        )
        .await;
        assert_eq!(status, 201, "{body}");
        ids.push(body["id"].as_str().unwrap_or_default().to_owned());
    }
    assert_eq!(usage(&app, "a").await["activities"], 2);
    assert_eq!(usage(&app, "default").await["activities"], 0);

    // The third is refused, by POST and by a PUT that would create, and
    // leaves neither a row nor an audit entry.
    let entries = audit_entries(&pool, "create_activity").await;
    let refused = call(
        &app,
        Method::POST,
        "/v1/activities",
        &a,
        Some(&activity("third")),
    )
    .await;
    assert_refused(&refused, "activities", 2, 2);
    let new_id = uuid::Uuid::new_v4();
    let put = format!("/v1/activities/{new_id}");
    let refused = call(&app, Method::PUT, &put, &a, Some(&activity("third"))).await;
    assert_refused(&refused, "activities", 2, 2);
    assert_eq!(audit_entries(&pool, "create_activity").await, entries);
    assert_eq!(audit_entries(&pool, "put_activity").await, 0);
    assert_eq!(usage(&app, "a").await["activities"], 2);
    // Replacing one it has is not a create.
    let existing = format!("/v1/activities/{}", ids[0]);
    let (status, body, _) = call(&app, Method::PUT, &existing, &a, Some(&activity("first"))).await;
    assert_eq!(status, 200, "{body}");

    // A delete makes room: the PUT creates now.
    let (status, _, _) = call(&app, Method::DELETE, &existing, &a, None).await;
    assert_eq!(status, 204);
    let (status, body, _) = call(&app, Method::PUT, &put, &a, Some(&activity("third"))).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(usage(&app, "a").await["activities"], 2);

    // Sources and subscriptions: one each.
    let (status, body, _) = call(&app, Method::POST, "/v1/sources", &a, Some(&source("one"))).await;
    assert_eq!(status, 201, "{body}");
    let refused = call(&app, Method::POST, "/v1/sources", &a, Some(&source("two"))).await;
    assert_refused(&refused, "sources", 1, 1);
    let (status, body, _) = call(
        &app,
        Method::POST,
        "/v1/subscriptions",
        &a,
        Some(&subscription()),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let refused = call(
        &app,
        Method::POST,
        "/v1/subscriptions",
        &a,
        Some(&subscription()),
    )
    .await;
    assert_refused(&refused, "subscriptions", 1, 1);
    let now = usage(&app, "a").await;
    assert_eq!(
        (&now["sources"], &now["subscriptions"]),
        (&json!(1), &json!(1)),
        "{now}"
    );
    assert_eq!(audit_entries(&pool, "create_source").await, 1);
    assert_eq!(audit_entries(&pool, "create_subscription").await, 1);

    // A calendar (no quota) lands in `a` too: the project now owns it.
    let (status, body, _) = call(
        &app,
        Method::POST,
        "/v1/calendars",
        &a,
        Some(&json!({"name": "a's days", "timezone": "Europe/Berlin"})),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let owner: String = sqlx::query_scalar("SELECT project_id FROM calendars WHERE id = $1::uuid")
        .bind(body["id"].as_str().unwrap_or_default())
        .fetch_one(&pool)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(owner, "a");
}

#[sqlx::test(migrations = "./migrations")]
async fn concurrent_creates_stop_exactly_at_the_quota(pool: PgPool) {
    let app = TestApp::without_temporal(pool).await;
    let a = app.project_with_admin("a", json!({"activities": 3})).await;
    let creates = (0..10).map(|i| {
        let (app, a) = (&app, &a);
        async move {
            let body = activity(&format!("racer-{i}"));
            call(app, Method::POST, "/v1/activities", a, Some(&body)).await
        }
    });
    let answers = futures::future::join_all(creates).await;
    let mut statuses: Vec<u16> = answers.iter().map(|(status, _, _)| *status).collect();
    statuses.sort_unstable();
    assert_eq!(statuses, [201, 201, 201, 429, 429, 429, 429, 429, 429, 429]);
    for refused in answers.iter().filter(|(status, _, _)| *status == 429) {
        assert_refused(refused, "activities", 3, 3);
    }
    assert_eq!(usage(&app, "a").await["activities"], 3);
}

#[sqlx::test(migrations = "./migrations")]
async fn an_operator_key_creates_in_default(pool: PgPool) {
    let app = TestApp::without_temporal(pool).await;
    // Another project's quota does not apply to the operator's creates.
    app.project_with_admin("a", json!({"activities": 0})).await;
    let created = app.create(&activity("operated")).await;
    assert!(created["id"].is_string(), "{created}");
    assert_eq!(usage(&app, "default").await["activities"], 1);
    assert_eq!(usage(&app, "a").await["activities"], 0);
}
