//! `acp serve` as its own process: SIGTERM in the middle of a burst of
//! writes loses no acknowledged write, and the process exits 0 within its
//! grace period.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::*;
use serde_json::json;
use sqlx::PgPool;

const GRACE_SECS: u64 = 15;

#[sqlx::test(migrations = "./migrations")]
async fn sigterm_during_200_writes_loses_no_acknowledged_write(pool: PgPool) {
    let temporal = shared_temporal();
    let namespace = new_namespace(&temporal.address()).await;
    let token = cli_key(&pool, "write");
    let grace = GRACE_SECS.to_string();
    let mut served = ServeProcess::start(
        &pool,
        &temporal.address(),
        &namespace,
        &[("ACP_SHUTDOWN_GRACE_SECS", &grace)],
    )
    .await;
    let base = served.base.clone();
    let http = reqwest::Client::new();

    // 200 writes, 32 in flight at a time (a client's connection pool): half
    // event activities (no Temporal in the request), half scheduled ones (a
    // schedule is created in the request). All 200 at once on a loaded machine
    // wait over the pool's 3 s for one of the 16 PostgreSQL connections and
    // get the overload's honest 503 ("PostgreSQL is unavailable; retry
    // shortly"): an overload, which the service answers the same with or
    // without a signal, not what this test is about.
    let in_flight = Arc::new(tokio::sync::Semaphore::new(32));
    let answered = Arc::new(AtomicUsize::new(0));
    let mut burst = tokio::task::JoinSet::new();
    for i in 0..200 {
        let (http, base, token, answered, in_flight) = (
            http.clone(),
            base.clone(),
            token.clone(),
            answered.clone(),
            in_flight.clone(),
        );
        burst.spawn(async move {
            let _permit = in_flight.acquire_owned().await;
            let trigger = if i % 2 == 0 {
                json!({"type": "event", "event_types": ["burst.tick"]})
            } else {
                json!({"type": "interval", "every": "PT1H"})
            };
            let body = json!({"name": format!("burst-{i}"), "trigger": trigger, "tasks": [{"task_type": "noop"}]});
            let result = http
                .post(format!("{base}/v1/activities"))
                .bearer_auth(token)
                .json(&body)
                .send()
                .await;
            answered.fetch_add(1, Ordering::SeqCst);
            match result {
                Ok(response) if response.status().is_success() => {
                    let created: serde_json::Value = response.json().await.unwrap_or_default();
                    Ok(created["id"].as_str().map(str::to_owned))
                }
                Ok(response) => {
                    // The problem document says why (a 503 names its dependency).
                    let status = response.status();
                    let problem: serde_json::Value = response.json().await.unwrap_or_default();
                    Err(format!("HTTP {status} {} {}", problem["type"], problem["detail"]))
                }
                Err(err) => Err(format!("transport: {err}")),
            }
        });
    }
    // SIGTERM once some writes have been answered and most are in flight.
    eventually(Duration::from_secs(30), || {
        let answered = answered.clone();
        async move { (answered.load(Ordering::SeqCst) >= 10).then_some(()) }
    })
    .await;
    let signalled = Instant::now();
    served.sigterm();

    let mut acknowledged = Vec::new();
    let mut refused = Vec::new();
    while let Some(outcome) = burst.join_next().await {
        match outcome.unwrap_or_else(|e| panic!("{e}")) {
            Ok(Some(id)) => acknowledged.push(id),
            Ok(None) => panic!("a 2xx without an id"),
            Err(why) => refused.push(why),
        }
    }
    let exit = served.wait_exit(Duration::from_secs(GRACE_SECS + 10)).await;
    let took = signalled.elapsed();
    let log = served.log();
    eprintln!(
        "{} acknowledged, {} not ({:?}), exit {exit} {took:?} after SIGTERM",
        acknowledged.len(),
        refused.len(),
        refused.iter().take(3).collect::<Vec<_>>()
    );
    assert!(exit.success(), "exit {exit}; log:\n{log}");
    assert!(took < Duration::from_secs(GRACE_SECS), "exit took {took:?}");
    assert!(log.contains("shutdown signal received"), "{log}");
    assert!(!acknowledged.is_empty());
    assert!(
        refused.iter().all(|r| !r.starts_with("HTTP 5")),
        "no 5xx during shutdown: {refused:?}"
    );

    // Every acknowledged write is in the database, whole.
    let stored: Vec<(String, String)> =
        sqlx::query_as("SELECT id::text, name FROM activities WHERE deleted_at IS NULL")
            .fetch_all(&pool)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    for id in &acknowledged {
        assert!(
            stored
                .iter()
                .any(|(stored_id, name)| stored_id == id && name.starts_with("burst-")),
            "acknowledged write {id} is not in the database"
        );
    }
}
