//! A blocking webhook is `stuck`, three failures are a `failure_streak`;
//! bad expectations are 422 problems naming the field.

use super::*;

#[sqlx::test(migrations = "./migrations")]
async fn a_blocking_webhook_is_stuck_and_three_failures_are_a_streak(pool: PgPool) {
    let _serial = SERIAL.lock().await;
    let server = shared_temporal();
    let namespace = new_namespace(&server.address()).await;
    let app = TestApp::spawn(pool, &server.address(), &namespace).await;
    let worker = app.worker(true, Default::default());
    let evaluating = Evaluating::start(&app);

    // A webhook that answers after 6 s, against max_duration 2 s.
    let slow = WebhookSink::start(200, Duration::from_secs(6)).await;
    let created = app
        .create(&json!({
            "name": "slow",
            "trigger": {"type": "event", "event_types": ["never.sent"]},
            "tasks": [{"task_type": "webhook", "config": {"url": slow.url, "timeout": "PT20S"}}],
            "alerts": {"max_duration": "PT2S"}
        }))
        .await;
    let slow_id = created["id"].as_str().unwrap_or_default().to_owned();
    let (status, started) = trigger(&app, &slow_id, Some("slow-1")).await;
    assert_eq!(status, 202, "{started}");
    let stuck = open_alert_of_kind(&app, &slow_id, "stuck", Duration::from_secs(20)).await;
    assert_eq!(stuck["detail"]["runs"][0], started["run_id"], "{stuck}");
    // The run ends: the alert resolves.
    resolved(
        &app,
        stuck["id"].as_str().unwrap_or_default(),
        Duration::from_secs(30),
    )
    .await;

    // A webhook refused with 400 (not retried): every run fails.
    let refusing = WebhookSink::start(400, Duration::ZERO).await;
    let created = app
        .create(&json!({
            "name": "failing",
            "trigger": {"type": "event", "event_types": ["never.sent"]},
            "tasks": [{"task_type": "webhook", "config": {"url": refusing.url}}],
            "alerts": {"failure_streak": 3}
        }))
        .await;
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    for n in 1..=3 {
        let (status, started) = trigger(&app, &id, Some(&format!("fail-{n}"))).await;
        assert_eq!(status, 202, "{started}");
        let run = wait_run_done(
            &app,
            started["run_id"].as_str().unwrap_or_default(),
            Duration::from_secs(30),
        )
        .await;
        assert_eq!(run["status"], "failed", "{run}");
        if n < 3 {
            // Evaluations after two failures open nothing.
            app.passes_of("alert_evaluation", 2).await;
            assert!(
                alerts_of(&app, &id, None).await.is_empty(),
                "after {n} failures"
            );
        }
    }
    let streak = open_alert_of_kind(&app, &id, "failure_streak", Duration::from_secs(10)).await;
    assert_eq!(streak["detail"]["runs"].as_array().map(Vec::len), Some(3));

    // A success ends the streak.
    let (status, _) = json(
        app.patch(
            &format!("/v1/activities/{id}"),
            &json!({"tasks": [{"task_type": "noop"}]}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 200);
    let (_, started) = trigger(&app, &id, Some("ok-1")).await;
    wait_run_done(
        &app,
        started["run_id"].as_str().unwrap_or_default(),
        Duration::from_secs(30),
    )
    .await;
    resolved(
        &app,
        streak["id"].as_str().unwrap_or_default(),
        Duration::from_secs(10),
    )
    .await;
    assert_eq!(alerts_of(&app, &id, None).await.len(), 1);

    // Filters: kind and state.
    let (status, page) = json(app.get("/v1/alerts?kind=stuck&state=resolved").await).await;
    assert_eq!(status, 200);
    assert_eq!(page["items"].as_array().map(Vec::len), Some(1), "{page}");
    let (status, problem) = json(app.get("/v1/alerts?kind=bored").await).await;
    assert_eq!(status, 400, "{problem}");

    evaluating.stop().await;
    worker.stop().await;
}

#[sqlx::test(migrations = "./migrations")]
async fn bad_expectations_are_422_naming_the_field(pool: PgPool) {
    let app = TestApp::without_temporal(pool).await;
    let response = app
        .post(
            "/v1/activities",
            &json!({
                "name": "x",
                "trigger": {"type": "event", "event_types": ["a"]},
                "tasks": [{"task_type": "noop"}],
                "alerts": {"start_within": "PT0S", "failure_streak": 0, "missed_fires": true},
                "notify": [{"url": "not a url", "types": ["run.bored"]}]
            }),
        )
        .await;
    let (status, problem) = json(response).await;
    assert_eq!(status, 422, "{problem}");
    let fields: Vec<&str> = problem["errors"]
        .as_array()
        .map(|e| e.iter().filter_map(|e| e["field"].as_str()).collect())
        .unwrap_or_default();
    for field in [
        "alerts.start_within",
        "alerts.failure_streak",
        "alerts.missed_fires",
        "notify[0].url",
        "notify[0].types[0]",
    ] {
        assert!(fields.contains(&field), "{field} missing from {problem}");
    }
}
