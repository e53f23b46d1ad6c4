//! Fairness: one activity's burst does not starve the others. A PT1S interval
//! activity keeps its cadence while a backlog of 200 events drains on another
//! activity, through real HTTP, a real Temporal dev server, the worker and the
//! event dispatcher as `acp serve` runs them.

use crate::common;

use std::time::Duration;

use chrono::{DateTime, DurationRound, TimeDelta, Utc};
use common::*;
use serde_json::{Value, json};
use sqlx::PgPool;

const BACKLOG: i64 = 200;

async fn scalar(pool: &PgPool, sql: &str, activity: &str) -> i64 {
    let id: uuid::Uuid = activity.parse().unwrap_or_else(|e| panic!("{e}"));
    sqlx::query_as::<_, (i64,)>(sql)
        .bind(id)
        .fetch_one(pool)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .0
}

/// Succeeded runs of `activity` whose nominal time lies in `[from, to]`.
async fn succeeded_between(
    pool: &PgPool,
    activity: &str,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> i64 {
    let id: uuid::Uuid = activity.parse().unwrap_or_else(|e| panic!("{e}"));
    sqlx::query_as::<_, (i64,)>(
        "SELECT count(*) FROM activity_runs WHERE activity_id = $1 AND status = 'succeeded'
           AND scheduled_for BETWEEN $2 AND $3",
    )
    .bind(id)
    .bind(from)
    .bind(to)
    .fetch_one(pool)
    .await
    .unwrap_or_else(|e| panic!("{e}"))
    .0
}

/// The ticker's succeeded runs among the fires of the whole seconds in
/// `[from, to]`, once none of those runs is still going and a later fire has
/// come (the window is over): (kept, fires).
async fn kept_of(
    pool: &PgPool,
    ticker: &str,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> (i64, i64) {
    let id: uuid::Uuid = ticker.parse().unwrap_or_else(|e| panic!("{e}"));
    eventually(Duration::from_secs(90), || async {
        let (unfinished, later): (i64, i64) = sqlx::query_as(
            "SELECT count(*) FILTER (WHERE scheduled_for BETWEEN $2 AND $3 AND status = 'running'),
                    count(*) FILTER (WHERE scheduled_for > $3)
               FROM activity_runs WHERE activity_id = $1",
        )
        .bind(id)
        .bind(from)
        .bind(to)
        .fetch_one(pool)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
        (unfinished == 0 && later > 0).then_some(())
    })
    .await;
    let fires = (to - from).num_seconds() + 1;
    (succeeded_between(pool, ticker, from, to).await, fires)
}

#[sqlx::test(migrations = "./migrations")]
async fn a_scheduled_activity_keeps_its_cadence_while_a_backlog_of_events_drains(pool: PgPool) {
    let server = shared_temporal();
    let namespace = new_namespace(&server.address()).await;
    let app = TestApp::spawn(pool.clone(), &server.address(), &namespace).await;
    let worker = app.worker(false, Default::default());
    let dispatcher = app.dispatcher();

    let ticker = app
        .create(&json!({
            "name": "ticker",
            "trigger": {"type": "interval", "every": "PT1S"},
            "tasks": [{"task_type": "noop"}]
        }))
        .await;
    let ticker = ticker["id"].as_str().unwrap_or_default().to_owned();
    let backlog = app
        .create(&json!({
            "name": "backlog",
            "trigger": {"type": "event", "event_types": ["bulk.item"]},
            "tasks": [{"task_type": "noop"}]
        }))
        .await;
    let backlog = backlog["id"].as_str().unwrap_or_default().to_owned();
    // The schedule is running before the burst arrives.
    eventually(Duration::from_secs(60), || async {
        let ran = scalar(
            &pool,
            "SELECT count(*) FROM activity_runs WHERE activity_id = $1 AND status = 'succeeded'",
            &ticker,
        )
        .await;
        (ran >= 2).then_some(())
    })
    .await;

    // The cadence this machine gives the ticker without a backlog, now: on a
    // loaded machine a PT1S run can start up to 1.4 s late and the next fire
    // is then dropped by the overlap policy, backlog or not. The drain is
    // measured against it.
    let second = TimeDelta::seconds(1);
    let baseline_from = Utc::now()
        .duration_trunc(second)
        .unwrap_or_else(|e| panic!("{e}"))
        + second;
    let baseline_to = baseline_from + TimeDelta::seconds(19);
    let (baseline_kept, baseline_fires) = kept_of(&pool, &ticker, baseline_from, baseline_to).await;
    let baseline = baseline_kept as f64 / baseline_fires as f64;
    eprintln!(
        "fairness: without a backlog the PT1S activity kept {baseline_kept} of {baseline_fires} fires ({:.0} %)",
        baseline * 100.0
    );
    assert!(
        baseline >= 0.5,
        "the machine kept {baseline_kept} of {baseline_fires} fires without a backlog: too slow to measure fairness on"
    );

    // The backlog at once, in batches of 100.
    let burst_at = Utc::now();
    for chunk in 0..BACKLOG / 100 {
        let events: Vec<Value> = (0..100)
            .map(|i| {
                let n = chunk * 100 + i;
                json!({"event_id": format!("item-{n:03}"), "event_type": "bulk.item",
                       "source": "bulk", "payload": {"n": n}})
            })
            .collect();
        let (status, body) = json(
            app.post("/v1/events:batch", &json!({"events": events}))
                .await,
        )
        .await;
        assert_eq!(status, 200, "{body}");
    }
    // What the dispatcher let run at once, as /metrics tells, meanwhile.
    let allowances = std::sync::Mutex::new(Vec::new());
    eventually(Duration::from_secs(600), || async {
        let metrics = app.metrics_text().await;
        if let Some(allowance) = metrics
            .lines()
            .find_map(|l| l.strip_prefix("acp_dispatch_allowance "))
            .and_then(|v| v.trim().parse::<i64>().ok())
            && let Ok(mut seen) = allowances.lock()
        {
            seen.push(allowance);
        }
        let done = scalar(
            &pool,
            "SELECT count(*) FROM activity_runs WHERE activity_id = $1 AND status = 'succeeded'",
            &backlog,
        )
        .await;
        (done == BACKLOG).then_some(())
    })
    .await;
    let drained_at = Utc::now();
    let allowances = allowances.into_inner().unwrap_or_default();

    // Every whole second from the burst to the end of the drain was a fire.
    let from = burst_at
        .duration_trunc(second)
        .unwrap_or_else(|e| panic!("{e}"))
        + second;
    let to = drained_at
        .duration_trunc(second)
        .unwrap_or_else(|e| panic!("{e}"));
    // The fires of the last seconds finish a moment after the drain.
    let (kept, fires) = kept_of(&pool, &ticker, from, to).await;
    let id: uuid::Uuid = ticker.parse().unwrap_or_else(|e| panic!("{e}"));
    let lags: Vec<(String, f64, f64)> = sqlx::query_as(
        "SELECT status, extract(epoch FROM started_at - scheduled_for)::float8,
                extract(epoch FROM finished_at - started_at)::float8
           FROM activity_runs WHERE activity_id = $1 AND scheduled_for BETWEEN $2 AND $3
          ORDER BY scheduled_for",
    )
    .bind(id)
    .bind(from)
    .bind(to)
    .fetch_all(&pool)
    .await
    .unwrap_or_default();
    eprintln!("fairness: the PT1S activity's runs (status, start lag s, duration s): {lags:?}");
    let share = kept as f64 / fires as f64;
    eprintln!(
        "fairness: {BACKLOG} events drained in {:.1} s; the PT1S activity had {fires} fires \
         in that time and {kept} succeeded runs ({:.0} %)",
        (drained_at - burst_at).as_seconds_f64(),
        share * 100.0
    );
    // The dispatcher held the backlog back, and never stopped it.
    let (low, high) = (
        allowances.iter().min().copied().unwrap_or(0),
        allowances.iter().max().copied().unwrap_or(0),
    );
    eprintln!("fairness: event runs allowed at once while draining: {low} to {high}");
    assert!(low >= 1, "{allowances:?}");
    assert!(high < 1024, "{allowances:?}");
    // The drain was long enough to measure anything.
    assert!(fires >= 10, "the backlog drained in {fires} s");
    // At least 90 %, or ten points under what the machine gave it without
    // the backlog, whichever is lower: unloaded the baseline is 100 %.
    let floor = (baseline - 0.1).min(0.9);
    assert!(
        share >= floor,
        "the PT1S activity kept {kept} of {fires} fires ({:.0} %) while the backlog drained, \
         {:.0} % without it",
        share * 100.0,
        baseline * 100.0
    );

    // Every event ran once.
    assert_eq!(
        scalar(
            &pool,
            "SELECT count(DISTINCT event_id) FROM activity_runs WHERE activity_id = $1",
            &backlog,
        )
        .await,
        BACKLOG
    );
    drop(dispatcher);
    worker.stop().await;
}
