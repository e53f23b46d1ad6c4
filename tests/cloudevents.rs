//! CloudEvents 1.0 on `POST /v1/events`: requests made by an independent
//! encoder (the CloudEvents Python SDK, see scripts/cloudevents_encode.py) in
//! the three HTTP modes become the events the mapping promises; conflicting
//! re-deliveries are refused with 409; bad input is named field by field.

use crate::common;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use base64::Engine;
use common::*;
use serde_json::{Value, json};
use sqlx::PgPool;

fn python() -> PathBuf {
    if let Ok(path) = std::env::var("ACP_CLOUDEVENTS_PYTHON") {
        return PathBuf::from(path);
    }
    let local = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tools/cloudevents/bin/python");
    assert!(
        local.exists(),
        "no CloudEvents SDK: run scripts/test, or set ACP_CLOUDEVENTS_PYTHON to a Python with `cloudevents` installed"
    );
    local
}

/// Requests for `events`, as the SDK encodes them.
fn encode(events: &Value) -> Vec<Value> {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/cloudevents_encode.py");
    let mut child = Command::new(python())
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("python: {e}"));
    child
        .stdin
        .take()
        .map(|mut stdin| stdin.write_all(json!({ "events": events }).to_string().as_bytes()))
        .transpose()
        .unwrap_or_else(|e| panic!("{e}"));
    let out = child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("python: {e}"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<Vec<Value>>(&out.stdout).unwrap_or_else(|e| panic!("{e}"))
}

async fn send(app: &TestApp, request: &Value) -> (u16, Value) {
    send_to(app, "/v1/events", request).await
}

async fn send_to(app: &TestApp, path: &str, request: &Value) -> (u16, Value) {
    let mut builder = app.http.post(app.url(path));
    for (name, value) in request["headers"].as_object().into_iter().flatten() {
        builder = builder.header(name.as_str(), value.as_str().unwrap_or_default());
    }
    let body = base64::engine::general_purpose::STANDARD
        .decode(request["body_base64"].as_str().unwrap_or_default())
        .unwrap_or_default();
    json(
        builder
            .body(body)
            .send()
            .await
            .unwrap_or_else(|e| panic!("{e}")),
    )
    .await
}

async fn post_raw(
    app: &TestApp,
    content_type: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, Value) {
    let mut builder = app
        .http
        .post(app.url("/v1/events"))
        .header("content-type", content_type);
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    json(
        builder
            .body(body.to_owned())
            .send()
            .await
            .unwrap_or_else(|e| panic!("{e}")),
    )
    .await
}

fn fields(problem: &Value) -> Vec<String> {
    problem["errors"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["field"].as_str().map(str::to_owned))
        .collect()
}

