//! Misfire policies against the real engine, with 2-second intervals: the
//! schedule paused, the worker down, backfills, and a timeline that accounts
//! for every nominal time.

mod common;

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

async fn pause_then_resume(
    policy: &str,
    limit: i64,
    pool: PgPool,
) -> (TestApp, String, Value, DateTime<Utc>) {
    let app = app(pool).await;
    let worker = app.worker(false, Default::default());
    let id = create(&app, policy, json!({"catchup_limit": limit})).await;
    wait_succeeded(&app, &id, 1).await;
    let (status, paused) = post(
        &app,
        &format!("/v1/activities/{id}/pause"),
        json!({"note": "maintenance"}),
    )
    .await;
    assert_eq!(
        (status, paused["paused"].clone()),
        (200, json!(true)),
        "{paused}"
    );
    let (_, schedule) = json(app.get(&format!("/v1/activities/{id}/schedule")).await).await;
    assert_eq!(schedule["paused"], true);
    assert_eq!(schedule["note"], "maintenance");
    let paused_at = Utc::now();
    tokio::time::sleep(Duration::from_secs(11)).await;
    let (status, resumed) = post(&app, &format!("/v1/activities/{id}/resume"), json!({})).await;
    assert_eq!(status, 200, "{resumed}");
    assert_eq!(resumed["paused"], false);
    assert!(resumed["missed"]["total"].as_u64() >= Some(5), "{resumed}");
    let runs = resumed["missed"]["runs"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    // Let whatever the resume asked for run.
    let backfilled: Vec<DateTime<Utc>> = runs
        .iter()
        .filter(|m| m["action"] == "backfilled")
        .map(|m| at(&m["scheduled_for"]))
        .collect();
    eventually(Duration::from_secs(60), || async {
        let runs = runs_by_time(&app, &id).await;
        backfilled
            .iter()
            .all(|t| runs.get(t).is_some_and(|r| r["status"] == "succeeded"))
            .then_some(())
    })
    .await;
    worker.stop().await;
    (app, id, resumed, paused_at)
}

#[sqlx::test(migrations = "./migrations")]
async fn skip_runs_nothing_missed_while_paused(pool: PgPool) {
    let (app, id, resumed, paused_at) = pause_then_resume("skip", 10, pool).await;
    let missed = &resumed["missed"];
    assert_eq!(missed["runs"], json!([]), "{resumed}");
    assert_eq!(missed["skipped"], missed["total"], "{resumed}");
    let span = &missed["skipped_span"];
    assert_eq!(span["reason"], "paused", "{resumed}");
    assert_eq!(span["count"], missed["total"], "{resumed}");
    let runs = runs_by_time(&app, &id).await;
    let ran: Vec<_> = runs.range(at(&span["first"])..=at(&span["last"])).collect();
    assert!(ran.is_empty(), "a paused time ran: {ran:?}");
    let items = check_timeline(
        &app,
        &id,
        paused_at + chrono::Duration::seconds(2),
        paused_at + chrono::Duration::seconds(10),
    )
    .await;
    assert!(items.iter().all(|i| i["reason"] == "paused"), "{items:?}");
}

#[sqlx::test(migrations = "./migrations")]
async fn catchup_backfills_the_most_recent_limit_after_a_pause(pool: PgPool) {
    let (app, id, resumed, paused_at) = pause_then_resume("catchup", 3, pool).await;
    let missed = &resumed["missed"];
    let run = missed["runs"].as_array().cloned().unwrap_or_default();
    assert!(run.iter().all(|m| m["action"] == "backfilled"), "{resumed}");
    assert_eq!(run.len(), 3, "{resumed}");
    assert_eq!(missed["backfilled"], 3, "{resumed}");
    let span = &missed["skipped_span"];
    assert_eq!(span["reason"], "catchup_limit", "{resumed}");
    assert_eq!(
        missed["skipped"].as_u64().map(|s| s + 3),
        missed["total"].as_u64(),
        "{resumed}"
    );
    // The three run are the most recent, oldest first after the skipped ones.
    let newest_skipped = at(&span["last"]);
    assert!(run.iter().all(|m| at(&m["scheduled_for"]) > newest_skipped));
    let runs = runs_by_time(&app, &id).await;
    for m in &run {
        let t = at(&m["scheduled_for"]);
        let r = &runs[&t];
        assert_eq!(r["workflow_id"], m["workflow_id"]);
        assert_eq!(r["status"], "succeeded");
        assert_eq!((t - at(&r["window_start"])).num_seconds(), 2, "{r}");
    }
    // The skipped times are one span on the timeline, not run rows.
    let (first, last) = (at(&span["first"]), newest_skipped);
    assert!(runs.range(first..=last).next().is_none(), "{runs:?}");
    let items = check_timeline(
        &app,
        &id,
        paused_at - chrono::Duration::seconds(4),
        paused_at + chrono::Duration::seconds(12),
    )
    .await;
    let in_span: Vec<&Value> = items
        .iter()
        .filter(|i| (first..=last).contains(&at(&i["scheduled_for"])))
        .collect();
    assert_eq!(
        Some(in_span.len() as u64),
        span["count"].as_u64(),
        "{items:?}"
    );
    assert!(
        in_span
            .iter()
            .all(|i| i["status"] == "skipped" && i["reason"] == "catchup_limit"),
        "{items:?}"
    );
}

#[sqlx::test(migrations = "./migrations")]
async fn compress_runs_one_widened_run_after_a_pause(pool: PgPool) {
    let (app, id, resumed, paused_at) = pause_then_resume("compress", 10, pool).await;
    let run = resumed["missed"]["runs"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(run.len(), 1, "{resumed}");
    assert_eq!(run[0]["action"], "backfilled", "{resumed}");
    assert_eq!(
        resumed["missed"]["skipped_span"]["reason"], "compressed",
        "{resumed}"
    );
    let runs = runs_by_time(&app, &id).await;
    let latest = at(&run[0]["scheduled_for"]);
    let widened = &runs[&latest];
    // The window reaches back to where the last run before the pause ended.
    let before: Vec<&Value> = runs
        .values()
        .filter(|r| r["status"] == "succeeded" && at(&r["scheduled_for"]) <= paused_at)
        .collect();
    let last_end = before.iter().map(|r| at(&r["window_end"])).max();
    assert_eq!(Some(at(&widened["window_start"])), last_end, "{widened}");
    assert!((latest - at(&widened["window_start"])).num_seconds() >= 10);
    check_timeline(
        &app,
        &id,
        paused_at - chrono::Duration::seconds(4),
        paused_at + chrono::Duration::seconds(12),
    )
    .await;
}

async fn worker_outage(
    policy: &str,
    limit: i64,
    pool: PgPool,
) -> (TestApp, String, DateTime<Utc>, DateTime<Utc>) {
    let app = app(pool).await;
    let worker = app.worker(false, Default::default());
    let id = create(&app, policy, json!({"catchup_limit": limit})).await;
    wait_succeeded(&app, &id, 1).await;
    let down = Utc::now();
    worker.stop().await;
    tokio::time::sleep(Duration::from_secs(11)).await;
    let up = Utc::now();
    let worker = app.worker(false, Default::default());
    // Normal runs resume after the outage.
    eventually(Duration::from_secs(60), || async {
        let runs = runs_by_time(&app, &id).await;
        (runs
            .iter()
            .any(|(t, r)| *t > up + chrono::Duration::seconds(2) && r["status"] == "succeeded")
            && backlog_drained(&runs))
        .then_some(())
    })
    .await;
    let (_, _) = json(
        app.patch(&format!("/v1/activities/{id}"), &json!({"enabled": false}))
            .await,
    )
    .await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    worker.stop().await;
    (app, id, down, up)
}

#[sqlx::test(migrations = "./migrations")]
async fn skip_drops_fires_missed_while_the_worker_was_down(pool: PgPool) {
    let (app, id, down, up) = worker_outage("skip", 10, pool).await;
    let runs = runs_by_time(&app, &id).await;
    // At most one fire of the outage reached a launcher: the first after the
    // worker's last pickup (maybe a tick before `down`), which then ran too
    // late and is skipped as a misfire. If the worker stopped while the
    // previous launcher still had to record its run's end, that launcher held
    // the overlap and even this fire was dropped. Nothing of the outage ran.
    let misfires = runs
        .range(down - chrono::Duration::seconds(2)..up)
        .filter(|(_, r)| r["skip_reason"] == "misfire")
        .count();
    assert!(misfires <= 1, "{runs:?}");
    // Well inside the outage (edges are a tick either way), nothing ran.
    let inside = (down + chrono::Duration::seconds(2))..(up - chrono::Duration::seconds(2));
    assert!(
        runs.range(inside).all(|(_, r)| r["status"] != "succeeded"),
        "down {down} up {up}: {runs:?}"
    );
    let (_, schedule) = json(app.get(&format!("/v1/activities/{id}/schedule")).await).await;
    assert!(
        schedule["overlap_skipped"].as_i64().unwrap_or(0) >= 3,
        "{schedule}"
    );
    let items = check_timeline(
        &app,
        &id,
        down + chrono::Duration::seconds(2),
        up - chrono::Duration::seconds(2),
    )
    .await;
    assert!(items.iter().all(|i| i["status"] != "succeeded"));
}

#[sqlx::test(migrations = "./migrations")]
async fn catchup_runs_the_most_recent_limit_after_a_worker_outage(pool: PgPool) {
    let (app, id, down, up) = worker_outage("catchup", 3, pool).await;
    let runs = runs_by_time(&app, &id).await;
    let during = runs.range(down..up).count();
    assert!(during >= 5, "{runs:?}");
    // The first launcher of the backlog decided for all of it: the most
    // recent 3 times then due run, everything older is skipped, whatever the
    // clock says by the time each buffered fire is worked through.
    let (skipped, caught_up) = assert_caught_up(&runs, down, 3, chrono::Duration::seconds(2));
    assert!(skipped.len() + 3 >= 5, "{runs:?}");
    // The catch-up ran the outage's newest times: the third is at most a tick
    // after the worker came back.
    assert!(
        caught_up[2] >= up - chrono::Duration::seconds(2)
            && caught_up[2] <= up + chrono::Duration::seconds(4),
        "up {up}: {runs:?}"
    );
    check_timeline(&app, &id, down, up).await;
}

#[sqlx::test(migrations = "./migrations")]
async fn compress_covers_a_worker_outage_with_one_run(pool: PgPool) {
    let (app, id, down, up) = worker_outage("compress", 10, pool).await;
    let runs = runs_by_time(&app, &id).await;
    let last_before = runs
        .range(..down)
        .filter(|(_, r)| r["status"] == "succeeded")
        .map(|(_, r)| at(&r["window_end"]))
        .max();
    // Exactly one run covers the outage, its window reaching back to the last
    // window before it; the other outage fires are skipped as compressed.
    let covering: Vec<&Value> = runs
        .values()
        .filter(|r| {
            r["status"] == "succeeded"
                && Some(at(&r["window_start"])) == last_before
                && at(&r["scheduled_for"]) > down
        })
        .collect();
    assert_eq!(covering.len(), 1, "{runs:?}");
    assert!(
        (at(&covering[0]["window_end"]) - at(&covering[0]["window_start"])).num_seconds() >= 10
    );
    let reasons: HashSet<String> = runs
        .range(down..up)
        .filter(|(_, r)| r["status"] == "skipped")
        .map(|(_, r)| r["skip_reason"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert!(reasons.iter().all(|r| r == "compressed"), "{reasons:?}");
    check_timeline(&app, &id, down, up).await;
}

#[sqlx::test(migrations = "./migrations")]
async fn backfill_runs_only_the_missing_times(pool: PgPool) {
    let app = app(pool).await;
    let worker = app.worker(false, Default::default());
    let created = app
        .create(&activity_with(
            json!({"type": "interval", "every": "PT1H", "misfire_policy": "skip"}),
        ))
        .await;
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    let now = Utc::now().timestamp();
    let hour = DateTime::from_timestamp(now - now.rem_euclid(3600), 0).unwrap_or_default();
    let h = |n: i64| hour - chrono::Duration::hours(n);
    let range =
        |from: i64, to: i64| json!({"start": h(from).to_rfc3339(), "end": h(to).to_rfc3339()});

    let (status, first) = post(&app, &format!("/v1/activities/{id}/backfill"), range(3, 0)).await;
    assert_eq!(status, 202, "{first}");
    let actions: Vec<&str> = first["times"]
        .as_array()
        .map(|t| t.iter().filter_map(|x| x["action"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(actions, vec!["backfilled"; 3]);
    eventually(Duration::from_secs(60), || async {
        (runs_by_time(&app, &id)
            .await
            .values()
            .filter(|r| r["status"] == "succeeded")
            .count()
            == 3)
            .then_some(())
    })
    .await;

    // A wider range that partly ran: only the missing times run.
    let (_, second) = post(&app, &format!("/v1/activities/{id}/backfill"), range(5, 0)).await;
    let by_action = |v: &Value, a: &str| {
        v["times"]
            .as_array()
            .map(|t| t.iter().filter(|x| x["action"] == a).count())
            .unwrap_or(0)
    };
    assert_eq!(
        (
            by_action(&second, "backfilled"),
            by_action(&second, "duplicate")
        ),
        (2, 3),
        "{second}"
    );
    eventually(Duration::from_secs(60), || async {
        (runs_by_time(&app, &id)
            .await
            .values()
            .filter(|r| r["status"] == "succeeded")
            .count()
            == 5)
            .then_some(())
    })
    .await;
    // The same backfill again runs nothing.
    let (_, third) = post(&app, &format!("/v1/activities/{id}/backfill"), range(5, 0)).await;
    assert_eq!(
        (
            by_action(&third, "backfilled"),
            by_action(&third, "duplicate")
        ),
        (0, 5),
        "{third}"
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    let runs = runs_by_time(&app, &id).await;
    assert_eq!(runs.len(), 5);
    for (t, r) in &runs {
        assert_eq!(
            r["workflow_id"],
            format!("activity-{id}:{}", t.format("%Y-%m-%dT%H:%M:%S+00:00"))
        );
        assert_eq!((*t - at(&r["window_start"])).num_seconds(), 3600);
    }

    // Bad ranges are problems.
    for (body, field) in [
        (json!({"start": "x", "end": h(0).to_rfc3339()}), "start"),
        (
            json!({"start": h(0).to_rfc3339(), "end": h(1).to_rfc3339()}),
            "end",
        ),
    ] {
        let (status, problem) = post(&app, &format!("/v1/activities/{id}/backfill"), body).await;
        assert_eq!(status, 422, "{problem}");
        assert_eq!(problem["errors"][0]["field"], field);
    }
    worker.stop().await;
}

#[sqlx::test(migrations = "./migrations")]
async fn a_resume_while_temporal_is_unreachable_catches_up_when_it_returns(pool: PgPool) {
    let app = app(pool.clone()).await;
    let worker = app.worker(false, Default::default());
    let id = create(&app, "catchup", json!({"catchup_limit": 3})).await;
    wait_succeeded(&app, &id, 1).await;
    let (status, _) = post(&app, &format!("/v1/activities/{id}/pause"), json!({})).await;
    assert_eq!(status, 200);
    tokio::time::sleep(Duration::from_secs(9)).await;

    // The same service, but Temporal is unreachable from it.
    let cut_off = TestApp::without_temporal(pool).await;
    let (status, resumed) = json(
        cut_off
            .post(&format!("/v1/activities/{id}/resume"), &json!({}))
            .await,
    )
    .await;
    assert_eq!(status, 200, "{resumed}");
    assert_eq!(resumed["sync_state"], "pending", "{resumed}");
    let missed = &resumed["missed"];
    let runs = missed["runs"].as_array().cloned().unwrap_or_default();
    assert!(runs.iter().all(|m| m["action"] == "pending"), "{resumed}");
    let pending: Vec<DateTime<Utc>> = runs.iter().map(|m| at(&m["scheduled_for"])).collect();
    assert_eq!(pending.len(), 3, "{resumed}");
    assert_eq!(missed["pending"], 3, "{resumed}");
    assert_eq!(
        missed["skipped_span"]["reason"], "catchup_limit",
        "{resumed}"
    );

    // The reconciler, which reaches Temporal, unpauses the schedule and
    // hands over the pending catch-up: exactly those times run.
    let reconciler = acp::reconcile::Reconciler::new(&app.state.services);
    let dispatched = eventually(Duration::from_secs(30), || async {
        let report = reconciler.pass().await.unwrap_or_else(|e| panic!("{e}"));
        (report.backfills_dispatched > 0).then_some(report.backfills_dispatched)
    })
    .await;
    assert_eq!(dispatched, 3);
    eventually(Duration::from_secs(60), || async {
        let runs = runs_by_time(&app, &id).await;
        pending
            .iter()
            .all(|t| runs.get(t).is_some_and(|r| r["status"] == "succeeded"))
            .then_some(())
    })
    .await;
    let runs = runs_by_time(&app, &id).await;
    for t in &pending {
        assert_eq!(
            runs[t]["workflow_id"],
            acp::domain::ids::scheduled_run_workflow_id(
                uuid::Uuid::parse_str(&id).unwrap_or_default(),
                *t
            )
        );
    }
    let (_, schedule) = json(app.get(&format!("/v1/activities/{id}/schedule")).await).await;
    assert_eq!(schedule["paused"], false, "{schedule}");
    // A second pass has nothing left to hand over.
    let report = reconciler.pass().await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.backfills_dispatched, 0);
    let _ = app
        .patch(&format!("/v1/activities/{id}"), &json!({"enabled": false}))
        .await;
    worker.stop().await;
}
