//! Benchmarks that print figures, each next to its limit measured in the same
//! run. Run through `scripts/bench`, which starts the Temporal dev server,
//! finds PostgreSQL and builds `acp`; every benchmark creates its own database.
//!
//! 1. Event ingest: `POST /v1/events` throughput and p50/p99 at concurrency
//!    1, 8 and 32, against the raw rate of `start_workflow` calls made with
//!    the Temporal Rust client on the same server.
//! 2. Run-history read: the first page and a deep page of one activity's
//!    runs from `acp api`, against pgbench running the same SQL.
//! 3. Schedule sync: cron activities created through `acp api` until synced,
//!    against raw `CreateSchedule` calls.
//! 4. Memory: RSS of `acp api` idle and under benchmark 2, and of `acp serve` idle.
//! 5. Ingest at commit: accepted events/s at concurrency 32 against pgbench
//!    inserting the same rows, and accept-to-started latency at half that rate.
//! 6. End to end: N events to N finished runs (one `noop` task, and three)
//!    through `acp serve`, against a raw-SDK parent/child baseline.
//! 7. Broker ingress: JetStream messages to committed events through an
//!    `acp serve` source, against a bare consumer that only acknowledges.
//! 8. Stream fan-out: `GET /v1/stream` to N clients of `acp api` while runs
//!    are written into PostgreSQL at a steady rate: commit-to-client latency
//!    p50/p99, every change once and in order at every client, and the RSS
//!    one idle stream costs.
//! 9. Run statistics: `GET /v1/stats/runs` over the seeded runs (the last 24
//!    hours by hour, every run by day) from `acp api`, against pgbench
//!    running the same statement.
//!
//! 11. Fair share: project B's start latency (events at one a second, a
//!     PT1S schedule) alone and beside project A's burst of events.
//!
//! Environment: `DATABASE_URL` (a server where databases may be created),
//! `TEMPORAL_ADDRESS`, `ACP_BIN` (default: `acp` beside this program's
//! folder), `ACP_BENCH_SERVICE_LOG` (`RUST_LOG` of the spawned service,
//! default `info` as in production), and the knobs read in [`Bench::from_env`].

mod accept;
mod baseline;
mod console;
mod cpu;
mod e2e;
mod fair;
mod history;
mod ingest;
mod jetstream;
mod load;
mod memory;
mod pgbench;
mod seed;
mod service;
mod stats;
mod stream;
mod sync;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;

/// How long a freshly started service is left alone before its idle RSS is read.
pub const SETTLE: Duration = Duration::from_secs(3);

pub struct Bench {
    admin_url: String,
    temporal: String,
    bin: PathBuf,
    /// `ACP_BENCH_REQUESTS`: calls per row of benchmark 1 (1000).
    requests: usize,
    /// `ACP_BENCH_RUNS`: runs seeded for benchmarks 2 and 9 (1,000,000).
    runs: usize,
    /// `ACP_BENCH_ACTIVITIES`: activities they belong to (1000).
    activities: usize,
    /// `ACP_BENCH_DEEP`: rows before the deep page (10,000).
    deep: usize,
    /// `ACP_BENCH_SECONDS`: length of each timed row of benchmarks 2 and 9 (10).
    seconds: u64,
    /// `ACP_BENCH_CONCURRENCY`: calls in flight in benchmarks 2, 3 and 9 (8).
    concurrency: usize,
    /// `ACP_BENCH_SCHEDULES`: activities per side of benchmark 3 (1000).
    schedules: usize,
    /// `ACP_BENCH_ONLY`: comma-separated benchmark numbers (all); 4 needs 2.
    only: Vec<u32>,
    /// `ACP_BENCH_E2E_RUNS`: events (and runs) per row of benchmark 6 (1000).
    e2e_runs: usize,
    /// `ACP_BENCH_STREAM_CLIENTS`: streams open in benchmark 8 (100).
    stream_clients: usize,
    /// `ACP_BENCH_STREAM_RATE`: run changes written per second in benchmark 8 (200).
    stream_rate: u64,
    /// `ACP_BENCH_STREAM_SECONDS`: for how long they are written (10).
    stream_seconds: u64,
    /// `ACP_BENCH_CONSOLE_RUNS`: runs of benchmark 10's activity (100,000).
    console_runs: usize,
    /// `ACP_BENCH_FAIR_EVENTS`: project A's burst in benchmark 11 (10,000).
    fair_events: usize,
    /// `ACP_BENCH_FAIR_SECONDS`: B's seconds alone, and beside the burst (30).
    fair_seconds: usize,
    /// `ACP_BENCH_TEMPORAL_UI`: the dev server's UI, for benchmark 10.
    temporal_ui: Option<String>,
}

