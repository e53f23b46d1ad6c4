//! Activities become Temporal schedules: created, updated, paused and deleted
//! within the request, as seen by describing them through the SDK.

use crate::common;

use common::*;
use serde_json::json;
use sqlx::PgPool;
use temporalio_common::protos::temporal::api::enums::v1::ScheduleOverlapPolicy;

async fn app(pool: PgPool) -> TestApp {
    let server = shared_temporal();
    let namespace = new_namespace(&server.address()).await;
    TestApp::spawn(pool, &server.address(), &namespace).await
}

fn policies(
    d: &temporalio_common::protos::temporal::api::workflowservice::v1::DescribeScheduleResponse,
) -> (i32, i64) {
    let p = d
        .schedule
        .as_ref()
        .and_then(|s| s.policies)
        .unwrap_or_default();
    (
        p.overlap_policy,
        p.catchup_window.map(|w| w.seconds).unwrap_or(-1),
    )
}

#[sqlx::test(migrations = "./migrations")]
async fn every_trigger_kind_and_policy_maps_to_its_schedule(pool: PgPool) {
    let app = app(pool).await;
    // (trigger, expected overlap, expected catch-up window in seconds)
    let table = [
        (
            json!({"type": "cron", "cron": "0 * * * *", "timezone": "Europe/Berlin", "misfire_policy": "catchup", "catchup_limit": 10}),
            ScheduleOverlapPolicy::BufferAll,
            36_000,
        ),
        (
            json!({"type": "cron", "cron": "30 9 * * MON-FRI", "timezone": "America/New_York"}),
            ScheduleOverlapPolicy::Skip,
            10,
        ),
        (
            json!({"type": "interval", "every": "PT30S", "misfire_policy": "skip"}),
            ScheduleOverlapPolicy::Skip,
            10,
        ),
        (
            json!({"type": "interval", "every": "PT1M", "misfire_policy": "compress"}),
            ScheduleOverlapPolicy::BufferOne,
            10,
        ),
        (
            json!({"type": "interval", "every": "PT5M", "misfire_policy": "catchup", "catchup_limit": 3}),
            ScheduleOverlapPolicy::BufferAll,
            900,
        ),
    ];
    for (trigger, overlap, window) in table {
        let created = app.create(&activity_with(trigger.clone())).await;
        let id = created["id"].as_str().unwrap_or_default().to_owned();
        assert_eq!(created["schedule"]["sync_state"], "synced", "{created}");
        assert_eq!(created["schedule"]["schedule_id"], format!("activity-{id}"));
        // Reading the activity asks Temporal for its next fire times.
        let (_, read) = json(app.get(&format!("/v1/activities/{id}")).await).await;
        assert!(
            !read["schedule"]["next_fire_times"]
                .as_array()
                .unwrap()
                .is_empty(),
            "{read}"
        );

        let described = describe_schedule(
            &app.temporal_address,
            &app.namespace,
            &format!("activity-{id}"),
        )
        .await
        .unwrap_or_else(|| panic!("no schedule for {trigger}"));
        assert_eq!(policies(&described), (overlap as i32, window), "{trigger}");
        let schedule = described.schedule.clone().unwrap_or_default();
        let spec = schedule.spec.clone().unwrap_or_default();
        match trigger["type"].as_str() {
            Some("cron") => {
                assert_eq!(
                    spec.timezone_name,
                    trigger["timezone"].as_str().unwrap_or_default()
                );
                // The server compiles the cron string into a structured calendar.
                assert!(!spec.structured_calendar.is_empty() || !spec.cron_string.is_empty());
                assert!(spec.interval.is_empty());
            }
            _ => {
                let every = acp_domain::duration::IsoDuration::parse(
                    trigger["every"].as_str().unwrap_or_default(),
                )
                .unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(
                    spec.interval[0].interval.as_ref().map(|d| d.seconds),
                    Some(every.as_std().as_secs() as i64)
                );
            }
        }
        assert!(!schedule.state.unwrap_or_default().paused);
        // The action starts the launcher on the configured task queue.
        let action = schedule.action.and_then(|a| a.action);
        let Some(temporalio_common::protos::temporal::api::schedule::v1::schedule_action::Action::StartWorkflow(start)) = action else {
            panic!("no start-workflow action");
        };
        assert_eq!(
            start.workflow_type.map(|t| t.name).unwrap_or_default(),
            "LaunchScheduledRunWorkflow"
        );
        assert_eq!(
            start.task_queue.map(|q| q.name).unwrap_or_default(),
            TASK_QUEUE
        );
        // The action's memo carries the spec hash the reconciler compares
        // (Temporal refuses updates of a schedule's own memo).
        assert!(
            start
                .memo
                .unwrap_or_default()
                .fields
                .contains_key("acp_spec_hash")
        );
        assert!(
            described
                .memo
                .unwrap_or_default()
                .fields
                .contains_key("acp_activity_id")
        );
    }

    // The cron schedule's next fire times fall on Berlin's full hours.
    let (status, list) = json(app.get("/v1/activities?trigger_type=cron").await).await;
    assert_eq!(status, 200);
    assert_eq!(list["items"].as_array().map(Vec::len), Some(2));
}

