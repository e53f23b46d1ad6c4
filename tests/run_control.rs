//! Run control against the real engine: cancelling a running run.

use crate::common;

use std::time::Duration;

use common::*;
use serde_json::{Value, json};
use sqlx::PgPool;
use temporalio_client::grpc::WorkflowService;
use temporalio_common::protos::temporal::api::common::v1::WorkflowExecution;
use temporalio_common::protos::temporal::api::enums::v1::WorkflowExecutionStatus;
use temporalio_common::protos::temporal::api::workflowservice::v1::DescribeWorkflowExecutionRequest;
use tonic::IntoRequest;

/// The latest execution's status of a workflow ID, `None` if it never ran.
async fn temporal_status(app: &TestApp, workflow_id: &str) -> Option<WorkflowExecutionStatus> {
    let mut client = acp_temporal::TemporalGateway::new(temporal_settings(
        &app.temporal_address,
        &app.namespace,
    ))
    .client()
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let request = DescribeWorkflowExecutionRequest {
        namespace: app.namespace.clone(),
        execution: Some(WorkflowExecution {
            workflow_id: workflow_id.to_owned(),
            run_id: String::new(),
        }),
    };
    match WorkflowService::describe_workflow_execution(&mut client, request.into_request()).await {
        Ok(answer) => answer
            .into_inner()
            .workflow_execution_info
            .map(|info| info.status()),
        Err(status) if status.code() == tonic::Code::NotFound => None,
        Err(status) => panic!("describe {workflow_id}: {status}"),
    }
}

/// The one API key of the test app (the admin key its client sends).
async fn key_id(app: &TestApp) -> String {
    let (id,): (uuid::Uuid,) = sqlx::query_as("SELECT id FROM api_keys")
        .fetch_one(&app.pool)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    id.to_string()
}

/// An activity whose first webhook blocks for a long time and whose second
/// goes to `next`; triggers it and waits until the first call is in flight.
async fn blocked_run(app: &TestApp, blocking: &WebhookSink, next: &WebhookSink) -> Value {
    let created = app
        .create(&json!({
            "name": "blocks",
            "trigger": {"type": "event", "event_types": ["cancel.test"]},
            "tasks": [
                {"task_type": "webhook", "config": {"url": blocking.url}, "timeout": "PT30S",
                 "retry": {"max_attempts": 3}},
                {"task_type": "webhook", "config": {"url": next.url}},
            ],
        }))
        .await;
    let id = created["id"].as_str().unwrap_or_default();
    let (status, started) = trigger(app, id, None).await;
    assert_eq!(status, 202, "{started}");
    eventually(Duration::from_secs(30), || async {
        (blocking.count() == 1).then_some(())
    })
    .await;
    started
}

async fn cancel(app: &TestApp, run_id: &str, body: &Value) -> (u16, Value) {
    json(app.post(&format!("/v1/runs/{run_id}/cancel"), body).await).await
}

