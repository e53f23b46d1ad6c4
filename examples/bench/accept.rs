//! Benchmark 5, ingest at the database's pace: `POST /v1/events` to `acp
//! api` (answering at commit, its dispatcher starting the runs) against
//! pgbench inserting the same rows, and how long an accepted event waits
//! for its run to start when events arrive at half the accepted rate.

use std::time::{Duration, Instant};

use anyhow::Context;

use crate::Bench;
use crate::cpu::CpuWatch;
use crate::history::print_cpu_row;
use crate::load::{Figures, measure, met, ms};
use crate::service::{Database, Service, create_key};

/// Calls in flight for the accepted rate: the load its goal is set at.
const CONCURRENCY: usize = 32;

/// The rows one accepted event leaves, in one statement: the event and its
/// one dispatch, as `EventStore::record` and `claim` write them.
const INSERT: &str = "\\set n random(1, 1000000000)
WITH e AS (
    INSERT INTO events (event_id, event_id_origin, event_type, source, occurred_at, payload)
    VALUES ('pg-' || gen_random_uuid(), 'client', 'bench.event', 'bench', NULL, jsonb_build_object('i', :n::int))
    RETURNING event_id
)
INSERT INTO event_dispatches (event_id, activity_id, workflow_id, run_id, state, definition_version)
SELECT e.event_id, :activity::uuid, 'activity-' || :activity::text || ':' || e.event_id, gen_random_uuid(), 'pending', 1 FROM e;
";

async fn post_event(
    http: &reqwest::Client,
    base: &str,
    token: &str,
    id: String,
    i: usize,
) -> anyhow::Result<()> {
    http.post(format!("{base}/v1/events"))
        .bearer_auth(token)
        .json(&serde_json::json!({
            "event_id": id, "event_type": "bench.event", "source": "bench", "payload": {"i": i}
        }))
        .send()
        .await?
        .error_for_status()?;
    Ok(())
}

