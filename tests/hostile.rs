//! Hostile input in every string field and query parameter: SQL, path
//! traversal, header injection, over-long and NUL-bearing text. Each is
//! refused with a 4xx or stored verbatim, never executed, never a 5xx.

use crate::common;

use common::*;
use serde_json::{Value, json};
use sqlx::PgPool;

const NASTY: &[&str] = &[
    "'; DROP TABLE activities; --",
    "\" OR 1=1 --",
    "../../../../etc/passwd",
    "%2e%2e%2f%2e%2e%2f",
    "a\r\nX-Injected: yes",
    "<script>alert(1)</script>",
    "\u{0000}nul",
    "é😀\u{202e}",
];

fn long() -> String {
    "x".repeat(70_000)
}

/// Sets one string field (by JSON pointer) of a valid activity.
fn activity_with_field(pointer: &str, value: &str) -> Value {
    let mut body = json!({
        "name": "hostile",
        "description": "d",
        "labels": {"k": "v"},
        "trigger": {"type": "event", "event_types": ["a.b"]},
        "tasks": [{"task_type": "noop", "name": "t", "config": {"note": "n"}}],
        "dedupe_key_strategy": "skip"
    });
    if let Some(slot) = body.pointer_mut(pointer) {
        *slot = Value::String(value.to_owned());
    }
    body
}

#[sqlx::test(migrations = "./migrations")]
async fn hostile_strings_are_refused_or_stored_verbatim(pool: PgPool) {
    let app = TestApp::without_temporal(pool.clone()).await;
    let pointers = [
        "/name",
        "/description",
        "/labels/k",
        "/trigger/event_types/0",
        "/tasks/0/task_type",
        "/tasks/0/name",
        "/tasks/0/config/note",
        "/dedupe_key_strategy",
    ];
    let mut values: Vec<String> = NASTY.iter().map(|s| s.to_string()).collect();
    values.push(long());
    for pointer in pointers {
        for value in &values {
            let body = activity_with_field(pointer, value);
            let response = app.post("/v1/activities", &body).await;
            let status = response.status().as_u16();
            let returned: Value = response.json().await.unwrap_or_default();
            assert!(status < 500, "{pointer} = {value:?} -> {status} {returned}");
            if status == 201 {
                // Stored verbatim: what comes back is what was sent.
                let stored = returned.pointer(pointer).and_then(Value::as_str);
                assert_eq!(stored, Some(value.as_str()), "{pointer}");
            } else {
                assert!((400..500).contains(&status));
                assert!(
                    returned["errors"].as_array().is_some_and(|e| !e.is_empty()),
                    "{returned}"
                );
            }
        }
    }
    // The tables are all still there.
    let (n,): (i64,) = sqlx::query_as("SELECT count(*) FROM activities")
        .fetch_one(&pool)
        .await
        .unwrap_or_else(|e| panic!("activities table gone? {e}"));
    assert!(n > 0);

    // Events: every string field.
    for field in ["event_id", "event_type", "source", "occurred_at"] {
        for value in &values {
            let mut body = json!({"event_type": "a.b", "source": "s", "payload": {"k": "v"}});
            body[field] = Value::String(value.clone());
            let response = app.post("/v1/events", &body).await;
            assert!(
                response.status().as_u16() < 500,
                "{field} = {value:?} -> {}",
                response.status()
            );
        }
        let body = json!({"event_type": "a.b", "source": "s", "payload": {"k": NASTY[6]}});
        assert_eq!(app.post("/v1/events", &body).await.status(), 400);
    }
}

#[sqlx::test(migrations = "./migrations")]
async fn hostile_query_parameters_and_paths_are_4xx(pool: PgPool) {
    let app = TestApp::without_temporal(pool).await;
    let encode = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
    let params = [
        "/v1/activities?q=",
        "/v1/activities?label=",
        "/v1/activities?trigger_type=",
        "/v1/activities?cursor=",
        "/v1/runs?status=",
        "/v1/runs?activity_id=",
        "/v1/runs?scheduled_after=",
        "/v1/events?event_type=",
        "/v1/events?source=",
        "/v1/events?cursor=",
    ];
    for prefix in params {
        // 4000 characters: a 70 kB URI is refused by the HTTP layer itself.
        for value in NASTY
            .iter()
            .map(|s| s.to_string())
            .chain(["x".repeat(4000)])
        {
            let response = app.get(&format!("{prefix}{}", encode(&value))).await;
            let status = response.status().as_u16();
            assert!(
                status == 200 || (400..500).contains(&status),
                "{prefix}{value:?} -> {status}"
            );
        }
    }
    for path in [
        "/v1/activities/..%2F..%2Fetc%2Fpasswd",
        "/v1/runs/%27%20OR%201%3D1",
        "/v1/events/%00",
        "/v1/events/..%2F..",
        "/v1/activities/%FF%FE",
    ] {
        let status = app.get(path).await.status().as_u16();
        assert!((400..500).contains(&status), "{path} -> {status}");
    }
    // Non-UTF-8 bodies are unreadable, not errors.
    let response = app
        .http
        .post(app.url("/v1/activities"))
        .header("content-type", "application/json")
        .body(vec![b'{', b'"', 0xff, 0xfe, b'"', b':', b'1', b'}'])
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(response.status(), 400);
}
