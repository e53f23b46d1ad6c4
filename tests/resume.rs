//! Resume, against the real engine. After a long pause (its start moved back
//! in the database: 14 days for an every-minute cron, 30 days for an
//! every-second interval) the resume decides on every missed time, answers
//! with a bounded body, stores one span rather than a row per time, and the
//! timeline accounts for every time. And a resume whose unpause is slowed
//! across nominal times runs each of them exactly once.

mod common;

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
    let mut start = from;
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

#[sqlx::test(migrations = "./migrations")]
async fn catchup_after_14_days_runs_the_3_most_recent_minutes(pool: PgPool) {
    let app = app(pool).await;
    let worker = app.worker(false, Default::default());
    let back = chrono::Duration::days(14);
    let trigger = json!({"type": "cron", "cron": MINUTE_CRON, "timezone": "UTC",
        "misfire_policy": "catchup", "catchup_limit": 3});
    let (id, ran) = paused_long_ago(&app, trigger, back).await;
    // The dry run answers what the policy will do, and changes nothing.
    let (status, dry) = post(
        &app,
        &format!("/v1/activities/{id}/resume"),
        json!({"dry_run": true}),
    )
    .await;
    assert_eq!(status, 200, "{dry}");
    assert_eq!(
        (&dry["dry_run"], &dry["paused"]),
        (&json!(true), &json!(true)),
        "{dry}"
    );
    assert_eq!(dry["missed"]["backfilled"], 3, "{dry}");
    assert_eq!(
        dry["missed"]["runs"].as_array().map(Vec::len),
        Some(3),
        "{dry}"
    );
    assert_eq!(
        dry["missed"]["skipped_span"]["reason"], "catchup_limit",
        "{dry}"
    );
    let (_, activity) = json(app.get(&format!("/v1/activities/{id}")).await).await;
    assert_eq!(activity["paused"], true, "{activity}");
    let resumed = resume(&app, &id, back, 60, ran).await;
    assert_eq!(resumed["dry_run"], false, "{resumed}");
    let missed = &resumed["missed"];
    let until = at(&missed["until"]);
    let run = times(&missed["runs"]);
    let newest = until
        .duration_trunc(chrono::Duration::minutes(1))
        .unwrap_or(until);
    let minute = chrono::Duration::minutes(1);
    assert_eq!(
        run,
        vec![newest - minute * 2, newest - minute, newest],
        "{resumed}"
    );
    assert_eq!(missed["backfilled"], 3, "{resumed}");
    let span = &missed["skipped_span"];
    assert_eq!(span["reason"], "catchup_limit", "{resumed}");
    assert_eq!(at(&span["last"]), newest - minute * 3, "{resumed}");
    assert_eq!(span["count"], missed["skipped"], "{resumed}");
    assert!(missed["skipped"].as_u64() >= Some(20_157), "{resumed}");
    wait_succeeded(&app, &id, &run).await;

    // The timeline over the 14 days accounts for every minute.
    let from = at(&missed["from"]);
    let (tally, seen) = timeline(
        &app,
        &id,
        from,
        newest + minute,
        chrono::Duration::minutes(960),
    )
    .await;
    assert_eq!(
        Some(seen.len() as u64),
        missed["total"].as_u64().map(|n| n + ran),
        "{tally:?}"
    );
    assert_eq!(
        tally.get(&key("succeeded", "")),
        Some(&(3 + ran)),
        "{tally:?}"
    );
    assert_eq!(
        tally.get(&key("skipped", "catchup_limit")).copied(),
        missed["skipped"].as_u64(),
        "{tally:?}"
    );
    assert_eq!(tally.len(), 2, "{tally:?}");
    worker.stop().await;
}

