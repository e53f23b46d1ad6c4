//! A fire of the engine that the `dst` policy excludes, delivered through
//! the launcher, is a skipped run with reason `dst_policy`.

use super::*;

/// Asks the schedule itself to backfill `[start, end]` (both inclusive), as
/// Temporal's own tools would, without the service.
async fn raw_backfill(app: &TestApp, schedule_id: &str, start: DateTime<Utc>, end: DateTime<Utc>) {
    let mut client = app
        .state
        .services
        .activities
        .gateway()
        .client()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let stamp = |t: DateTime<Utc>| prost_wkt_types::Timestamp {
        seconds: t.timestamp(),
        nanos: 0,
    };
    let request = PatchScheduleRequest {
        namespace: app.namespace.clone(),
        schedule_id: schedule_id.to_owned(),
        patch: Some(SchedulePatch {
            backfill_request: vec![BackfillRequest {
                start_time: Some(stamp(start)),
                end_time: Some(stamp(end)),
                overlap_policy: ScheduleOverlapPolicy::AllowAll as i32,
            }],
            ..Default::default()
        }),
        request_id: uuid::Uuid::new_v4().to_string(),
        ..Default::default()
    };
    WorkflowService::patch_schedule(&mut client, request.into_request())
        .await
        .unwrap_or_else(|e| panic!("backfill: {e}"));
}

/// The engine fires Berlin's second 02:30 and New York's second 01:30
/// (among others); under `repeated: first` the launcher, handed such a fire
/// by Temporal itself (a schedule backfill, bypassing the service), records
/// it as a skipped run with reason `dst_policy` and runs nothing; a backfill
/// of the day then runs the first occurrence; the timeline calls the skipped
/// one `dst_repeat`.
#[sqlx::test(migrations = "./migrations")]
async fn the_launcher_skips_a_fire_the_policy_excludes(pool: PgPool) {
    let app = app(pool).await;
    let worker = app.worker(false, Default::default());
    // `from`: where the raw backfill starts. The engine's walk reaches
    // Berlin's second 02:30 from before the repeat (from inside the first
    // copy it does not), and New York's second 01:30 from inside the first
    // copy; starting after the first occurrence keeps that one out.
    for (cron, zone, from, excluded, wanted, range) in [
        (
            "30 2 * * *",
            "Europe/Berlin",
            "2026-10-24T13:30:00Z",
            "2026-10-25T01:30:00Z",
            "2026-10-25T00:30:00Z",
            BERLIN_AUTUMN,
        ),
        (
            "30 1 * * *",
            "America/New_York",
            "2026-11-01T05:31:00Z",
            "2026-11-01T06:30:00Z",
            "2026-11-01T05:30:00Z",
            NEW_YORK_AUTUMN,
        ),
    ] {
        let id = create(&app, cron, zone, "first", "shift").await;
        let schedule_id = format!("activity-{id}");
        // The engine's fire, straight from Temporal, bypassing the service
        // (a backfill of exactly `[t, t]` inside a repeated hour would find
        // another time: the walk then starts inside the repeat).
        raw_backfill(&app, &schedule_id, utc(from), utc(excluded)).await;
        let skipped = eventually(Duration::from_secs(90), || async {
            app.runs_of(&id).await.into_iter().next()
        })
        .await;
        assert_eq!(
            (
                skipped["status"].clone(),
                skipped["skip_reason"].clone(),
                skipped["workflow_id"].clone()
            ),
            (
                json!("skipped"),
                json!("dst_policy"),
                json!(contract_id(&id, excluded))
            ),
            "{zone}: {skipped}"
        );
        // The launcher ended without starting a run.
        eventually(Duration::from_secs(60), || async {
            let closed = executions_matching(
                &app,
                &format!(
                    "WorkflowType = 'LaunchScheduledRunWorkflow' AND ExecutionStatus = 'Completed' \
                     AND WorkflowId = 'launcher-{id}-{}'",
                    utc(excluded).format("%Y-%m-%dT%H:%M:%SZ")
                ),
            )
            .await;
            (!closed.is_empty()).then_some(())
        })
        .await;
        assert!(run_executions(&app, &id).await.is_empty(), "{zone}");
        // The service's backfill of the day runs the policy's occurrence and
        // declines the other one.
        let (status, real) = backfill(&app, &id, range, false).await;
        assert_eq!(status, 202, "{real}");
        assert_eq!(
            answer(&real),
            // The first occurrence is the earlier instant.
            vec![
                (utc(wanted), "backfilled".to_owned(), None),
                (
                    utc(excluded),
                    "skipped".to_owned(),
                    Some("dst_repeat".to_owned())
                ),
            ],
            "{zone}: {real}"
        );
        let executed = eventually(Duration::from_secs(90), || async {
            let ids = run_executions(&app, &id).await;
            (!ids.is_empty()).then_some(ids)
        })
        .await;
        assert_eq!(executed, vec![contract_id(&id, wanted)], "{zone}");
        let runs = eventually(Duration::from_secs(90), || async {
            let runs = app.runs_of(&id).await;
            (runs.len() == 2 && runs.iter().any(|r| r["status"] == "succeeded")).then_some(runs)
        })
        .await;
        assert!(
            runs.iter()
                .any(|r| r["workflow_id"] == contract_id(&id, wanted) && r["status"] == "succeeded"),
            "{zone}: {runs:?}"
        );
        // The timeline names the skipped fire.
        let items = timeline(&app, &id, range).await;
        let entry = items
            .iter()
            .find(|i| utc(i["scheduled_for"].as_str().unwrap_or_default()) == utc(excluded))
            .unwrap_or_else(|| panic!("{zone}: {excluded} not on the timeline: {items:?}"));
        assert_eq!(
            (
                entry["status"].clone(),
                entry["reason"].clone(),
                entry["dst"].clone()
            ),
            (json!("skipped"), json!("dst_repeat"), json!("dst_repeat")),
            "{zone}: {entry}"
        );
    }
    worker.stop().await;
}
