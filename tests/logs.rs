//! Structured logs of `acp serve` (`ACP_LOG_FORMAT=json`): a span per
//! request with its matched route and request ID, and a span per workflow
//! activity with the run ID it serves.

use crate::common;

use std::time::Duration;

use common::*;
use serde_json::Value;
use sqlx::PgPool;

#[sqlx::test(migrations = "./migrations")]
async fn json_logs_carry_request_and_run_spans(pool: PgPool) {
    let temporal = shared_temporal();
    let namespace = new_namespace(&temporal.address()).await;
    let token = cli_key(&pool, "write");
    let mut served = ServeProcess::start(
        &pool,
        &temporal.address(),
        &namespace,
        &[("ACP_LOG_FORMAT", "json"), ("RUST_LOG", "info,acp=debug")],
    )
    .await;
    let http = reqwest::Client::new();
    let created: Value = http
        .post(format!("{}/v1/activities", served.base))
        .bearer_auth(&token)
        .json(&interval_activity("PT1H"))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .json()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    let triggered = http
        .post(format!("{}/v1/activities/{id}/trigger", served.base))
        .bearer_auth(&token)
        .header("x-request-id", "logs-test-trigger")
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(triggered.status(), 202);
    let triggered: Value = triggered.json().await.unwrap_or_default();
    let run_id = triggered["run_id"].as_str().unwrap_or_default().to_owned();
    eventually(Duration::from_secs(60), || {
        let (http, url, token) = (
            http.clone(),
            format!("{}/v1/runs/{run_id}", served.base),
            token.clone(),
        );
        async move {
            let run: Value = http
                .get(url)
                .bearer_auth(token)
                .send()
                .await
                .ok()?
                .json()
                .await
                .ok()?;
            (run["status"] == "succeeded").then_some(())
        }
    })
    .await;
    served.sigterm();
    let exit = served.wait_exit(Duration::from_secs(30)).await;
    assert!(exit.success());

    let log = served.log();
    let lines: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    // The trigger request's lines carry its span: route template and request ID.
    let request_lines: Vec<&Value> = lines
        .iter()
        .filter(|l| {
            l["spans"].as_array().into_iter().flatten().any(|s| {
                s["name"] == "request"
                    && s["request_id"] == "logs-test-trigger"
                    && s["route"] == "/v1/activities/{id}/trigger"
            })
        })
        .collect();
    assert!(
        !request_lines.is_empty(),
        "no line in the trigger's request span:\n{log}"
    );
    // Every activity of the run logged within a span naming the run.
    let mut activities: Vec<String> = lines
        .iter()
        .filter(|l| {
            l["span"]["name"] == "temporal_activity" && l["span"]["run_id"] == run_id.as_str()
        })
        .filter_map(|l| l["span"]["activity"].as_str().map(str::to_owned))
        .collect();
    activities.sort();
    activities.dedup();
    assert_eq!(
        activities,
        ["finish_run", "finish_task", "log_run", "start_task"],
        "activity spans with run_id {run_id}:\n{log}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l["fields"]["message"] == "run finished"
                && l["span"]["run_id"] == run_id.as_str()
                && l["fields"]["status"] == "succeeded"),
        "{log}"
    );
}
