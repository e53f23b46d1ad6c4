//! Idempotency under faults, against the real engine: retried `log_run`,
//! re-delivered fires, a worker stopped mid-run, and the SSRF guard.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use acp_service::faults::Faults;
use common::*;
use serde_json::{Value, json};
use sqlx::PgPool;
use temporalio_client::grpc::WorkflowService;
use temporalio_common::protos::temporal::api::common::v1::WorkflowExecution;
use temporalio_common::protos::temporal::api::enums::v1::{EventType, ScheduleOverlapPolicy};
use temporalio_common::protos::temporal::api::history::v1::history_event::Attributes;
use temporalio_common::protos::temporal::api::schedule::v1::{BackfillRequest, SchedulePatch};
use temporalio_common::protos::temporal::api::workflowservice::v1::{
    GetWorkflowExecutionHistoryRequest, PatchScheduleRequest,
};
use tonic::IntoRequest;

async fn app(pool: PgPool) -> TestApp {
    let server = shared_temporal();
    let namespace = new_namespace(&server.address()).await;
    TestApp::spawn(pool, &server.address(), &namespace).await
}

fn event_activity(tasks: Value) -> Value {
    json!({"name": "manual", "trigger": {"type": "event", "event_types": ["test.manual"]}, "tasks": tasks})
}

async fn history(
    app: &TestApp,
    execution: WorkflowExecution,
) -> Vec<temporalio_common::protos::temporal::api::history::v1::HistoryEvent> {
    let mut client = app
        .state
        .services
        .activities
        .gateway()
        .client()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let request = GetWorkflowExecutionHistoryRequest {
        namespace: app.namespace.clone(),
        execution: Some(execution),
        maximum_page_size: 1000,
        ..Default::default()
    };
    WorkflowService::get_workflow_execution_history(&mut client, request.into_request())
        .await
        .unwrap_or_else(|e| panic!("history: {e}"))
        .into_inner()
        .history
        .map(|h| h.events)
        .unwrap_or_default()
}

#[sqlx::test(migrations = "./migrations")]
async fn log_run_failing_after_its_insert_leaves_one_row(pool: PgPool) {
    let app = app(pool.clone()).await;
    let faults = Arc::new(Faults::default());
    faults.fail_log_run_after_insert.store(1, Ordering::SeqCst);
    let worker = app.worker(false, faults.clone());
    let created = app
        .create(&event_activity(json!([{"task_type": "noop"}])))
        .await;
    let id = created["id"].as_str().unwrap_or_default().to_owned();

    let (status, started) = trigger(&app, &id, Some("fault-1")).await;
    assert_eq!(status, 202, "{started}");
    let run = wait_run_done(
        &app,
        started["run_id"].as_str().unwrap_or_default(),
        Duration::from_secs(60),
    )
    .await;
    assert_eq!(run["status"], "succeeded", "{run}");
    // The fault fired (the first attempt failed after inserting), the retry succeeded.
    assert_eq!(faults.fail_log_run_after_insert.load(Ordering::SeqCst), 0);
    let (rows,): (i64,) =
        sqlx::query_as("SELECT count(*) FROM activity_runs WHERE workflow_id = $1")
            .bind(started["workflow_id"].as_str().unwrap_or_default())
            .fetch_one(&pool)
            .await
            .unwrap_or((0,));
    assert_eq!(rows, 1);
    assert_eq!(run["workflow_id"], format!("activity-{id}:manual-fault-1"));
    worker.stop().await;
}

#[sqlx::test(migrations = "./migrations")]
async fn a_repeated_manual_trigger_is_a_duplicate(pool: PgPool) {
    let app = app(pool).await;
    let worker = app.worker(false, Default::default());
    let created = app
        .create(&event_activity(json!([{"task_type": "noop"}])))
        .await;
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    let (first, a) = trigger(&app, &id, Some("same-key")).await;
    let (second, b) = trigger(&app, &id, Some("same-key")).await;
    assert_eq!((first, a["outcome"].clone()), (202, json!("started")));
    assert_eq!((second, b["outcome"].clone()), (200, json!("duplicate")));
    assert_eq!(a["run_id"], b["run_id"]);
    wait_run_done(
        &app,
        a["run_id"].as_str().unwrap_or_default(),
        Duration::from_secs(60),
    )
    .await;
    // After it finished, still a duplicate (RejectDuplicate, not just "running").
    let (third, c) = trigger(&app, &id, Some("same-key")).await;
    assert_eq!((third, c["outcome"].clone()), (200, json!("duplicate")));
    assert_eq!(app.runs_of(&id).await.len(), 1);
    // Without a key, every trigger is its own run.
    let (status, d) = trigger(&app, &id, None).await;
    assert_eq!(status, 202);
    assert!(d["key"].as_str().is_some_and(|k| !k.is_empty()));
    // Unknown activities are 404, and the key is validated.
    let (status, _) = trigger(&app, &uuid::Uuid::new_v4().to_string(), None).await;
    assert_eq!(status, 404);
    worker.stop().await;
}

