//! Replay: the workflow code must keep replaying histories that earlier
//! versions of it recorded, or runs in flight during a deploy break with a
//! nondeterminism error.
//!
//! Normally this replays every fixture in `tests/fixtures/histories/` with
//! the SDK's `WorkflowReplayer` against the current workflow code. With
//! `ACP_RECORD_HISTORIES=1`, `record_histories` first runs real runs on a dev
//! server and (re)writes the fixtures:
//!
//! ```text
//! ACP_RECORD_HISTORIES=1 cargo test --test suite replay::record_histories
//! ```
//!
//! Each recording goes into its own folder, named by `ACP_HISTORIES_LABEL`
//! (default: today's date). Record with the workflow code of the version
//! whose in-flight runs must survive, and never re-record to make a failing
//! replay pass: a new recording is an addition, not a replacement.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use acp_temporal::workflows::{
    LaunchScheduledRunWorkflow, RunActivityWorkflow, TaskInstanceWorkflow,
};
use common::*;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sqlx::PgPool;
use temporalio_client::grpc::WorkflowService;
use temporalio_common::protos::temporal::api::common::v1::WorkflowExecution;
use temporalio_common::protos::temporal::api::history::v1::History;
use temporalio_common::protos::temporal::api::history::v1::history_event::Attributes;
use temporalio_common::protos::temporal::api::workflowservice::v1::GetWorkflowExecutionHistoryRequest;
use temporalio_sdk::workflow_replayer::{WorkflowReplayer, WorkflowReplayerOptions};
use tonic::IntoRequest;

/// One recorded workflow history and what it shows.
#[derive(Serialize, Deserialize)]
struct Fixture {
    /// What run this is, for a reader of the file.
    about: String,
    workflow_type: String,
    workflow_id: String,
    /// The SDK's own serde form of the history (payloads in base64).
    history: History,
}

fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/histories")
}

/// Every `*.json` in the recordings' folders.
fn fixture_files() -> Vec<PathBuf> {
    let entries = |dir: &Path| -> Vec<PathBuf> {
        std::fs::read_dir(dir)
            .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default()
    };
    let mut files: Vec<PathBuf> = entries(&fixtures_dir())
        .into_iter()
        .filter(|p| p.is_dir())
        .flat_map(|dir| entries(&dir))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
}

/// Where `record_histories` writes this recording.
fn recording_dir() -> PathBuf {
    let label = std::env::var("ACP_HISTORIES_LABEL")
        .unwrap_or_else(|_| chrono::Utc::now().format("%Y-%m-%d").to_string());
    fixtures_dir().join(label)
}

