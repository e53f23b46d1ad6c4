//! A backfill runs only the times that have not run.

use super::*;

#[sqlx::test(migrations = "./migrations")]
async fn backfill_runs_only_the_missing_times(pool: PgPool) {
    let app = app(pool).await;
    let worker = app.worker(false, Default::default());
    let created = app
        .create(&activity_with(
            json!({"type": "interval", "every": "PT1H", "misfire_policy": "skip"}),
        ))
        .await;
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    let now = Utc::now().timestamp();
    let hour = DateTime::from_timestamp(now - now.rem_euclid(3600), 0).unwrap_or_default();
    let h = |n: i64| hour - chrono::Duration::hours(n);
    let range =
        |from: i64, to: i64| json!({"start": h(from).to_rfc3339(), "end": h(to).to_rfc3339()});

    let (status, first) = post(&app, &format!("/v1/activities/{id}/backfill"), range(3, 0)).await;
    assert_eq!(status, 202, "{first}");
    let actions: Vec<&str> = first["times"]
        .as_array()
        .map(|t| t.iter().filter_map(|x| x["action"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(actions, vec!["backfilled"; 3]);
    eventually(Duration::from_secs(60), || async {
        (runs_by_time(&app, &id)
            .await
            .values()
            .filter(|r| r["status"] == "succeeded")
            .count()
            == 3)
            .then_some(())
    })
    .await;

    // A wider range that partly ran: only the missing times run.
    let (_, second) = post(&app, &format!("/v1/activities/{id}/backfill"), range(5, 0)).await;
    let by_action = |v: &Value, a: &str| {
        v["times"]
            .as_array()
            .map(|t| t.iter().filter(|x| x["action"] == a).count())
            .unwrap_or(0)
    };
    assert_eq!(
        (
            by_action(&second, "backfilled"),
            by_action(&second, "duplicate")
        ),
        (2, 3),
        "{second}"
    );
    eventually(Duration::from_secs(60), || async {
        (runs_by_time(&app, &id)
            .await
            .values()
            .filter(|r| r["status"] == "succeeded")
            .count()
            == 5)
            .then_some(())
    })
    .await;
    // The same backfill again runs nothing.
    let (_, third) = post(&app, &format!("/v1/activities/{id}/backfill"), range(5, 0)).await;
    assert_eq!(
        (
            by_action(&third, "backfilled"),
            by_action(&third, "duplicate")
        ),
        (0, 5),
        "{third}"
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    let runs = runs_by_time(&app, &id).await;
    assert_eq!(runs.len(), 5);
    for (t, r) in &runs {
        assert_eq!(
            r["workflow_id"],
            format!("activity-{id}:{}", t.format("%Y-%m-%dT%H:%M:%S+00:00"))
        );
        assert_eq!((*t - at(&r["window_start"])).num_seconds(), 3600);
    }

    // Bad ranges are problems.
    for (body, field) in [
        (json!({"start": "x", "end": h(0).to_rfc3339()}), "start"),
        (
            json!({"start": h(0).to_rfc3339(), "end": h(1).to_rfc3339()}),
            "end",
        ),
    ] {
        let (status, problem) = post(&app, &format!("/v1/activities/{id}/backfill"), body).await;
        assert_eq!(status, 422, "{problem}");
        assert_eq!(problem["errors"][0]["field"], field);
    }
    worker.stop().await;
}
