//! Benchmark 10, the console's activity page: an every-minute activity with
//! `ACP_BENCH_CONSOLE_RUNS` runs (100,000: about 69 days of minutes) is
//! opened in headless Chromium at its 7-day zoom (10,080 cells), and the same
//! schedule's page in the Temporal dev server's own UI, each several times in
//! a fresh browser context (console/bench/page.mjs, playwright-core driving
//! Debian's Chromium). Figures: first contentful paint, time until the page
//! shows what it is for (the console: the timeline drawn with every time of
//! the week; the Temporal UI: the schedule with its upcoming runs), and the
//! JS and CSS bytes transferred.

use std::path::PathBuf;

use anyhow::{Context, bail};
use serde_json::{Value, json};

use crate::Bench;
use crate::service::{Database, Service, create_key};

/// First render and interactive, goal for the console (ms).
const GOAL_MS: f64 = 1000.0;
/// JS + CSS transferred, gzipped, goal (bytes).
const GOAL_BYTES: f64 = 150.0 * 1024.0;
/// Seven days of minutes: the cells the week's timeline draws.
const CELLS: u64 = 7 * 24 * 60;

pub async fn run(bench: &Bench) -> anyhow::Result<()> {
    let Some(ui) = bench.temporal_ui.clone() else {
        bail!("benchmark 10 needs the Temporal dev server's UI: set ACP_BENCH_TEMPORAL_UI");
    };
    let (db, pool) = Database::migrated(&bench.admin_url, "console").await?;
    let admin = create_key(&bench.bin, &db.url, "admin").await?;
    let reader = create_key(&bench.bin, &db.url, "read").await?;
    let service = Service::start(
        &bench.bin,
        "api",
        &[
            ("DATABASE_URL", &db.url),
            ("TEMPORAL_ADDRESS", &bench.temporal),
            ("TEMPORAL_NAMESPACE", "default"),
        ],
    )
    .await?;
    let http = reqwest::Client::new();
    let created: Value = http
        .post(format!("{}/v1/activities", service.base))
        .bearer_auth(&admin)
        .json(&json!({
            "name": "console-bench-every-minute",
            "trigger": {"type": "cron", "cron": "* * * * *", "timezone": "Europe/Berlin"},
            "tasks": [{"task_type": "noop"}]
        }))
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?;
    let id: uuid::Uuid = created["id"]
        .as_str()
        .context("the created activity has no id")?
        .parse()?;
    // The schedule must not fire while the page is measured: its runs are
    // the seeded ones.
    http.post(format!("{}/v1/activities/{id}/pause", service.base))
        .bearer_auth(&admin)
        .json(&json!({"note": "benchmark 10"}))
        .send()
        .await?
        .error_for_status()?;
    let runs = bench.console_runs;
    seed_minutes(&pool, id, runs).await?;

    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("console/bench/page.mjs");
    let output = tokio::process::Command::new("node")
        .arg(&script)
        .current_dir(script.parent().and_then(|p| p.parent()).unwrap_or(&script))
        .env("ACP_BENCH_CONSOLE", &service.base)
        .env("ACP_BENCH_TOKEN", &reader)
        .env("ACP_BENCH_ACTIVITY", id.to_string())
        .env("ACP_BENCH_CELLS", CELLS.to_string())
        .env("ACP_BENCH_TEMPORAL_UI", &ui)
        .env("ACP_BENCH_NAMESPACE", "default")
        .output()
        .await
        .context("running node console/bench/page.mjs")?;
    service.stop().await?;
    if !output.status.success() {
        bail!(
            "console/bench/page.mjs failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let figures: Value = serde_json::from_slice(&output.stdout).with_context(|| {
        format!(
            "page.mjs printed {}",
            String::from_utf8_lossy(&output.stdout)
        )
    })?;
    print(&figures, runs, &ui);
    db.drop().await?;
    Ok(())
}

