//! Each misfire policy applied to the times missed while paused, and a
//! resume while Temporal is unreachable.

use super::*;

async fn pause_then_resume(
    policy: &str,
    limit: i64,
    pool: PgPool,
) -> (TestApp, String, Value, DateTime<Utc>) {
    let app = app(pool).await;
    let worker = app.worker(false, Default::default());
    let id = create(&app, policy, json!({"catchup_limit": limit})).await;
    wait_succeeded(&app, &id, 1).await;
    let (status, paused) = post(
        &app,
        &format!("/v1/activities/{id}/pause"),
        json!({"note": "maintenance"}),
    )
    .await;
    assert_eq!(
        (status, paused["paused"].clone()),
        (200, json!(true)),
        "{paused}"
    );
    let (_, schedule) = json(app.get(&format!("/v1/activities/{id}/schedule")).await).await;
    assert_eq!(schedule["paused"], true);
    assert_eq!(schedule["note"], "maintenance");
    let paused_at = Utc::now();
    tokio::time::sleep(Duration::from_secs(11)).await;
    let (status, resumed) = post(&app, &format!("/v1/activities/{id}/resume"), json!({})).await;
    assert_eq!(status, 200, "{resumed}");
    assert_eq!(resumed["paused"], false);
    assert!(resumed["missed"]["total"].as_u64() >= Some(5), "{resumed}");
    let runs = resumed["missed"]["runs"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    // Let whatever the resume asked for run.
    let backfilled: Vec<DateTime<Utc>> = runs
        .iter()
        .filter(|m| m["action"] == "backfilled")
        .map(|m| at(&m["scheduled_for"]))
        .collect();
    eventually(Duration::from_secs(60), || async {
        let runs = runs_by_time(&app, &id).await;
        backfilled
            .iter()
            .all(|t| runs.get(t).is_some_and(|r| r["status"] == "succeeded"))
            .then_some(())
    })
    .await;
    worker.stop().await;
    (app, id, resumed, paused_at)
}

#[sqlx::test(migrations = "./migrations")]
async fn skip_runs_nothing_missed_while_paused(pool: PgPool) {
    let (app, id, resumed, paused_at) = pause_then_resume("skip", 10, pool).await;
    let missed = &resumed["missed"];
    assert_eq!(missed["runs"], json!([]), "{resumed}");
    assert_eq!(missed["skipped"], missed["total"], "{resumed}");
    let span = &missed["skipped_span"];
    assert_eq!(span["reason"], "paused", "{resumed}");
    assert_eq!(span["count"], missed["total"], "{resumed}");
    let runs = runs_by_time(&app, &id).await;
    let ran: Vec<_> = runs.range(at(&span["first"])..=at(&span["last"])).collect();
    assert!(ran.is_empty(), "a paused time ran: {ran:?}");
    let items = check_timeline(
        &app,
        &id,
        paused_at + chrono::Duration::seconds(2),
        paused_at + chrono::Duration::seconds(10),
    )
    .await;
    assert!(items.iter().all(|i| i["reason"] == "paused"), "{items:?}");
}

#[sqlx::test(migrations = "./migrations")]
async fn catchup_backfills_the_most_recent_limit_after_a_pause(pool: PgPool) {
    let (app, id, resumed, paused_at) = pause_then_resume("catchup", 3, pool).await;
    let missed = &resumed["missed"];
    let run = missed["runs"].as_array().cloned().unwrap_or_default();
    assert!(run.iter().all(|m| m["action"] == "backfilled"), "{resumed}");
    assert_eq!(run.len(), 3, "{resumed}");
    assert_eq!(missed["backfilled"], 3, "{resumed}");
    let span = &missed["skipped_span"];
    assert_eq!(span["reason"], "catchup_limit", "{resumed}");
    assert_eq!(
        missed["skipped"].as_u64().map(|s| s + 3),
        missed["total"].as_u64(),
        "{resumed}"
    );
    // The three run are the most recent, oldest first after the skipped ones.
    let newest_skipped = at(&span["last"]);
    assert!(run.iter().all(|m| at(&m["scheduled_for"]) > newest_skipped));
    let runs = runs_by_time(&app, &id).await;
    for m in &run {
        let t = at(&m["scheduled_for"]);
        let r = &runs[&t];
        assert_eq!(r["workflow_id"], m["workflow_id"]);
        assert_eq!(r["status"], "succeeded");
        assert_eq!((t - at(&r["window_start"])).num_seconds(), 2, "{r}");
    }
    // The skipped times are one span on the timeline, not run rows.
    let (first, last) = (at(&span["first"]), newest_skipped);
    assert!(runs.range(first..=last).next().is_none(), "{runs:?}");
    let items = check_timeline(
        &app,
        &id,
        paused_at - chrono::Duration::seconds(4),
        paused_at + chrono::Duration::seconds(12),
    )
    .await;
    let in_span: Vec<&Value> = items
        .iter()
        .filter(|i| (first..=last).contains(&at(&i["scheduled_for"])))
        .collect();
    assert_eq!(
        Some(in_span.len() as u64),
        span["count"].as_u64(),
        "{items:?}"
    );
    assert!(
        in_span
            .iter()
            .all(|i| i["status"] == "skipped" && i["reason"] == "catchup_limit"),
        "{items:?}"
    );
}

#[sqlx::test(migrations = "./migrations")]
async fn compress_runs_one_widened_run_after_a_pause(pool: PgPool) {
    let (app, id, resumed, paused_at) = pause_then_resume("compress", 10, pool).await;
    let run = resumed["missed"]["runs"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(run.len(), 1, "{resumed}");
    assert_eq!(run[0]["action"], "backfilled", "{resumed}");
    assert_eq!(
        resumed["missed"]["skipped_span"]["reason"], "compressed",
        "{resumed}"
    );
    let runs = runs_by_time(&app, &id).await;
    let latest = at(&run[0]["scheduled_for"]);
    let widened = &runs[&latest];
    // The window reaches back to where the last run before the pause ended.
    let before: Vec<&Value> = runs
        .values()
        .filter(|r| r["status"] == "succeeded" && at(&r["scheduled_for"]) <= paused_at)
        .collect();
    let last_end = before.iter().map(|r| at(&r["window_end"])).max();
    assert_eq!(Some(at(&widened["window_start"])), last_end, "{widened}");
    assert!((latest - at(&widened["window_start"])).num_seconds() >= 10);
    check_timeline(
        &app,
        &id,
        paused_at - chrono::Duration::seconds(4),
        paused_at + chrono::Duration::seconds(12),
    )
    .await;
}

#[sqlx::test(migrations = "./migrations")]
async fn a_resume_while_temporal_is_unreachable_catches_up_when_it_returns(pool: PgPool) {
    let app = app(pool.clone()).await;
    let worker = app.worker(false, Default::default());
    let id = create(&app, "catchup", json!({"catchup_limit": 3})).await;
    wait_succeeded(&app, &id, 1).await;
    let (status, _) = post(&app, &format!("/v1/activities/{id}/pause"), json!({})).await;
    assert_eq!(status, 200);
    tokio::time::sleep(Duration::from_secs(9)).await;

    // The same service, but Temporal is unreachable from it.
    let cut_off = TestApp::without_temporal(pool).await;
    let (status, resumed) = json(
        cut_off
            .post(&format!("/v1/activities/{id}/resume"), &json!({}))
            .await,
    )
    .await;
    assert_eq!(status, 200, "{resumed}");
    assert_eq!(resumed["sync_state"], "pending", "{resumed}");
    let missed = &resumed["missed"];
    let runs = missed["runs"].as_array().cloned().unwrap_or_default();
    assert!(runs.iter().all(|m| m["action"] == "pending"), "{resumed}");
    let pending: Vec<DateTime<Utc>> = runs.iter().map(|m| at(&m["scheduled_for"])).collect();
    assert_eq!(pending.len(), 3, "{resumed}");
    assert_eq!(missed["pending"], 3, "{resumed}");
    assert_eq!(
        missed["skipped_span"]["reason"], "catchup_limit",
        "{resumed}"
    );

    // The reconciler, which reaches Temporal, unpauses the schedule and
    // hands over the pending catch-up: exactly those times run.
    let reconciler = acp::duties::reconcile::Reconciler::new(&app.state.services);
    let dispatched = eventually(Duration::from_secs(30), || async {
        let report = reconciler.pass().await.unwrap_or_else(|e| panic!("{e}"));
        (report.backfills_dispatched > 0).then_some(report.backfills_dispatched)
    })
    .await;
    assert_eq!(dispatched, 3);
    eventually(Duration::from_secs(60), || async {
        let runs = runs_by_time(&app, &id).await;
        pending
            .iter()
            .all(|t| runs.get(t).is_some_and(|r| r["status"] == "succeeded"))
            .then_some(())
    })
    .await;
    let runs = runs_by_time(&app, &id).await;
    for t in &pending {
        assert_eq!(
            runs[t]["workflow_id"],
            acp_domain::ids::scheduled_run_workflow_id(
                uuid::Uuid::parse_str(&id).unwrap_or_default(),
                *t
            )
        );
    }
    let (_, schedule) = json(app.get(&format!("/v1/activities/{id}/schedule")).await).await;
    assert_eq!(schedule["paused"], false, "{schedule}");
    // A second pass has nothing left to hand over.
    let report = reconciler.pass().await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.backfills_dispatched, 0);
    let _ = app
        .patch(&format!("/v1/activities/{id}"), &json!({"enabled": false}))
        .await;
    worker.stop().await;
}
