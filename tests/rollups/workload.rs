//! A seeded random workload of inserts, status changes, retries and
//! deletes, some through the store's own statements and most through plain
//! SQL, over several activities, trigger types, minutes, hours and days;
//! afterwards the rollups equal the runs, `GET /v1/stats/runs` equals a
//! count of them for several windows and filters, and its percentiles lie
//! within 1 % of PostgreSQL's `percentile_cont`.

use chrono::{DateTime, Duration, DurationRound, Utc};
use serde_json::Value;
use sqlx::PgPool;
use uuid::Uuid;

use super::{Rng, activities, assert_rollups_exact};
use crate::common::*;
use acp_domain::run::{RunStatus, RunTrigger};
use acp_store::runs::{NewRun, RunStore};

const TRIGGERS: [&str; 4] = ["cron", "interval", "event", "manual"];
const ENDINGS: [&str; 4] = ["succeeded", "failed", "cancelled", "timed_out"];

/// A run's creation time: half of them in three days of November, half in
/// the last day and a half, away from the edge of the summaries' 24 hours.
fn created_at(rng: &mut Rng, now: DateTime<Utc>) -> DateTime<Utc> {
    let base: DateTime<Utc> = "2026-11-01T00:00:00Z".parse().unwrap_or_default();
    if rng.below(2) == 0 {
        return base + Duration::seconds(rng.below(3 * 86_400) as i64);
    }
    let t = now - Duration::seconds(rng.below(36 * 3600) as i64 + 60);
    let edge = now - Duration::hours(24);
    if (t - edge).num_seconds().abs() < 180 {
        t - Duration::minutes(10)
    } else {
        t
    }
}

/// A duration: zero now and then, else from milliseconds to an hour,
/// spread over the bins.
fn duration(rng: &mut Rng) -> Duration {
    match rng.below(10) {
        0 => Duration::zero(),
        1..=3 => Duration::milliseconds(rng.below(2_000) as i64 + 1),
        4..=8 => Duration::milliseconds(rng.below(120_000) as i64),
        _ => Duration::seconds(rng.below(3_600) as i64),
    }
}

async fn exec(pool: &PgPool, sql: &str, ids: &[Uuid]) {
    sqlx::query(sql)
        .bind(ids)
        .execute(pool)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

/// Runs one of the workload's steps.
async fn step(pool: &PgPool, store: &RunStore, rng: &mut Rng, acts: &[Uuid], now: DateTime<Utc>) {
    // A few runs of the given status, to act on.
    let some = |status: &'static str, n: i64| {
        let pool = pool.clone();
        async move {
            let ids: Vec<Uuid> = sqlx::query_scalar(
                "SELECT run_id FROM activity_runs WHERE status = $1 ORDER BY md5(run_id::text || $2) LIMIT $3",
            )
            .bind(status)
            .bind(n.to_string())
            .bind(n)
            .fetch_all(&pool)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
            ids
        }
    };
    match rng.below(20) {
        // Plain SQL: a statement inserting 1 to 6 runs.
        0..=6 => {
            let n = rng.below(6) + 1;
            let mut q = sqlx::QueryBuilder::new(
                "INSERT INTO activity_runs (run_id, activity_id, workflow_id, trigger_type, status, \
                 created_at, started_at, finished_at) ",
            );
            let rows: Vec<_> = (0..n)
                .map(|_| {
                    let created = created_at(rng, now);
                    let status = *rng.pick(&["queued", "running", "skipped", "succeeded"]);
                    let started = matches!(status, "running" | "succeeded")
                        .then(|| created + Duration::seconds(1));
                    let finished = (status == "succeeded")
                        .then(|| started.map(|s| s + duration(rng)))
                        .flatten();
                    (
                        *rng.pick(acts),
                        *rng.pick(&TRIGGERS),
                        status,
                        created,
                        started,
                        finished,
                    )
                })
                .collect();
            q.push_values(
                rows,
                |mut b, (act, trigger, status, created, started, finished)| {
                    let id = Uuid::new_v4();
                    b.push_bind(id)
                        .push_bind(act)
                        .push_bind(format!("wl-{id}"))
                        .push_bind(trigger)
                        .push_bind(status)
                        .push_bind(created)
                        .push_bind(started)
                        .push_bind(finished);
                },
            );
            q.build()
                .execute(pool)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
        }
        // The store: a run started now, or a nominal time skipped and then
        // run after all (its upsert turns `skipped` into `running`).
        7..=8 => {
            let run_id = Uuid::new_v4();
            let activity_id = *rng.pick(acts);
            let workflow_id = format!("svc-{run_id}");
            let trigger = *rng.pick(&[RunTrigger::Cron, RunTrigger::Manual]);
            if rng.below(2) == 0 {
                store
                    .insert_skipped(
                        run_id,
                        activity_id,
                        &workflow_id,
                        trigger,
                        now,
                        acp_domain::misfire::SkipReason::Misfire,
                        1,
                    )
                    .await
                    .unwrap_or_else(|e| panic!("{e}"));
            }
            let context = serde_json::json!({});
            let run = NewRun {
                run_id,
                activity_id,
                workflow_id: &workflow_id,
                trigger,
                scheduled_for: Some(now),
                event_id: None,
                window_start: None,
                window_end: None,
                definition_version: 1,
                context: &context,
                tasks_total: 1,
                queued: rng.below(3) == 0,
            };
            store
                .insert_run(&run)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
        }
        // The store ends a run.
        9..=10 => {
            for id in some("running", 2).await {
                let status = *rng.pick(&[RunStatus::Succeeded, RunStatus::Failed]);
                store
                    .finish_run(id, status, None, 1, 0)
                    .await
                    .unwrap_or_else(|e| panic!("{e}"));
            }
        }
        // Plain SQL: queued runs start.
        11..=12 => {
            let ids = some("queued", 3).await;
            exec(
                pool,
                "UPDATE activity_runs SET status = 'running', started_at = created_at + interval '2 seconds' \
                 WHERE run_id = ANY($1)",
                &ids,
            )
            .await;
        }
        // Plain SQL: running runs end, each after its own duration, in one
        // statement.
        13..=15 => {
            let ids = some("running", 4).await;
            let ending = *rng.pick(&ENDINGS);
            let millis = duration(rng).num_milliseconds();
            sqlx::query(
                "UPDATE activity_runs SET status = $2,
                     started_at = coalesce(started_at, created_at),
                     finished_at = coalesce(started_at, created_at)
                         + make_interval(secs => ($3 + (hashtext(run_id::text) & 1023)) / 1000.0)
                  WHERE run_id = ANY($1)",
            )
            .bind(&ids)
            .bind(ending)
            .bind(millis as f64)
            .execute(pool)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        }
        // Plain SQL: a retry, as the service writes it: the ended run runs
        // again, its times reset.
        16 => {
            let ending = *rng.pick(&ENDINGS);
            let ids = some(ending, 1).await;
            exec(
                pool,
                "UPDATE activity_runs SET status = 'running', attempt = attempt + 1, \
                 started_at = finished_at, finished_at = NULL WHERE run_id = ANY($1)",
                &ids,
            )
            .await;
        }
        // Plain SQL: a change that is none of the rollups' business.
        17 => {
            let ids = some("running", 5).await;
            exec(
                pool,
                "UPDATE activity_runs SET tasks_total = tasks_total + 1 WHERE run_id = ANY($1)",
                &ids,
            )
            .await;
        }
        // Plain SQL: runs deleted.
        _ => {
            let status = *rng.pick(&["succeeded", "failed", "running", "skipped"]);
            let ids = some(status, 2).await;
            exec(
                pool,
                "DELETE FROM activity_runs WHERE run_id = ANY($1)",
                &ids,
            )
            .await;
        }
    }
}