/// `runs` finished runs of the activity, one a minute going back from the
/// last whole minute, shaped as the service writes them (one in 50 failed,
/// one in 97 skipped as a misfire); the activity was created before them.
async fn seed_minutes(pool: &sqlx::PgPool, id: uuid::Uuid, runs: usize) -> anyhow::Result<()> {
    sqlx::query(
        "UPDATE activities SET created_at = created_at - make_interval(mins => $2 + 1) WHERE id = $1",
    )
    .bind(id)
    .bind(runs as i32)
    .execute(pool)
    .await?;
    sqlx::query(
        "INSERT INTO activity_runs (run_id, activity_id, workflow_id, trigger_type, scheduled_for,
             status, skip_reason, definition_version, started_at, finished_at, error, tasks_total,
             tasks_succeeded, tasks_failed, created_at)
         SELECT md5(r.workflow_id)::uuid, $1, r.workflow_id, 'cron', r.scheduled_for, r.status,
                CASE WHEN r.status = 'skipped' THEN 'misfire' END, 1,
                CASE WHEN r.status <> 'skipped' THEN r.scheduled_for END,
                r.scheduled_for + interval '2 seconds',
                CASE WHEN r.status = 'failed' THEN 'task 0 (noop) failed: simulated' END,
                1, (r.status = 'succeeded')::int, (r.status = 'failed')::int,
                r.scheduled_for + interval '250 milliseconds'
         FROM (
             SELECT s.scheduled_for,
                    'activity-' || $1 || ':'
                        || to_char(s.scheduled_for AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"+00:00\"')
                        AS workflow_id,
                    CASE WHEN s.i % 50 = 7 THEN 'failed' WHEN s.i % 97 = 3 THEN 'skipped'
                         ELSE 'succeeded' END AS status
             FROM (
                 SELECT i, date_trunc('minute', now()) - make_interval(mins => i::int) AS scheduled_for
                 FROM generate_series(1::bigint, $2) AS i
             ) s
         ) r",
    )
    .bind(id)
    .bind(runs as i64)
    .execute(pool)
    .await?;
    sqlx::query("TRUNCATE change_inbox").execute(pool).await?;
    sqlx::query("VACUUM ANALYZE activities, activity_runs")
        .execute(pool)
        .await?;
    Ok(())
}

fn print(figures: &Value, runs: usize, ui: &str) {
    let ms = |v: &Value| v.as_f64().map_or("–".to_owned(), |x| format!("{x:.0}"));
    let kib = |v: &Value| {
        v.as_f64()
            .map_or("–".to_owned(), |x| format!("{:.1}", x / 1024.0))
    };
    let c = &figures["console"];
    let t = &figures["temporal_ui"];
    let bytes = c["js_bytes"].as_f64().unwrap_or(0.0) + c["css_bytes"].as_f64().unwrap_or(0.0);
    let fcp = c["fcp_ms"].as_f64().unwrap_or(f64::INFINITY);
    let ready = c["ready_ms"].as_f64().unwrap_or(f64::INFINITY);
    println!("## 10. The console's activity page vs the Temporal UI's schedule page\n");
    println!(
        "An every-minute activity (`* * * * *`, Europe/Berlin, paused so nothing fires while \
         measured) with {} runs seeded with SQL (one a minute going back from now: 1 in 50 \
         failed, 1 in 97 skipped), opened in headless Chromium (Debian's, driven by \
         playwright-core from `console/bench/page.mjs`) at 1280×800 in a fresh context each \
         time, {} loads after one unmeasured warm-up, medians. The console: \
         `/console/activities/{{id}}?zoom=week` with a read key, ready when the timeline is drawn \
         with all {CELLS} times of the week (its canvas says so). The Temporal UI ({ui}): the \
         same schedule's page, ready when it shows the schedule's ID and its upcoming runs. \
         Bytes are JS and CSS as transferred (the console serves gzip).\n",
        crate::history::thousands(runs),
        c["loads"],
    );
    println!(
        "| page | first contentful paint ms | ready ms (median) | ready ms (worst) | JS KiB | CSS KiB | requests | goal | met |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    println!(
        "| console, 7 days ({CELLS} cells) | {} | {} | {} | {} | {} | {} | ≤ {GOAL_MS:.0} ms to first render and to interactive; JS+CSS ≤ 150 KiB gzipped | {} |",
        ms(&c["fcp_ms"]),
        ms(&c["ready_ms"]),
        ms(&c["ready_max_ms"]),
        kib(&c["js_bytes"]),
        kib(&c["css_bytes"]),
        c["requests"],
        crate::load::met(fcp <= GOAL_MS && ready <= GOAL_MS && bytes <= GOAL_BYTES),
    );
    if t.is_object() {
        println!(
            "| Temporal UI, the schedule's page | {} | {} | {} | {} | {} | {} | (for comparison) | |",
            ms(&t["fcp_ms"]),
            ms(&t["ready_ms"]),
            ms(&t["ready_max_ms"]),
            kib(&t["js_bytes"]),
            kib(&t["css_bytes"]),
            t["requests"],
        );
    }
    println!();
}
