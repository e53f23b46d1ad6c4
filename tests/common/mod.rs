//! Test harness: real PostgreSQL (a fresh database per test, from
//! `#[sqlx::test]`), real Temporal dev servers started from the pinned CLI,
//! and the service driven through real HTTP.
//!
//! `TEST_LOG` turns on the service's logs in tests: `TEST_LOG=debug` (or any
//! `RUST_LOG`-style filter; `1` means `info`). They go to libtest's captured
//! output, so a failing test prints its own logs and a passing one stays quiet.
#![allow(dead_code)]

mod app;
mod burst;
mod catchup;
mod flow_sink;
mod projects;
mod serve;
mod sink;
mod temporal;

// Each test binary uses some of these.
#[allow(unused_imports)]
pub use {app::*, burst::*, catchup::*, flow_sink::*, serve::*, sink::*, temporal::*};

use std::time::{Duration, Instant};

/// Polls `probe` until it returns `Some`, or panics at the deadline.
pub async fn eventually<T, F, Fut>(deadline: Duration, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let until = Instant::now() + deadline;
    loop {
        if let Some(value) = probe().await {
            return value;
        }
        assert!(
            Instant::now() < until,
            "condition not met within {deadline:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Sends a set-up request, and sends it again while the service answers
/// 503 "a dependency is unavailable" (nothing was written; the problem tells
/// a client to retry shortly), for up to a minute: on a busy machine a
/// service's first PostgreSQL connection can take longer than its acquire
/// timeout. Any other answer is returned as it came. Not for a test whose
/// point is the 503.
pub async fn send_set_up(
    request: impl Fn() -> reqwest::RequestBuilder,
) -> (u16, serde_json::Value) {
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        let response = request()
            .send()
            .await
            .unwrap_or_else(|e| panic!("set-up request: {e}"));
        let status = response.status().as_u16();
        let body: serde_json::Value = response.json().await.unwrap_or_default();
        let unavailable = status == 503
            && body["type"]
                .as_str()
                .is_some_and(|t| t.ends_with("/problems/unavailable"));
        if !unavailable || Instant::now() > until {
            return (status, body);
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Installs the test log subscriber once per test binary, if `TEST_LOG` asks.
pub fn init_test_log() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let Ok(filter) = std::env::var("TEST_LOG") else {
            return;
        };
        let filter = match filter.as_str() {
            "" | "1" | "true" => "info".to_owned(),
            other => other.to_owned(),
        };
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
            .with_test_writer()
            .with_ansi(false)
            .try_init();
    });
}
