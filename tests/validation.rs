//! Bad input: every malformed request gets a 4xx problem document that names
//! the field. None gets a 5xx.

mod common;

use common::*;
use serde_json::{Value, json};
use sqlx::PgPool;

fn valid() -> Value {
    json!({
        "name": "ok",
        "trigger": {"type": "cron", "cron": "0 * * * *", "timezone": "UTC"},
        "tasks": [{"task_type": "noop"}]
    })
}

/// `valid()` with one JSON pointer replaced (or removed, for `None`).
fn with(pointer: &str, value: Option<Value>) -> Value {
    let mut body = valid();
    let (parent, key) = pointer.rsplit_once('/').unwrap_or(("", pointer));
    let target = if parent.is_empty() {
        Some(&mut body)
    } else {
        body.pointer_mut(parent)
    };
    let Some(Value::Object(map)) = target else {
        panic!("bad pointer {pointer}");
    };
    match value {
        Some(v) => {
            map.insert(key.to_owned(), v);
        }
        None => {
            map.remove(key);
        }
    }
    body
}

/// `valid()` with one webhook task carrying `extra` next to its config.
fn webhook_with(extra: Value) -> Value {
    let mut task =
        json!({"task_type": "webhook", "config": {"url": "https://hooks.example.com/x"}});
    if let (Some(task), Some(extra)) = (task.as_object_mut(), extra.as_object()) {
        task.extend(extra.clone());
    }
    with("/tasks", Some(json!([task])))
}

fn interval(every: Value) -> Value {
    with(
        "/trigger",
        Some(json!({"type": "interval", "every": every})),
    )
}

