//! A writer killed with SIGKILL in the middle of a burst of transactions
//! (psql in a child process, each transaction inserting runs and ending
//! others) leaves rollups equal to the runs that committed: the rollups
//! change in the writer's own transactions, so they commit or vanish with
//! them.

use std::process::{Command, Stdio};
use std::time::Duration;

use sqlx::PgPool;

use super::{activities, assert_rollups_exact};
use crate::common::*;

/// Transactions in the burst: far more than run before the kill.
const TRANSACTIONS: usize = 20_000;

fn burst(activities: &[uuid::Uuid]) -> String {
    let mut sql = String::from("\\set ON_ERROR_STOP on\n");
    for n in 0..TRANSACTIONS {
        let activity = activities[n % activities.len()];
        let trigger = ["cron", "interval", "event", "manual"][n % 4];
        // A pause inside the transaction, so that the kill often lands
        // between its statements.
        sql.push_str(&format!(
            "BEGIN;\n\
             INSERT INTO activity_runs (run_id, activity_id, workflow_id, trigger_type, status, created_at, started_at)\n\
             SELECT gen_random_uuid(), '{activity}', 'crash-' || gen_random_uuid(), '{trigger}', 'running',\n\
                    now() - random() * interval '3 hours', now() - interval '1 second'\n\
               FROM generate_series(1, 3);\n\
             SELECT pg_sleep(0.002);\n\
             UPDATE activity_runs SET status = (ARRAY['succeeded', 'failed', 'cancelled'])[1 + {n} % 3],\n\
                    finished_at = started_at + random() * interval '90 seconds'\n\
              WHERE run_id IN (SELECT run_id FROM activity_runs WHERE status = 'running'\n\
                                ORDER BY created_at LIMIT 2);\n\
             COMMIT;\n"
        ));
    }
    sql
}

#[sqlx::test(migrations = "./migrations")]
async fn a_writer_killed_mid_burst_leaves_exact_rollups(pool: PgPool) {
    let app = TestApp::without_temporal(pool.clone()).await;
    let acts = activities(&app, 2).await;
    let script =
        std::env::temp_dir().join(format!("acp-rollups-burst-{}.sql", uuid::Uuid::new_v4()));
    std::fs::write(&script, burst(&acts)).unwrap_or_else(|e| panic!("{e}"));
    let name = format!("rollups-burst-{}", std::process::id());
    let mut writer = Command::new("psql")
        .arg("-X")
        .arg("-q")
        .arg("-f")
        .arg(&script)
        .arg(database_url(&pool))
        .env("PGAPPNAME", &name)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("psql: {e}"));

    // Kill it once a few hundred runs have committed.
    eventually(Duration::from_secs(30), || {
        let pool = pool.clone();
        async move {
            let n: i64 = sqlx::query_scalar("SELECT count(*) FROM activity_runs")
                .fetch_one(&pool)
                .await
                .ok()?;
            (n >= 300).then_some(())
        }
    })
    .await;
    let pid = writer.id().to_string();
    let killed = Command::new("kill")
        .args(["-KILL", &pid])
        .status()
        .unwrap_or_else(|e| panic!("kill: {e}"));
    assert!(killed.success());
    let _ = writer.wait();
    let _ = std::fs::remove_file(&script);

    // Its backend rolls back what was open and goes away.
    eventually(Duration::from_secs(30), || {
        let (pool, name) = (pool.clone(), name.clone());
        async move {
            let left: i64 = sqlx::query_scalar(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1",
            )
            .bind(&name)
            .fetch_one(&pool)
            .await
            .ok()?;
            (left == 0).then_some(())
        }
    })
    .await;

    let runs: i64 = sqlx::query_scalar("SELECT count(*) FROM activity_runs")
        .fetch_one(&pool)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        runs >= 300 && runs < 3 * TRANSACTIONS as i64,
        "the burst was not cut short: {runs} runs"
    );
    assert_rollups_exact(&pool).await;

    // And the API counts what committed.
    let (status, body) = json(app.get("/v1/stats/runs?bucket=PT1H").await).await;
    assert_eq!(status, 200, "{body}");
    let total: i64 = body["buckets"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| b["total"].as_i64())
        .sum();
    assert_eq!(total, runs, "{body}");
}
