//! Runs queued for a concurrency slot: visible and cancellable while they
//! wait, and drained after a worker restart.

use super::*;

/// A queued run is visible (status, `flow_state`, `/metrics`) and can be
/// cancelled while it waits; the gauge then reads 0.
#[sqlx::test(migrations = "./migrations")]
async fn a_queued_run_is_visible_and_can_be_cancelled(pool: PgPool) {
    let app = app(pool).await;
    let _worker = app.worker(true, Default::default());
    let _dispatcher = app.dispatcher();
    let sink = HoldingSink::start(Duration::from_secs(30)).await;
    let created = app
        .create(&event_activity(
            &sink.url,
            Some(json!({"concurrency": {"limit": 1, "key": "/payload/customer"}})),
        ))
        .await;
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    for n in 1..=2 {
        let (status, body) = json(
            app.post(
                "/v1/events",
                &json!({"event_id": format!("q-{n}"), "event_type": "order.placed",
                        "source": "shop", "payload": {"customer": "a"}}),
            )
            .await,
        )
        .await;
        assert!((200..300).contains(&status), "{status}: {body}");
    }
    let queued = eventually(Duration::from_secs(180), || async {
        let runs = app.runs_of(&id).await;
        // Queued in its key's queue (a run is `queued` from its first
        // record, and joins the queue a moment later).
        let queued = runs
            .iter()
            .find(|r| r["status"] == "queued" && r["flow"].is_object())
            .cloned();
        let running = runs.iter().any(|r| r["status"] == "running");
        queued.filter(|_| running)
    })
    .await;
    assert_eq!(queued["flow"]["key"], "a", "{queued}");
    let (_, activity) = json(app.get(&format!("/v1/activities/{id}")).await).await;
    assert_eq!(
        activity["flow_state"],
        json!({"in_use": 1, "queued": 1, "keys": [{"key": "a", "in_use": 1, "queued": 1}]}),
        "{activity}"
    );
    let metric = |name: &str, text: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("{name}{{")) && l.contains(&id))
            .and_then(|l| l.rsplit(' ').next())
            .map(str::to_owned)
    };
    let gauge = |text: &str| metric("acp_flow_queued_runs", text);
    // How long the queued run has waited so far, in seconds.
    let waited = |text: &str| {
        metric("acp_flow_oldest_wait_seconds", text)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(-1.0)
    };
    let metrics = app.metrics_text().await;
    assert_eq!(gauge(&metrics).as_deref(), Some("1"), "{metrics}");
    assert!(waited(&metrics) > 0.0, "{metrics}");

    let run_id = queued["run_id"].as_str().unwrap_or_default();
    let (status, body) = json(
        app.post(
            &format!("/v1/runs/{run_id}/cancel"),
            &json!({"reason": "not needed"}),
        )
        .await,
    )
    .await;
    assert!((200..300).contains(&status), "{status}: {body}");
    let done = eventually(Duration::from_secs(120), || async {
        let (_, run) = json(app.get(&format!("/v1/runs/{run_id}")).await).await;
        (!matches!(run["status"].as_str(), Some("queued" | "running"))).then_some(run)
    })
    .await;
    assert_eq!(done["status"], "cancelled", "{done}");
    eventually(Duration::from_secs(120), || async {
        (!sink.overlap().events.is_empty()).then_some(())
    })
    .await;
    // Either event may be the queued one: the dispatcher starts both at
    // once, and whichever asks first takes the slot.
    let queued_event = queued["event_id"].as_str().unwrap_or_default().to_owned();
    assert!(!queued_event.is_empty(), "{queued}");
    let called = sink.overlap().events;
    assert!(
        !called.iter().any(|e| e.ends_with(&queued_event)),
        "the cancelled run ({queued_event}) never called: {called:?}"
    );
    let metrics = app.metrics_text().await;
    assert_eq!(gauge(&metrics).as_deref(), Some("0"), "{metrics}");
    assert_eq!(waited(&metrics), 0.0, "{metrics}");
}

/// A worker stopped while runs hold the key's slots and others queue: the
/// slots stay held (their workflows are open), a new worker finishes the
/// runs, the queue drains, and by the sink's own log no more than `limit`
/// calls ever overlapped; every event ran exactly once.
#[sqlx::test(migrations = "./migrations")]
async fn a_worker_stopped_while_runs_hold_slots_drains_the_queue_after_restart(pool: PgPool) {
    let app = app(pool).await;
    let worker = app.worker(true, Default::default());
    let _dispatcher = app.dispatcher();
    let sink = HoldingSink::start(Duration::from_secs(3)).await;
    let created = app
        .create(&event_activity(
            &sink.url,
            Some(json!({"concurrency": {"limit": 2, "key": "/payload/customer"}})),
        ))
        .await;
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    post_burst(&app, 8, 1).await;
    // Two runs hold the key's slots (their calls are at the sink), others queue.
    eventually(Duration::from_secs(180), || async {
        let (_, activity) = json(app.get(&format!("/v1/activities/{id}")).await).await;
        let state = &activity["flow_state"];
        (state["in_use"] == 2
            && state["queued"].as_i64().unwrap_or_default() > 0
            && !sink.overlap().events.is_empty())
        .then_some(())
    })
    .await;
    worker.stop().await;
    // Without a worker the queue cannot drain: runs are still waiting or
    // holding their slots, never more than the limit.
    let (_, activity) = json(app.get(&format!("/v1/activities/{id}")).await).await;
    let in_use = activity["flow_state"]["in_use"]
        .as_i64()
        .unwrap_or_default();
    assert!(in_use <= 2, "{activity}");
    let runs = app.runs_of(&id).await;
    assert!(
        runs.iter()
            .any(|r| matches!(r["status"].as_str(), Some("queued" | "running"))),
        "{runs:?}"
    );

    let _worker = app.worker(true, Default::default());
    let runs = ended_runs(&app, &id, 8).await;
    assert!(
        runs.iter().all(|r| r["status"] == "succeeded"),
        "{:?}",
        runs.iter().map(|r| &r["status"]).collect::<Vec<_>>()
    );
    let overlap = sink.overlap();
    println!(
        "most calls at once across the restart: {:?}",
        overlap.max_per_key
    );
    assert!(
        overlap.max_per_key.values().all(|&n| n <= 2),
        "{:?}",
        overlap.max_per_key
    );
    let mut calls: HashMap<&str, usize> = HashMap::new();
    for event in &overlap.events {
        *calls.entry(event.as_str()).or_default() += 1;
    }
    assert_eq!(calls.len(), 8, "{calls:?}");
    assert!(calls.values().all(|&n| n == 1), "{calls:?}");
    let (_, activity) = json(app.get(&format!("/v1/activities/{id}")).await).await;
    assert_eq!(activity["flow_state"]["in_use"], 0, "{activity}");
    assert_eq!(activity["flow_state"]["queued"], 0, "{activity}");
}
