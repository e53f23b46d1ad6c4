//! Benchmark 4, memory: RSS of the service idle and under benchmark 2's load.

use crate::Bench;
use crate::history::Memory;
use crate::load::met;
use crate::service::{Database, Service, mib};

const MIB: u64 = 1024 * 1024;

/// RSS of `acp serve` (API, worker and reconciler) once started on an empty
/// database, after it has settled.
pub async fn serve_idle(bench: &Bench) -> anyhow::Result<u64> {
    let db = Database::create(&bench.admin_url, "serve").await?;
    let task_queue = format!("bench-serve-{}", std::process::id());
    let service = Service::start(
        &bench.bin,
        "serve",
        &[
            ("DATABASE_URL", &db.url),
            ("TEMPORAL_ADDRESS", &bench.temporal),
            ("TEMPORAL_NAMESPACE", "default"),
            ("ACP_TASK_QUEUE", &task_queue),
        ],
    )
    .await?;
    tokio::time::sleep(crate::SETTLE).await;
    let rss = service.rss()?;
    service.stop().await?;
    db.drop().await?;
    Ok(rss)
}

pub fn print(api: Option<&Memory>, serve_idle: Option<u64>) {
    println!("## 4. Memory: resident set size of the service\n");
    println!(
        "VmRSS from /proc/<pid>/status; idle is {} s after `/healthz` first answers, the peak is \
         sampled every 100 ms through benchmark 2 (warm-up, API and pgbench rows).\n",
        crate::SETTLE.as_secs()
    );
    println!("| process | state | RSS MiB | goal | met |");
    println!("|---|---|---|---|---|");
    if let Some(m) = api {
        println!(
            "| `acp api` | idle, after start-up | {} | ≤ 60 | {} |",
            mib(m.idle),
            met(m.idle <= 60 * MIB)
        );
        println!(
            "| `acp api` | peak under benchmark 2 | {} | ≤ 200 | {} |",
            mib(m.peak),
            met(m.peak <= 200 * MIB)
        );
        println!(
            "| `acp api` | idle, after benchmark 2 | {} | (not a goal) | |",
            mib(m.after)
        );
    }
    if let Some(rss) = serve_idle {
        println!(
            "| `acp serve` | idle, after start-up | {} | ≤ 60 | {} |",
            mib(rss),
            met(rss <= 60 * MIB)
        );
    }
    println!();
}
