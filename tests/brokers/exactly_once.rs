//! 1000 distinct events with re-deliveries and poison on each broker: one
//! run per event and subscribed activity, poison listed, nothing left
//! unacknowledged, a conflicting re-delivery recorded and not run.

use super::*;

/// 1000 distinct events (some in binary mode, some in this API's JSON),
/// 10 % of them published twice, five poison messages: exactly one run per
/// event and subscribed activity, the poison listed with its reason,
/// nothing left unacknowledged; then a conflicting re-delivery is recorded
/// on its event and runs nothing.
async fn a_thousand_messages(pool: PgPool, broker: Broker) {
    // The RabbitMQ source's password, ACP_TEST_RABBIT_SECRET, is in the
    // test process's environment from the start (.cargo/config.toml).
    let server = shared_temporal();
    let namespace = new_namespace(&server.address()).await;
    let app = TestApp::spawn(pool.clone(), &server.address(), &namespace).await;
    let _worker = app.worker(false, Default::default());
    let all = subscriber(&app.base, &app.http, &["order.created", "order.paid"]).await;
    let paid = subscriber(&app.base, &app.http, &["order.paid"]).await;
    let source = create_source(&app.base, &app.http, &broker.source()).await;

    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let stopped = move || {
        let mut rx = stop_rx.clone();
        async move {
            let _ = rx.wait_for(|s| *s).await;
        }
    };
    let consuming = tokio::spawn(acp::brokers::run(consumers(&app), stopped()));
    // As in `acp serve` and a consuming `acp worker`: the dispatcher starts
    // the runs of what the consumers committed.
    let dispatcher = app.state.services.events.clone();
    tokio::spawn(dispatcher.run_dispatcher(Duration::from_secs(1), stopped()));

    let started = std::time::Instant::now();
    let mut ids = Vec::new();
    for i in 0..1000 {
        let (message, id) = event_message(i, json!({"order": i}));
        broker.publish(&message).await;
        ids.push(id);
    }
    for (message, _) in poison() {
        broker.publish(&message).await;
    }
    for i in (3..1000).step_by(10) {
        broker
            .publish(&event_message(i, json!({"order": i})).0)
            .await;
    }

    eventually(Duration::from_secs(600), || async {
        let events = count(&pool, "SELECT count(*) FROM events").await;
        let done = count(
            &pool,
            "SELECT count(*) FROM event_dispatches WHERE state = 'completed'",
        )
        .await;
        let rejected = count(&pool, "SELECT count(*) FROM source_rejections").await;
        (events == 1000 && done == 1100 && rejected == 5).then_some(())
    })
    .await;
    let committed = started.elapsed();
    let (stored,): (i64,) = sqlx::query_as("SELECT count(*) FROM events WHERE event_id = ANY($1)")
        .bind(&ids)
        .fetch_one(&pool)
        .await
        .unwrap_or((0,));
    assert_eq!(
        stored, 1000,
        "every published event under its documented ID"
    );

    // Exactly one run per (event, subscribed activity): every dispatch
    // completed, one RunActivityWorkflow execution each in Temporal, and
    // never more run rows than that (the worker logs them at its own pace;
    // on a shared machine it may not have caught up yet).
    eventually(Duration::from_secs(120), || async {
        (temporal_runs(&app, &namespace).await == 1100).then_some(())
    })
    .await;
    let (a, b) = (runs_of(&pool, &all).await, runs_of(&pool, &paid).await);
    assert!(a <= 1000 && b <= 100, "more runs than events: {a}, {b}");
    // For the record (not a benchmark: the machine is shared).
    eprintln!(
        "1105 messages published and 1000 events with 1100 dispatches committed in {:.1} s; 1100 runs started in Temporal after {:.1} s",
        committed.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );

    // The poison, listed with its reasons and bytes.
    let (status, page) = json(app.get(&format!("/v1/sources/{source}/rejected")).await).await;
    assert_eq!(status, 200, "{page}");
    let mut reasons: Vec<String> = page["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["reason"].as_str().map(str::to_owned))
        .collect();
    reasons.sort();
    let mut expected: Vec<String> = poison().into_iter().map(|(_, r)| r.to_owned()).collect();
    expected.sort();
    assert_eq!(reasons, expected);
    let garbage = page["items"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["reason"] == "not_json")
        .cloned()
        .unwrap_or_default();
    assert_eq!(garbage["raw_text"], "garbage{");
    let large = page["items"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["reason"] == "too_large")
        .cloned()
        .unwrap_or_default();
    assert_eq!(large["truncated"], true, "{large}");

    // A conflicting re-delivery: recorded on the event, no second run.
    broker
        .publish(&event_message(2, json!({"order": "changed"})).0)
        .await;
    let event = eventually(Duration::from_secs(60), || async {
        let (_, event) = json(app.get("/v1/events/ce:shop:o-2").await).await;
        (event["conflicts"].as_array().is_some_and(|c| !c.is_empty())).then_some(event)
    })
    .await;
    assert_eq!(event["conflicts"][0]["differs"], json!(["payload"]));
    assert_eq!(event["conflicts"][0]["source_id"], source.as_str());
    assert_eq!(
        event["payload"],
        json!({"order": 2}),
        "the first content stands"
    );
    assert_eq!(event["dispatches"].as_array().map(Vec::len), Some(1));

    // Live status, then nothing left unacknowledged.
    let status = eventually(Duration::from_secs(30), || async {
        let (_, body) = json(app.get(&format!("/v1/sources/{source}")).await).await;
        let s = body["status"].clone();
        (s["accepted"].as_i64() >= Some(1100)
            && s["rejected"] == 5
            && s["conflicts"] == 1
            && s["pending"] == 0)
            .then_some(s)
    })
    .await;
    assert_eq!(status["connected"], true, "{status}");
    let _ = stop_tx.send(true);
    consuming.await.unwrap_or_else(|e| panic!("{e}"));
    eventually(Duration::from_secs(30), || async {
        (broker.unacknowledged().await == 0).then_some(())
    })
    .await;
    assert!(runs_of(&pool, &all).await <= 1000);
    assert_eq!(temporal_runs(&app, &namespace).await, 1100);

    let metrics = app.get("/metrics").await.text().await.unwrap_or_default();
    for line in [
        "acp_source_rejections_total{reason=\"not_json\"}",
        "acp_source_messages_total{outcome=\"conflict\"}",
    ] {
        let value: f64 = metrics
            .lines()
            .find_map(|l| l.strip_prefix(line))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0.0);
        assert!(value >= 1.0, "{line} {value}");
    }
}

#[sqlx::test(migrations = "./migrations")]
async fn nats_a_thousand_messages_one_run_each(pool: PgPool) {
    a_thousand_messages(pool, Broker::nats().await).await;
}

#[sqlx::test(migrations = "./migrations")]
async fn rabbitmq_a_thousand_messages_one_run_each(pool: PgPool) {
    a_thousand_messages(pool, Broker::rabbit().await).await;
}
