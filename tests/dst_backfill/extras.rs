//! A DST time the engine would not fire is started by the reconciler once
//! it is due.

use super::*;

/// A time the policy wants and the engine does not fire (Berlin's 02:30 on
/// 2026-03-29, shifted to 03:00 CEST = 01:00Z) is started by the
/// reconciler's pass once it is due, once, under its contract workflow ID.
/// The pass is driven with the clock of that night (the activity's creation
/// moved back to before it, as a test may); the launcher then decides with
/// today's clock, so the trigger is `catchup` with a limit the months since
/// do not reach.
#[sqlx::test(migrations = "./migrations")]
async fn the_reconciler_starts_an_extra_time_once_it_is_due(pool: PgPool) {
    let app = app(pool.clone()).await;
    let worker = app.worker(false, Default::default());
    let created = app
        .create(&json!({
            "name": "dst-extra",
            "trigger": {
                "type": "cron", "cron": "30 2 * * *", "timezone": "Europe/Berlin",
                "misfire_policy": "catchup", "catchup_limit": 1000
            },
            "tasks": [{"task_type": "noop"}]
        }))
        .await;
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    let uuid: uuid::Uuid = id.parse().unwrap_or_else(|e| panic!("{e}"));
    sqlx::query("UPDATE activities SET created_at = '2026-03-01T00:00:00Z' WHERE id = $1")
        .bind(uuid)
        .execute(&pool)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let services = &app.state.services;
    let activity = services
        .activities
        .get(uuid)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let extra = "2026-03-29T01:00:00Z";
    let pass = |now: &'static str| {
        let activity = activity.clone();
        async move {
            services
                .schedules
                .start_due_dst_extras(&[activity], utc(now))
                .await
        }
    };
    // Not due yet: nothing.
    assert_eq!(pass("2026-03-29T00:59:59Z").await, 0);
    // Due: started once.
    assert_eq!(pass("2026-03-29T01:00:05Z").await, 1);
    let run = eventually(Duration::from_secs(90), || async {
        app.runs_of(&id)
            .await
            .into_iter()
            .find(|r| r["status"] == "succeeded")
    })
    .await;
    assert_eq!(run["workflow_id"], contract_id(&id, extra), "{run}");
    // Later passes find it run: nothing more starts.
    assert_eq!(pass("2026-03-29T01:00:10Z").await, 0);
    assert_eq!(pass("2026-03-29T01:59:00Z").await, 0);
    assert_eq!(
        run_executions(&app, &id).await,
        vec![contract_id(&id, extra)]
    );
    assert_eq!(app.runs_of(&id).await.len(), 1);
    // The timeline shows the shifted time run.
    let items = timeline(&app, &id, BERLIN_SPRING).await;
    assert_eq!(items.len(), 1, "{items:?}");
    assert_eq!(
        (
            items[0]["scheduled_for"].clone(),
            items[0]["status"].clone(),
            items[0]["dst"].clone()
        ),
        (json!(extra), json!("succeeded"), json!("dst_gap")),
        "{items:?}"
    );
    worker.stop().await;
}
