//! `pgbench` with a custom script: the database's own rate for a query.

use std::time::Duration;

use anyhow::{Context, bail};

use crate::load::Figures;

/// Runs `script` for `seconds` on `concurrency` connections with the
/// extended protocol and prepared statements (as sqlx does), `vars` bound
/// as `:name` parameters. The rate is pgbench's tps; the percentiles come
/// from its per-transaction log.
pub async fn run(
    url: &str,
    script: &str,
    vars: &[(&str, String)],
    concurrency: usize,
    seconds: u64,
) -> anyhow::Result<Figures> {
    let dir = std::env::temp_dir().join(format!(
        "acp-bench-pgbench-{}-{}",
        std::process::id(),
        uuid::Uuid::new_v4().simple()
    ));
    std::fs::create_dir_all(&dir)?;
    let result = run_in(&dir, url, script, vars, concurrency, seconds).await;
    let _ = std::fs::remove_dir_all(&dir);
    result
}

async fn run_in(
    dir: &std::path::Path,
    url: &str,
    script: &str,
    vars: &[(&str, String)],
    concurrency: usize,
    seconds: u64,
) -> anyhow::Result<Figures> {
    let script_path = dir.join("script.sql");
    std::fs::write(&script_path, script)?;
    // As many pgbench threads as the HTTP load generator has runtime workers.
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(concurrency)
        .max(1);
    let mut command =
        tokio::process::Command::new(std::env::var("PGBENCH").unwrap_or_else(|_| "pgbench".into()));
    command
        .args(["-n", "-M", "prepared"])
        .arg(format!("-c{concurrency}"))
        .arg(format!("-j{threads}"))
        .arg(format!("-T{seconds}"))
        .arg("-f")
        .arg(&script_path)
        .arg("--log")
        .arg(format!("--log-prefix={}", dir.join("tx").display()));
    for (name, value) in vars {
        command.arg("-D").arg(format!("{name}={value}"));
    }
    let output = command.arg(url).output().await.context("running pgbench")?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        bail!(
            "pgbench failed: {}{}",
            stdout,
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let tps: f64 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("tps = "))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .with_context(|| format!("no tps in pgbench's output:\n{stdout}"))?;
    let failed = stdout
        .lines()
        .find_map(|l| l.strip_prefix("number of failed transactions: "))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse::<u64>().ok())
        .unwrap_or(0);
    if failed > 0 {
        bail!("pgbench reports {failed} failed transactions:\n{stdout}");
    }
    // Log lines: client_id transaction_no time_us script_no epoch epoch_us.
    let mut latencies = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if !entry.file_name().to_string_lossy().starts_with("tx.") {
            continue;
        }
        for line in std::fs::read_to_string(entry.path())?.lines() {
            if let Some(us) = line
                .split_whitespace()
                .nth(2)
                .and_then(|t| t.parse::<u64>().ok())
            {
                latencies.push(Duration::from_micros(us));
            }
        }
    }
    if latencies.is_empty() {
        bail!("pgbench wrote no transaction log");
    }
    Ok(Figures::with_rate(latencies, tps))
}