fn load(path: &Path) -> Fixture {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn replayer() -> WorkflowReplayer {
    let options = WorkflowReplayerOptions::new()
        .register_workflow::<LaunchScheduledRunWorkflow>()
        .and_then(|o| o.register_workflow::<RunActivityWorkflow>())
        .and_then(|o| o.register_workflow::<TaskInstanceWorkflow>())
        .unwrap_or_else(|e| panic!("register: {e}"))
        .build();
    WorkflowReplayer::new(options).unwrap_or_else(|e| panic!("replayer: {e}"))
}

#[tokio::test]
async fn recorded_histories_replay_against_the_current_workflow_code() {
    if std::env::var("ACP_RECORD_HISTORIES").as_deref() == Ok("1") {
        // The fixtures are being rewritten by `record_histories` right now.
        return;
    }
    let files = fixture_files();
    // Every workflow type and both outcomes of a task are covered.
    let fixtures: Vec<(String, Fixture)> = files
        .iter()
        .map(|p| (p.display().to_string(), load(p)))
        .collect();
    for kind in [
        "LaunchScheduledRunWorkflow",
        "RunActivityWorkflow",
        "TaskInstanceWorkflow",
    ] {
        assert!(
            fixtures.iter().any(|(_, f)| f.workflow_type == kind),
            "no recorded {kind} history in {}",
            fixtures_dir().display()
        );
    }
    let replayer = replayer();
    let mut failures = Vec::new();
    for (path, fixture) in fixtures {
        let mut history = fixture.history;
        // The replayer runs the workflow under the ID recorded in its first
        // event; the workflows derive their run and task IDs from it.
        if let Some(Attributes::WorkflowExecutionStartedEventAttributes(started)) = history
            .events
            .first_mut()
            .and_then(|e| e.attributes.as_mut())
            && started.workflow_id.is_empty()
        {
            started.workflow_id = fixture.workflow_id.clone();
        }
        if let Err(err) = replayer.replay_workflow(history.into()).await {
            failures.push(format!("{path} ({}): {err}", fixture.about));
        }
    }
    assert!(
        failures.is_empty(),
        "histories that no longer replay:\n{}",
        failures.join("\n")
    );
}

/// The complete history of one workflow execution.
async fn history_of(app: &TestApp, workflow_id: &str) -> History {
    let mut client = app
        .state
        .services
        .activities
        .gateway()
        .client()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let mut events = Vec::new();
    let mut next_page_token = Vec::new();
    loop {
        let request = GetWorkflowExecutionHistoryRequest {
            namespace: app.namespace.clone(),
            execution: Some(WorkflowExecution {
                workflow_id: workflow_id.to_owned(),
                run_id: String::new(),
            }),
            next_page_token,
            ..Default::default()
        };
        let page =
            WorkflowService::get_workflow_execution_history(&mut client, request.into_request())
                .await
                .unwrap_or_else(|e| panic!("history of {workflow_id}: {e}"))
                .into_inner();
        events.extend(page.history.map(|h| h.events).unwrap_or_default());
        if page.next_page_token.is_empty() {
            break;
        }
        next_page_token = page.next_page_token;
    }
    History { events }
}

async fn record(app: &TestApp, name: &str, about: &str, workflow_type: &str, workflow_id: &str) {
    let history = history_of(app, workflow_id).await;
    let fixture = Fixture {
        about: about.to_owned(),
        workflow_type: workflow_type.to_owned(),
        workflow_id: workflow_id.to_owned(),
        history,
    };
    let text = serde_json::to_string_pretty(&fixture).unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(recording_dir()).unwrap_or_else(|e| panic!("{e}"));
    let path = recording_dir().join(format!("{name}.json"));
    std::fs::write(&path, text + "\n").unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    eprintln!("recorded {}", path.display());
}

/// Records the run workflow and the task workflows of one finished run.
async fn record_run(app: &TestApp, name: &str, about: &str, run: &Value) {
    let run_id = run["run_id"].as_str().unwrap_or_default();
    let workflow_id = run["workflow_id"].as_str().unwrap_or_default();
    record(
        app,
        &format!("{name}-run"),
        about,
        "RunActivityWorkflow",
        workflow_id,
    )
    .await;
    let (_, detail) = json(app.get(&format!("/v1/runs/{run_id}")).await).await;
    for task in detail["tasks"].as_array().cloned().unwrap_or_default() {
        // A task a cancellation kept from starting has no workflow.
        if task["started_at"].is_null() {
            continue;
        }
        let task_workflow = task["workflow_id"].as_str().unwrap_or_default();
        let label = format!(
            "{name}-task-{}-{}",
            task["index"],
            task["task_type"].as_str().unwrap_or_default()
        );
        let about = format!(
            "{about}: task {} ({})",
            task["index"],
            task["status"].as_str().unwrap_or_default()
        );
        record(app, &label, &about, "TaskInstanceWorkflow", task_workflow).await;
    }
}

/// Triggers an activity by hand and waits for its run to end.
async fn manual_run(app: &TestApp, tasks: Value) -> Value {
    let created = app
        .create(&json!({
            "name": "replay-fixture",
            "trigger": {"type": "event", "event_types": ["replay.fixture"]},
            "tasks": tasks,
        }))
        .await;
    let id = created["id"].as_str().unwrap_or_default();
    let (status, started) = trigger(app, id, None).await;
    assert_eq!(status, 202, "{started}");
    let run_id = started["run_id"].as_str().unwrap_or_default();
    wait_run_done(app, run_id, Duration::from_secs(90)).await
}

#[sqlx::test(migrations = "./migrations")]
async fn record_histories(pool: PgPool) {
    if std::env::var("ACP_RECORD_HISTORIES").as_deref() != Ok("1") {
        return;
    }
    let ok = WebhookSink::start(200, Duration::ZERO).await;
    let failing = WebhookSink::start(500, Duration::ZERO).await;
    let refusing = WebhookSink::start(404, Duration::ZERO).await;
    let unavailable = WebhookSink::start(503, Duration::ZERO).await;
    let server = shared_temporal();
    let namespace = new_namespace(&server.address()).await;
    let app = TestApp::spawn(pool.clone(), &server.address(), &namespace).await;
    let worker = app.worker(true, Default::default());

    // A scheduled run: launcher, run, a noop and a webhook that succeeds.
    let created = app
        .create(&json!({
            "name": "replay-fixture-scheduled",
            "trigger": {"type": "interval", "every": "PT2S"},
            "tasks": [
                {"task_type": "noop"},
                {"task_type": "webhook", "name": "notify", "config": {"url": ok.url, "timeout": "PT5S"}}
            ]
        }))
        .await;
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    let run = eventually(Duration::from_secs(60), || async {
        app.runs_of(&id)
            .await
            .into_iter()
            .find(|r| r["status"] == "succeeded")
    })
    .await;
    let (status, _) = json(
        app.patch(&format!("/v1/activities/{id}"), &json!({"enabled": false}))
            .await,
    )
    .await;
    assert_eq!(status, 200);
    let scheduled_for = at(&run["scheduled_for"]);
    let launcher = format!(
        "launcher-{id}-{}",
        scheduled_for.format("%Y-%m-%dT%H:%M:%SZ")
    );
    // The launcher ends after its run: wait for it to close.
    eventually(Duration::from_secs(30), || async {
        let closed = history_of(&app, &launcher).await.events.iter().any(|e| {
            matches!(
                e.attributes,
                Some(Attributes::WorkflowExecutionCompletedEventAttributes(_))
            )
        });
        closed.then_some(())
    })
    .await;
    record(
        &app,
        "scheduled-launcher",
        "a scheduled fire whose run succeeded",
        "LaunchScheduledRunWorkflow",
        &launcher,
    )
    .await;
    record_run(
        &app,
        "scheduled",
        "a scheduled run: noop + webhook, succeeded",
        &run,
    )
    .await;

    // A webhook that answers 500: retried until the attempts run out.
    let run = manual_run(
        &app,
        json!([{"task_type": "noop"}, {"task_type": "webhook", "config": {"url": failing.url}}]),
    )
    .await;
    assert_eq!(run["status"], "failed", "{run}");
    record_run(
        &app,
        "failing-500",
        "a webhook answering 500, retried, failed",
        &run,
    )
    .await;

    // A webhook that answers 404: not retried.
    let run = manual_run(
        &app,
        json!([{"task_type": "webhook", "config": {"url": refusing.url}}]),
    )
    .await;
    assert_eq!(run["status"], "failed", "{run}");
    record_run(
        &app,
        "failing-404",
        "a webhook answering 404, not retried, failed",
        &run,
    )
    .await;

    // Task policies: a timeout and a retry policy, and a listed status that
    // ends the task at once.
    let run = manual_run(
        &app,
        json!([{"task_type": "webhook", "config": {"url": unavailable.url}, "timeout": "PT2S",
                "retry": {"max_attempts": 3, "initial_interval": "PT0.1S", "backoff": 1.5,
                          "max_interval": "PT1S", "non_retryable": [503]}}]),
    )
    .await;
    assert_eq!(run["status"], "failed", "{run}");
    assert_eq!(run["tasks"][0]["attempts"], 1, "{run}");
    record_run(
        &app,
        "policies-503",
        "a webhook with task policies answering 503, listed as not retryable",
        &run,
    )
    .await;

    // A run cancelled while its first webhook blocks: the run and that task
    // end cancelled, the second task never starts.
    let blocking = WebhookSink::start(200, Duration::from_secs(20)).await;
    let created = app
        .create(&json!({
            "name": "replay-fixture-cancel",
            "trigger": {"type": "event", "event_types": ["replay.fixture"]},
            "tasks": [
                {"task_type": "webhook", "config": {"url": blocking.url}, "timeout": "PT30S"},
                {"task_type": "noop"}
            ],
        }))
        .await;
    let id = created["id"].as_str().unwrap_or_default();
    let (status, started) = trigger(&app, id, None).await;
    assert_eq!(status, 202, "{started}");
    eventually(Duration::from_secs(30), || async {
        (blocking.count() == 1).then_some(())
    })
    .await;
    let run_id = started["run_id"].as_str().unwrap_or_default();
    let (status, answer) = json(
        app.post(
            &format!("/v1/runs/{run_id}/cancel"),
            &json!({"reason": "fixture"}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 202, "{answer}");
    let run = wait_run_done(&app, run_id, Duration::from_secs(60)).await;
    assert_eq!(run["status"], "cancelled", "{run}");
    // The row is written a moment before the workflows close.
    let workflow_id = run["workflow_id"].as_str().unwrap_or_default().to_owned();
    for wf in [workflow_id, format!("task-{run_id}:webhook:0")] {
        eventually(Duration::from_secs(30), || async {
            let closed = history_of(&app, &wf).await.events.iter().any(|e| {
                matches!(
                    e.attributes,
                    Some(Attributes::WorkflowExecutionCanceledEventAttributes(_))
                )
            });
            closed.then_some(())
        })
        .await;
    }
    record_run(
        &app,
        "cancelled",
        "a run cancelled while its first webhook blocked",
        &run,
    )
    .await;

    worker.stop().await;
}