fn knob<T: std::str::FromStr>(name: &str, default: T) -> anyhow::Result<T> {
    match std::env::var(name) {
        Ok(text) => text
            .trim()
            .parse()
            .map_err(|_| anyhow::anyhow!("{name}={text} is not a valid value")),
        Err(_) => Ok(default),
    }
}

impl Bench {
    fn from_env() -> anyhow::Result<Self> {
        let bin = match std::env::var_os("ACP_BIN") {
            Some(path) => PathBuf::from(path),
            // target/release/examples/bench -> target/release/acp
            None => std::env::current_exe()?
                .parent()
                .and_then(|examples| examples.parent())
                .context("cannot locate the acp binary; set ACP_BIN")?
                .join("acp"),
        };
        anyhow::ensure!(
            bin.is_file(),
            "{} is missing: build it with `cargo build --release --bin acp`",
            bin.display()
        );
        let only = match std::env::var("ACP_BENCH_ONLY") {
            Ok(list) => list
                .split(',')
                .map(|n| n.trim().parse())
                .collect::<Result<_, _>>()
                .context("ACP_BENCH_ONLY is a comma-separated list of numbers")?,
            Err(_) => (1..=11).collect(),
        };
        Ok(Self {
            admin_url: std::env::var("DATABASE_URL").context("DATABASE_URL is not set")?,
            temporal: std::env::var("TEMPORAL_ADDRESS").unwrap_or_else(|_| "127.0.0.1:7233".into()),
            bin,
            requests: knob("ACP_BENCH_REQUESTS", 1000)?,
            runs: knob("ACP_BENCH_RUNS", 1_000_000)?,
            activities: knob("ACP_BENCH_ACTIVITIES", 1000)?,
            deep: knob("ACP_BENCH_DEEP", 10_000)?,
            seconds: knob("ACP_BENCH_SECONDS", 10)?,
            concurrency: knob("ACP_BENCH_CONCURRENCY", 8)?,
            schedules: knob("ACP_BENCH_SCHEDULES", 1000)?,
            only,
            e2e_runs: knob("ACP_BENCH_E2E_RUNS", 1000)?,
            stream_clients: knob("ACP_BENCH_STREAM_CLIENTS", 100)?,
            stream_rate: knob("ACP_BENCH_STREAM_RATE", 200)?,
            stream_seconds: knob("ACP_BENCH_STREAM_SECONDS", 10)?,
            console_runs: knob("ACP_BENCH_CONSOLE_RUNS", 100_000)?,
            fair_events: knob("ACP_BENCH_FAIR_EVENTS", 10_000)?,
            fair_seconds: knob("ACP_BENCH_FAIR_SECONDS", 30)?,
            temporal_ui: std::env::var("ACP_BENCH_TEMPORAL_UI").ok(),
        })
    }

    fn wants(&self, n: u32) -> bool {
        self.only.contains(&n)
    }

    fn temporal_settings(&self) -> acp_temporal::TemporalSettings {
        acp_temporal::TemporalSettings {
            address: self.temporal.clone(),
            namespace: "default".into(),
            api_key: None,
            tls: false,
            rpc_timeout: Duration::from_secs(10),
            identity: "acp-bench".into(),
        }
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let bench = Bench::from_env()?;
    if bench.wants(1) {
        ingest::run(&bench).await?;
    }
    let memory = if bench.wants(2) {
        Some(history::run(&bench).await?)
    } else {
        None
    };
    if bench.wants(3) {
        sync::run(&bench).await?;
    }
    if bench.wants(4) {
        let serve_idle = memory::serve_idle(&bench).await?;
        memory::print(memory.as_ref(), Some(serve_idle));
    }
    if bench.wants(5) {
        accept::run(&bench).await?;
    }
    if bench.wants(6) {
        e2e::run(&bench).await?;
    }
    if bench.wants(7) {
        jetstream::run(&bench).await?;
    }
    if bench.wants(8) {
        stream::run(&bench).await?;
    }
    if bench.wants(9) {
        stats::run(&bench).await?;
    }
    if bench.wants(10) {
        console::run(&bench).await?;
    }
    if bench.wants(11) {
        fair::run(&bench).await?;
    }
    Ok(())
}
