//! Task policies against the real engine: a task's `retry` and `timeout`
//! decide how many attempts its webhook gets and how long each may take.

use crate::common;

use std::time::Duration;

use common::*;
use serde_json::{Value, json};
use sqlx::PgPool;

/// Retries come quickly, so the tests do not wait on the default backoff.
fn fast_retry(extra: Value) -> Value {
    let mut retry = json!({"initial_interval": "PT0.1S", "backoff": 1});
    if let (Some(retry), Some(extra)) = (retry.as_object_mut(), extra.as_object()) {
        retry.extend(extra.clone());
    }
    retry
}

/// Runs one webhook task (the sink's URL, with `policy` next to its config)
/// by a manual trigger and returns the finished run with its tasks.
async fn run_webhook(pool: PgPool, sink: &WebhookSink, policy: Value) -> Value {
    let server = shared_temporal();
    let namespace = new_namespace(&server.address()).await;
    let app = TestApp::spawn(pool, &server.address(), &namespace).await;
    let worker = app.worker(true, Default::default());
    let mut task = json!({"task_type": "webhook", "config": {"url": sink.url}});
    if let (Some(task), Some(policy)) = (task.as_object_mut(), policy.as_object()) {
        task.extend(policy.clone());
    }
    let created = app
        .create(&json!({
            "name": "policies",
            "trigger": {"type": "event", "event_types": ["policies.test"]},
            "tasks": [task],
        }))
        .await;
    // The policy is stored and returned as written.
    for (key, value) in policy.as_object().cloned().unwrap_or_default() {
        assert_eq!(created["tasks"][0][&key], value, "{created}");
    }
    let id = created["id"].as_str().unwrap_or_default();
    let (status, started) = trigger(&app, id, None).await;
    assert_eq!(status, 202, "{started}");
    let run_id = started["run_id"].as_str().unwrap_or_default();
    let run = wait_run_done(&app, run_id, Duration::from_secs(60)).await;
    worker.stop().await;
    run
}

/// Fails (500) the first two calls, then succeeds.
async fn fails_twice() -> WebhookSink {
    WebhookSink::scripted(|call| (if call <= 2 { 500 } else { 200 }, Duration::ZERO)).await
}

#[sqlx::test(migrations = "./migrations")]
async fn two_attempts_against_two_failures_fail(pool: PgPool) {
    let sink = fails_twice().await;
    let run = run_webhook(
        pool,
        &sink,
        json!({"retry": fast_retry(json!({"max_attempts": 2}))}),
    )
    .await;
    assert_eq!(run["status"], "failed", "{run}");
    assert_eq!(run["tasks"][0]["status"], "failed", "{run}");
    assert_eq!(run["tasks"][0]["attempts"], 2, "{run}");
    assert!(
        run["tasks"][0]["error"]
            .as_str()
            .is_some_and(|e| e.contains("500")),
        "{run}"
    );
    assert_eq!(sink.count(), 2);
}

#[sqlx::test(migrations = "./migrations")]
async fn three_attempts_against_two_failures_succeed_on_the_third(pool: PgPool) {
    let sink = fails_twice().await;
    let run = run_webhook(
        pool,
        &sink,
        json!({"retry": fast_retry(json!({"max_attempts": 3}))}),
    )
    .await;
    assert_eq!(run["status"], "succeeded", "{run}");
    assert_eq!(run["tasks"][0]["status"], "succeeded", "{run}");
    assert_eq!(run["tasks"][0]["attempts"], 3, "{run}");
    assert_eq!(run["tasks"][0]["output"]["status"], 200, "{run}");
    assert_eq!(sink.count(), 3);
}

#[sqlx::test(migrations = "./migrations")]
async fn an_attempt_longer_than_the_timeout_is_cut_off_and_retried(pool: PgPool) {
    // The first call would answer 200 after 4 s; the second answers at once.
    let sink = WebhookSink::scripted(|call| {
        let delay = if call == 1 {
            Duration::from_secs(4)
        } else {
            Duration::ZERO
        };
        (200, delay)
    })
    .await;
    let started = std::time::Instant::now();
    let run = run_webhook(
        pool,
        &sink,
        json!({"timeout": "PT1S", "retry": fast_retry(json!({"max_attempts": 2}))}),
    )
    .await;
    assert_eq!(run["status"], "succeeded", "{run}");
    assert_eq!(run["tasks"][0]["attempts"], 2, "{run}");
    assert_eq!(sink.count(), 2);
    assert!(started.elapsed() < Duration::from_secs(30));
}

#[sqlx::test(migrations = "./migrations")]
async fn attempts_all_longer_than_the_timeout_fail_the_task(pool: PgPool) {
    let sink = WebhookSink::start(200, Duration::from_secs(4)).await;
    let run = run_webhook(
        pool,
        &sink,
        json!({"timeout": "PT1S", "retry": fast_retry(json!({"max_attempts": 2}))}),
    )
    .await;
    assert_eq!(run["status"], "failed", "{run}");
    assert_eq!(run["tasks"][0]["attempts"], 2, "{run}");
    assert!(
        run["tasks"][0]["error"]
            .as_str()
            .is_some_and(|e| e.contains("did not answer within PT1S")),
        "{run}"
    );
    assert_eq!(sink.count(), 2);
}

#[sqlx::test(migrations = "./migrations")]
async fn a_listed_status_is_not_retried(pool: PgPool) {
    let sink = WebhookSink::start(503, Duration::ZERO).await;
    let run = run_webhook(
        pool,
        &sink,
        json!({"retry": fast_retry(json!({"max_attempts": 5, "non_retryable": [503]}))}),
    )
    .await;
    assert_eq!(run["status"], "failed", "{run}");
    assert_eq!(run["tasks"][0]["attempts"], 1, "{run}");
    assert_eq!(sink.count(), 1);
}