/// Each event in structured, binary and batch mode, as the SDK writes them:
/// one event per (source, id) whatever the mode, with the mapped fields.
#[sqlx::test(migrations = "./migrations")]
async fn the_sdks_three_http_modes_become_the_same_events(pool: PgPool) {
    let app = TestApp::without_temporal(pool.clone()).await;
    let events = json!([
        {"attributes": {"type": "com.example.order.created", "source": "https://shop.example.com/orders", "id": "A-1",
                        "time": "2026-03-01T09:00:00Z", "datacontenttype": "application/json"},
         "data": {"order": 7, "lines": [{"sku": "x", "qty": 1.5}]}},
        {"attributes": {"type": "order.shipped", "source": "crm", "id": "evt-2"}, "data": {"n": [1, 2]}},
        {"attributes": {"type": "note.added", "source": "/notes", "id": "n-1", "datacontenttype": "text/plain"},
         "data": "hello, world"},
        // The same id from another source: another event.
        {"attributes": {"type": "com.example.order.created", "source": "https://erp.example.com", "id": "A-1",
                        "time": "2026-03-01T10:00:00+01:00", "datacontenttype": "application/json"},
         "data": {"order": 8}},
    ]);
    let requests = encode(&events);
    assert_eq!(requests.len(), 4 * 2 + 1);

    let mut ids = Vec::new();
    for (i, pair) in requests[..8].chunks(2).enumerate() {
        let (s_status, structured) = send(&app, &pair[0]).await;
        assert_eq!(pair[0]["mode"], "structured");
        assert_eq!(s_status, 200, "{structured}");
        let (b_status, binary) = send(&app, &pair[1]).await;
        assert_eq!(pair[1]["mode"], "binary");
        assert_eq!(b_status, 200, "event {i} in binary mode: {binary}");
        assert_eq!(structured["event_id_origin"], "cloudevent");
        assert_eq!(binary["event_id"], structured["event_id"], "event {i}");
        ids.push(
            structured["event_id"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
        );
    }
    let (status, batch) = send(&app, &requests[8]).await;
    assert_eq!(requests[8]["mode"], "batch");
    assert_eq!(status, 200, "{batch}");
    let items = batch["items"].as_array().cloned().unwrap_or_default();
    assert_eq!(items.len(), 4, "{batch}");
    for (i, item) in items.iter().enumerate() {
        assert_eq!(item["index"], i);
        assert_eq!(item["status"], 200, "{item}");
        assert_eq!(item["result"]["event_id"], ids[i]);
    }

    // CloudEvents' own operation takes the same three modes: each event
    // again, the same event (a duplicate).
    for (i, request) in requests[..8].iter().enumerate() {
        let (status, again) = send_to(&app, "/v1/cloudevents", request).await;
        assert_eq!(status, 200, "request {i} on /v1/cloudevents: {again}");
        assert_eq!(again["event_id"], ids[i / 2], "request {i}");
    }
    let (status, again) = send_to(&app, "/v1/cloudevents", &requests[8]).await;
    assert_eq!(status, 200, "{again}");
    assert_eq!(again["items"].as_array().map(Vec::len), Some(4), "{again}");
    // This API's own event JSON is not a CloudEvent: it goes to /v1/events.
    let (status, problem) = json(
        app.http
            .post(app.url("/v1/cloudevents"))
            .json(&json!({"event_type": "a.b", "source": "s", "payload": {}}))
            .send()
            .await
            .unwrap_or_else(|e| panic!("{e}")),
    )
    .await;
    assert_eq!(status, 415, "{problem}");
    assert!(
        problem["detail"]
            .as_str()
            .is_some_and(|d| d.contains("POST /v1/events")),
        "{problem}"
    );

    // The mapping, as documented.
    assert_eq!(ids[1], "ce:crm:evt-2");
    assert!(ids[0].starts_with("ce-sha256:") && ids[3].starts_with("ce-sha256:"));
    assert_ne!(ids[0], ids[3], "two sources, one id: two events");
    let (count,): (i64,) = sqlx::query_as("SELECT count(*) FROM events")
        .fetch_one(&pool)
        .await
        .unwrap_or((0,));
    assert_eq!(count, 4, "one event per (source, id), whatever the mode");

    let get = |id: String| {
        let app = &app;
        async move { json(app.get(&format!("/v1/events/{id}")).await).await }
    };
    let (status, first) = get(ids[0].clone()).await;
    assert_eq!(status, 200, "{first}");
    assert_eq!(first["event_type"], "com.example.order.created");
    assert_eq!(first["source"], "https://shop.example.com/orders");
    assert_eq!(first["occurred_at"], "2026-03-01T09:00:00Z");
    assert_eq!(
        first["payload"],
        json!({"order": 7, "lines": [{"sku": "x", "qty": 1.5}]})
    );
    assert_eq!(first["event_id_origin"], "cloudevent");
    assert_eq!(first["conflicts"], json!([]));
    let (_, second) = get(ids[1].clone()).await;
    assert_eq!(second["payload"], json!({"n": [1, 2]}));
    assert!(
        second["occurred_at"].is_string(),
        "the SDK sets time: {second}"
    );
    let (_, text) = get(ids[2].clone()).await;
    assert_eq!(text["payload"], "hello, world");
    assert_eq!(text["event_type"], "note.added");
    let (_, other) = get(ids[3].clone()).await;
    assert_eq!(other["occurred_at"], "2026-03-01T09:00:00Z");
    assert_eq!(other["source"], "https://erp.example.com");
}

/// The same event ID with other content is a 409 naming the event and when
/// it was first seen, in every mode; an identical re-delivery stays a
/// duplicate; the conflict is counted.
#[sqlx::test(migrations = "./migrations")]
async fn a_conflicting_redelivery_is_a_409(pool: PgPool) {
    let app = TestApp::without_temporal(pool).await;
    let event =
        json!({"event_id": "evt_c", "event_type": "a.b", "source": "s", "payload": {"n": 1}});
    let (status, first) = json(app.post("/v1/events", &event).await).await;
    assert_eq!(status, 200, "{first}");
    let (status, again) = json(app.post("/v1/events", &event).await).await;
    assert_eq!((status, again["event_id"].clone()), (200, json!("evt_c")));

    let mut changed = event.clone();
    changed["payload"] = json!({"n": 2});
    changed["occurred_at"] = json!("2026-03-01T09:00:00Z");
    let (status, problem) = json(app.post("/v1/events", &changed).await).await;
    assert_eq!(status, 409, "{problem}");
    assert_eq!(
        problem["type"],
        "https://activity-control-plane.dev/problems/event-conflict"
    );
    let detail = problem["detail"].as_str().unwrap_or_default();
    let (_, stored) = json(app.get("/v1/events/evt_c").await).await;
    let first_seen = stored["received_at"].as_str().unwrap_or_default();
    let first_seen = chrono::DateTime::parse_from_rfc3339(first_seen)
        .map(|t| {
            t.with_timezone(&chrono::Utc)
                .to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
        })
        .unwrap_or_default();
    assert!(
        detail.contains("`evt_c`") && detail.contains(&first_seen),
        "{detail} / {first_seen}"
    );
    assert_eq!(fields(&problem), ["occurred_at", "payload"]);
    assert_eq!(
        stored["payload"],
        json!({"n": 1}),
        "the first content stands"
    );

    // CloudEvents: one (source, id), other data.
    let ce = |data: Value| {
        json!({"specversion": "1.0", "id": "9", "source": "crm", "type": "a.b", "data": data})
            .to_string()
    };
    let (status, _) = post_raw(
        &app,
        "application/cloudevents+json",
        &[],
        &ce(json!({"v": 1})),
    )
    .await;
    assert_eq!(status, 200);
    let headers = [
        ("ce-specversion", "1.0"),
        ("ce-id", "9"),
        ("ce-source", "crm"),
        ("ce-type", "a.c"),
    ];
    let (status, problem) = post_raw(&app, "application/json", &headers, r#"{"v": 1}"#).await;
    assert_eq!(status, 409, "{problem}");
    assert_eq!(fields(&problem), ["event_type"]);
    let batch = format!("[{}, {}]", ce(json!({"v": 1})), ce(json!({"v": 2})));
    let (status, answer) = post_raw(&app, "application/cloudevents-batch+json", &[], &batch).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["items"][0]["status"], 200);
    assert_eq!(answer["items"][1]["status"], 409);
    assert_eq!(fields(&answer["items"][1]["problem"]), ["payload"]);

    let metrics = app.get("/metrics").await.text().await.unwrap_or_default();
    let conflicts: f64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("acp_event_conflicts_total "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0.0);
    assert!(conflicts >= 3.0, "{conflicts}");
}

/// Bad CloudEvents are problems naming the attribute as the mode spells it.
#[sqlx::test(migrations = "./migrations")]
async fn bad_cloudevents_name_their_fields(pool: PgPool) {
    let app = TestApp::without_temporal(pool).await;
    let (status, problem) = post_raw(
        &app,
        "application/cloudevents+json",
        &[],
        r#"{"specversion": "1.0", "id": "1", "source": "crm", "time": "soon"}"#,
    )
    .await;
    assert_eq!(
        (status, fields(&problem)),
        (422, vec!["type".to_owned(), "time".to_owned()]),
        "{problem}"
    );
    let (status, problem) = post_raw(
        &app,
        "text/plain",
        &[
            ("ce-specversion", "1.0"),
            ("ce-id", "1"),
            ("ce-type", "a.b"),
        ],
        "hi",
    )
    .await;
    assert_eq!(
        (status, fields(&problem)),
        (422, vec!["ce-source".to_owned()]),
        "{problem}"
    );
    let (status, problem) = post_raw(
        &app,
        "application/cloudevents-batch+json",
        &[],
        r#"{"not": "a list"}"#,
    )
    .await;
    assert_eq!(
        (status, fields(&problem)),
        (400, vec!["body".to_owned()]),
        "{problem}"
    );
    let (status, problem) = post_raw(&app, "application/cloudevents+json", &[], "{").await;
    assert_eq!(status, 400, "{problem}");
    let batch = r#"[{"specversion": "1.0", "id": "1", "source": "crm", "type": "a.b"}, {"specversion": "1.0", "id": "2", "source": "crm", "type": "a b"}]"#;
    let (status, answer) = post_raw(&app, "application/cloudevents-batch+json", &[], batch).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["items"][0]["status"], 200);
    assert_eq!(answer["items"][1]["status"], 422);
    assert_eq!(fields(&answer["items"][1]["problem"]), ["[1].type"]);
    let (status, problem) = post_raw(&app, "text/plain", &[], "hello").await;
    assert_eq!(
        (status, fields(&problem)),
        (415, vec!["Content-Type".to_owned()]),
        "{problem}"
    );
}