#[sqlx::test(migrations = "./migrations")]
async fn bad_activity_bodies_name_their_field(pool: PgPool) {
    let app = TestApp::without_temporal(pool).await;
    // (body, expected status, expected field)
    let table: Vec<(Value, u16, &str)> = vec![
        (
            with("/trigger/cron", Some(json!("not a cron"))),
            422,
            "trigger.cron",
        ),
        (
            with("/trigger/cron", Some(json!("61 * * * *"))),
            422,
            "trigger.cron",
        ),
        (
            with("/trigger/cron", Some(json!("* * * *"))),
            422,
            "trigger.cron",
        ),
        (
            with("/trigger/cron", Some(json!("@every 5m"))),
            422,
            "trigger.cron",
        ),
        (with("/trigger/cron", None), 422, "trigger.cron"),
        (
            with("/trigger/timezone", Some(json!("Mars/Olympus_Mons"))),
            422,
            "trigger.timezone",
        ),
        (
            with("/trigger/timezone", Some(json!(""))),
            422,
            "trigger.timezone",
        ),
        (interval(json!("PT0.5S")), 422, "trigger.every"),
        (interval(json!("PT0S")), 422, "trigger.every"),
        (interval(json!("30 seconds")), 422, "trigger.every"),
        (interval(json!("P1M")), 422, "trigger.every"),
        (interval(json!(30)), 400, "trigger.every"),
        (
            with("/trigger/misfire_policy", Some(json!("sometimes"))),
            422,
            "trigger.misfire_policy",
        ),
        (
            with("/trigger/catchup_limit", Some(json!(0))),
            422,
            "trigger.catchup_limit",
        ),
        (
            with("/trigger/catchup_limit", Some(json!(1001))),
            422,
            "trigger.catchup_limit",
        ),
        (
            with("/trigger/catchup_limit", Some(json!("ten"))),
            400,
            "trigger.catchup_limit",
        ),
        (
            with("/trigger/misfire_grace", Some(json!("soon"))),
            422,
            "trigger.misfire_grace",
        ),
        (
            with("/trigger/start_at", Some(json!("yesterday"))),
            422,
            "trigger.start_at",
        ),
        (
            with(
                "/trigger",
                Some(
                    json!({"type": "cron", "cron": "0 * * * *", "start_at": "2027-01-01T00:00:00Z", "end_at": "2026-01-01T00:00:00Z"}),
                ),
            ),
            422,
            "trigger.end_at",
        ),
        (
            with("/trigger/jitter", Some(json!("-PT1S"))),
            422,
            "trigger.jitter",
        ),
        (
            with("/trigger/type", Some(json!("hourly"))),
            400,
            "trigger.type",
        ),
        (
            with("/trigger/every", Some(json!("PT30S"))),
            422,
            "trigger.every",
        ),
        (with("/trigger/bogus", Some(json!(1))), 400, "trigger.bogus"),
        (
            with("/trigger", Some(json!({"type": "event"}))),
            422,
            "trigger.event_types",
        ),
        (
            with(
                "/trigger",
                Some(json!({"type": "event", "event_types": []})),
            ),
            422,
            "trigger.event_types",
        ),
        (
            with(
                "/trigger",
                Some(json!({"type": "event", "event_types": ["has space"]})),
            ),
            422,
            "trigger.event_types[0]",
        ),
        (
            with(
                "/trigger",
                Some(json!({"type": "event", "event_types": ["a"], "misfire_policy": "skip"})),
            ),
            422,
            "trigger.misfire_policy",
        ),
        (with("/trigger", None), 400, "trigger"),
        (with("/name", None), 400, "name"),
        (with("/name", Some(json!(""))), 422, "name"),
        (with("/name", Some(json!(42))), 400, "name"),
        (with("/name", Some(json!("x".repeat(201)))), 422, "name"),
        (
            with("/unknown_field", Some(json!(true))),
            400,
            "unknown_field",
        ),
        (with("/enabled", Some(json!("yes"))), 400, "enabled"),
        (
            with("/labels", Some(json!({"bad key!": "v"}))),
            422,
            "labels.bad key!",
        ),
        (
            with("/labels", Some(json!({"team": 5}))),
            400,
            "labels.team",
        ),
        (with("/tasks", Some(json!([]))), 422, "tasks"),
        (with("/tasks", Some(json!("noop"))), 400, "tasks"),
        (
            with("/tasks", Some(json!([{"task_type": "has:colon"}]))),
            422,
            "tasks[0].task_type",
        ),
        (
            with(
                "/tasks",
                Some(json!([{"task_type": "noop"}, {"task_type": "webhook", "config": {}}])),
            ),
            422,
            "tasks[1].config.url",
        ),
        (
            with(
                "/tasks",
                Some(json!([{"task_type": "webhook", "config": {"url": "ftp://x"}}])),
            ),
            422,
            "tasks[0].config.url",
        ),
        (
            with(
                "/tasks",
                Some(
                    json!([{"task_type": "webhook", "config": {"url": "https://x", "secret": "s3cr3t"}}]),
                ),
            ),
            422,
            "tasks[0].config.secret",
        ),
        (
            with(
                "/tasks",
                Some(
                    json!([{"task_type": "webhook", "config": {"url": "https://x", "secret_ref": "lower-case"}}]),
                ),
            ),
            422,
            "tasks[0].config.secret_ref",
        ),
        (
            with(
                "/tasks",
                Some(json!([{"task_type": "charge-card", "config": {}}])),
            ),
            422,
            "tasks[0].config.task_queue",
        ),
        (
            with("/tasks", Some(json!([{"task_type": "noop", "extra": 1}]))),
            400,
            "tasks[0].extra",
        ),
        // Task policies: every problem is a 422 naming the field.
        (
            webhook_with(json!({"retry": {"max_attempts": 0}})),
            422,
            "tasks[0].retry.max_attempts",
        ),
        (
            webhook_with(json!({"retry": {"max_attempts": -2}})),
            422,
            "tasks[0].retry.max_attempts",
        ),
        (
            webhook_with(json!({"retry": {"max_attempts": 101}})),
            422,
            "tasks[0].retry.max_attempts",
        ),
        (
            webhook_with(json!({"retry": {"initial_interval": "-PT1S"}})),
            422,
            "tasks[0].retry.initial_interval",
        ),
        (
            webhook_with(json!({"retry": {"initial_interval": "PT0S"}})),
            422,
            "tasks[0].retry.initial_interval",
        ),
        (
            webhook_with(json!({"retry": {"max_interval": "-PT30S"}})),
            422,
            "tasks[0].retry.max_interval",
        ),
        (
            webhook_with(json!({"retry": {"initial_interval": "PT10S", "max_interval": "PT5S"}})),
            422,
            "tasks[0].retry.max_interval",
        ),
        (
            webhook_with(json!({"retry": {"backoff": 0.5}})),
            422,
            "tasks[0].retry.backoff",
        ),
        (
            webhook_with(json!({"retry": {"backoff": 11}})),
            422,
            "tasks[0].retry.backoff",
        ),
        (
            webhook_with(json!({"retry": {"non_retryable": [200]}})),
            422,
            "tasks[0].retry.non_retryable",
        ),
        (
            webhook_with(json!({"retry": {"attempts": 2}})),
            422,
            "tasks[0].retry.attempts",
        ),
        (webhook_with(json!({"retry": 3})), 422, "tasks[0].retry"),
        (
            webhook_with(json!({"timeout": "PT0S"})),
            422,
            "tasks[0].timeout",
        ),
        (
            webhook_with(json!({"timeout": "-PT5S"})),
            422,
            "tasks[0].timeout",
        ),
        (
            webhook_with(json!({"timeout": "PT6M"})),
            422,
            "tasks[0].timeout",
        ),
        (
            webhook_with(json!({"timeout": "soon"})),
            422,
            "tasks[0].timeout",
        ),
        (webhook_with(json!({"timeout": 5})), 400, "tasks[0].timeout"),
        (
            with(
                "/tasks",
                Some(
                    json!([{"task_type": "charge-card", "config": {"task_queue": "q"}, "retry": {"non_retryable": [503]}}]),
                ),
            ),
            422,
            "tasks[0].retry.non_retryable",
        ),
        (
            with(
                "/tasks",
                Some(json!([{"task_type": "noop", "retry": {"max_attempts": 2}}])),
            ),
            422,
            "tasks[0].retry",
        ),
        (
            with("/dedupe_key_strategy", Some(json!(7))),
            400,
            "dedupe_key_strategy",
        ),
    ];
    assert!(table.len() >= 25);
    for (body, status, field) in &table {
        let response = app.post("/v1/activities", body).await;
        let got = response.status().as_u16();
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        let problem: Value = response.json().await.unwrap_or(Value::Null);
        assert_eq!(got, *status, "{body} -> {problem}");
        assert_eq!(content_type, "application/problem+json", "{body}");
        assert_eq!(problem["status"], *status);
        let fields: Vec<&str> = problem["errors"]
            .as_array()
            .map(|e| e.iter().filter_map(|e| e["field"].as_str()).collect())
            .unwrap_or_default();
        assert!(
            fields.contains(field),
            "{body}: expected field {field}, got {problem}"
        );
    }
    // Nothing was stored.
    let (_, list) = json(app.get("/v1/activities").await).await;
    assert_eq!(list["items"], json!([]));
}

