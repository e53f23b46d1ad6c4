//! Every bad field of an activity body is a 422 problem naming it.

use super::*;

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
        // Objects are objects: serde would read a struct from an array.
        (with("/flow", Some(json!([null, null]))), 400, "flow"),
        (with("/alerts", Some(json!([null]))), 400, "alerts"),
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
