//! Retrying failed runs against the real engine: the same contract workflow
//! ID, tasks that succeeded kept, exactly one attempt per request however many
//! arrive at once.

use crate::common;

use std::time::Duration;

use common::*;
use serde_json::{Value, json};
use sqlx::PgPool;

/// The one API key of the test app (the admin key its client sends).
async fn key_id(app: &TestApp) -> String {
    let (id,): (uuid::Uuid,) = sqlx::query_as("SELECT id FROM api_keys")
        .fetch_one(&app.pool)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    id.to_string()
}

/// A two-task activity (webhooks to `first` and `second`, the second tried
/// once per run attempt); triggers it and waits for the run to end.
async fn two_task_run(app: &TestApp, first: &WebhookSink, second: &WebhookSink) -> Value {
    let created = app
        .create(&json!({
            "name": "retried",
            "trigger": {"type": "event", "event_types": ["retry.test"]},
            "tasks": [
                {"task_type": "webhook", "config": {"url": first.url}},
                {"task_type": "webhook", "config": {"url": second.url}, "timeout": "PT30S",
                 "retry": {"max_attempts": 1}},
            ],
        }))
        .await;
    let id = created["id"].as_str().unwrap_or_default();
    let (status, started) = trigger(app, id, None).await;
    assert_eq!(status, 202, "{started}");
    let run_id = started["run_id"].as_str().unwrap_or_default();
    wait_run_done(app, run_id, Duration::from_secs(90)).await
}

async fn retry(app: &TestApp, run_id: &str) -> (u16, Value) {
    json(
        app.post(&format!("/v1/runs/{run_id}/retry"), &json!({}))
            .await,
    )
    .await
}

/// Executions of `workflow_id` in `status` (a visibility query; visibility
/// trails the engine a little, so callers poll).
async fn executions_in(app: &TestApp, workflow_id: &str, status: &str) -> usize {
    executions_matching(
        app,
        &format!("WorkflowId = '{workflow_id}' AND ExecutionStatus = '{status}'"),
    )
    .await
    .len()
}