#[sqlx::test(migrations = "./migrations")]
async fn update_disable_and_delete_follow_through_to_temporal(pool: PgPool) {
    let app = app(pool).await;
    let created = app.create(&interval_activity("PT30S")).await;
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    let schedule_id = format!("activity-{id}");
    let path = format!("/v1/activities/{id}");

    // Update: a new interval and policy reach the schedule.
    let (status, patched) = json(
        app.patch(&path, &json!({"trigger": {"every": "PT45S", "misfire_policy": "catchup", "catchup_limit": 4}}))
            .await,
    )
    .await;
    assert_eq!(status, 200, "{patched}");
    assert_eq!(patched["version"], 2);
    assert_eq!(patched["schedule"]["sync_state"], "synced", "{patched}");
    let d = describe_schedule(&app.temporal_address, &app.namespace, &schedule_id)
        .await
        .unwrap();
    let spec = d
        .schedule
        .clone()
        .unwrap_or_default()
        .spec
        .unwrap_or_default();
    assert_eq!(
        spec.interval[0].interval.as_ref().map(|i| i.seconds),
        Some(45)
    );
    assert_eq!(policies(&d), (ScheduleOverlapPolicy::BufferAll as i32, 180));

    // Disable pauses; enable unpauses.
    let (_, disabled) = json(app.patch(&path, &json!({"enabled": false})).await).await;
    assert_eq!(disabled["enabled"], false);
    let d = describe_schedule(&app.temporal_address, &app.namespace, &schedule_id)
        .await
        .unwrap();
    assert!(
        d.schedule
            .unwrap_or_default()
            .state
            .unwrap_or_default()
            .paused
    );
    let (_, enabled) = json(app.patch(&path, &json!({"enabled": true})).await).await;
    assert_eq!(enabled["enabled"], true);
    let d = describe_schedule(&app.temporal_address, &app.namespace, &schedule_id)
        .await
        .unwrap();
    assert!(
        !d.schedule
            .unwrap_or_default()
            .state
            .unwrap_or_default()
            .paused
    );

    // Switching to an event trigger removes the schedule.
    let (status, as_event) = json(
        app.put(
            &path,
            &activity_with(json!({"type": "event", "event_types": ["message.received"]})),
        )
        .await,
    )
    .await;
    assert_eq!(status, 200, "{as_event}");
    assert_eq!(as_event["schedule"]["sync_state"], "not_applicable");
    assert!(
        describe_schedule(&app.temporal_address, &app.namespace, &schedule_id)
            .await
            .is_none()
    );

    // Back to a schedule, then delete: the schedule goes, the row is gone from the API.
    let (status, _) = json(app.put(&path, &interval_activity("PT1M")).await).await;
    assert_eq!(status, 200);
    assert!(
        describe_schedule(&app.temporal_address, &app.namespace, &schedule_id)
            .await
            .is_some()
    );
    assert_eq!(app.delete(&path).await.status(), 204);
    assert!(
        describe_schedule(&app.temporal_address, &app.namespace, &schedule_id)
            .await
            .is_none()
    );
    assert_eq!(app.get(&path).await.status(), 404);
}

#[sqlx::test(migrations = "./migrations")]
async fn event_activities_have_no_schedule(pool: PgPool) {
    let app = app(pool).await;
    let created = app
        .create(&activity_with(
            json!({"type": "event", "event_types": ["message.received", "message.deleted"]}),
        ))
        .await;
    assert_eq!(created["schedule"]["sync_state"], "not_applicable");
    assert_eq!(created["schedule"]["schedule_id"], serde_json::Value::Null);
    let id = created["id"].as_str().unwrap_or_default();
    assert!(
        describe_schedule(
            &app.temporal_address,
            &app.namespace,
            &format!("activity-{id}")
        )
        .await
        .is_none()
    );
    assert_eq!(
        created["trigger"]["event_types"],
        json!(["message.deleted", "message.received"])
    );
}
