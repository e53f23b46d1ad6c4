//! Flow control: `flow.concurrency` on an activity, exact across every run of
//! a key, through real HTTP, a real Temporal dev server and a webhook sink
//! that keeps its own log of overlapping calls. One test binary (one Temporal
//! dev server); each limit's tests in a module of their own.

use crate::common;
mod concurrency;
mod debounce;
mod queue;
mod rate_limit;

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use common::*;
use serde_json::{Value, json};
use sqlx::PgPool;

async fn app(pool: PgPool) -> TestApp {
    let server = shared_temporal();
    let namespace = new_namespace(&server.address()).await;
    TestApp::spawn(pool, &server.address(), &namespace).await
}

fn event_activity(url: &str, flow: Option<Value>) -> Value {
    let mut body = json!({
        "name": "per-customer",
        "trigger": {"type": "event", "event_types": ["order.placed"]},
        "tasks": [{"task_type": "webhook", "config": {"url": url}, "timeout": "PT60S"}]
    });
    if let Some(flow) = flow {
        body["flow"] = flow;
    }
    body
}

/// `count` events over `keys` customers, in one CloudEvents batch (so they
/// arrive at once), event `i` for customer `c{i % keys}`.
async fn post_burst(app: &TestApp, count: usize, keys: usize) {
    let batch: Vec<Value> = (0..count)
        .map(|i| {
            json!({"specversion": "1.0", "id": format!("e-{i:03}"), "source": "shop",
                   "type": "order.placed", "data": {"customer": format!("c{}", i % keys), "n": i}})
        })
        .collect();
    let (status, body) = json(
        app.http
            .post(app.url("/v1/events"))
            .header("content-type", "application/cloudevents-batch+json")
            .json(&batch)
            .send()
            .await
            .unwrap_or_else(|e| panic!("{e}")),
    )
    .await;
    assert_eq!(status, 200, "{body}");
}

/// Waits until the activity has `count` runs, all ended, and returns them.
async fn ended_runs(app: &TestApp, id: &str, count: usize) -> Vec<Value> {
    eventually(Duration::from_secs(600), || async {
        let runs = app.runs_of(id).await;
        let ended = runs
            .iter()
            .filter(|r| !matches!(r["status"].as_str(), Some("queued" | "running")))
            .count();
        (runs.len() == count && ended == count).then_some(runs)
    })
    .await
}

fn at(v: &Value) -> chrono::DateTime<chrono::FixedOffset> {
    chrono::DateTime::parse_from_rfc3339(v.as_str().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{v}: {e}"))
}
