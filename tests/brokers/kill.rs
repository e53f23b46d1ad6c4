//! The consuming process killed with SIGKILL mid-stream and started again:
//! nothing lost, nothing doubled.

use super::*;

/// `acp serve` consuming is killed with SIGKILL mid-stream and started
/// again: every published event has exactly one run, none lost, none doubled.
async fn kill_mid_stream(pool: PgPool, broker: Broker) {
    const EVENTS: usize = 250;
    let server = shared_temporal();
    let namespace = new_namespace(&server.address()).await;
    let token = cli_key(&pool, "admin");
    let env = [
        ("ACP_SOURCE_REFRESH_SECS", "0.3"),
        ("ACP_TEST_RABBIT_SECRET", "guest"),
    ];
    let mut serve = ServeProcess::start(&pool, &server.address(), &namespace, &env).await;
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(
        reqwest::header::AUTHORIZATION,
        format!("Bearer {token}")
            .parse()
            .unwrap_or_else(|e| panic!("{e}")),
    );
    let http = reqwest::Client::builder()
        .default_headers(headers)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let activity = subscriber(&serve.base, &http, &["order.created", "order.paid"]).await;
    create_source(&serve.base, &http, &broker.source()).await;

    // The messages go out a few milliseconds apart while the consumer runs,
    // so that the kill lands while they are still arriving: published all
    // at once, a consumer that keeps up commits every one before the kill,
    // and the test proves nothing.
    let publishing = async {
        for i in 0..EVENTS {
            broker
                .publish(&event_message(i, json!({"order": i})).0)
                .await;
            if i % 10 == 3 {
                broker
                    .publish(&event_message(i, json!({"order": i})).0)
                    .await;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    };
    // Mid-stream: some events committed, not all.
    let killing = async {
        let seen = eventually(Duration::from_secs(120), || async {
            let n = count(&pool, "SELECT count(*) FROM events").await;
            (n >= 100).then_some(n)
        })
        .await;
        let _ = serve.child.kill(); // SIGKILL
        let _ = serve.child.wait();
        seen
    };
    let ((), seen) = tokio::join!(publishing, killing);
    let at_kill = count(&pool, "SELECT count(*) FROM events").await;
    assert!(
        at_kill < EVENTS as i64,
        "killed too late to prove anything: {at_kill} of {EVENTS} (first seen {seen})"
    );

    let _serve = ServeProcess::start(&pool, &server.address(), &namespace, &env).await;
    eventually(Duration::from_secs(600), || async {
        let events = count(&pool, "SELECT count(*) FROM events").await;
        let done = count(
            &pool,
            "SELECT count(*) FROM event_dispatches WHERE state = 'completed'",
        )
        .await;
        let runs = runs_of(&pool, &activity).await;
        assert!(runs <= EVENTS as i64, "more runs than events: {runs}");
        (events == EVENTS as i64 && done == EVENTS as i64).then_some(())
    })
    .await;
    let pending = count(
        &pool,
        "SELECT count(*) FROM event_dispatches WHERE state <> 'completed'",
    )
    .await;
    assert_eq!(pending, 0);
    let temporal = TestApp::spawn(pool.clone(), &server.address(), &namespace).await;
    // One RunActivityWorkflow execution per event in Temporal: none lost,
    // none doubled (the worker logs their rows at its own pace).
    eventually(Duration::from_secs(120), || async {
        (temporal_runs(&temporal, &namespace).await == EVENTS as i64).then_some(())
    })
    .await;
    drop(_serve);
    // JetStream re-delivers what the killed process held after ack_wait.
    eventually(Duration::from_secs(90), || async {
        (broker.unacknowledged().await == 0).then_some(())
    })
    .await;
    assert!(runs_of(&pool, &activity).await <= EVENTS as i64);
}

#[sqlx::test(migrations = "./migrations")]
async fn nats_kill_9_mid_stream_loses_and_doubles_nothing(pool: PgPool) {
    kill_mid_stream(pool, Broker::nats().await).await;
}

#[sqlx::test(migrations = "./migrations")]
async fn rabbitmq_kill_9_mid_stream_loses_and_doubles_nothing(pool: PgPool) {
    kill_mid_stream(pool, Broker::rabbit().await).await;
}
