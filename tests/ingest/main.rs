//! Asynchronous event ingest: an event is accepted once it and its dispatch
//! rows are committed, and dispatchers start the runs, exactly once each,
//! across dispatchers and across a killed `acp serve`.

mod batches;
use crate::common;
mod dispatch;

use std::collections::HashSet;
use std::time::Duration;

use common::*;
use serde_json::{Value, json};
use sqlx::PgPool;

async fn app(pool: PgPool) -> TestApp {
    let temporal = shared_temporal();
    let namespace = new_namespace(&temporal.address()).await;
    TestApp::spawn(pool, &temporal.address(), &namespace).await
}

fn event_activity(event_type: &str) -> Value {
    json!({
        "name": "ingest",
        "trigger": {"type": "event", "event_types": [event_type]},
        "tasks": [{"task_type": "noop"}]
    })
}

/// The activities an ingest answer lists dispatches for, sorted.
fn dispatched_to(answer: &Value) -> Vec<String> {
    let mut ids: Vec<String> = answer["dispatches"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| d["activity_id"].as_str().unwrap_or_default().to_owned())
        .collect();
    ids.sort();
    ids
}

async fn scalar(pool: &PgPool, sql: &str) -> i64 {
    sqlx::query_as::<_, (i64,)>(sql)
        .fetch_one(pool)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .0
}
