//! Benchmark 11, fair share: project B posts one event a second and runs a
//! PT1S schedule through `acp serve`, first alone, then while project A
//! posts ACP_BENCH_FAIR_EVENTS events at once (equal weights; B is
//! guaranteed two runs at once, A nothing). B's start
//! latency (event accepted to run started) and its schedule's lateness
//! (nominal time to run started), p50/p99, alone and beside A's burst, in
//! the same run; goal: B's p99 beside the burst within 2x its p99 alone, and
//! every one of A's runs finished.

use std::time::{Duration, Instant};

use anyhow::Context;
use futures::StreamExt;
use serde_json::{Value, json};

use crate::Bench;
use crate::load::{Figures, met, ms};
use crate::service::{Database, Service, create_key};

/// How long the whole scenario may take before A's runs are reported unfinished.
const DEADLINE: Duration = Duration::from_secs(1200);
/// A's events per `POST /v1/events:batch`, and batches in flight.
const BATCH: usize = 100;
const IN_FLIGHT: usize = 4;

async fn post(
    http: &reqwest::Client,
    url: &str,
    token: &str,
    body: &Value,
) -> anyhow::Result<Value> {
    let response = http.post(url).bearer_auth(token).json(body).send().await?;
    let status = response.status();
    let body: Value = response.json().await.unwrap_or_default();
    anyhow::ensure!(status.is_success(), "POST {url}: {status} {body}");
    Ok(body)
}

/// Project `id` with `quotas` (by the operator) and an admin key of it.
async fn project(
    http: &reqwest::Client,
    base: &str,
    op: &str,
    id: &str,
    quotas: Value,
) -> anyhow::Result<String> {
    post(
        http,
        &format!("{base}/v1/projects"),
        op,
        &json!({"id": id, "name": id, "quotas": quotas}),
    )
    .await?;
    let key = post(
        http,
        &format!("{base}/v1/keys"),
        op,
        &json!({"name": format!("{id}-bench"), "scope": "admin", "project": id}),
    )
    .await?;
    key["token"]
        .as_str()
        .map(str::to_owned)
        .context("the key's token")
}

/// Start latencies (seconds) of the runs `sql` selects between `from` and
/// `to` (seconds after `origin`, the database's time at `t0`), as figures.
async fn latencies(
    pool: &sqlx::PgPool,
    sql: &str,
    origin: chrono::DateTime<chrono::Utc>,
    (from, to): (Instant, Instant),
    t0: Instant,
) -> anyhow::Result<Figures> {
    let rows: Vec<(f64,)> = sqlx::query_as(sql)
        .bind((from - t0).as_secs_f64())
        .bind((to - t0).as_secs_f64())
        .bind(origin)
        .fetch_all(pool)
        .await?;
    let all: Vec<Duration> = rows
        .into_iter()
        .map(|(s,)| Duration::from_secs_f64(s.max(0.0)))
        .collect();
    Ok(Figures::from_latencies(all, Duration::from_secs(1)))
}

/// B's events, one a second from `from` for `seconds`.
async fn steady(
    http: reqwest::Client,
    base: String,
    token: String,
    from: usize,
    seconds: usize,
) -> anyhow::Result<()> {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    for i in from..from + seconds {
        tick.tick().await;
        post(
            &http,
            &format!("{base}/v1/events"),
            &token,
            &json!({"event_id": format!("b-{i}"), "event_type": "bench.b", "source": "bench", "payload": {}}),
        )
        .await?;
    }
    Ok(())
}