#[sqlx::test(migrations = "./migrations")]
async fn backfilling_an_already_run_time_is_a_duplicate(pool: PgPool) {
    let app = app(pool).await;
    let worker = app.worker(false, Default::default());
    let created = app
        .create(&activity_with(
            json!({"type": "interval", "every": "PT1H", "misfire_policy": "catchup"}),
        ))
        .await;
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    let schedule_id = format!("activity-{id}");
    let now = chrono::Utc::now().timestamp();
    let nominal =
        chrono::DateTime::from_timestamp(now - now.rem_euclid(3600) - 3600, 0).unwrap_or_default();
    let mut client = app
        .state
        .services
        .activities
        .gateway()
        .client()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let backfill = |client: &mut temporalio_client::Client| {
        let request = PatchScheduleRequest {
            namespace: app.namespace.clone(),
            schedule_id: schedule_id.clone(),
            patch: Some(SchedulePatch {
                backfill_request: vec![BackfillRequest {
                    start_time: Some(prost_wkt_types::Timestamp {
                        seconds: nominal.timestamp(),
                        nanos: 0,
                    }),
                    end_time: Some(prost_wkt_types::Timestamp {
                        seconds: nominal.timestamp(),
                        nanos: 0,
                    }),
                    overlap_policy: ScheduleOverlapPolicy::AllowAll as i32,
                }],
                ..Default::default()
            }),
            request_id: uuid::Uuid::new_v4().to_string(),
            ..Default::default()
        };
        let mut client = client.clone();
        async move {
            WorkflowService::patch_schedule(&mut client, request.into_request())
                .await
                .unwrap_or_else(|e| panic!("backfill: {e}"));
        }
    };
    backfill(&mut client).await;
    let run = eventually(Duration::from_secs(60), || async {
        app.runs_of(&id)
            .await
            .into_iter()
            .find(|r| r["status"] == "succeeded")
    })
    .await;
    let expected = format!(
        "activity-{id}:{}",
        nominal.format("%Y-%m-%dT%H:%M:%S+00:00")
    );
    assert_eq!(run["workflow_id"], expected);

    // The same nominal time again: a second launcher runs, finds the contract
    // ID taken, and reports a duplicate. Still one run. (Wait for the first
    // launcher to close: the schedule cannot start a second one under the
    // same launcher ID while the first still runs.)
    let launcher_id = format!("launcher-{id}-{}", nominal.format("%Y-%m-%dT%H:%M:%SZ"));
    eventually(Duration::from_secs(60), || async {
        (executions_matching(
            &app,
            &format!("WorkflowId = '{launcher_id}' AND ExecutionStatus = 'Completed'"),
        )
        .await
        .len()
            == 1)
            .then_some(())
    })
    .await;
    backfill(&mut client).await;
    let outcomes = eventually(Duration::from_secs(60), || async {
        let runs = executions(&app, &launcher_id).await;
        if runs.len() < 2 {
            return None;
        }
        let mut outcomes = Vec::new();
        for execution in runs {
            let events = history(&app, execution).await;
            let result = events.iter().find_map(|e| match &e.attributes {
                Some(Attributes::WorkflowExecutionCompletedEventAttributes(done)) => done
                    .result
                    .as_ref()
                    .and_then(|p| p.payloads.first())
                    .and_then(|p| serde_json::from_slice::<Value>(&p.data).ok()),
                _ => None,
            })?;
            outcomes.push(result["outcome"].as_str().unwrap_or_default().to_owned());
        }
        Some(outcomes)
    })
    .await;
    let mut sorted = outcomes.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        vec!["duplicate".to_owned(), "started".to_owned()],
        "{outcomes:?}"
    );
    let runs = app.runs_of(&id).await;
    assert_eq!(runs.len(), 1, "{runs:?}");
    worker.stop().await;
}