#[sqlx::test(migrations = "./migrations")]
async fn compress_after_14_days_runs_the_latest_with_a_window_from_the_pause(pool: PgPool) {
    let app = app(pool).await;
    let worker = app.worker(false, Default::default());
    let back = chrono::Duration::days(14);
    let trigger = json!({"type": "cron", "cron": MINUTE_CRON, "timezone": "UTC",
        "misfire_policy": "compress"});
    let (id, ran) = paused_long_ago(&app, trigger, back).await;
    let resumed = resume(&app, &id, back, 60, ran).await;
    let missed = &resumed["missed"];
    let (from, until) = (at(&missed["from"]), at(&missed["until"]));
    let minute = chrono::Duration::minutes(1);
    let newest = until.duration_trunc(minute).unwrap_or(until);
    let run = times(&missed["runs"]);
    assert_eq!(run, vec![newest], "{resumed}");
    assert_eq!(missed["skipped_span"]["reason"], "compressed", "{resumed}");
    let done = wait_succeeded(&app, &id, &run).await;
    // Its window reaches back over the whole pause: from the nominal time at
    // or before the pause began (nothing ran before it).
    let window_start = from.duration_trunc(minute).unwrap_or(from);
    assert_eq!(at(&done[0]["window_start"]), window_start, "{}", done[0]);
    assert_eq!(at(&done[0]["window_end"]), newest, "{}", done[0]);
    let (tally, seen) = timeline(
        &app,
        &id,
        from,
        newest + minute,
        chrono::Duration::minutes(960),
    )
    .await;
    assert_eq!(
        Some(seen.len() as u64),
        missed["total"].as_u64().map(|n| n + ran),
        "{tally:?}"
    );
    assert_eq!(
        tally.get(&key("succeeded", "")),
        Some(&(1 + ran)),
        "{tally:?}"
    );
    assert_eq!(
        tally.get(&key("skipped", "compressed")).copied(),
        missed["skipped"].as_u64(),
        "{tally:?}"
    );
    assert_eq!(tally.len(), 2, "{tally:?}");
    worker.stop().await;
}

#[sqlx::test(migrations = "./migrations")]
async fn skip_after_14_days_runs_none(pool: PgPool) {
    let app = app(pool).await;
    let worker = app.worker(false, Default::default());
    let back = chrono::Duration::days(14);
    let trigger = json!({"type": "cron", "cron": MINUTE_CRON, "timezone": "UTC",
        "misfire_policy": "skip"});
    let (id, ran) = paused_long_ago(&app, trigger, back).await;
    let resumed = resume(&app, &id, back, 60, ran).await;
    let missed = &resumed["missed"];
    assert_eq!(missed["runs"], json!([]), "{resumed}");
    assert_eq!(missed["skipped"], missed["total"], "{resumed}");
    assert_eq!(missed["skipped_span"]["reason"], "paused", "{resumed}");
    let (from, until) = (at(&missed["from"]), at(&missed["until"]));
    let minute = chrono::Duration::minutes(1);
    let newest = until.duration_trunc(minute).unwrap_or(until);
    let (tally, seen) = timeline(
        &app,
        &id,
        from,
        newest + minute,
        chrono::Duration::minutes(960),
    )
    .await;
    assert_eq!(
        Some(seen.len() as u64),
        missed["total"].as_u64().map(|n| n + ran),
        "{tally:?}"
    );
    assert_eq!(
        tally.get(&key("none", "paused")).copied(),
        missed["total"].as_u64(),
        "{tally:?}"
    );
    assert_eq!(tally.len(), 1 + usize::from(ran > 0), "{tally:?}");
    worker.stop().await;
}

#[sqlx::test(migrations = "./migrations")]
async fn catchup_after_30_days_of_seconds_stores_one_span(pool: PgPool) {
    let app = app(pool).await;
    let worker = app.worker(false, Default::default());
    let back = chrono::Duration::days(30);
    let trigger = json!({"type": "interval", "every": "PT1S",
        "misfire_policy": "catchup", "catchup_limit": 3});
    let (id, ran) = paused_long_ago(&app, trigger, back).await;
    let uuid: uuid::Uuid = id.parse().unwrap_or_else(|e| panic!("{e}"));
    let rows = async |sql: &str| -> i64 {
        sqlx::query_scalar(sql)
            .bind(uuid)
            .fetch_one(&app.pool)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
    };
    let before = rows("SELECT count(*) FROM activity_runs WHERE activity_id = $1").await;
    let resumed = resume(&app, &id, back, 1, ran).await;
    let missed = &resumed["missed"];
    assert!(missed["total"].as_u64() >= Some(2_592_000), "{resumed}");
    let run = times(&missed["runs"]);
    assert_eq!(run.len(), 3, "{resumed}");
    let until = at(&missed["until"]);
    let second = chrono::Duration::seconds(1);
    let newest = until.duration_trunc(second).unwrap_or(until);
    assert_eq!(
        run,
        vec![newest - second * 2, newest - second, newest],
        "{resumed}"
    );
    wait_succeeded(&app, &id, &run).await;
    // Storage: the three runs, one span; not 2.6 million rows.
    let decided = rows(&format!(
        "SELECT count(*) FROM activity_runs WHERE activity_id = $1 AND scheduled_for <= '{}'",
        newest.to_rfc3339()
    ))
    .await;
    assert_eq!(decided, before + 3);
    assert_eq!(
        rows("SELECT count(*) FROM skipped_spans WHERE activity_id = $1").await,
        1
    );
    // The timeline expands the span: its first 1000 seconds and its end.
    let from = at(&missed["from"]);
    let first = from.duration_trunc(second).unwrap_or(from) + second;
    let (tally, _) = timeline(&app, &id, first, first + second * 1000, second * 1000).await;
    assert_eq!(
        tally.get(&key("skipped", "catchup_limit")),
        Some(&1000),
        "{tally:?}"
    );
    // The last 10 seconds: the span's end, the 3 caught up, and what ran
    // before the pause took effect (a moment before the resume).
    let (tally, seen) =
        timeline(&app, &id, newest - second * 9, newest + second, second * 10).await;
    assert_eq!(seen.len(), 10, "{tally:?}");
    let skipped = tally
        .get(&key("skipped", "catchup_limit"))
        .copied()
        .unwrap_or(0);
    let succeeded = tally.get(&key("succeeded", "")).copied().unwrap_or(0);
    assert_eq!((skipped + succeeded, tally.len()), (10, 2), "{tally:?}");
    assert!(succeeded >= 3 && succeeded <= 3 + ran, "{tally:?}");
    worker.stop().await;
}

