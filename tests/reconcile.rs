//! Temporal outages and drift: writes are accepted while Temporal is down and
//! the reconciler finishes them when it returns; schedules changed, paused or
//! deleted behind the service's back are repaired; orphans are removed; one
//! reconciler at a time.
//!
//! Each test owns its dev server, because it stops it, or because orphan
//! removal looks at the whole namespace.

use crate::common;

use std::time::Duration;

use acp::duties::reconcile::{RECONCILE_LOCK_KEY, Reconciler};
use common::*;
use serde_json::{Value, json};
use sqlx::PgPool;
use temporalio_client::grpc::WorkflowService;
use temporalio_common::protos::temporal::api::schedule::v1::SchedulePatch;
use temporalio_common::protos::temporal::api::workflowservice::v1::{
    PatchScheduleRequest, UpdateScheduleRequest,
};
use tonic::IntoRequest;

fn reconciler(app: &TestApp) -> Reconciler {
    Reconciler::new(&app.state.services)
}

async fn sync_state(app: &TestApp, id: &str) -> String {
    let (_, body) = json(app.get(&format!("/v1/activities/{id}")).await).await;
    body["schedule"]["sync_state"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[sqlx::test(migrations = "./migrations")]
async fn writes_during_an_outage_are_synced_once_temporal_returns(pool: PgPool) {
    let mut server = TemporalServer::start();
    let app = TestApp::spawn(pool, &server.address(), "default").await;
    // A first activity, so the service holds a live connection when Temporal goes away.
    let before = app.create(&interval_activity("PT30S")).await;
    assert_eq!(before["schedule"]["sync_state"], "synced");
    let (status, ready) = json(app.get("/readyz").await).await;
    assert_eq!((status, ready["status"].clone()), (200, json!("ready")));

    server.stop();
    let created = app.create(&interval_activity("PT45S")).await;
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    assert_eq!(created["schedule"]["sync_state"], "pending", "{created}");
    assert!(created["schedule"]["last_error"].is_string());
    // Reads still work, and readiness names the dependency that is down.
    assert_eq!(app.get(&format!("/v1/activities/{id}")).await.status(), 200);
    let (status, ready) = json(app.get("/readyz").await).await;
    assert_eq!(status, 503);
    assert_eq!(ready["postgres"]["status"], "up");
    assert_eq!(ready["temporal"]["status"], "down", "{ready}");
    // A pass while Temporal is down changes nothing and does not fail.
    let report = reconciler(&app)
        .pass()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(report.ran);
    assert_eq!(sync_state(&app, &id).await, "pending");

    server.restart();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let loop_handle = tokio::spawn(reconciler(&app).run(Duration::from_millis(300), async {
        let _ = stop_rx.await;
    }));
    eventually(Duration::from_secs(30), || async {
        (sync_state(&app, &id).await == "synced").then_some(())
    })
    .await;
    let schedule = describe_schedule(&server.address(), "default", &format!("activity-{id}")).await;
    let every = schedule
        .and_then(|d| d.schedule)
        .and_then(|s| s.spec)
        .and_then(|s| s.interval.first().cloned())
        .and_then(|i| i.interval)
        .map(|d| d.seconds);
    assert_eq!(every, Some(45));
    let (status, _) = json(app.get("/readyz").await).await;
    assert_eq!(status, 200);
    let _ = stop_tx.send(());
    let _ = loop_handle.await;
}

#[sqlx::test(migrations = "./migrations")]
async fn drift_is_repaired_and_orphans_are_removed(pool: PgPool) {
    let server = TemporalServer::start();
    let app = TestApp::spawn(pool, &server.address(), "default").await;
    let address = server.address();
    let created = app.create(&interval_activity("PT30S")).await;
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    let schedule_id = format!("activity-{id}");
    let gone = app.create(&interval_activity("PT1M")).await;
    let gone_id = format!("activity-{}", gone["id"].as_str().unwrap_or_default());
    let mut client = app
        .state
        .services
        .activities
        .gateway()
        .client()
        .await
        .unwrap_or_else(|e| panic!("{e}"));

    // Behind the service's back: change the interval, pause it, delete the other.
    let mut current = describe_schedule(&address, "default", &schedule_id)
        .await
        .unwrap_or_default();
    let mut schedule = current.schedule.take().unwrap_or_default();
    if let Some(spec) = schedule.spec.as_mut() {
        spec.interval[0].interval = Some(prost_wkt_types::Duration {
            seconds: 99,
            nanos: 0,
        });
    }
    WorkflowService::update_schedule(
        &mut client,
        UpdateScheduleRequest {
            namespace: "default".into(),
            schedule_id: schedule_id.clone(),
            schedule: Some(schedule),
            conflict_token: current.conflict_token.clone(),
            request_id: uuid::Uuid::new_v4().to_string(),
            ..Default::default()
        }
        .into_request(),
    )
    .await
    .unwrap_or_else(|e| panic!("update behind the back: {e}"));
    WorkflowService::patch_schedule(
        &mut client,
        PatchScheduleRequest {
            namespace: "default".into(),
            schedule_id: schedule_id.clone(),
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
    assert!(
        app.state
            .services
            .activities
            .gateway()
            .delete(&gone_id)
            .await
            .unwrap_or(false)
    );

    // Orphans: one that no activity owns, and two that are not ours to judge.
    let orphan = format!("activity-{}", uuid::Uuid::new_v4());
    let foreign = [
        "activity-not-a-uuid".to_owned(),
        format!("billing-{}", uuid::Uuid::new_v4()),
    ];
    let desired = acp_temporal::translate::desired_schedule(
        &app.state
            .services
            .activities
            .get(uuid::Uuid::parse_str(&id).unwrap_or_default())
            .await
            .unwrap_or_else(|e| panic!("{e}")),
        TASK_QUEUE,
    )
    .unwrap_or_else(|| panic!("no desired schedule"));
    for schedule in std::iter::once(&orphan).chain(foreign.iter()) {
        app.state
            .services
            .activities
            .gateway()
            .create(schedule, &desired)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    }
    // Visibility is eventually consistent: wait until the list shows them.
    eventually(Duration::from_secs(30), || async {
        let ids = app
            .state
            .services
            .activities
            .gateway()
            .list_schedule_ids("")
            .await
            .ok()?;
        (ids.contains(&orphan) && foreign.iter().all(|f| ids.contains(f))).then_some(())
    })
    .await;

    let report = reconciler(&app)
        .pass()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(report.ran);
    let (_, listed) = json(app.get("/v1/activities").await).await;
    assert_eq!(report.orphans_deleted, 1, "{report:?} {listed}");

    let repaired = describe_schedule(&address, "default", &schedule_id)
        .await
        .unwrap_or_default();
    let schedule = repaired.schedule.unwrap_or_default();
    assert_eq!(
        schedule
            .spec
            .and_then(|s| s.interval.first().cloned())
            .and_then(|i| i.interval)
            .map(|d| d.seconds),
        Some(30)
    );
    assert!(!schedule.state.unwrap_or_default().paused);
    assert!(
        describe_schedule(&address, "default", &gone_id)
            .await
            .is_some(),
        "deleted schedule not recreated"
    );
    assert!(
        describe_schedule(&address, "default", &orphan)
            .await
            .is_none(),
        "orphan not removed"
    );
    for f in &foreign {
        assert!(
            describe_schedule(&address, "default", f).await.is_some(),
            "{f} should be left alone"
        );
    }
    assert_eq!(sync_state(&app, &id).await, "synced");

    // A second pass finds nothing to do.
    let again = reconciler(&app)
        .pass()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(again.orphans_deleted, 0);
    let after = describe_schedule(&address, "default", &schedule_id)
        .await
        .unwrap_or_default();
    assert_eq!(
        after.conflict_token, repaired.conflict_token,
        "an in-sync schedule was rewritten"
    );
}

#[sqlx::test(migrations = "./migrations")]
async fn one_reconciler_at_a_time(pool: PgPool) {
    let server = TemporalServer::start();
    // Created while Temporal "is down" for this app, so it is pending.
    let offline = TestApp::without_temporal(pool.clone()).await;
    let created = offline.create(&interval_activity("PT30S")).await;
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    let app = TestApp::spawn(pool.clone(), &server.address(), "default").await;

    // Another replica holds the lock: this pass must not touch anything.
    let mut holder = pool.acquire().await.unwrap_or_else(|e| panic!("{e}"));
    sqlx::query("SELECT pg_advisory_lock($1)")
        .bind(RECONCILE_LOCK_KEY)
        .execute(&mut *holder)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let report = reconciler(&app)
        .pass()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(!report.ran);
    assert_eq!(sync_state(&app, &id).await, "pending");
    assert!(
        describe_schedule(&server.address(), "default", &format!("activity-{id}"))
            .await
            .is_none()
    );

    // Two reconcilers racing: the lock lets at most one of them work at a time,
    // and between them the activity gets synced exactly as by one.
    sqlx::query("SELECT pg_advisory_unlock($1)")
        .bind(RECONCILE_LOCK_KEY)
        .execute(&mut *holder)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let (first, second) = (reconciler(&app), reconciler(&app));
    let (a, b) = tokio::join!(first.pass(), second.pass());
    let ran = [a, b]
        .into_iter()
        .filter(|r| r.as_ref().is_ok_and(|r| r.ran))
        .count();
    assert!(ran >= 1);
    assert_eq!(sync_state(&app, &id).await, "synced");
    let listed: Value = json(app.get("/v1/activities").await).await.1;
    assert_eq!(listed["items"].as_array().map(Vec::len), Some(1));
}