#[sqlx::test(migrations = "./migrations")]
async fn a_worker_stopped_mid_run_resumes_without_respawning_tasks(pool: PgPool) {
    let app = app(pool.clone()).await;
    let slow = WebhookSink::start(200, Duration::from_secs(3)).await;
    let created = app
        .create(&event_activity(json!([
            {"task_type": "noop"},
            {"task_type": "webhook", "config": {"url": slow.url}},
            {"task_type": "noop"}
        ])))
        .await;
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    let worker = app.worker(true, Default::default());
    let (_, started) = trigger(&app, &id, Some("restart")).await;
    let run_id = started["run_id"].as_str().unwrap_or_default().to_owned();
    eventually(Duration::from_secs(60), || async {
        (slow.count() >= 1).then_some(())
    })
    .await;
    worker.stop().await;
    let (_, during) = json(app.get(&format!("/v1/runs/{run_id}")).await).await;
    assert_eq!(during["status"], "running", "{during}");

    // A new worker, with an empty cache, replays the run and finishes it.
    let worker = app.worker(true, Default::default());
    let run = wait_run_done(&app, &run_id, Duration::from_secs(90)).await;
    assert_eq!(run["status"], "succeeded", "{run}");
    let tasks = run["tasks"].as_array().cloned().unwrap_or_default();
    assert_eq!(tasks.len(), 3);
    assert!(tasks.iter().all(|t| t["status"] == "succeeded"));

    // Temporal's own record: three children started by the run, each task ID
    // executed exactly once.
    let run_executions =
        executions(&app, started["workflow_id"].as_str().unwrap_or_default()).await;
    assert_eq!(run_executions.len(), 1);
    let events = history(&app, run_executions[0].clone()).await;
    let children = events
        .iter()
        .filter(|e| e.event_type == EventType::ChildWorkflowExecutionStarted as i32)
        .count();
    assert_eq!(children, 3);
    for task in &tasks {
        let workflow_id = task["workflow_id"].as_str().unwrap_or_default();
        assert_eq!(
            executions(&app, workflow_id).await.len(),
            1,
            "{workflow_id}"
        );
    }
    let (rows,): (i64,) = sqlx::query_as("SELECT count(*) FROM task_instances WHERE run_id = $1")
        .bind(uuid::Uuid::parse_str(&run_id).unwrap_or_default())
        .fetch_one(&pool)
        .await
        .unwrap_or((0,));
    assert_eq!(rows, 3);
    worker.stop().await;
}

#[sqlx::test(migrations = "./migrations")]
async fn webhooks_to_loopback_are_refused_unless_allowed(pool: PgPool) {
    let app = app(pool).await;
    let sink = WebhookSink::start(200, Duration::ZERO).await;
    let created = app
        .create(&event_activity(
            json!([{"task_type": "webhook", "config": {"url": sink.url}}]),
        ))
        .await;
    let id = created["id"].as_str().unwrap_or_default().to_owned();

    let guarded = app.worker(false, Default::default());
    let (_, started) = trigger(&app, &id, Some("guarded")).await;
    let run = wait_run_done(
        &app,
        started["run_id"].as_str().unwrap_or_default(),
        Duration::from_secs(60),
    )
    .await;
    assert_eq!(run["status"], "failed", "{run}");
    let task = &run["tasks"][0];
    assert_eq!(task["status"], "failed");
    let error = task["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("internal address") && error.contains("127.0.0.1"),
        "{error}"
    );
    assert!(
        run["error"]
            .as_str()
            .is_some_and(|e| e.contains("task 0 (webhook) failed")),
        "{run}"
    );
    assert_eq!(sink.count(), 0, "the guard let a request through");
    guarded.stop().await;

    let allowed = app.worker(true, Default::default());
    let (_, started) = trigger(&app, &id, Some("allowed")).await;
    let run = wait_run_done(
        &app,
        started["run_id"].as_str().unwrap_or_default(),
        Duration::from_secs(60),
    )
    .await;
    assert_eq!(run["status"], "succeeded", "{run}");
    assert_eq!(sink.count(), 1);
    allowed.stop().await;
}
