//! Misfire policies against the real engine, with 2-second intervals: the
//! schedule paused, the worker down, backfills, and a timeline that accounts
//! for every nominal time.

mod backfill;
use crate::common;
mod outage;
mod pause;

use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

use chrono::{DateTime, Utc};
use common::*;
use serde_json::{Value, json};
use sqlx::PgPool;

async fn app(pool: PgPool) -> TestApp {
    let server = shared_temporal();
    let namespace = new_namespace(&server.address()).await;
    TestApp::spawn(pool, &server.address(), &namespace).await
}

async fn create(app: &TestApp, policy: &str, extra: Value) -> String {
    let mut trigger = json!({"type": "interval", "every": "PT2S", "misfire_policy": policy, "misfire_grace": "PT1S"});
    if let (Some(t), Some(e)) = (trigger.as_object_mut(), extra.as_object()) {
        t.extend(e.clone());
    }
    app.create(&json!({"name": format!("misfire-{policy}"), "trigger": trigger, "tasks": [{"task_type": "noop"}]}))
        .await["id"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Runs by nominal time.
async fn runs_by_time(app: &TestApp, id: &str) -> BTreeMap<DateTime<Utc>, Value> {
    app.runs_of(id)
        .await
        .into_iter()
        .filter(|r| !r["scheduled_for"].is_null())
        .map(|r| (at(&r["scheduled_for"]), r))
        .collect()
}

async fn wait_succeeded(app: &TestApp, id: &str, n: usize) {
    eventually(Duration::from_secs(60), || async {
        let ok = app
            .runs_of(id)
            .await
            .iter()
            .filter(|r| r["status"] == "succeeded")
            .count();
        (ok >= n).then_some(())
    })
    .await;
}

async fn post(app: &TestApp, path: &str, body: Value) -> (u16, Value) {
    json(app.post(path, &body).await).await
}

/// Every nominal time in the range is accounted for.
async fn check_timeline(
    app: &TestApp,
    id: &str,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> Vec<Value> {
    let path = format!(
        "/v1/activities/{id}/timeline?from={}&to={}",
        from.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        to.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    );
    let (status, timeline) = json(app.get(&path).await).await;
    assert_eq!(status, 200, "{timeline}");
    let items = timeline["items"].as_array().cloned().unwrap_or_default();
    let expected = ((to - from).num_seconds() / 2) as usize;
    assert!(
        items.len().abs_diff(expected) <= 1,
        "{} entries for {expected} times",
        items.len()
    );
    for item in &items {
        let known = ["succeeded", "failed", "running", "skipped", "none"];
        assert!(
            known.contains(&item["status"].as_str().unwrap_or_default()),
            "{item}"
        );
        if item["status"] == "none" || item["status"] == "skipped" {
            let reasons = [
                "misfire",
                "catchup_limit",
                "compressed",
                "paused",
                "overlap_skipped",
                "temporal_unavailable",
                "before_start",
                "not_yet_fired",
            ];
            assert!(
                reasons.contains(&item["reason"].as_str().unwrap_or_default()),
                "{item}"
            );
        }
    }
    items
}
