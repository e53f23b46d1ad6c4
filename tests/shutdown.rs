//! `acp serve` as its own process: SIGTERM in the middle of a burst of
//! writes loses no acknowledged write, and the process exits 0 within its
//! grace period.

mod common;

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::*;
use serde_json::json;
use sqlx::PgPool;

const GRACE_SECS: u64 = 15;

fn acp(pool: &PgPool, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_acp"))
        .args(args)
        .env("DATABASE_URL", database_url(pool))
        .env("RUST_LOG", "warn")
        .output()
        .unwrap_or_else(|e| panic!("acp {args:?}: {e}"))
}

#[sqlx::test(migrations = "./migrations")]
async fn sigterm_during_200_writes_loses_no_acknowledged_write(pool: PgPool) {
    let temporal = shared_temporal();
    let namespace = new_namespace(&temporal.address()).await;
    let out = acp(
        &pool,
        &["keys", "create", "--name", "burst", "--scope", "write"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let token = String::from_utf8_lossy(&out.stdout).trim().to_owned();

    let port = free_port();
    let log_path = std::env::temp_dir().join(format!("acp-shutdown-{}.log", uuid::Uuid::new_v4()));
    let log = std::fs::File::create(&log_path).unwrap_or_else(|e| panic!("{e}"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_acp"))
        .arg("serve")
        .env("DATABASE_URL", database_url(&pool))
        .env("TEMPORAL_ADDRESS", temporal.address())
        .env("TEMPORAL_NAMESPACE", &namespace)
        .env("ACP_LISTEN", format!("127.0.0.1:{port}"))
        .env("ACP_TASK_QUEUE", format!("shutdown-{namespace}"))
        .env("ACP_SHUTDOWN_GRACE_SECS", GRACE_SECS.to_string())
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap_or_else(|e| panic!("spawn acp serve: {e}"));
    let base = format!("http://127.0.0.1:{port}");
    let http = reqwest::Client::new();
    eventually(Duration::from_secs(60), || {
        let http = http.clone();
        let url = format!("{base}/healthz");
        async move {
            http.get(url)
                .send()
                .await
                .ok()
                .filter(|r| r.status() == 200)
                .map(|_| ())
        }
    })
    .await;

    // 200 writes at once: half event activities (no Temporal in the
    // request), half scheduled ones (a schedule is created in the request).
    let answered = Arc::new(AtomicUsize::new(0));
    let mut burst = tokio::task::JoinSet::new();
    for i in 0..200 {
        let (http, base, token, answered) =
            (http.clone(), base.clone(), token.clone(), answered.clone());
        burst.spawn(async move {
            let trigger = if i % 2 == 0 {
                json!({"type": "event", "event_types": ["burst.tick"]})
            } else {
                json!({"type": "interval", "every": "PT1H"})
            };
            let body = json!({"name": format!("burst-{i}"), "trigger": trigger, "tasks": [{"task_type": "noop"}]});
            let result = http
                .post(format!("{base}/v1/activities"))
                .bearer_auth(token)
                .json(&body)
                .send()
                .await;
            answered.fetch_add(1, Ordering::SeqCst);
            match result {
                Ok(response) if response.status().is_success() => {
                    let created: serde_json::Value = response.json().await.unwrap_or_default();
                    Ok(created["id"].as_str().map(str::to_owned))
                }
                Ok(response) => Err(format!("HTTP {}", response.status())),
                Err(err) => Err(format!("transport: {err}")),
            }
        });
    }
    // SIGTERM once some writes have been answered and most are in flight.
    eventually(Duration::from_secs(30), || {
        let answered = answered.clone();
        async move { (answered.load(Ordering::SeqCst) >= 10).then_some(()) }
    })
    .await;
    let signalled = Instant::now();
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap_or_else(|e| panic!("kill: {e}"));
    assert!(status.success());

    let mut acknowledged = Vec::new();
    let mut refused = Vec::new();
    while let Some(outcome) = burst.join_next().await {
        match outcome.unwrap_or_else(|e| panic!("{e}")) {
            Ok(Some(id)) => acknowledged.push(id),
            Ok(None) => panic!("a 2xx without an id"),
            Err(why) => refused.push(why),
        }
    }
    let exit = loop {
        if let Some(exit) = child.try_wait().unwrap_or_else(|e| panic!("{e}")) {
            break exit;
        }
        if signalled.elapsed() > Duration::from_secs(GRACE_SECS + 10) {
            let _ = child.kill();
            panic!(
                "acp serve still running {:?} after SIGTERM",
                signalled.elapsed()
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let took = signalled.elapsed();
    let log = std::fs::read_to_string(&log_path).unwrap_or_default();
    eprintln!(
        "{} acknowledged, {} not ({:?}), exit {exit} {took:?} after SIGTERM",
        acknowledged.len(),
        refused.len(),
        refused.iter().take(3).collect::<Vec<_>>()
    );
    assert!(exit.success(), "exit {exit}; log:\n{log}");
    assert!(took < Duration::from_secs(GRACE_SECS), "exit took {took:?}");
    assert!(log.contains("shutdown signal received"), "{log}");
    assert!(!acknowledged.is_empty());
    assert!(
        refused.iter().all(|r| !r.starts_with("HTTP 5")),
        "no 5xx during shutdown: {refused:?}"
    );

    // Every acknowledged write is in the database, whole.
    let stored: Vec<(String, String)> =
        sqlx::query_as("SELECT id::text, name FROM activities WHERE deleted_at IS NULL")
            .fetch_all(&pool)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    for id in &acknowledged {
        assert!(
            stored
                .iter()
                .any(|(stored_id, name)| stored_id == id && name.starts_with("burst-")),
            "acknowledged write {id} is not in the database"
        );
    }
    let _ = std::fs::remove_file(&log_path);
}
