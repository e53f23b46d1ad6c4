//! Resume, against the real engine. After a long pause (its start moved back
//! in the database: 14 days for an every-minute cron, 30 days for an
//! every-second interval) the resume decides on every missed time, answers
//! with a bounded body, stores one span rather than a row per time, and the
//! timeline accounts for every time. And a resume whose unpause is slowed
//! across nominal times runs each of them exactly once.

use crate::common;
mod in_flight;
mod long_pause;

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::Duration;

use chrono::{DateTime, DurationRound, Utc};
use common::*;
use serde_json::{Value, json};
use sqlx::PgPool;

async fn app(pool: PgPool) -> TestApp {
    let server = shared_temporal();
    let namespace = new_namespace(&server.address()).await;
    TestApp::spawn(pool, &server.address(), &namespace).await
}

async fn post(app: &TestApp, path: &str, body: Value) -> (u16, Value) {
    json(app.post(path, &body).await).await
}

/// Creates the activity and pauses it at once, waits until what fired
/// before the pause took effect has finished, then moves the pause (and the
/// activity's creation, so the timeline knows it existed) `back` into the
/// past. Returns the activity and how many times ran before the pause.
async fn paused_long_ago(app: &TestApp, trigger: Value, back: chrono::Duration) -> (String, u64) {
    let body = json!({"name": "long-pause", "trigger": trigger, "tasks": [{"task_type": "noop"}]});
    let id = app.create(&body).await["id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let (status, paused) = post(app, &format!("/v1/activities/{id}/pause"), json!({})).await;
    assert_eq!(status, 200, "{paused}");
    let ran = eventually(Duration::from_secs(180), || async {
        let (_, schedule) = json(app.get(&format!("/v1/activities/{id}/schedule")).await).await;
        let fired = schedule["recent_actions"].as_array().map_or(0, Vec::len);
        let idle = schedule["paused"] == true && schedule["running_workflow_ids"] == json!([]);
        let runs = app.runs_of(&id).await;
        let done = runs.iter().all(|r| r["status"] != "running");
        (idle && done && runs.len() >= fired).then_some(runs.len() as u64)
    })
    .await;
    let uuid: uuid::Uuid = id.parse().unwrap_or_else(|e| panic!("{e}"));
    for sql in [
        "UPDATE activities SET paused_at = paused_at - $2, created_at = created_at - $2 WHERE id = $1",
        "UPDATE activity_pauses SET paused_at = paused_at - $2 WHERE activity_id = $1 AND resumed_at IS NULL",
    ] {
        sqlx::query(sql)
            .bind(uuid)
            .bind(back)
            .execute(&app.pool)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    (id, ran)
}

/// Resumes, checks the body is small and its counts add up, and returns it.
async fn resume(app: &TestApp, id: &str, back: chrono::Duration, every: i64, ran: u64) -> Value {
    let response = app
        .post(&format!("/v1/activities/{id}/resume"), &json!({}))
        .await;
    assert_eq!(response.status(), 200);
    let text = response.text().await.unwrap_or_default();
    println!("resume answered {} bytes", text.len());
    assert!(
        text.len() < 4096,
        "a large resume body: {} bytes",
        text.len()
    );
    let resumed: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    let missed = &resumed["missed"];
    let (from, until) = (at(&missed["from"]), at(&missed["until"]));
    assert!(until - from >= back, "{resumed}");
    let count = |v: &Value| v.as_u64().unwrap_or_else(|| panic!("{v}: {resumed}"));
    // Every nominal time of the pause is missed but those that ran in the
    // moment before it took effect.
    let first = from
        .duration_trunc(chrono::Duration::seconds(every))
        .unwrap_or(from)
        + chrono::Duration::seconds(every);
    let expected = ((until - first).num_seconds() / every + 1) as u64 - ran;
    assert_eq!(count(&missed["total"]), expected, "{resumed}");
    assert_eq!(
        count(&missed["backfilled"]) + count(&missed["pending"]) + count(&missed["skipped"]),
        expected,
        "{resumed}"
    );
    resumed
}

/// The nominal times of the activity's runs so far.
async fn ran_times(app: &TestApp, id: &str) -> Vec<DateTime<Utc>> {
    times(&Value::Array(app.runs_of(id).await))
}

/// The `n` latest times of a schedule of period `step` up to `newest` that
/// did not run (oldest first): a fire in the moment after the pause was
/// recorded and before Temporal's schedule took it ran, and is not missed
/// (under load the catch-up then takes the second before instead).
fn latest_missed(
    newest: DateTime<Utc>,
    step: chrono::Duration,
    n: usize,
    ran: &[DateTime<Utc>],
) -> Vec<DateTime<Utc>> {
    let mut missed: Vec<_> = (0..)
        .map(|k| newest - step * k)
        .filter(|t| !ran.contains(t))
        .take(n)
        .collect();
    missed.reverse();
    missed
}

fn times(runs: &Value) -> Vec<DateTime<Utc>> {
    runs.as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|r| at(&r["scheduled_for"]))
        .collect()
}

async fn wait_succeeded(app: &TestApp, id: &str, wanted: &[DateTime<Utc>]) -> Vec<Value> {
    eventually(Duration::from_secs(90), || async {
        let runs: BTreeMap<DateTime<Utc>, Value> = app
            .runs_of(id)
            .await
            .into_iter()
            .filter(|r| !r["scheduled_for"].is_null())
            .map(|r| (at(&r["scheduled_for"]), r))
            .collect();
        wanted
            .iter()
            .map(|t| runs.get(t).filter(|r| r["status"] == "succeeded").cloned())
            .collect::<Option<Vec<Value>>>()
    })
    .await
}

/// Timeline entries by status and reason over `[from, to)`, paged by
/// `page` (each page at most 1000 times), with every entry's time.
async fn timeline(
    app: &TestApp,
    id: &str,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    page: chrono::Duration,
) -> (BTreeMap<(String, String), u64>, Vec<DateTime<Utc>>) {
    let mut tally = BTreeMap::new();
    let mut seen = Vec::new();
    // The query takes whole seconds: `from` rounded up, or a nominal time in
    // the second before it (earlier than the activity, when it was created
    // at the very start of a minute) would be counted too.
    let mut start = from
        .duration_trunc(chrono::Duration::seconds(1))
        .map_or(from, |t| {
            if t < from {
                t + chrono::Duration::seconds(1)
            } else {
                t
            }
        });
    while start < to {
        let end = (start + page).min(to);
        let path = format!(
            "/v1/activities/{id}/timeline?from={}&to={}",
            start.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            end.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        );
        let (status, body) = json(app.get(&path).await).await;
        assert_eq!(status, 200, "{path}: {body}");
        for item in body["items"].as_array().cloned().unwrap_or_default() {
            let key = (
                item["status"].as_str().unwrap_or("?").to_owned(),
                item["reason"].as_str().unwrap_or("").to_owned(),
            );
            *tally.entry(key).or_insert(0) += 1;
            seen.push(at(&item["scheduled_for"]));
        }
        start = end;
    }
    (tally, seen)
}

fn key(status: &str, reason: &str) -> (String, String) {
    (status.to_owned(), reason.to_owned())
}

const MINUTE_CRON: &str = "* * * * *";