pub async fn run(bench: &Bench) -> anyhow::Result<()> {
    let (db, pool) = Database::migrated(&bench.admin_url, "fair").await?;
    let op = create_key(&bench.bin, &db.url, "operator").await?;
    let queue = format!("bench-fair-{}", std::process::id());
    let service = Service::start(
        &bench.bin,
        "serve",
        &[
            ("DATABASE_URL", &db.url),
            ("TEMPORAL_ADDRESS", &bench.temporal),
            ("TEMPORAL_NAMESPACE", "default"),
            ("ACP_TASK_QUEUE", &queue),
            ("ACP_CONSUME_SOURCES", "false"),
        ],
    )
    .await?;
    let http = reqwest::Client::new();
    let base = service.base.clone();
    let a = project(&http, &base, &op, "burst", json!({})).await?;
    let guarantee = json!({"runs_running": 4, "runs_guaranteed": 2});
    let b = project(&http, &base, &op, "steady", guarantee).await?;
    let noop = json!([{"task_type": "noop"}]);
    let activity =
        |name: &str, trigger: Value| json!({"name": name, "trigger": trigger, "tasks": noop});
    let activities = format!("{base}/v1/activities");
    post(
        &http,
        &activities,
        &a,
        &activity(
            "a-events",
            json!({"type": "event", "event_types": ["bench.a"]}),
        ),
    )
    .await?;
    post(
        &http,
        &activities,
        &b,
        &activity(
            "b-events",
            json!({"type": "event", "event_types": ["bench.b"]}),
        ),
    )
    .await?;
    post(
        &http,
        &activities,
        &b,
        &activity(
            "b-every-second",
            json!({"type": "interval", "every": "PT1S"}),
        ),
    )
    .await?;

    let seconds = bench.fair_seconds.max(5);
    let t0 = Instant::now();
    // Alone: B's events and schedule with nothing else.
    steady(http.clone(), base.clone(), b.clone(), 0, seconds).await?;
    let alone_end = Instant::now();
    // Beside A's burst: A posts everything at once while B goes on.
    let burst = {
        let (http, base, a) = (http.clone(), base.clone(), a.clone());
        let n = bench.fair_events;
        tokio::spawn(async move {
            let url = format!("{base}/v1/events:batch");
            let batches: Vec<Value> = (0..n)
                .step_by(BATCH)
                .map(|start| {
                    json!({"events": (start..(start + BATCH).min(n)).map(|i| json!({
                        "event_id": format!("a-{i}"), "event_type": "bench.a", "source": "bench", "payload": {}
                    })).collect::<Vec<_>>()})
                })
                .collect();
            let mut posts = futures::stream::iter(batches.into_iter().map(|batch| {
                let (http, url, a) = (http.clone(), url.clone(), a.clone());
                async move { post(&http, &url, &a, &batch).await.map(|_| ()) }
            }))
            .buffer_unordered(IN_FLIGHT);
            while let Some(result) = posts.next().await {
                result?;
            }
            anyhow::Ok(())
        })
    };
    let beside_start = Instant::now();
    steady(http.clone(), base.clone(), b.clone(), seconds, seconds).await?;
    let beside_end = Instant::now();
    burst.await??;
    // A's runs all finish.
    let n = bench.fair_events as i64;
    let done = loop {
        let (done,): (i64,) = sqlx::query_as(
            "SELECT count(*) FROM activity_runs r JOIN activities a ON a.id = r.activity_id
             WHERE a.project_id = 'burst' AND r.status = 'succeeded'",
        )
        .fetch_one(&pool)
        .await?;
        if done >= n || t0.elapsed() > DEADLINE {
            break done;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    let drained = t0.elapsed() - (beside_start - t0);
    // Let B's last runs start before reading them.
    tokio::time::sleep(Duration::from_secs(3)).await;
    // The window's ends are seconds after the database's time at t0: the
    // harness and PostgreSQL share this machine's clock.
    let origin: (chrono::DateTime<chrono::Utc>,) =
        sqlx::query_as("SELECT now()").fetch_one(&pool).await?;
    let origin = origin.0 - chrono::Duration::from_std(t0.elapsed())?;
    let event_sql = String::from(
        "SELECT extract(epoch FROM coalesce(r.started_at, r.created_at) - e.received_at)::float8
         FROM activity_runs r JOIN event_dispatches d ON d.run_id = r.run_id
         JOIN events e ON e.event_id = d.event_id
         WHERE d.event_id LIKE 'b-%'
           AND e.received_at >= $3 + $1 * interval '1 second'
           AND e.received_at < $3 + $2 * interval '1 second'",
    );
    let schedule_sql = String::from(
        "SELECT extract(epoch FROM coalesce(r.started_at, r.created_at) - r.scheduled_for)::float8
         FROM activity_runs r JOIN activities a ON a.id = r.activity_id
         WHERE a.name = 'b-every-second' AND r.scheduled_for IS NOT NULL
           AND r.scheduled_for >= $3 + $1 * interval '1 second'
           AND r.scheduled_for < $3 + $2 * interval '1 second'",
    );
    let rows = [
        ("B's event runs", &event_sql),
        ("B's PT1S schedule", &schedule_sql),
    ];
    println!("## 11. Fair share\n");
    println!(
        "Project A posts {} events at once ({} per batch, {} batches in flight) while project B \
         posts one event a second and runs a PT1S schedule, equal weights, B guaranteed two runs \
         at once (`runs_guaranteed: 2`), through `acp serve`. \
         Start latency: event accepted (or schedule's nominal time) to run started; B alone for \
         {seconds} s, then beside A's burst for {seconds} s. Goal: B's p99 beside the burst within \
         2x its p99 alone, and all of A's runs finished.\n",
        bench.fair_events, BATCH, IN_FLIGHT
    );
    println!(
        "| B's runs | alone p50 ms | alone p99 ms | beside A p50 ms | beside A p99 ms | p99 ratio | goal ≤ 2x |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (label, sql) in rows {
        let alone = latencies(&pool, sql, origin, (t0, alone_end), t0).await?;
        let beside = latencies(&pool, sql, origin, (beside_start, beside_end), t0).await?;
        let ratio = beside.p99.as_secs_f64() / alone.p99.as_secs_f64().max(0.001);
        println!(
            "| {label} ({} / {}) | {} | {} | {} | {} | {ratio:.2} | {} |",
            alone.requests,
            beside.requests,
            ms(alone.p50),
            ms(alone.p99),
            ms(beside.p50),
            ms(beside.p99),
            met(ratio <= 2.0)
        );
    }
    println!(
        "\nA's runs finished: {done} of {n} ({}), {:.1} s after its burst began.\n",
        met(done >= n),
        drained.as_secs_f64()
    );
    service.stop().await?;
    pool.close().await;
    db.drop().await?;
    Ok(())
}
