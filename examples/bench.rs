//! Benchmarks that print figures, each next to its limit measured in the same
//! run. Run through `scripts/bench`, which starts the Temporal dev server and
//! finds PostgreSQL; this program creates its own database.
//!
//! 1. Event ingest: `POST /v1/events` throughput and p50/p99 at concurrency
//!    1, 8 and 32, against the raw rate of `start_workflow` calls made with
//!    the Temporal Rust client on the same server.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use acp::temporal::messages::RunInput;
use acp::temporal::{TemporalGateway, TemporalSettings};
use sqlx::Connection;

struct Figures {
    requests: usize,
    elapsed: Duration,
    p50: Duration,
    p99: Duration,
}

impl Figures {
    fn rate(&self) -> f64 {
        self.requests as f64 / self.elapsed.as_secs_f64()
    }
}

/// Runs `total` calls of `op` with `concurrency` in flight; `op` gets a unique index.
async fn measure<F, Fut>(total: usize, concurrency: usize, op: F) -> Figures
where
    F: Fn(usize) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = bool> + Send,
{
    let op = Arc::new(op);
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..concurrency {
        let (op, next) = (op.clone(), next.clone());
        workers.spawn(async move {
            let mut latencies = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= total {
                    return latencies;
                }
                let t = Instant::now();
                let ok = op(i).await;
                assert!(ok, "call {i} failed");
                latencies.push(t.elapsed());
            }
        });
    }
    let mut all = Vec::with_capacity(total);
    while let Some(result) = workers.join_next().await {
        all.extend(result.unwrap_or_default());
    }
    let elapsed = started.elapsed();
    all.sort();
    let pick = |q: f64| {
        all.get(((all.len() as f64 * q) as usize).min(all.len().saturating_sub(1)))
            .copied()
            .unwrap_or_default()
    };
    Figures {
        requests: all.len(),
        elapsed,
        p50: pick(0.50),
        p99: pick(0.99),
    }
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1000.0)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let admin_url = std::env::var("DATABASE_URL")?;
    let temporal = std::env::var("TEMPORAL_ADDRESS").unwrap_or_else(|_| "127.0.0.1:7233".into());
    let total: usize = std::env::var("ACP_BENCH_REQUESTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);

    // A database of its own, dropped at the end.
    let db = format!("acp_bench_{}", std::process::id());
    let mut admin = sqlx::PgConnection::connect(&admin_url).await?;
    sqlx::query(&format!("CREATE DATABASE {db}"))
        .execute(&mut admin)
        .await?;
    let mut url = url::Url::parse(&admin_url)?;
    url.set_path(&db);
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(32)
        .connect(url.as_str())
        .await?;
    acp::store::migrate(&pool).await?;

    let settings = TemporalSettings {
        address: temporal.clone(),
        namespace: "default".into(),
        api_key: None,
        tls: false,
        rpc_timeout: Duration::from_secs(10),
        identity: "acp-bench".into(),
    };
    let gateway = Arc::new(TemporalGateway::new(settings.clone()));
    let task_queue = format!("bench-{}", std::process::id());
    let state = acp::app::state_from(pool.clone(), gateway.clone(), &task_queue);
    let router = acp::app::build_router(state, 1024 * 1024);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", listener.local_addr()?);
    tokio::spawn(async move {
        let _ = acp::app::serve(listener, router, std::future::pending()).await;
    });

    let http = reqwest::Client::new();
    let activity: serde_json::Value = http
        .post(format!("{base}/v1/activities"))
        .json(&serde_json::json!({
            "name": "bench", "trigger": {"type": "event", "event_types": ["bench.event"]},
            "tasks": [{"task_type": "noop"}]
        }))
        .send()
        .await?
        .json()
        .await?;
    let activity_id: uuid::Uuid = activity["id"].as_str().unwrap_or_default().parse()?;
    gateway.ping().await?;

    println!(
        "## Event ingest vs raw start_workflow ({total} calls per row, Temporal dev server, no worker)\n"
    );
    println!(
        "| concurrency | ingest req/s | ingest p50 ms | ingest p99 ms | raw starts/s | raw p50 ms | raw p99 ms | ingest / raw |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for concurrency in [1usize, 8, 32] {
        let run = format!("c{concurrency}");
        let (http2, base2, run2) = (http.clone(), base.clone(), run.clone());
        let ingest = measure(total, concurrency, move |i| {
            let request = http2.post(format!("{base2}/v1/events")).json(&serde_json::json!({
                "event_id": format!("bench-{run2}-{i}"), "event_type": "bench.event", "source": "bench", "payload": {"i": i}
            }));
            async move {
                match request.send().await {
                    Ok(r) => r.status().is_success(),
                    Err(_) => false,
                }
            }
        })
        .await;
        let (gw, queue) = (gateway.clone(), task_queue.clone());
        let raw = measure(total, concurrency, move |i| {
            let (gw, queue, run) = (gw.clone(), queue.clone(), run.clone());
            async move {
                let input = RunInput {
                    activity_id,
                    trigger: acp::domain::run::RunTrigger::Event,
                    scheduled_for: None,
                    event_id: Some(format!("raw-{run}-{i}")),
                    event: None,
                    window_start: None,
                    window_end: None,
                    definition_version: 1,
                };
                gw.start_run(&format!("raw-{activity_id}:{run}-{i}"), &queue, &input)
                    .await
                    .is_ok()
            }
        })
        .await;
        println!(
            "| {concurrency} | {:.0} | {} | {} | {:.0} | {} | {} | {:.2} |",
            ingest.rate(),
            ms(ingest.p50),
            ms(ingest.p99),
            raw.rate(),
            ms(raw.p50),
            ms(raw.p99),
            ingest.rate() / raw.rate()
        );
    }

    pool.close().await;
    sqlx::query(&format!("DROP DATABASE {db} WITH (FORCE)"))
        .execute(&mut admin)
        .await?;
    Ok(())
}