#[sqlx::test(migrations = "./migrations")]
async fn malformed_requests_of_every_other_kind(pool: PgPool) {
    let app = TestApp::spawn_with(pool, &closed_address(), "default", 4096).await;
    let http = &app.http;
    let raw = |method: reqwest::Method, path: &str| http.request(method, app.url(path));

    // (request, status, field)
    let cases: Vec<(reqwest::RequestBuilder, u16, &str)> = vec![
        (
            raw(reqwest::Method::POST, "/v1/activities")
                .header("content-type", "application/json")
                .body("{not json"),
            400,
            "body",
        ),
        (
            raw(reqwest::Method::POST, "/v1/activities")
                .header("content-type", "application/json")
                .body("[]"),
            400,
            "body",
        ),
        (
            raw(reqwest::Method::POST, "/v1/activities")
                .header("content-type", "application/json")
                .body(format!("{}{}", valid(), " {}")),
            400,
            "body",
        ),
        (
            raw(reqwest::Method::POST, "/v1/activities")
                .header("content-type", "text/plain")
                .body(valid().to_string()),
            415,
            "Content-Type",
        ),
        (
            raw(reqwest::Method::POST, "/v1/activities").body(valid().to_string()),
            415,
            "Content-Type",
        ),
        (
            raw(reqwest::Method::POST, "/v1/activities")
                .header("content-type", "application/json")
                .body(json!({"name": "x".repeat(5000)}).to_string()),
            413,
            "body",
        ),
        (
            raw(reqwest::Method::GET, "/v1/activities/not-a-uuid"),
            400,
            "id",
        ),
        (
            raw(reqwest::Method::DELETE, "/v1/activities/1234"),
            400,
            "id",
        ),
        (
            raw(reqwest::Method::GET, "/v1/activities?limit=0"),
            400,
            "limit",
        ),
        (
            raw(reqwest::Method::GET, "/v1/activities?limit=201"),
            400,
            "limit",
        ),
        (
            raw(reqwest::Method::GET, "/v1/activities?limit=abc"),
            400,
            "limit",
        ),
        (
            raw(reqwest::Method::GET, "/v1/activities?cursor=garbage"),
            400,
            "cursor",
        ),
        (
            raw(reqwest::Method::GET, "/v1/activities?trigger_type=weekly"),
            400,
            "trigger_type",
        ),
        (
            raw(reqwest::Method::GET, "/v1/activities?enabled=maybe"),
            400,
            "enabled",
        ),
        (
            raw(reqwest::Method::GET, "/v1/activities?label=novalue"),
            400,
            "label",
        ),
        (
            raw(reqwest::Method::GET, "/v1/activities?sort=name"),
            400,
            "sort",
        ),
        (
            raw(
                reqwest::Method::PUT,
                &format!("/v1/activities/{}", uuid::Uuid::new_v4()),
            )
            .header("content-type", "application/json")
            .header("if-match", "version-three")
            .body(valid().to_string()),
            400,
            "If-Match",
        ),
        (
            raw(reqwest::Method::POST, "/v1/activities")
                .header("content-type", "application/json")
                .header("idempotency-key", "")
                .body(valid().to_string()),
            400,
            "Idempotency-Key",
        ),
    ];
    for (request, status, field) in cases {
        let response = request.send().await.unwrap_or_else(|e| panic!("send: {e}"));
        let got = response.status().as_u16();
        let problem: Value = response.json().await.unwrap_or(Value::Null);
        assert_eq!(got, status, "{field}: {problem}");
        let fields: Vec<&str> = problem["errors"]
            .as_array()
            .map(|e| e.iter().filter_map(|e| e["field"].as_str()).collect())
            .unwrap_or_default();
        assert!(
            fields.contains(&field),
            "expected field {field}, got {problem}"
        );
    }

    // Unknown routes and methods are problems too, never 5xx.
    let response = raw(reqwest::Method::GET, "/v2/nothing")
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(response.status(), 404);
    assert_eq!(
        response.headers()["content-type"],
        "application/problem+json"
    );
    let response = raw(reqwest::Method::PATCH, "/v1/activities")
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(response.status(), 405);
    assert_eq!(
        response.headers()["content-type"],
        "application/problem+json"
    );
}
