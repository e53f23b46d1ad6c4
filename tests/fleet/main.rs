//! The scaled-out fleet: two `acp api` and two `acp worker` processes of the
//! built binary, no `acp serve`, on one PostgreSQL and one Temporal dev
//! server. Every background duty runs somewhere, the single ones in exactly
//! one process, taken over when that process dies.

use crate::common;
mod duties;
mod rolling;

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use acp::duties::reconcile::Reconciler;
use chrono::{DateTime, Utc};
use common::*;
use serde_json::{Value, json};
use sqlx::PgPool;
use temporalio_client::grpc::WorkflowService;
use temporalio_common::protos::temporal::api::schedule::v1::SchedulePatch;
use temporalio_common::protos::temporal::api::workflowservice::v1::PatchScheduleRequest;
use tonic::IntoRequest;

/// Each process's pool is kept small (the default is 16): a test runs four
/// processes, and four default pools grown under load, beside the other
/// tests' connections, come close to PostgreSQL's 100.
const FLEET_ENV: [(&str, &str); 4] = [
    ("ACP_AUTH_DISABLED", "true"),
    ("ACP_RECONCILE_INTERVAL", "0.5"),
    ("ACP_ALERT_INTERVAL", "0.5"),
    ("ACP_DB_MAX_CONNECTIONS", "6"),
];

/// This process's role in `duty`, from its `/readyz` (`None` when it does
/// not answer or does not carry the duty).
async fn role(http: &reqwest::Client, base: &str, duty: &str) -> Option<String> {
    let ready: Value = http
        .get(format!("{base}/readyz"))
        .send()
        .await
        .ok()?
        .json()
        .await
        .ok()?;
    ready["duties"]
        .as_array()?
        .iter()
        .find(|d| d["duty"] == duty)
        .and_then(|d| d["role"].as_str())
        .map(str::to_owned)
}

/// Waits until exactly one of `apis` leads `duty` and every other one
/// stands by; returns the leader's index.
async fn sole_leader(http: &reqwest::Client, apis: &[&ServeProcess], duty: &str) -> usize {
    eventually(Duration::from_secs(30), || async {
        let mut roles = Vec::new();
        for api in apis {
            roles.push(role(http, &api.base, duty).await?);
        }
        let leaders: Vec<usize> = (0..roles.len()).filter(|i| roles[*i] == "leader").collect();
        let rest_stand_by = roles
            .iter()
            .filter(|r| *r != "leader")
            .all(|r| r == "standby");
        (leaders.len() == 1 && rest_stand_by).then(|| leaders[0])
    })
    .await
}

async fn sync_state(http: &reqwest::Client, base: &str, id: &str) -> Option<String> {
    let body: Value = http
        .get(format!("{base}/v1/activities/{id}"))
        .send()
        .await
        .ok()?
        .json()
        .await
        .ok()?;
    body["schedule"]["sync_state"].as_str().map(str::to_owned)
}

/// Pauses the schedule in Temporal behind the service's back.
async fn pause_behind_the_back(address: &str, schedule_id: &str) {
    let mut client = acp_temporal::TemporalGateway::new(temporal_settings(address, "default"))
        .client()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    WorkflowService::patch_schedule(
        &mut client,
        PatchScheduleRequest {
            namespace: "default".into(),
            schedule_id: schedule_id.to_owned(),
            patch: Some(SchedulePatch {
                pause: "paused by hand".into(),
                ..Default::default()
            }),
            request_id: uuid::Uuid::new_v4().to_string(),
            ..Default::default()
        }
        .into_request(),
    )
    .await
    .unwrap_or_else(|e| panic!("pause behind the back: {e}"));
}

async fn paused_in_temporal(address: &str, schedule_id: &str) -> Option<bool> {
    describe_schedule(address, "default", schedule_id)
        .await
        .and_then(|d| d.schedule)
        .and_then(|s| s.state)
        .map(|s| s.paused)
}

/// Drift made by hand is put back by the fleet, whoever leads.
async fn drift_is_repaired(address: &str, schedule_id: &str) {
    // The pause is made (it panics otherwise); whether a describe still sees
    // it depends on how soon the fleet repairs it, so none is asserted here.
    pause_behind_the_back(address, schedule_id).await;
    eventually(Duration::from_secs(30), || async {
        (paused_in_temporal(address, schedule_id).await == Some(false)).then_some(())
    })
    .await;
}
