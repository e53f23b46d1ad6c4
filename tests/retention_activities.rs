//! An activity's own `history_retention`: validated, kept canonical,
//! hiding its older runs before their partition drops, and holding the
//! run partitions for the longest retention in force.

use crate::common;

use common::*;
use serde_json::json;
use sqlx::PgPool;
use uuid::Uuid;

/// An activity's own `history_retention`: validated, shown, and keeping
/// the run partitions for the longest one in force; its runs older than it
/// are no longer listed and answer `run-expired` before any partition
/// drops, while another activity's runs of the same age are served.
#[sqlx::test(migrations = "./migrations")]
async fn an_activity_serves_its_runs_for_its_own_retention(pool: PgPool) {
    let app = TestApp::without_temporal(pool.clone()).await;
    for (value, message) in [
        ("PT0S", "longer than zero"),
        ("P3651D", "at most"),
        ("P1M", "months"),
    ] {
        let mut body = interval_activity("PT1H");
        body["history_retention"] = json!(value);
        let (status, problem) = json(app.post("/v1/activities", &body).await).await;
        assert_eq!(status, 422, "{value}: {problem}");
        assert_eq!(
            problem["errors"][0]["field"], "history_retention",
            "{problem}"
        );
        assert!(
            problem["detail"]
                .as_str()
                .unwrap_or_default()
                .contains(message),
            "{problem}"
        );
    }
    let mut body = interval_activity("PT1H");
    body["history_retention"] = json!("PT60M");
    let short = app.create(&body).await;
    assert_eq!(
        short["history_retention"], "PT1H",
        "kept canonical: {short}"
    );
    let mut body = interval_activity("PT1H");
    body["history_retention"] = json!("P90D");
    let long = app.create(&body).await;
    let other = app.create(&interval_activity("PT1H")).await;

    // Each activity: a run two hours old and one a minute old.
    let mut runs = Vec::new();
    for activity in [&short, &long, &other] {
        let id: Uuid = activity["id"]
            .as_str()
            .unwrap_or_default()
            .parse()
            .unwrap_or_else(|e| panic!("{e}"));
        for ago in ["2 hours", "1 minute"] {
            let run_id = Uuid::new_v4();
            sqlx::query(&format!(
                "INSERT INTO activity_runs (run_id, activity_id, workflow_id, trigger_type, status, created_at)
                 VALUES ($1, $2, 'aged-' || $1, 'manual', 'succeeded', now() - interval '{ago}')"
            ))
            .bind(run_id)
            .bind(id)
            .execute(&pool)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
            runs.push((id, run_id));
        }
    }
    for (n, (activity, run_id)) in runs.iter().enumerate() {
        let expired = n == 0;
        let (status, body) = json(app.get(&format!("/v1/runs/{run_id}")).await).await;
        assert_eq!(status, if expired { 410 } else { 200 }, "run {n}: {body}");
        if expired {
            assert_eq!(
                body["type"],
                "https://activity-control-plane.dev/problems/run-expired"
            );
        }
        let (status, page) = json(app.get(&format!("/v1/runs?activity_id={activity}")).await).await;
        assert_eq!(status, 200);
        let listed = page["items"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|r| r["run_id"] == run_id.to_string());
        assert_eq!(listed, !expired, "run {n} listed: {page}");
    }
    let (status, _) = json(app.get(&format!("/v1/runs/{}", Uuid::new_v4())).await).await;
    assert_eq!(status, 404, "an ID that never was stays a 404");

    // The run partitions are kept for the longest retention in force.
    let (status, report) = json(app.get("/v1/retention").await).await;
    assert_eq!(status, 200, "{report}");
    let runs_table = report["tables"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| t["table"] == "activity_runs")
        .cloned()
        .unwrap_or_default();
    assert_eq!(runs_table["retention_seconds"], 90 * 86_400, "{report}");
}