/// What `GET /v1/stats/runs` must answer: per bucket, the counts by status
/// and `percentile_cont` of the durations, counted over the runs. A run the
/// store ends at `now()` after a start the workload put in the future has a
/// negative duration; the rollups count it as zero (clocks that disagree),
/// and so does this.
async fn exact(
    pool: &PgPool,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    step: i32,
    activity: Option<Uuid>,
    trigger: Option<&str>,
) -> Vec<(DateTime<Utc>, Value, Option<Vec<f64>>)> {
    let rows: Vec<(DateTime<Utc>, Value, Option<Vec<f64>>)> = sqlx::query_as(
        "SELECT date_bin(make_interval(secs => $3), created_at, timestamptz '1970-01-01 00:00:00+00') AS b,
                jsonb_build_object(
                    'queued', count(*) FILTER (WHERE status = 'queued'),
                    'running', count(*) FILTER (WHERE status = 'running'),
                    'succeeded', count(*) FILTER (WHERE status = 'succeeded'),
                    'failed', count(*) FILTER (WHERE status = 'failed'),
                    'cancelled', count(*) FILTER (WHERE status = 'cancelled'),
                    'timed_out', count(*) FILTER (WHERE status = 'timed_out'),
                    'skipped', count(*) FILTER (WHERE status = 'skipped')),
                percentile_cont(ARRAY[0.5, 0.95, 0.99]) WITHIN GROUP
                    (ORDER BY greatest(extract(epoch FROM finished_at - started_at)::float8, 0))
                    FILTER (WHERE started_at IS NOT NULL AND finished_at IS NOT NULL)
           FROM activity_runs
          WHERE created_at >= $1 AND created_at < $2
            AND ($4::uuid IS NULL OR activity_id = $4)
            AND ($5::text IS NULL OR trigger_type = $5)
          GROUP BY 1 ORDER BY 1",
    )
    .bind(from)
    .bind(to)
    .bind(step)
    .bind(activity)
    .bind(trigger)
    .fetch_all(pool)
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    rows
}