#[sqlx::test(migrations = "./migrations")]
async fn a_failed_run_retried_after_the_fix_succeeds_under_the_same_workflow_id(pool: PgPool) {
    let first = WebhookSink::start(200, Duration::ZERO).await;
    // Broken for the first call, fixed from then on.
    let second = WebhookSink::start_sequence(vec![500], 200, Duration::ZERO).await;
    let server = shared_temporal();
    let namespace = new_namespace(&server.address()).await;
    let app = TestApp::spawn(pool, &server.address(), &namespace).await;
    let worker = app.worker(true, Default::default());
    let key = key_id(&app).await;

    let run = two_task_run(&app, &first, &second).await;
    assert_eq!(run["status"], "failed", "{run}");
    assert_eq!(run["attempt"], 1, "{run}");
    assert_eq!(run["tasks"][0]["status"], "succeeded", "{run}");
    assert_eq!(run["tasks"][1]["status"], "failed", "{run}");
    let run_id = run["run_id"].as_str().unwrap_or_default().to_owned();
    let workflow_id = run["workflow_id"].as_str().unwrap_or_default().to_owned();
    // The failed run's execution failed in Temporal, which is what lets the
    // ID run again.
    eventually(Duration::from_secs(30), || async {
        (executions_in(&app, &workflow_id, "Failed").await == 1).then_some(())
    })
    .await;

    let (status, retried) = retry(&app, &run_id).await;
    assert_eq!(status, 202, "{retried}");
    assert_eq!(retried["attempt"], 2, "{retried}");
    assert_eq!(retried["workflow_id"], workflow_id.as_str(), "{retried}");
    assert_eq!(retried["requested_by"], key.as_str(), "{retried}");

    let run = wait_run_done(&app, &run_id, Duration::from_secs(90)).await;
    assert_eq!(run["status"], "succeeded", "{run}");
    assert_eq!(run["attempt"], 2, "{run}");
    assert_eq!(run["workflow_id"], workflow_id.as_str(), "{run}");
    assert_eq!(run["tasks_succeeded"], 2, "{run}");
    // The first task ran once in all, the second once per attempt.
    assert_eq!(first.count(), 1);
    assert_eq!(second.count(), 2);

    let attempts = run["attempts"].as_array().cloned().unwrap_or_default();
    assert_eq!(attempts.len(), 2, "{run}");
    assert_eq!(attempts[0]["attempt"], 1, "{run}");
    assert_eq!(attempts[0]["status"], "failed", "{run}");
    assert_eq!(attempts[0]["requested_by"], Value::Null, "{run}");
    assert!(attempts[0]["error"].to_string().contains("500"), "{run}");
    assert_eq!(attempts[1]["attempt"], 2, "{run}");
    assert_eq!(attempts[1]["status"], "succeeded", "{run}");
    assert_eq!(attempts[1]["requested_by"], key.as_str(), "{run}");
    assert!(attempts[1]["finished_at"].is_string(), "{run}");

    // Task instances show their attempts: the first ran in attempt 1 only,
    // the second in both, failing the first time.
    let tasks = run["tasks"].as_array().cloned().unwrap_or_default();
    assert_eq!(tasks[0]["status"], "succeeded", "{run}");
    assert_eq!(tasks[0]["run_attempt"], 1, "{run}");
    assert_eq!(tasks[0]["previous_attempts"], json!([]), "{run}");
    assert_eq!(tasks[1]["status"], "succeeded", "{run}");
    assert_eq!(tasks[1]["run_attempt"], 2, "{run}");
    let earlier = tasks[1]["previous_attempts"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(earlier.len(), 1, "{run}");
    assert_eq!(earlier[0]["run_attempt"], 1, "{run}");
    assert_eq!(earlier[0]["status"], "failed", "{run}");

    // Temporal holds two executions of the contract ID: the first failed,
    // the second completed. The first task's workflow ran once.
    eventually(Duration::from_secs(30), || async {
        (executions_in(&app, &workflow_id, "Completed").await == 1).then_some(())
    })
    .await;
    assert_eq!(executions(&app, &workflow_id).await.len(), 2);
    assert_eq!(executions_in(&app, &workflow_id, "Failed").await, 1);
    assert_eq!(
        executions(&app, &format!("task-{run_id}:webhook:0"))
            .await
            .len(),
        1
    );
    assert_eq!(
        executions(&app, &format!("task-{run_id}:webhook:1"))
            .await
            .len(),
        2
    );

    // A succeeded run is not retried; the problem names its status.
    let (status, problem) = retry(&app, &run_id).await;
    assert_eq!(status, 409, "{problem}");
    assert!(
        problem["detail"].to_string().contains("succeeded"),
        "{problem}"
    );
    let (status, _) = retry(&app, &uuid::Uuid::new_v4().to_string()).await;
    assert_eq!(status, 404);

    let metrics = app.get("/metrics").await.text().await.unwrap_or_default();
    assert!(
        metrics
            .lines()
            .any(|l| l.starts_with("acp_run_retries_total{via=\"run\"}") && !l.ends_with(" 0")),
        "{metrics}"
    );
    worker.stop().await;
}

#[sqlx::test(migrations = "./migrations")]
async fn twenty_concurrent_retries_start_exactly_one_attempt(pool: PgPool) {
    let first = WebhookSink::start(200, Duration::ZERO).await;
    // Fails at once the first time; the retried attempt fails too, slowly,
    // so it is still running while the requests arrive.
    let second = WebhookSink::scripted(|n| {
        if n <= 1 {
            (500, Duration::ZERO)
        } else {
            (500, Duration::from_secs(5))
        }
    })
    .await;
    let server = shared_temporal();
    let namespace = new_namespace(&server.address()).await;
    let app = TestApp::spawn(pool, &server.address(), &namespace).await;
    let worker = app.worker(true, Default::default());
    let run = two_task_run(&app, &first, &second).await;
    assert_eq!(run["status"], "failed", "{run}");
    let run_id = run["run_id"].as_str().unwrap_or_default().to_owned();
    let workflow_id = run["workflow_id"].as_str().unwrap_or_default().to_owned();

    let answers = futures::future::join_all((0..20).map(|_| retry(&app, &run_id))).await;
    let started: Vec<&Value> = answers
        .iter()
        .filter(|(s, _)| *s == 202)
        .map(|(_, b)| b)
        .collect();
    assert_eq!(started.len(), 1, "{answers:?}");
    assert_eq!(started[0]["attempt"], 2, "{answers:?}");
    for (status, body) in answers.iter().filter(|(s, _)| *s != 202) {
        assert_eq!(*status, 409, "{body}");
        assert!(body["detail"].to_string().contains("running"), "{body}");
    }

    let run = wait_run_done(&app, &run_id, Duration::from_secs(90)).await;
    assert_eq!(run["status"], "failed", "{run}");
    assert_eq!(run["attempt"], 2, "{run}");
    assert_eq!(run["attempts"].as_array().map(Vec::len), Some(2), "{run}");
    let (rows,): (i64,) = sqlx::query_as("SELECT count(*) FROM run_attempts WHERE run_id = $1")
        .bind(uuid::Uuid::parse_str(&run_id).unwrap_or_default())
        .fetch_one(&app.pool)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(rows, 2);
    eventually(Duration::from_secs(30), || async {
        (executions_in(&app, &workflow_id, "Failed").await == 2).then_some(())
    })
    .await;
    assert_eq!(executions(&app, &workflow_id).await.len(), 2);
    assert_eq!(first.count(), 1);
    assert_eq!(second.count(), 2);
    worker.stop().await;
}

#[sqlx::test(migrations = "./migrations")]
async fn a_worker_stopped_during_a_retry_finishes_it_after_restart_running_no_task_twice(
    pool: PgPool,
) {
    let first = WebhookSink::start(200, Duration::ZERO).await;
    // Fails at once the first time; answers slowly, and well, afterwards.
    let second = WebhookSink::scripted(|n| {
        if n <= 1 {
            (500, Duration::ZERO)
        } else {
            (200, Duration::from_secs(3))
        }
    })
    .await;
    let third = WebhookSink::start(200, Duration::ZERO).await;
    let server = shared_temporal();
    let namespace = new_namespace(&server.address()).await;
    let app = TestApp::spawn(pool, &server.address(), &namespace).await;
    let created = app
        .create(&json!({
            "name": "retried-across-a-restart",
            "trigger": {"type": "event", "event_types": ["retry.test"]},
            "tasks": [
                {"task_type": "webhook", "config": {"url": first.url}},
                {"task_type": "webhook", "config": {"url": second.url}, "timeout": "PT30S",
                 "retry": {"max_attempts": 1}},
                {"task_type": "webhook", "config": {"url": third.url}},
            ],
        }))
        .await;
    let id = created["id"].as_str().unwrap_or_default();
    let worker = app.worker(true, Default::default());
    let (_, started) = trigger(&app, id, None).await;
    let run_id = started["run_id"].as_str().unwrap_or_default().to_owned();
    let workflow_id = started["workflow_id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let run = wait_run_done(&app, &run_id, Duration::from_secs(90)).await;
    assert_eq!(run["status"], "failed", "{run}");

    let (status, retried) = retry(&app, &run_id).await;
    assert_eq!(status, 202, "{retried}");
    // The retried task's call is in flight: stop the worker under it.
    eventually(Duration::from_secs(60), || async {
        (second.count() >= 2).then_some(())
    })
    .await;
    worker.stop().await;
    let (_, during) = json(app.get(&format!("/v1/runs/{run_id}")).await).await;
    assert_eq!(during["status"], "running", "{during}");

    // A new worker, with an empty cache, replays the attempt and ends it.
    let worker = app.worker(true, Default::default());
    let run = wait_run_done(&app, &run_id, Duration::from_secs(120)).await;
    assert_eq!(run["status"], "succeeded", "{run}");
    assert_eq!(run["attempt"], 2, "{run}");
    let tasks = run["tasks"].as_array().cloned().unwrap_or_default();
    assert!(tasks.iter().all(|t| t["status"] == "succeeded"), "{run}");

    // No task ran twice: each receiver heard each attempt that ran it once,
    // and each task workflow ID ran once per attempt that ran it.
    assert_eq!(first.count(), 1);
    assert_eq!(second.count(), 2);
    assert_eq!(third.count(), 1);
    assert_eq!(executions(&app, &workflow_id).await.len(), 2);
    for (index, runs) in [(0, 1), (1, 2), (2, 1)] {
        let task_workflow = format!("task-{run_id}:webhook:{index}");
        assert_eq!(
            executions(&app, &task_workflow).await.len(),
            runs,
            "{task_workflow}"
        );
    }
    worker.stop().await;
}

#[sqlx::test(migrations = "./migrations")]
async fn a_retry_cancelled_before_any_worker_took_it_ends_cancelled(pool: PgPool) {
    let first = WebhookSink::start(200, Duration::ZERO).await;
    let second = WebhookSink::start(500, Duration::ZERO).await;
    let server = shared_temporal();
    let namespace = new_namespace(&server.address()).await;
    let app = TestApp::spawn(pool, &server.address(), &namespace).await;
    let worker = app.worker(true, Default::default());
    let run = two_task_run(&app, &first, &second).await;
    assert_eq!(run["status"], "failed", "{run}");
    let run_id = run["run_id"].as_str().unwrap_or_default().to_owned();
    let workflow_id = run["workflow_id"].as_str().unwrap_or_default().to_owned();

    // No worker: the retry's execution is started, and its first workflow
    // task waits. The cancel reaches Temporal before any code of it ran.
    worker.stop().await;
    let (status, retried) = retry(&app, &run_id).await;
    assert_eq!(status, 202, "{retried}");
    let (status, cancelled) = json(
        app.post(
            &format!("/v1/runs/{run_id}/cancel"),
            &json!({"reason": "changed my mind"}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 202, "{cancelled}");

    // A worker comes: the execution sees its cancel first and records it.
    let worker = app.worker(true, Default::default());
    let run = wait_run_done(&app, &run_id, Duration::from_secs(90)).await;
    assert_eq!(run["status"], "cancelled", "{run}");
    assert_eq!(run["attempt"], 2, "{run}");
    eventually(Duration::from_secs(30), || async {
        (executions_in(&app, &workflow_id, "Canceled").await == 1).then_some(())
    })
    .await;
    // The attempt ran no task.
    assert_eq!((first.count(), second.count()), (1, 1));
    worker.stop().await;
}
