//! The load driver: a fixed number of calls, or calls for a fixed time, with a
//! fixed number in flight; throughput and latency percentiles out.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;

/// Throughput and latency of one measured row.
#[derive(Debug, Clone)]
pub struct Figures {
    pub requests: usize,
    /// Calls per second.
    pub rate: f64,
    pub p50: Duration,
    pub p99: Duration,
}

impl Figures {
    /// From every call's latency and the wall time they took together.
    pub fn from_latencies(mut all: Vec<Duration>, elapsed: Duration) -> Self {
        all.sort();
        let rate = all.len() as f64 / elapsed.as_secs_f64().max(f64::EPSILON);
        Self::from_sorted(all, rate)
    }

    /// From every call's latency and a rate measured elsewhere (pgbench's tps).
    pub fn with_rate(mut all: Vec<Duration>, rate: f64) -> Self {
        all.sort();
        Self::from_sorted(all, rate)
    }

    fn from_sorted(all: Vec<Duration>, rate: f64) -> Self {
        let pick = |q: f64| {
            all.get(((all.len() as f64 * q) as usize).min(all.len().saturating_sub(1)))
                .copied()
                .unwrap_or_default()
        };
        Self {
            requests: all.len(),
            rate,
            p50: pick(0.50),
            p99: pick(0.99),
        }
    }
}

#[derive(Clone, Copy)]
enum Stop {
    After(usize),
    At(Instant),
}

impl Stop {
    fn done(self, index: usize) -> bool {
        match self {
            Stop::After(total) => index >= total,
            Stop::At(deadline) => Instant::now() >= deadline,
        }
    }
}

/// Runs `total` calls of `op` with `concurrency` in flight; `op` gets a
/// unique index. The first failing call ends the measurement with its error.
pub async fn measure<F, Fut>(total: usize, concurrency: usize, op: F) -> anyhow::Result<Figures>
where
    F: Fn(usize) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = anyhow::Result<()>> + Send,
{
    drive(Stop::After(total), concurrency, op).await
}

/// Like [`measure`], for `duration` instead of a number of calls.
pub async fn measure_for<F, Fut>(
    duration: Duration,
    concurrency: usize,
    op: F,
) -> anyhow::Result<Figures>
where
    F: Fn(usize) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = anyhow::Result<()>> + Send,
{
    drive(Stop::At(Instant::now() + duration), concurrency, op).await
}

async fn drive<F, Fut>(stop: Stop, concurrency: usize, op: F) -> anyhow::Result<Figures>
where
    F: Fn(usize) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = anyhow::Result<()>> + Send,
{
    let op = Arc::new(op);
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..concurrency.max(1) {
        let (op, next) = (op.clone(), next.clone());
        workers.spawn(async move {
            let mut latencies = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if stop.done(i) {
                    return anyhow::Ok(latencies);
                }
                let t = Instant::now();
                op(i).await.with_context(|| format!("call {i} failed"))?;
                latencies.push(t.elapsed());
            }
        });
    }
    let mut all = Vec::new();
    while let Some(result) = workers.join_next().await {
        // An error drops the set, which aborts the other workers.
        all.extend(result??);
    }
    Ok(Figures::from_latencies(all, started.elapsed()))
}

/// Milliseconds with one decimal.
pub fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1000.0)
}

/// "yes" or "**no**", for the goal columns.
pub fn met(ok: bool) -> &'static str {
    if ok { "yes" } else { "**no**" }
}
