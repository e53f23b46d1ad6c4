//! One event fans out to every enabled subscriber; bad events name their
//! field; extreme numbers in a payload round-trip.

use super::*;

#[sqlx::test(migrations = "./migrations")]
async fn one_event_fans_out_to_every_enabled_subscriber(pool: PgPool) {
    let app = app(pool.clone()).await;
    let worker = app.worker(false, Default::default());
    let mut subscribed = HashSet::new();
    for types in [
        &["user.created"][..],
        &["user.created", "user.deleted"],
        &["user.created"],
    ] {
        subscribed.insert(subscriber(&app, types, true).await);
    }
    let disabled = subscriber(&app, &["user.created"], false).await;
    let unrelated = subscriber(&app, &["user.deleted"], true).await;

    let (status, body) = deliver(&app, &json!({"event_id": "evt_fan", "event_type": "user.created", "source": "idp", "payload": {}}), None).await;
    assert_eq!(status, 200);
    let dispatches = body["dispatches"].as_array().cloned().unwrap_or_default();
    let targets: HashSet<String> = dispatches
        .iter()
        .map(|d| d["activity_id"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(targets, subscribed);
    assert!(!targets.contains(&disabled) && !targets.contains(&unrelated));
    for d in &dispatches {
        assert_eq!(d["outcome"], "started");
        assert_eq!(
            d["workflow_id"],
            format!(
                "activity-{}:evt_fan",
                d["activity_id"].as_str().unwrap_or_default()
            )
        );
        wait_run_done(
            &app,
            d["run_id"].as_str().unwrap_or_default(),
            Duration::from_secs(60),
        )
        .await;
    }
    assert!(app.runs_of(&disabled).await.is_empty());

    // An event nobody subscribes to is still recorded.
    let (status, lonely) = deliver(
        &app,
        &json!({"event_type": "nobody.cares", "source": "x", "payload": {}}),
        None,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(lonely["dispatches"], json!([]));
    let (_, list) = json(app.get("/v1/events?event_type=nobody.cares").await).await;
    assert_eq!(list["items"].as_array().map(Vec::len), Some(1));
    let (_, all) = json(app.get("/v1/events?source=idp").await).await;
    assert_eq!(all["items"][0]["event_id"], "evt_fan");
    worker.stop().await;
}

#[sqlx::test(migrations = "./migrations")]
async fn bad_events_name_their_field(pool: PgPool) {
    let app = TestApp::without_temporal(pool).await;
    let valid = json!({"event_type": "a.b", "source": "s", "payload": {}});
    let with = |key: &str, value: Value| {
        let mut body = valid.clone();
        body[key] = value;
        body
    };
    let without = |key: &str| {
        let mut body = valid.clone();
        body.as_object_mut().map(|o| o.remove(key));
        body
    };
    let cases: Vec<(Value, Option<&str>, u16, &str)> = vec![
        (without("event_type"), None, 400, "event_type"),
        (
            with("event_type", json!("has space")),
            None,
            422,
            "event_type",
        ),
        (without("source"), None, 400, "source"),
        (with("source", json!("")), None, 422, "source"),
        (with("payload", json!([1, 2])), None, 422, "payload"),
        (with("payload", json!("text")), None, 422, "payload"),
        (
            with("payload", json!({"blob": "x".repeat(300 * 1024)})),
            None,
            422,
            "payload",
        ),
        (
            with("occurred_at", json!("last tuesday")),
            None,
            422,
            "occurred_at",
        ),
        (
            with("event_id", json!("x".repeat(201))),
            None,
            422,
            "event_id",
        ),
        (
            with("event_id", json!("evt with space")),
            None,
            422,
            "event_id",
        ),
        (with("event_id", json!("a/b")), None, 422, "event_id"),
        (with("event_id", json!(42)), None, 400, "event_id"),
        (with("extra", json!(1)), None, 400, "extra"),
        (valid.clone(), Some("bad key"), 422, "Idempotency-Key"),
    ];
    for (body, key, status, field) in cases {
        let (got, problem) = deliver(&app, &body, key).await;
        assert_eq!(got, status, "{field}: {problem}");
        let fields: Vec<&str> = problem["errors"]
            .as_array()
            .map(|e| e.iter().filter_map(|e| e["field"].as_str()).collect())
            .unwrap_or_default();
        assert!(fields.contains(&field), "expected {field}: {problem}");
    }
    for (path, status, field) in [
        ("/v1/events?limit=0", 400, "limit"),
        ("/v1/events?cursor=zzz", 400, "cursor"),
        ("/v1/events?received_after=soon", 400, "received_after"),
        ("/v1/events/has%20space", 400, "event_id"),
    ] {
        let (got, problem) = json(app.get(path).await).await;
        assert_eq!(got, status, "{path}: {problem}");
        assert_eq!(problem["errors"][0]["field"], field);
    }
    assert_eq!(app.get("/v1/events/evt_missing").await.status(), 404);
}

/// Numbers at the edges of what JSON parsers hold come back as they went in:
/// PostgreSQL keeps a jsonb number exactly, and its decimal rendering of the
/// largest doubles must still parse back, or the request answers 500.
#[sqlx::test(migrations = "./migrations")]
async fn extreme_numbers_in_a_payload_round_trip(pool: PgPool) {
    let app = TestApp::without_temporal(pool).await;
    let payload = json!({
        "max": f64::MAX,
        "min": f64::MIN,
        "tiny": 5e-324,
        "beyond_u64": 1.2345678901234568e22,
        "nested": [{"": -1.7976931348623157e308}],
        "int": i64::MIN,
        "uint": u64::MAX
    });
    // The first of its type takes the general path, the second the one
    // statement that writes events together (their rows as JSON there).
    for event_id in ["extremes", "extremes-again"] {
        let body = json!({"event_id": event_id, "event_type": "edge.numbers", "source": "tests",
            "occurred_at": "2026-03-01T09:00:00.123456789Z", "payload": payload});
        let (status, ingested) = deliver(&app, &body, None).await;
        assert_eq!(status, 200, "{ingested}");
        let (status, event) = json(app.get(&format!("/v1/events/{event_id}")).await).await;
        assert_eq!(status, 200, "{event}");
        assert_eq!(event["payload"], payload);
        // PostgreSQL keeps microseconds.
        assert_eq!(
            event["occurred_at"], "2026-03-01T09:00:00.123456Z",
            "{event}"
        );
    }
    let (status, page) = json(app.get("/v1/events?event_type=edge.numbers").await).await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(page["items"][0]["payload"], payload);
    assert_eq!(page["items"][1]["payload"], payload);
}