#[sqlx::test(migrations = "./migrations")]
async fn rollups_equal_the_runs_after_a_random_workload(pool: PgPool) {
    let app = TestApp::without_temporal(pool.clone()).await;
    let acts = activities(&app, 3).await;
    let store = RunStore::new(pool.clone());
    let now = Utc::now();
    let mut rng = Rng::new(0x5EED_0039);
    for _ in 0..700 {
        step(&pool, &store, &mut rng, &acts, now).await;
    }
    assert_rollups_exact(&pool).await;

    let today = now.duration_trunc(Duration::days(1)).unwrap_or(now);
    let minutes_from = now.duration_trunc(Duration::hours(1)).unwrap_or(now) - Duration::hours(6);
    let nov = |s: &str| -> DateTime<Utc> { s.parse().unwrap_or_default() };
    let windows = [
        (
            nov("2026-11-01T00:00:00Z"),
            nov("2026-11-04T00:00:00Z"),
            "PT1H",
            3600,
        ),
        (
            nov("2026-11-01T00:00:00Z"),
            nov("2026-11-05T00:00:00Z"),
            "P1D",
            86_400,
        ),
        (
            nov("2026-11-02T08:00:00Z"),
            nov("2026-11-02T20:00:00Z"),
            "PT1M",
            60,
        ),
        (minutes_from, minutes_from + Duration::hours(7), "PT1M", 60),
        (
            today - Duration::days(2),
            today + Duration::days(1),
            "PT1H",
            3600,
        ),
    ];
    let a = acts[0];
    let filters: [(Option<Uuid>, Option<&str>); 3] =
        [(None, None), (Some(a), None), (None, Some("event"))];
    let mut counted = 0;
    for (from, to, bucket, seconds) in windows {
        for (activity, trigger) in filters {
            let mut query = format!(
                "from={}&to={}&bucket={bucket}",
                from.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                to.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
            );
            if let Some(a) = activity {
                query.push_str(&format!("&activity_id={a}"));
            }
            if let Some(t) = trigger {
                query.push_str(&format!("&trigger_type={t}"));
            }
            let (status, body) = json(app.get(&format!("/v1/stats/runs?{query}")).await).await;
            assert_eq!(status, 200, "{query}: {body}");
            let buckets = body["buckets"].as_array().cloned().unwrap_or_default();
            assert_eq!(
                buckets.len() as i64,
                (to - from).num_seconds() / seconds as i64,
                "{query}"
            );
            let want = exact(&pool, from, to, seconds, activity, trigger).await;
            let mut want = want.into_iter().peekable();
            for b in &buckets {
                let start: DateTime<Utc> = b["start"]
                    .as_str()
                    .unwrap_or_default()
                    .parse()
                    .unwrap_or_default();
                let (counts, percentiles) = match want.peek() {
                    Some((s, _, _)) if *s == start => {
                        let (_, c, p) = want.next().unwrap_or_else(|| unreachable!());
                        (c, p)
                    }
                    _ => (
                        b["counts"]
                            .as_object()
                            .map(|o| o.keys().map(|k| (k.clone(), Value::from(0))).collect())
                            .map(Value::Object)
                            .unwrap_or_default(),
                        None,
                    ),
                };
                assert_eq!(b["counts"], counts, "{query} {start}");
                counted += b["total"].as_i64().unwrap_or_default();
                for (i, name) in [
                    "duration_p50_seconds",
                    "duration_p95_seconds",
                    "duration_p99_seconds",
                ]
                .iter()
                .enumerate()
                {
                    let got = b[name].as_f64();
                    let exact = percentiles.as_ref().map(|p| p[i]);
                    let close = match (got, exact) {
                        (Some(g), Some(e)) => (g - e).abs() <= 0.01 * e + 1e-9,
                        (None, None) => true,
                        _ => false,
                    };
                    assert!(close, "{query} {start} {name}: {got:?}, exactly {exact:?}");
                }
            }
            assert!(
                want.next().is_none(),
                "{query}: runs outside the answer's buckets"
            );
        }
    }
    assert!(
        counted > 500,
        "the windows hold too few runs to prove much: {counted}"
    );

    // Each activity's summary counts the same runs as a scan of the last
    // 24 hours from the start of their first minute.
    for id in &acts {
        let (status, one) = json(
            app.get(&format!("/v1/activities/{id}?include=summary"))
                .await,
        )
        .await;
        assert_eq!(status, 200, "{one}");
        let (runs, succeeded, failed): (i64, i64, i64) = sqlx::query_as(
            "SELECT count(*), count(*) FILTER (WHERE status = 'succeeded'),
                    count(*) FILTER (WHERE status = 'failed')
               FROM activity_runs
              WHERE activity_id = $1 AND created_at >= date_trunc('minute', now() - interval '24 hours')",
        )
        .bind(id)
        .fetch_one(&pool)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
        let summary = &one["summary"];
        assert_eq!(
            (
                summary["runs_24h"].as_i64(),
                summary["succeeded_24h"].as_i64(),
                summary["failed_24h"].as_i64()
            ),
            (Some(runs), Some(succeeded), Some(failed)),
            "{summary}"
        );
        assert!(runs > 0, "{id}: no runs in the last 24 hours");
    }
}
