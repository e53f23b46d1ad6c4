//! Schedules do real work: an interval activity runs its tasks, with the
//! idempotency contract's exact IDs, a signed webhook, and full history.
//! The webhook's secret, ACP_TEST_HOOK_SECRET, is in the test process's
//! environment from the start (.cargo/config.toml's `[env]`).

use crate::common;

use std::time::Duration;

use common::*;
use serde_json::{Value, json};
use sqlx::PgPool;

#[sqlx::test(migrations = "./migrations")]
async fn interval_activity_runs_noop_and_signed_webhook_tasks(pool: PgPool) {
    let sink = WebhookSink::start(200, Duration::ZERO).await;
    let server = shared_temporal();
    let namespace = new_namespace(&server.address()).await;
    let app = TestApp::spawn(pool.clone(), &server.address(), &namespace).await;
    let worker = app.worker(true, Default::default());

    let created = app
        .create(&json!({
            "name": "every-two-seconds",
            "trigger": {"type": "interval", "every": "PT2S"},
            "tasks": [
                {"task_type": "noop"},
                {"task_type": "noop", "name": "second"},
                {"task_type": "webhook", "config": {"url": sink.url, "secret_ref": "ACP_TEST_HOOK_SECRET"}}
            ],
            // Legacy: must not suppress consecutive fires with identical content.
            "dedupe_key_strategy": "skip"
        }))
        .await;
    let id = created["id"].as_str().unwrap_or_default().to_owned();

    let runs = eventually(Duration::from_secs(60), || async {
        let runs = app.runs_of(&id).await;
        let done: Vec<Value> = runs
            .into_iter()
            .filter(|r| r["status"] == "succeeded")
            .collect();
        (done.len() >= 2).then_some(done)
    })
    .await;
    // Pause it so the rest of the test looks at a settled history.
    let (status, _) = json(
        app.patch(&format!("/v1/activities/{id}"), &json!({"enabled": false}))
            .await,
    )
    .await;
    assert_eq!(status, 200);

    let mut nominal_times = Vec::new();
    for run in &runs {
        let scheduled_for =
            chrono::DateTime::parse_from_rfc3339(run["scheduled_for"].as_str().unwrap_or_default())
                .unwrap_or_else(|e| panic!("{e}: {run}"))
                .with_timezone(&chrono::Utc);
        nominal_times.push(scheduled_for);
        // The contract ID, exactly: Python isoformat, UTC, +00:00.
        let expected = format!(
            "activity-{id}:{}",
            scheduled_for.format("%Y-%m-%dT%H:%M:%S+00:00")
        );
        assert_eq!(run["workflow_id"], expected);
        assert_eq!(
            run["run_id"],
            acp_domain::ids::run_id(&expected).to_string()
        );
        assert_eq!(run["trigger_type"], "interval");
        assert_eq!(run["definition_version"], 1);
        // The window is [previous nominal time, scheduled_for).
        assert_eq!(run["window_end"], run["scheduled_for"]);
        let start =
            chrono::DateTime::parse_from_rfc3339(run["window_start"].as_str().unwrap_or_default())
                .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (scheduled_for - start.with_timezone(&chrono::Utc)).num_seconds(),
            2
        );
        assert_eq!(run["tasks_total"], 3);
        assert_eq!(run["tasks_succeeded"], 3);

        let (status, detail) = json(
            app.get(&format!(
                "/v1/runs/{}",
                run["run_id"].as_str().unwrap_or_default()
            ))
            .await,
        )
        .await;
        assert_eq!(status, 200);
        let tasks = detail["tasks"].as_array().cloned().unwrap_or_default();
        assert_eq!(tasks.len(), 3, "{detail}");
        for (index, (task, kind)) in tasks.iter().zip(["noop", "noop", "webhook"]).enumerate() {
            let workflow_id = format!(
                "task-{}:{kind}:{index}",
                run["run_id"].as_str().unwrap_or_default()
            );
            assert_eq!(task["workflow_id"], workflow_id);
            assert_eq!(
                task["id"],
                acp_domain::ids::task_instance_id(&workflow_id).to_string()
            );
            assert_eq!(task["status"], "succeeded");
            assert_eq!(task["index"], index);
            assert!(task["attempts"].as_i64().unwrap_or(0) >= 1);
        }
        assert_eq!(tasks[2]["output"]["status"], 200);
    }
    nominal_times.sort();
    nominal_times.dedup();
    assert_eq!(
        nominal_times.len(),
        runs.len(),
        "two runs for one nominal time"
    );

    // The webhook got `{run, task, context}` signed with HMAC-SHA256 of the body.
    let received = sink.bodies();
    assert!(received.len() >= runs.len());
    for (headers, body) in &received {
        let signature = headers
            .get("x-signature")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        assert_eq!(
            signature,
            acp_temporal::webhook::sign(b"s3cret-for-tests", body)
        );
        let payload: Value = serde_json::from_slice(body).unwrap_or_default();
        assert_eq!(payload["run"]["activity_id"], id);
        assert_eq!(payload["task"]["task_type"], "webhook");
        assert_eq!(payload["task"]["index"], 2);
        assert!(payload["context"]["window"]["start"].is_string());
    }
    // Identical content on consecutive fires ran every time (dedupe_key_strategy is inert).
    let contents: Vec<Value> = runs
        .iter()
        .map(|r| json!({"tasks": r["tasks_total"], "version": r["definition_version"]}))
        .collect();
    assert!(contents.windows(2).all(|w| w[0] == w[1]));

    // Rows in PostgreSQL match: one per run, one per task, nothing duplicated.
    let (run_rows,): (i64,) =
        sqlx::query_as("SELECT count(*) FROM activity_runs WHERE activity_id = $1")
            .bind(uuid::Uuid::parse_str(&id).unwrap_or_default())
            .fetch_one(&pool)
            .await
            .unwrap_or((0,));
    let (task_rows,): (i64,) = sqlx::query_as(
        "SELECT count(*) FROM task_instances t JOIN activity_runs r USING (run_id) WHERE r.activity_id = $1",
    )
    .bind(uuid::Uuid::parse_str(&id).unwrap_or_default())
    .fetch_one(&pool)
    .await
    .unwrap_or((0,));
    assert!(run_rows >= 2);
    assert!(task_rows >= 2 * 3 && task_rows <= run_rows * 3);

    // The global history and its filters show the same runs.
    let (status, page) = json(
        app.get(&format!(
            "/v1/runs?activity_id={id}&status=succeeded&trigger_type=interval"
        ))
        .await,
    )
    .await;
    assert_eq!(status, 200);
    assert!(page["items"].as_array().map(Vec::len).unwrap_or(0) >= 2);
    worker.stop().await;
}