#[sqlx::test(migrations = "./migrations")]
async fn a_time_that_falls_while_the_unpause_is_in_flight_runs_once(pool: PgPool) {
    let app = app(pool).await;
    let worker = app.worker(false, Default::default());
    let body = json!({"name": "slow-unpause", "tasks": [{"task_type": "noop"}],
        "trigger": {"type": "interval", "every": "PT5S", "misfire_policy": "skip", "misfire_grace": "PT1S"}});
    let id = app.create(&body).await["id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let (status, paused) = post(&app, &format!("/v1/activities/{id}/pause"), json!({})).await;
    assert_eq!(status, 200, "{paused}");
    // The unpause takes 7 s to reach Temporal (a nominal time falls while
    // the engine is still paused), then 6 s pass before the resume decides
    // (the unpaused engine fires a time itself).
    let faults = &app.state.services.schedules.faults;
    faults
        .delay_before_unpause_ms
        .store(7_000, Ordering::SeqCst);
    faults.delay_after_unpause_ms.store(6_000, Ordering::SeqCst);
    let asked = Utc::now();
    let (status, resumed) = post(&app, &format!("/v1/activities/{id}/resume"), json!({})).await;
    assert_eq!(status, 200, "{resumed}");
    let until = at(&resumed["missed"]["unpaused_at"]);
    assert!(until - asked >= chrono::Duration::seconds(13), "{resumed}");
    // Every nominal time after the resume was asked for (a second's margin
    // for the request to arrive) up to the unpause is due, whatever the
    // policy.
    let mut listed: Vec<DateTime<Utc>> = times(&resumed["missed"]["runs"]);
    listed.extend(times(&resumed["missed"]["in_flight"]));
    let five = chrono::Duration::seconds(5);
    let first = (asked + chrono::Duration::seconds(1))
        .duration_trunc(five)
        .unwrap_or(asked)
        + five;
    let due: Vec<DateTime<Utc>> = std::iter::successors(Some(first), |t| Some(*t + five))
        .take_while(|t| *t <= until)
        .collect();
    assert!(due.len() >= 2, "{due:?}");
    // Those that fell while the engine was still paused were asked for by
    // the resume; the engine may have fired the later ones itself.
    let while_paused = asked + chrono::Duration::seconds(6);
    assert!(due[0] <= while_paused, "{due:?}");
    for t in due.iter().filter(|t| **t <= while_paused) {
        assert!(listed.contains(t), "{t} not asked for: {resumed}");
    }
    // Each runs, once: one run row, one execution of its contract ID.
    wait_succeeded(&app, &id, &due).await;
    let runs = app.runs_of(&id).await;
    for t in &due {
        let workflow_id = acp::domain::ids::scheduled_run_workflow_id(
            id.parse().unwrap_or_else(|e| panic!("{e}")),
            *t,
        );
        let rows = runs
            .iter()
            .filter(|r| r["workflow_id"] == workflow_id.as_str())
            .count();
        assert_eq!(rows, 1, "{t}: {runs:?}");
        assert_eq!(executions(&app, &workflow_id).await.len(), 1, "{t}");
    }
    worker.stop().await;
}
