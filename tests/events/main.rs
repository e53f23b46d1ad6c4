//! The event intake: stable event IDs, exactly one run per (activity, event),
//! even under concurrent re-delivery, crashes, and after Temporal forgot.

mod bodies;
use crate::common;
mod exactly_once;
mod projects;

use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::time::Duration;

use common::*;
use serde_json::{Value, json};
use sqlx::PgPool;
use temporalio_client::grpc::WorkflowService;
use temporalio_common::protos::temporal::api::common::v1::WorkflowExecution;
use temporalio_common::protos::temporal::api::workflowservice::v1::{
    DeleteWorkflowExecutionRequest, DescribeWorkflowExecutionRequest,
};
use tonic::IntoRequest;

async fn app(pool: PgPool) -> TestApp {
    let server = shared_temporal();
    let namespace = new_namespace(&server.address()).await;
    TestApp::spawn(pool, &server.address(), &namespace).await
}

async fn subscriber(app: &TestApp, types: &[&str], enabled: bool) -> String {
    let created = app
        .create(&json!({
            "name": "on-event",
            "enabled": enabled,
            "trigger": {"type": "event", "event_types": types},
            "tasks": [{"task_type": "noop"}]
        }))
        .await;
    created["id"].as_str().unwrap_or_default().to_owned()
}

/// Delivers an event and waits for its starts (`Prefer: wait`), so the
/// answer says what Temporal did; `deliver_async` takes the default path.
async fn deliver(app: &TestApp, body: &Value, key: Option<&str>) -> (u16, Value) {
    let mut request = app
        .http
        .post(app.url("/v1/events"))
        .header("prefer", "wait=10")
        .json(body);
    if let Some(key) = key {
        request = request.header("idempotency-key", key);
    }
    json(request.send().await.unwrap_or_else(|e| panic!("{e}"))).await
}

async fn count(pool: &PgPool, sql: &str, arg: &str) -> i64 {
    sqlx::query_as::<_, (i64,)>(sql)
        .bind(arg)
        .fetch_one(pool)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .0
}
