//! `late_start` opens when the worker stops or Temporal is down, and
//! resolves when runs start again; `acp api` notices a stopped worker.

use super::*;

/// Stops the worker between two runs: right after one ended, long before
/// the next fire of a two-second schedule. Stopped in the middle of a run,
/// the run would stay `running` until the worker returns, and Temporal's
/// fires meanwhile would be overlap-skips behind a running run, not misses.
async fn stop_between_runs(app: &TestApp, id: &str, worker: acp::worker::WorkerHandle) {
    eventually(Duration::from_secs(30), || async {
        let runs = app.runs_of(id).await;
        let quiet = runs
            .iter()
            .all(|r| !matches!(r["status"].as_str(), Some("running" | "queued")));
        let just_ended = runs
            .iter()
            .filter_map(|r| r["finished_at"].as_str())
            .filter_map(|t| DateTime::parse_from_rfc3339(t).ok())
            .max()
            .is_some_and(|t| {
                Utc::now() - t.with_timezone(&Utc) < chrono::Duration::milliseconds(600)
            });
        (quiet && just_ended).then_some(())
    })
    .await;
    worker.stop().await;
}

#[sqlx::test(migrations = "./migrations")]
async fn late_start_opens_when_the_worker_stops_and_resolves_when_it_returns(pool: PgPool) {
    let _serial = SERIAL.lock().await;
    let server = shared_temporal();
    let namespace = new_namespace(&server.address()).await;
    let app = TestApp::spawn(pool, &server.address(), &namespace).await;
    let worker = app.worker(true, Default::default());
    let mut body = every_two_seconds("late-start");
    body["alerts"]["missed_fires"] = json!(true);
    let created = app.create(&body).await;
    assert_eq!(
        created["alerts"],
        json!({"start_within": "PT5S", "missed_fires": true})
    );
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    // Alert notifications go to a subscriber, in order per alert.
    let sink = WebhookSink::start(200, Duration::ZERO).await;
    let (status, subscription) = json(
        app.post(
            "/v1/subscriptions",
            &json!({"url": sink.url, "types": ["alert.opened", "alert.resolved"]}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 201, "{subscription}");
    let dispatcher = app.state.services.notifications.clone();
    let (stop_dispatcher, dispatcher_stopped) = tokio::sync::oneshot::channel::<()>();
    let dispatching = tokio::spawn(async move {
        dispatcher
            .run_dispatcher(Duration::from_millis(300), async {
                let _ = dispatcher_stopped.await;
            })
            .await
    });
    let evaluating = Evaluating::start(&app);
    first_success(&app, &id).await;

    // Healthy for a while: four evaluations open nothing.
    app.passes_of("alert_evaluation", 4).await;
    assert!(alerts_of(&app, &id, None).await.is_empty());
    let gauge =
        format!("acp_alerts_open{{activity=\"{id}\",kind=\"late_start\",project=\"default\"}}");
    let opened_counter = "acp_alerts_opened_total{kind=\"late_start\"}";
    let resolved_counter = "acp_alerts_resolved_total{kind=\"late_start\"}";
    let (opened_before, resolved_before) = (
        metric(&app, opened_counter).await,
        metric(&app, resolved_counter).await,
    );

    stop_between_runs(&app, &id, worker).await;
    let stopped = Utc::now();
    let last_run = app
        .runs_of(&id)
        .await
        .iter()
        .filter(|r| r["status"] != "skipped")
        .map(|r| at(&r["scheduled_for"]))
        .max();
    let alert = open_alert_of_kind(&app, &id, "late_start", Duration::from_secs(30)).await;
    let opened_at = at(&alert["opened_at"]);
    let due = at(&alert["detail"]["scheduled_for"]);
    assert!(
        last_run.is_some_and(|t| due > t),
        "{alert} after {last_run:?}"
    );
    // Within one evaluation period after the 5 s (plus a moment for the pass).
    let late = (opened_at - due).to_std().unwrap_or_default();
    assert!(
        late >= Duration::from_secs(5)
            && late <= Duration::from_secs(5) + PERIOD + Duration::from_millis(700),
        "opened {late:?} after the nominal time it is about: {alert}"
    );
    eprintln!(
        "late_start opened {late:?} after its nominal time, {:?} after the worker stopped",
        (opened_at - stopped).to_std().unwrap_or_default()
    );
    assert!(opened_at - stopped < chrono::Duration::seconds(10));
    // The fires Temporal dropped while nobody ran them are missed.
    let missed = open_alert_of_kind(&app, &id, "missed_fire", Duration::from_secs(30)).await;
    assert!(missed["detail"]["missed"].as_u64() >= Some(1), "{missed}");
    // The pass that opened them sets the gauge just after it commits them.
    gauge_reads(&app, &gauge, 1.0).await;
    assert!(metric(&app, opened_counter).await >= opened_before + 1.0);
    let (_, activity) = json(app.get(&format!("/v1/activities/{id}")).await).await;
    let open_ids: Vec<&Value> = activity["open_alerts"]
        .as_array()
        .map(|a| a.iter().map(|a| &a["id"]).collect())
        .unwrap_or_default();
    assert!(open_ids.contains(&&alert["id"]), "{activity}");

    // Still one incident however many evaluations see it.
    app.passes_of("alert_evaluation", 4).await;
    assert_eq!(alerts_of(&app, &id, None).await.len(), 2);

    let worker = app.worker(true, Default::default());
    let back = Utc::now();
    let alert_id = alert["id"].as_str().unwrap_or_default();
    let done = resolved(&app, alert_id, Duration::from_secs(60)).await;
    eprintln!(
        "late_start resolved {:?} after the worker came back",
        (at(&done["resolved_at"]) - back)
            .to_std()
            .unwrap_or_default()
    );
    assert!(at(&done["resolved_at"]) > opened_at);
    resolved(
        &app,
        missed["id"].as_str().unwrap_or_default(),
        Duration::from_secs(60),
    )
    .await;
    let all = alerts_of(&app, &id, None).await;
    assert_eq!(
        all.iter().filter(|a| a["kind"] == "late_start").count(),
        1,
        "exactly one alert for the incident: {all:?}"
    );
    assert_eq!(all.len(), 2, "{all:?}");
    assert!(alerts_of(&app, &id, Some("open")).await.is_empty());
    gauge_reads(&app, &gauge, 0.0).await;
    assert!(metric(&app, resolved_counter).await >= resolved_before + 1.0);
    let (_, activity) = json(app.get(&format!("/v1/activities/{id}")).await).await;
    assert_eq!(activity["open_alerts"], json!([]));

    // The subscriber heard of each alert opening, then resolving, in order.
    let subjects: Vec<String> = [&alert, &missed]
        .iter()
        .map(|a| a["id"].as_str().unwrap_or_default().to_owned())
        .collect();
    let heard = eventually(Duration::from_secs(60), || async {
        let events: Vec<(String, String)> = sink
            .bodies()
            .iter()
            .filter_map(|(_, b)| serde_json::from_slice::<Value>(b).ok())
            .map(|e| {
                (
                    e["subject"].as_str().unwrap_or_default().to_owned(),
                    e["type"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect();
        (events.len() >= 4).then_some(events)
    })
    .await;
    for subject in &subjects {
        let of_it: Vec<&str> = heard
            .iter()
            .filter(|(s, _)| s == subject)
            .map(|(_, t)| t.as_str())
            .collect();
        assert_eq!(of_it, ["alert.opened", "alert.resolved"], "{heard:?}");
    }

    evaluating.stop().await;
    let _ = stop_dispatcher.send(());
    let _ = dispatching.await;
    let _ = app
        .patch(&format!("/v1/activities/{id}"), &json!({"enabled": false}))
        .await;
    worker.stop().await;
}

/// `acp api` alone (no worker in it) runs the evaluator: a deployment of
/// api + worker processes notices its workers stopping.
#[sqlx::test(migrations = "./migrations")]
async fn acp_api_notices_a_stopped_worker(pool: PgPool) {
    let _serial = SERIAL.lock().await;
    let server = shared_temporal();
    let namespace = new_namespace(&server.address()).await;
    // In-process: the worker (and an HTTP client to the same database).
    let app = TestApp::spawn(pool.clone(), &server.address(), &namespace).await;
    let api = ServeProcess::start_command(
        "api",
        &pool,
        &server.address(),
        &namespace,
        &[("ACP_TASK_QUEUE", TASK_QUEUE), ("ACP_ALERT_INTERVAL", "1")],
    )
    .await;
    let worker = app.worker(false, Default::default());
    let created = app.create(&every_two_seconds("api-process")).await;
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    first_success(&app, &id).await;
    stop_between_runs(&app, &id, worker).await;
    let alert = open_alert_of_kind(&app, &id, "late_start", Duration::from_secs(30)).await;
    // The figure is served by the process that evaluated. It sets the gauge
    // after the alert's row commits, which the test may read first.
    let gauge =
        format!("acp_alerts_open{{activity=\"{id}\",kind=\"late_start\",project=\"default\"}} 1");
    let served = tokio::time::timeout(Duration::from_secs(15), async {
        loop {
            let text = match reqwest::get(format!("{}/metrics", api.base)).await {
                Ok(response) => response.text().await.unwrap_or_default(),
                Err(_) => String::new(),
            };
            if text.lines().any(|l| l == gauge) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
    .await;
    assert!(served.is_ok(), "{alert}\n{}", api.log());
    let _ = app
        .patch(&format!("/v1/activities/{id}"), &json!({"enabled": false}))
        .await;
}

#[sqlx::test(migrations = "./migrations")]
async fn late_start_opens_while_temporal_is_down(pool: PgPool) {
    let _serial = SERIAL.lock().await;
    let mut server = TemporalServer::start();
    let namespace = new_namespace(&server.address()).await;
    let app = TestApp::spawn(pool, &server.address(), &namespace).await;
    let worker = app.worker(false, Default::default());
    let created = app.create(&every_two_seconds("temporal-down")).await;
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    let evaluating = Evaluating::start(&app);
    first_success(&app, &id).await;
    app.passes_of("alert_evaluation", 3).await;
    assert!(alerts_of(&app, &id, None).await.is_empty());

    server.stop();
    let stopped = Utc::now();
    let alert = open_alert_of_kind(&app, &id, "late_start", Duration::from_secs(30)).await;
    assert!(
        at(&alert["opened_at"]) - stopped < chrono::Duration::seconds(10),
        "{alert}"
    );
    // Temporal was down the whole time: the evaluator decided from PostgreSQL.
    let (status, ready) = json(app.get("/readyz").await).await;
    assert_eq!(status, 503, "{ready}");

    server.restart();
    let alert_id = alert["id"].as_str().unwrap_or_default();
    resolved(&app, alert_id, Duration::from_secs(120)).await;
    assert_eq!(alerts_of(&app, &id, None).await.len(), 1);

    evaluating.stop().await;
    let _ = app
        .patch(&format!("/v1/activities/{id}"), &json!({"enabled": false}))
        .await;
    worker.stop().await;
}