#[sqlx::test(migrations = "./migrations")]
async fn cancelling_a_blocked_run_stops_it_and_nothing_runs_afterwards(pool: PgPool) {
    let blocking = WebhookSink::start(200, Duration::from_secs(20)).await;
    let next = WebhookSink::start(200, Duration::ZERO).await;
    let server = shared_temporal();
    let namespace = new_namespace(&server.address()).await;
    let app = TestApp::spawn(pool, &server.address(), &namespace).await;
    let worker = app.worker(true, Default::default());
    let started = blocked_run(&app, &blocking, &next).await;
    let run_id = started["run_id"].as_str().unwrap_or_default().to_owned();
    let workflow_id = started["workflow_id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let key = key_id(&app).await;

    let (status, first) = cancel(&app, &run_id, &json!({"reason": "stop it"})).await;
    assert_eq!(status, 202, "{first}");
    assert_eq!(first["action"], "cancel_requested", "{first}");
    assert_eq!(first["cancellation"]["reason"], "stop it");
    assert_eq!(first["cancellation"]["requested_by"], key.as_str());
    assert_eq!(first["cancellation"]["forced"], false);
    // A second request while it travels is the same request; once the run
    // has ended it is a conflict naming the status.
    let (status, second) = cancel(&app, &run_id, &json!({"reason": "other"})).await;
    match status {
        202 => assert_eq!(second["cancellation"], first["cancellation"], "{second}"),
        409 => assert!(
            second["detail"].to_string().contains("cancelled"),
            "{second}"
        ),
        other => panic!("{other}: {second}"),
    }

    let run = wait_run_done(&app, &run_id, Duration::from_secs(30)).await;
    assert_eq!(run["status"], "cancelled", "{run}");
    assert_eq!(run["cancellation"]["reason"], "stop it", "{run}");
    assert_eq!(run["cancellation"]["requested_by"], key.as_str(), "{run}");
    assert!(run["error"].to_string().contains("stop it"), "{run}");
    let tasks = run["tasks"].as_array().cloned().unwrap_or_default();
    assert_eq!(tasks.len(), 2, "{run}");
    assert_eq!(tasks[0]["status"], "cancelled", "{run}");
    assert_eq!(tasks[1]["status"], "cancelled", "{run}");
    assert_eq!(tasks[1]["started_at"], Value::Null, "{run}");

    // Temporal: the run and its running task were cancelled; the next task's
    // workflow never existed.
    // The run's row is written by the run's last activity, a moment before
    // its workflow closes: wait for Temporal to say so.
    let task_workflow = |i: usize, t: &str| format!("task-{run_id}:{t}:{i}");
    for id in [workflow_id.clone(), task_workflow(0, "webhook")] {
        eventually(Duration::from_secs(20), || async {
            (temporal_status(&app, &id).await == Some(WorkflowExecutionStatus::Canceled))
                .then_some(())
        })
        .await;
    }
    assert_eq!(
        temporal_status(&app, &task_workflow(1, "webhook")).await,
        None
    );

    // Longer than a retry's backoff: the blocked webhook is not called again,
    // the next one never.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(blocking.count(), 1);
    assert_eq!(next.count(), 0);

    let (status, again) = cancel(&app, &run_id, &json!({})).await;
    assert_eq!(status, 409, "{again}");
    assert!(again["detail"].to_string().contains("cancelled"), "{again}");
    worker.stop().await;
}

#[sqlx::test(migrations = "./migrations")]
async fn force_terminates_and_says_so(pool: PgPool) {
    let blocking = WebhookSink::start(200, Duration::from_secs(20)).await;
    let next = WebhookSink::start(200, Duration::ZERO).await;
    let server = shared_temporal();
    let namespace = new_namespace(&server.address()).await;
    let app = TestApp::spawn(pool, &server.address(), &namespace).await;
    let worker = app.worker(true, Default::default());
    let started = blocked_run(&app, &blocking, &next).await;
    let run_id = started["run_id"].as_str().unwrap_or_default().to_owned();
    let workflow_id = started["workflow_id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();

    let (status, answer) = cancel(&app, &run_id, &json!({"force": true})).await;
    assert_eq!(status, 202, "{answer}");
    assert_eq!(answer["action"], "terminated", "{answer}");
    assert_eq!(answer["status"], "cancelled", "{answer}");
    assert_eq!(answer["cancellation"]["forced"], true);

    let (_, run) = json(app.get(&format!("/v1/runs/{run_id}")).await).await;
    assert_eq!(run["status"], "cancelled", "{run}");
    assert!(run["error"].to_string().contains("terminated"), "{run}");
    let tasks = run["tasks"].as_array().cloned().unwrap_or_default();
    assert_eq!(tasks.len(), 2, "{run}");
    assert!(tasks.iter().all(|t| t["status"] == "cancelled"), "{run}");
    assert_eq!(
        temporal_status(&app, &workflow_id).await,
        Some(WorkflowExecutionStatus::Terminated)
    );
    assert_eq!(
        temporal_status(&app, &format!("task-{run_id}:webhook:0")).await,
        Some(WorkflowExecutionStatus::Terminated)
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(blocking.count(), 1);
    assert_eq!(next.count(), 0);

    // Counted: the cancel by what was done, the run by its ending.
    let metrics = app.get("/metrics").await.text().await.unwrap_or_default();
    let value = |prefix: &str| -> f64 {
        metrics
            .lines()
            .filter(|l| l.starts_with(prefix))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum()
    };
    assert!(
        value("acp_run_cancels_total{action=\"terminated\"}") >= 1.0,
        "{metrics}"
    );
    assert!(
        metrics
            .lines()
            .any(|l| l.starts_with("acp_runs_total{") && l.contains("status=\"cancelled\"")),
        "{metrics}"
    );
    worker.stop().await;
}

#[sqlx::test(migrations = "./migrations")]
async fn cancelling_a_finished_run_is_a_conflict_naming_its_status(pool: PgPool) {
    let server = shared_temporal();
    let namespace = new_namespace(&server.address()).await;
    let app = TestApp::spawn(pool, &server.address(), &namespace).await;
    let worker = app.worker(true, Default::default());
    let created = app
        .create(&json!({
            "name": "quick",
            "trigger": {"type": "event", "event_types": ["cancel.test"]},
            "tasks": [{"task_type": "noop"}],
        }))
        .await;
    let id = created["id"].as_str().unwrap_or_default();
    let (_, started) = trigger(&app, id, None).await;
    let run_id = started["run_id"].as_str().unwrap_or_default();
    let run = wait_run_done(&app, run_id, Duration::from_secs(30)).await;
    assert_eq!(run["status"], "succeeded", "{run}");
    let (status, problem) = cancel(&app, run_id, &json!({})).await;
    assert_eq!(status, 409, "{problem}");
    assert!(
        problem["detail"].to_string().contains("succeeded"),
        "{problem}"
    );
    let (status, _) = cancel(&app, &uuid::Uuid::new_v4().to_string(), &json!({})).await;
    assert_eq!(status, 404);
    worker.stop().await;
}

#[sqlx::test(migrations = "./migrations")]
async fn a_run_past_its_run_timeout_is_cancelled_and_recorded_timed_out(pool: PgPool) {
    let blocking = WebhookSink::start(200, Duration::from_secs(20)).await;
    let server = shared_temporal();
    let namespace = new_namespace(&server.address()).await;
    let app = TestApp::spawn(pool, &server.address(), &namespace).await;
    let worker = app.worker(true, Default::default());
    let created = app
        .create(&json!({
            "name": "deadline",
            "trigger": {"type": "event", "event_types": ["timeout.test"]},
            "run_timeout": "PT2S",
            "tasks": [
                {"task_type": "webhook", "config": {"url": blocking.url}, "timeout": "PT30S"},
                {"task_type": "noop"},
            ],
        }))
        .await;
    assert_eq!(created["run_timeout"], "PT2S", "{created}");
    let id = created["id"].as_str().unwrap_or_default();
    let (status, started) = trigger(&app, id, None).await;
    assert_eq!(status, 202, "{started}");
    let run_id = started["run_id"].as_str().unwrap_or_default().to_owned();
    let workflow_id = started["workflow_id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    eventually(Duration::from_secs(30), || async {
        (blocking.count() == 1).then_some(())
    })
    .await;

    // The reconciler's pass (acp serve runs it every few seconds) finds the
    // run past its deadline and cancels it.
    let reconciler = acp::duties::reconcile::Reconciler::new(&app.state.services);
    let run = eventually(Duration::from_secs(60), || async {
        let _ = reconciler.pass().await;
        let (_, run) = json(app.get(&format!("/v1/runs/{run_id}")).await).await;
        (run["status"] != "running").then_some(run)
    })
    .await;
    assert_eq!(run["status"], "timed_out", "{run}");
    assert!(run["error"].to_string().contains("run_timeout"), "{run}");
    let tasks = run["tasks"].as_array().cloned().unwrap_or_default();
    assert_eq!(tasks.len(), 2, "{run}");
    assert!(tasks.iter().all(|t| t["status"] == "cancelled"), "{run}");
    eventually(Duration::from_secs(30), || async {
        (temporal_status(&app, &workflow_id).await == Some(WorkflowExecutionStatus::Canceled))
            .then_some(())
    })
    .await;
    assert_eq!(blocking.count(), 1);

    let (status, problem) = json(
        app.post(
            "/v1/activities",
            &json!({
                "name": "bad-deadline",
                "trigger": {"type": "event", "event_types": ["timeout.test"]},
                "run_timeout": "soon",
                "tasks": [{"task_type": "noop"}],
            }),
        )
        .await,
    )
    .await;
    assert_eq!(status, 422, "{problem}");
    assert!(problem.to_string().contains("run_timeout"), "{problem}");
    worker.stop().await;
}