/// Waits until no dispatch of events starting with `prefix` is pending.
async fn drained(pool: &sqlx::PgPool, prefix: &str) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(600);
    loop {
        let (pending,): (i64,) = sqlx::query_as(
            "SELECT count(*) FROM event_dispatches WHERE state = 'pending' AND event_id LIKE $1 || '%'",
        )
        .bind(prefix)
        .fetch_one(pool)
        .await?;
        if pending == 0 {
            return Ok(());
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "{pending} dispatches still pending after 10 minutes"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Events at a fixed pace (open loop) for `seconds`; returns how many.
async fn paced(
    http: &reqwest::Client,
    base: &str,
    token: &str,
    rate: f64,
    seconds: u64,
) -> anyhow::Result<usize> {
    let total = (rate * seconds as f64).max(1.0) as usize;
    let mut tick = tokio::time::interval(Duration::from_secs_f64(1.0 / rate.max(1.0)));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let mut calls = tokio::task::JoinSet::new();
    for i in 0..total {
        tick.tick().await;
        let (http, base, token) = (http.clone(), base.to_owned(), token.to_owned());
        calls.spawn(async move { post_event(&http, &base, &token, format!("half-{i}"), i).await });
    }
    while let Some(result) = calls.join_next().await {
        result??;
    }
    Ok(total)
}

pub async fn run(bench: &Bench) -> anyhow::Result<()> {
    let total = bench.requests.max(1000) * 2;
    let (db, pool) = Database::migrated(&bench.admin_url, "accept").await?;
    let token = create_key(&bench.bin, &db.url, "admin").await?;
    let queue = format!("bench-accept-{}", std::process::id());
    let service = Service::start(
        &bench.bin,
        "api",
        &[
            ("DATABASE_URL", &db.url),
            ("TEMPORAL_ADDRESS", &bench.temporal),
            ("TEMPORAL_NAMESPACE", "default"),
            ("ACP_TASK_QUEUE", &queue),
        ],
    )
    .await?;
    let http = reqwest::Client::new();
    let base = service.base.clone();
    let activity: serde_json::Value = http
        .post(format!("{base}/v1/activities"))
        .bearer_auth(&token)
        .json(&serde_json::json!({
            "name": "bench", "trigger": {"type": "event", "event_types": ["bench.event"]},
            "tasks": [{"task_type": "noop"}]
        }))
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?;
    let activity_id = activity["id"]
        .as_str()
        .context("the created activity has no id")?
        .to_owned();

    // Accepted events per second at concurrency 32 (the dispatcher starts
    // the runs meanwhile, as it does in production).
    let watch = CpuWatch::start(Some(service.pid()), Some(&db.name));
    let (h, b, t) = (http.clone(), base.clone(), token.clone());
    let accepted = measure(total, CONCURRENCY, move |i| {
        let (h, b, t) = (h.clone(), b.clone(), t.clone());
        async move { post_event(&h, &b, &t, format!("c32-{i}"), i).await }
    })
    .await?;
    let accepted_cpu = watch.finish().await;
    drained(&pool, "c32-").await?;

    // Half that rate, open loop: from commit (the dispatch row's
    // created_at) to the run's start (its completed_at).
    let half = accepted.rate / 2.0;
    let sent = paced(&http, &base, &token, half, bench.seconds).await?;
    drained(&pool, "half-").await?;
    let waits: Vec<(f64,)> = sqlx::query_as(
        "SELECT EXTRACT(EPOCH FROM completed_at - created_at)::float8 FROM event_dispatches WHERE event_id LIKE 'half-%'",
    )
    .fetch_all(&pool)
    .await?;
    let waits = Figures::with_rate(
        waits
            .into_iter()
            .map(|(s,)| Duration::from_secs_f64(s.max(0.0)))
            .collect(),
        half,
    );
    service.stop().await?;

    // pgbench writing the same two rows per event, nothing else running.
    let watch = CpuWatch::start(None, Some(&db.name));
    let pg = crate::pgbench::run(
        &db.url,
        INSERT,
        &[("activity", activity_id.clone())],
        CONCURRENCY,
        bench.seconds,
    )
    .await?;
    let pg_cpu = watch.finish().await;

    let ratio = accepted.rate / pg.rate.max(f64::EPSILON);
    println!(
        "## 5. Ingest at commit: `POST /v1/events` to `acp api` vs pgbench inserting the same rows\n"
    );
    println!(
        "Concurrency {CONCURRENCY}. API: {total} events to one subscribed activity (one `noop` task), answered 202 at commit while the process's dispatcher starts the runs on Temporal (no worker). pgbench: one statement inserting the event and its dispatch row, {}s. Start wait: {sent} events sent at half the accepted rate ({half:.0}/s, open loop), from the dispatch row's commit to its run's start.\n",
        bench.seconds
    );
    println!("| row | events/s | p50 ms | p99 ms | API / pgbench | goal | met |");
    println!("|---|---|---|---|---|---|---|");
    println!(
        "| API, accepted | {:.0} | {} | {} | {ratio:.2} | ≥ 0.50 | {} |",
        accepted.rate,
        ms(accepted.p50),
        ms(accepted.p99),
        met(ratio >= 0.5)
    );
    println!(
        "| pgbench, event + dispatch rows | {:.0} | {} | {} | 1.00 | | |",
        pg.rate,
        ms(pg.p50),
        ms(pg.p99)
    );
    println!(
        "| accept to started, at {half:.0}/s | {:.0} | {} | {} | | (not a goal) | |",
        half,
        ms(waits.p50),
        ms(waits.p99)
    );
    println!();
    println!("Where the CPU went, in ms per event (as in benchmark 2):\n");
    println!("| row | service | PostgreSQL | Temporal | load generator | sum |");
    println!("|---|---|---|---|---|---|");
    print_cpu_row(
        "API, accepted (with the dispatcher's starts)",
        accepted_cpu.per_call(accepted.requests),
    );
    print_cpu_row(
        "pgbench, event + dispatch rows",
        pg_cpu.per_call(pg.requests),
    );
    println!();

    pool.close().await;
    db.drop().await
}
