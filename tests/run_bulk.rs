//! Run control in bulk against the real engine: an activity's runs matching
//! filters retried or cancelled, run by run, safe to repeat.

use crate::common;

use std::collections::BTreeMap;
use std::time::Duration;

use chrono::{DateTime, Utc};
use common::*;
use serde_json::{Value, json};
use sqlx::PgPool;

fn urlencode(text: &str) -> String {
    text.replace('+', "%2B").replace(':', "%3A")
}

async fn post(app: &TestApp, path: &str, body: Value) -> (u16, Value) {
    json(app.post(path, &body).await).await
}

/// The activity's runs by nominal time.
async fn runs_by_time(app: &TestApp, id: &str) -> BTreeMap<String, Value> {
    app.runs_of(id)
        .await
        .into_iter()
        .map(|r| {
            (
                r["scheduled_for"].as_str().unwrap_or_default().to_owned(),
                r,
            )
        })
        .collect()
}

#[sqlx::test(migrations = "./migrations")]
async fn bulk_retry_over_a_range_runs_only_the_failed_runs_again_and_a_repeat_does_nothing(
    pool: PgPool,
) {
    // Backfilled times run one after another, so calls come in nominal
    // order: the 1st and 3rd fail, the 2nd succeeds, the 4th hangs (still
    // running when the bulk request comes); later calls (the retries) pass.
    let sink = WebhookSink::scripted(|n| match n {
        1 | 3 => (500, Duration::ZERO),
        4 => (200, Duration::from_secs(20)),
        _ => (200, Duration::ZERO),
    })
    .await;
    let server = shared_temporal();
    let namespace = new_namespace(&server.address()).await;
    let app = TestApp::spawn(pool, &server.address(), &namespace).await;
    let worker = app.worker(true, Default::default());
    let created = app
        .create(&json!({
            "name": "bulk",
            "trigger": {"type": "interval", "every": "PT1H", "misfire_policy": "skip"},
            "tasks": [{"task_type": "webhook", "config": {"url": sink.url}, "timeout": "PT30S",
                       "retry": {"max_attempts": 1}}],
        }))
        .await;
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    let now = Utc::now().timestamp();
    let hour = DateTime::from_timestamp(now - now.rem_euclid(3600), 0).unwrap_or_default();
    let h = |n: i64| hour - chrono::Duration::hours(n);
    let (status, backfill) = post(
        &app,
        &format!("/v1/activities/{id}/backfill"),
        json!({"start": h(5).to_rfc3339(), "end": h(1).to_rfc3339()}),
    )
    .await;
    assert_eq!(status, 202, "{backfill}");
    let runs = eventually(Duration::from_secs(120), || async {
        let runs = runs_by_time(&app, &id).await;
        let count = |s: &str| runs.values().filter(|r| r["status"] == s).count();
        (sink.count() >= 4
            && count("failed") == 2
            && count("succeeded") == 1
            && count("running") == 1)
            .then_some(runs)
    })
    .await;
    let failed: Vec<String> = runs
        .values()
        .filter(|r| r["status"] == "failed")
        .map(|r| r["run_id"].as_str().unwrap_or_default().to_owned())
        .collect();
    let range =
        json!({"scheduled_after": h(5).to_rfc3339(), "scheduled_before": h(1).to_rfc3339()});

    // The dry run names the same runs and retries none.
    let mut dry = range.clone();
    dry["dry_run"] = json!(true);
    let (status, matched) = post(&app, &format!("/v1/activities/{id}/runs/retry"), dry).await;
    assert_eq!(status, 200, "{matched}");
    assert_eq!(matched["dry_run"], true, "{matched}");
    let named: Vec<String> = matched["results"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter(|r| r["outcome"] == "matched")
        .map(|r| r["run_id"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(named, failed, "{matched}");
    let unchanged = runs_by_time(&app, &id).await;
    assert!(
        unchanged
            .values()
            .filter(|r| failed.contains(&r["run_id"].as_str().unwrap_or_default().to_owned()))
            .all(|r| r["status"] == "failed" && r["attempt"] == 1),
        "a dry run retried something: {unchanged:?}"
    );

    let (status, done) = post(
        &app,
        &format!("/v1/activities/{id}/runs/retry"),
        range.clone(),
    )
    .await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["more"], false, "{done}");
    let results = done["results"].as_array().cloned().unwrap_or_default();
    let retried: Vec<String> = results
        .iter()
        .map(|r| r["run_id"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(retried, failed, "{done}");
    assert!(
        results
            .iter()
            .all(|r| r["outcome"] == "retried" && r["attempt"] == 2),
        "{done}"
    );

    let after = eventually(Duration::from_secs(120), || async {
        let runs = runs_by_time(&app, &id).await;
        failed
            .iter()
            .all(|f| {
                runs.values()
                    .any(|r| r["run_id"] == f.as_str() && r["status"] == "succeeded")
            })
            .then_some(runs)
    })
    .await;
    // Only the failed ones ran again: the succeeded one and the running one
    // are on their first attempt, and the receiver heard two more calls.
    for run in after.values() {
        let retried = failed.iter().any(|f| run["run_id"] == f.as_str());
        assert_eq!(run["attempt"], if retried { 2 } else { 1 }, "{run}");
    }
    assert_eq!(sink.count(), 6);

    // The timeline shows each time's final outcome and how many attempts
    // it took.
    let (status, timeline) = json(
        app.get(&format!(
            "/v1/activities/{id}/timeline?from={}&to={}",
            urlencode(&h(5).to_rfc3339()),
            urlencode(&h(1).to_rfc3339())
        ))
        .await,
    )
    .await;
    assert_eq!(status, 200, "{timeline}");
    let entries = timeline["items"].as_array().cloned().unwrap_or_default();
    assert_eq!(entries.len(), 4, "{timeline}");
    for entry in &entries {
        let retried = failed.iter().any(|f| entry["run_id"] == f.as_str());
        if retried {
            assert_eq!(entry["status"], "succeeded", "{entry}");
            assert_eq!(entry["attempts"], 2, "{entry}");
        } else {
            assert_eq!(entry["attempts"], 1, "{entry}");
        }
    }

    // Repeating the request does nothing: nothing in the range is failed.
    let (status, again) = post(
        &app,
        &format!("/v1/activities/{id}/runs/retry"),
        range.clone(),
    )
    .await;
    assert_eq!(status, 200, "{again}");
    assert_eq!(again["results"], json!([]), "{again}");
    assert_eq!(sink.count(), 6);

    // A filter a retry cannot act on is refused, naming the field.
    let (status, problem) = post(
        &app,
        &format!("/v1/activities/{id}/runs/retry"),
        json!({"status": "succeeded"}),
    )
    .await;
    assert_eq!(status, 422, "{problem}");
    assert!(problem.to_string().contains("status"), "{problem}");

    // Bulk cancel: the dry run names the one running run and leaves it
    // running; then it is terminated; a repeat finds nothing.
    let mut dry = range.clone();
    dry["dry_run"] = json!(true);
    let (status, matched) = post(&app, &format!("/v1/activities/{id}/runs/cancel"), dry).await;
    assert_eq!(status, 200, "{matched}");
    let results = matched["results"].as_array().cloned().unwrap_or_default();
    assert_eq!(results.len(), 1, "{matched}");
    assert_eq!(results[0]["outcome"], "matched", "{matched}");
    let (_, still) = json(
        app.get(&format!(
            "/v1/runs/{}",
            results[0]["run_id"].as_str().unwrap_or_default()
        ))
        .await,
    )
    .await;
    assert_eq!(still["status"], "running", "{still}");
    let mut cancel = range.clone();
    cancel["force"] = json!(true);
    cancel["reason"] = json!("bulk test");
    let (status, done) = post(
        &app,
        &format!("/v1/activities/{id}/runs/cancel"),
        cancel.clone(),
    )
    .await;
    assert_eq!(status, 200, "{done}");
    let results = done["results"].as_array().cloned().unwrap_or_default();
    assert_eq!(results.len(), 1, "{done}");
    assert_eq!(results[0]["outcome"], "cancelled", "{done}");
    let (_, run) = json(
        app.get(&format!(
            "/v1/runs/{}",
            results[0]["run_id"].as_str().unwrap_or_default()
        ))
        .await,
    )
    .await;
    assert_eq!(run["status"], "cancelled", "{run}");
    assert_eq!(run["cancellation"]["reason"], "bulk test", "{run}");
    let (status, again) = post(&app, &format!("/v1/activities/{id}/runs/cancel"), cancel).await;
    assert_eq!(status, 200, "{again}");
    assert_eq!(again["results"], json!([]), "{again}");

    let (status, _) = post(
        &app,
        &format!("/v1/activities/{}/runs/retry", uuid::Uuid::new_v4()),
        json!({}),
    )
    .await;
    assert_eq!(status, 404);
    worker.stop().await;
}
