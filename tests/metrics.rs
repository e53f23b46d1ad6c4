//! `/metrics` moves with what the service does: a run counts for its
//! activity and status, event dispatches count by outcome, a sync that
//! Temporal did not take counts as a failure, and requests, reconcile
//! passes and worker activities are timed.

use crate::common;

use std::collections::HashMap;
use std::time::Duration;

use acp::duties::reconcile::Reconciler;
use common::*;
use serde_json::json;
use sqlx::PgPool;

/// The samples of a Prometheus text page, keyed by `name{labels}` exactly as
/// the page writes them (labels in the order the registry emits: sorted).
async fn scrape(app: &TestApp) -> (String, HashMap<String, f64>) {
    // Unauthenticated on purpose: /metrics stays open.
    let response = reqwest::get(app.url("/metrics"))
        .await
        .unwrap_or_else(|e| panic!("GET /metrics: {e}"));
    assert_eq!(response.status(), 200);
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    assert!(content_type.starts_with("text/plain"), "{content_type}");
    let text = response.text().await.unwrap_or_default();
    let samples = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| {
            let (key, value) = l.rsplit_once(' ')?;
            Some((key.to_owned(), value.parse().ok()?))
        })
        .collect();
    (text, samples)
}

fn sample(samples: &HashMap<String, f64>, key: &str) -> f64 {
    samples.get(key).copied().unwrap_or(0.0)
}

#[sqlx::test(migrations = "./migrations")]
async fn metrics_move_with_runs_dispatches_syncs_and_requests(pool: PgPool) {
    let server = shared_temporal();
    let namespace = new_namespace(&server.address()).await;
    let app = TestApp::spawn(pool.clone(), &server.address(), &namespace).await;
    let worker = app.worker(false, Default::default());

    // Families with known label values are there, at zero, from the start.
    let (_, before) = scrape(&app).await;
    for series in [
        "acp_skipped_fires_total{reason=\"misfire\"}",
        "acp_skipped_fires_total{reason=\"catchup_limit\"}",
        "acp_skipped_fires_total{reason=\"compressed\"}",
        "acp_event_dispatches_total{outcome=\"started\"}",
        "acp_event_dispatches_total{outcome=\"duplicate\"}",
        "acp_schedule_sync_failures_total{state=\"pending\"}",
        "acp_schedule_sync_failures_total{state=\"error\"}",
        "acp_reconcile_duration_seconds_count",
    ] {
        assert!(before.contains_key(series), "{series} missing");
    }

    let created = app
        .create(&json!({
            "name": "metered",
            "trigger": {"type": "event", "event_types": ["metrics.test"]},
            "tasks": [{"task_type": "noop"}, {"task_type": "noop"}]
        }))
        .await;
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    // Labelled with the activity's project too (the test's key acts in `default`).
    let succeeded =
        format!("acp_runs_total{{activity_id=\"{id}\",project=\"default\",status=\"succeeded\"}}");
    assert_eq!(sample(&before, &succeeded), 0.0);

    // A manual run: the runs counter for this activity and status moves by one.
    let (status, started) = trigger(&app, &id, None).await;
    assert_eq!(status, 202, "{started}");
    let run = wait_run_done(
        &app,
        started["run_id"].as_str().unwrap_or_default(),
        Duration::from_secs(60),
    )
    .await;
    assert_eq!(run["status"], "succeeded", "{run}");
    let after_run = eventually(Duration::from_secs(10), || async {
        let (_, samples) = scrape(&app).await;
        (sample(&samples, &succeeded) == 1.0).then_some(samples)
    })
    .await;
    let trigger_requests = "acp_http_requests_total{method=\"POST\",route=\"/v1/activities/{id}/trigger\",status=\"202\"}";
    assert_eq!(sample(&after_run, trigger_requests), 1.0);
    let trigger_latency = "acp_http_request_duration_seconds_count{method=\"POST\",route=\"/v1/activities/{id}/trigger\"}";
    assert_eq!(sample(&after_run, trigger_latency), 1.0);
    // The worker timed its activities: the run's log_run and two noop tasks at least.
    let task_timings: f64 = after_run
        .iter()
        .filter(|(k, _)| k.starts_with("acp_task_duration_seconds_count{"))
        .map(|(_, v)| v)
        .sum();
    assert!(task_timings >= 3.0, "{after_run:?}");
    // IDs appear only as the activity label: routes are templates.
    assert!(
        !after_run
            .keys()
            .any(|k| k.starts_with("acp_http")
                && k.contains(started["run_id"].as_str().unwrap_or("-"))),
        "a run ID leaked into an HTTP label"
    );

    // An event delivered twice: one `started`, then one `duplicate`.
    let started_key = "acp_event_dispatches_total{outcome=\"started\"}";
    let duplicate_key = "acp_event_dispatches_total{outcome=\"duplicate\"}";
    let event = json!({"event_id": "metrics-1", "event_type": "metrics.test", "source": "tests", "payload": {}});
    for _ in 0..2 {
        let response = app
            .http
            .post(app.url("/v1/events"))
            .header("prefer", "wait=10")
            .json(&event)
            .send()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let (status, body) = json(response).await;
        assert_eq!(status, 200, "{body}");
    }
    let (_, after_events) = scrape(&app).await;
    assert_eq!(
        sample(&after_events, started_key) - sample(&after_run, started_key),
        1.0
    );
    assert_eq!(
        sample(&after_events, duplicate_key) - sample(&after_run, duplicate_key),
        1.0
    );
    let event_run = eventually(Duration::from_secs(60), || async {
        let runs = app.runs_of(&id).await;
        runs.iter()
            .any(|r| r["status"] == "succeeded" && r["trigger_type"] == "event")
            .then_some(())
    });
    event_run.await;
    // The worker counts a run after it records its end, as for the manual run.
    let after_event_run = eventually(Duration::from_secs(10), || async {
        let (_, samples) = scrape(&app).await;
        (sample(&samples, &succeeded) >= 2.0).then_some(samples)
    })
    .await;

    // A schedule Temporal cannot take: a sync failure, state pending.
    let pending_key = "acp_schedule_sync_failures_total{state=\"pending\"}";
    let offline = TestApp::without_temporal(pool.clone()).await;
    let cron = offline
        .create(&json!({
            "name": "offline",
            "trigger": {"type": "cron", "cron": "0 * * * *", "timezone": "UTC"},
            "tasks": [{"task_type": "noop"}]
        }))
        .await;
    assert_eq!(cron["schedule"]["sync_state"], "pending", "{cron}");
    let (_, after_sync) = scrape(&app).await;
    assert!(sample(&after_sync, pending_key) >= sample(&after_event_run, pending_key) + 1.0);

    // A reconcile pass is timed.
    let passes = "acp_reconcile_duration_seconds_count";
    let report = Reconciler::new(&app.state.services)
        .pass()
        .await
        .unwrap_or_else(|e| panic!("pass: {e}"));
    assert!(report.ran);
    let (text, after_pass) = scrape(&app).await;
    assert_eq!(
        sample(&after_pass, passes),
        sample(&after_sync, passes) + 1.0
    );
    // Every family has appeared by now.
    for family in [
        "acp_http_requests_total",
        "acp_http_request_duration_seconds",
        "acp_runs_total",
        "acp_skipped_fires_total",
        "acp_event_dispatches_total",
        "acp_schedule_sync_failures_total",
        "acp_reconcile_duration_seconds",
        "acp_task_duration_seconds",
    ] {
        assert!(
            text.contains(&format!("# TYPE {family} ")),
            "{family} missing"
        );
    }

    worker.stop().await;
}
