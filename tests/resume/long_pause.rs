//! Long pauses (14 days of minutes, 30 days of seconds) under each misfire
//! policy: the resume's bounded answer, its dry run, the one stored span, and
//! a timeline that accounts for every time.

use super::*;

#[sqlx::test(migrations = "./migrations")]
async fn catchup_after_14_days_runs_the_3_most_recent_minutes(pool: PgPool) {
    let app = app(pool).await;
    let worker = app.worker(false, Default::default());
    let back = chrono::Duration::days(14);
    let trigger = json!({"type": "cron", "cron": MINUTE_CRON, "timezone": "UTC",
        "misfire_policy": "catchup", "catchup_limit": 3});
    let (id, ran) = paused_long_ago(&app, trigger, back).await;
    // The dry run answers what the policy will do, and changes nothing.
    let (status, dry) = post(
        &app,
        &format!("/v1/activities/{id}/resume"),
        json!({"dry_run": true}),
    )
    .await;
    assert_eq!(status, 200, "{dry}");
    assert_eq!(
        (&dry["dry_run"], &dry["paused"]),
        (&json!(true), &json!(true)),
        "{dry}"
    );
    assert_eq!(dry["missed"]["backfilled"], 3, "{dry}");
    assert_eq!(
        dry["missed"]["runs"].as_array().map(Vec::len),
        Some(3),
        "{dry}"
    );
    assert_eq!(
        dry["missed"]["skipped_span"]["reason"], "catchup_limit",
        "{dry}"
    );
    let (_, activity) = json(app.get(&format!("/v1/activities/{id}")).await).await;
    assert_eq!(activity["paused"], true, "{activity}");
    let before = ran_times(&app, &id).await;
    let resumed = resume(&app, &id, back, 60, ran).await;
    assert_eq!(resumed["dry_run"], false, "{resumed}");
    let missed = &resumed["missed"];
    let until = at(&missed["until"]);
    let run = times(&missed["runs"]);
    let newest = until
        .duration_trunc(chrono::Duration::minutes(1))
        .unwrap_or(until);
    let minute = chrono::Duration::minutes(1);
    let latest = latest_missed(newest, minute, 4, &before);
    assert_eq!(run, latest[1..], "{resumed}");
    assert_eq!(missed["backfilled"], 3, "{resumed}");
    let span = &missed["skipped_span"];
    assert_eq!(span["reason"], "catchup_limit", "{resumed}");
    assert_eq!(at(&span["last"]), latest[0], "{resumed}");
    assert_eq!(span["count"], missed["skipped"], "{resumed}");
    assert!(missed["skipped"].as_u64() >= Some(20_157), "{resumed}");
    wait_succeeded(&app, &id, &run).await;

    // The timeline over the 14 days accounts for every minute.
    let from = at(&missed["from"]);
    let (tally, seen) = timeline(
        &app,
        &id,
        from,
        newest + minute,
        chrono::Duration::minutes(960),
    )
    .await;
    assert_eq!(
        Some(seen.len() as u64),
        missed["total"].as_u64().map(|n| n + ran),
        "{tally:?}"
    );
    assert_eq!(
        tally.get(&key("succeeded", "")),
        Some(&(3 + ran)),
        "{tally:?}"
    );
    assert_eq!(
        tally.get(&key("skipped", "catchup_limit")).copied(),
        missed["skipped"].as_u64(),
        "{tally:?}"
    );
    assert_eq!(tally.len(), 2, "{tally:?}");
    worker.stop().await;
}

#[sqlx::test(migrations = "./migrations")]
async fn compress_after_14_days_runs_the_latest_with_a_window_from_the_pause(pool: PgPool) {
    let app = app(pool).await;
    let worker = app.worker(false, Default::default());
    let back = chrono::Duration::days(14);
    let trigger = json!({"type": "cron", "cron": MINUTE_CRON, "timezone": "UTC",
        "misfire_policy": "compress"});
    let (id, ran) = paused_long_ago(&app, trigger, back).await;
    let resumed = resume(&app, &id, back, 60, ran).await;
    let missed = &resumed["missed"];
    let (from, until) = (at(&missed["from"]), at(&missed["until"]));
    let minute = chrono::Duration::minutes(1);
    let newest = until.duration_trunc(minute).unwrap_or(until);
    let run = times(&missed["runs"]);
    assert_eq!(run, vec![newest], "{resumed}");
    assert_eq!(missed["skipped_span"]["reason"], "compressed", "{resumed}");
    let done = wait_succeeded(&app, &id, &run).await;
    // Its window reaches back over the whole pause: from the nominal time at
    // or before the pause began (nothing ran before it).
    let window_start = from.duration_trunc(minute).unwrap_or(from);
    assert_eq!(at(&done[0]["window_start"]), window_start, "{}", done[0]);
    assert_eq!(at(&done[0]["window_end"]), newest, "{}", done[0]);
    let (tally, seen) = timeline(
        &app,
        &id,
        from,
        newest + minute,
        chrono::Duration::minutes(960),
    )
    .await;
    assert_eq!(
        Some(seen.len() as u64),
        missed["total"].as_u64().map(|n| n + ran),
        "{tally:?}"
    );
    assert_eq!(
        tally.get(&key("succeeded", "")),
        Some(&(1 + ran)),
        "{tally:?}"
    );
    assert_eq!(
        tally.get(&key("skipped", "compressed")).copied(),
        missed["skipped"].as_u64(),
        "{tally:?}"
    );
    assert_eq!(tally.len(), 2, "{tally:?}");
    worker.stop().await;
}

#[sqlx::test(migrations = "./migrations")]
async fn skip_after_14_days_runs_none(pool: PgPool) {
    let app = app(pool).await;
    let worker = app.worker(false, Default::default());
    let back = chrono::Duration::days(14);
    let trigger = json!({"type": "cron", "cron": MINUTE_CRON, "timezone": "UTC",
        "misfire_policy": "skip"});
    let (id, ran) = paused_long_ago(&app, trigger, back).await;
    let resumed = resume(&app, &id, back, 60, ran).await;
    let missed = &resumed["missed"];
    assert_eq!(missed["runs"], json!([]), "{resumed}");
    assert_eq!(missed["skipped"], missed["total"], "{resumed}");
    assert_eq!(missed["skipped_span"]["reason"], "paused", "{resumed}");
    let (from, until) = (at(&missed["from"]), at(&missed["until"]));
    let minute = chrono::Duration::minutes(1);
    let newest = until.duration_trunc(minute).unwrap_or(until);
    let (tally, seen) = timeline(
        &app,
        &id,
        from,
        newest + minute,
        chrono::Duration::minutes(960),
    )
    .await;
    assert_eq!(
        Some(seen.len() as u64),
        missed["total"].as_u64().map(|n| n + ran),
        "{tally:?}"
    );
    assert_eq!(
        tally.get(&key("none", "paused")).copied(),
        missed["total"].as_u64(),
        "{tally:?}"
    );
    assert_eq!(tally.len(), 1 + usize::from(ran > 0), "{tally:?}");
    worker.stop().await;
}

#[sqlx::test(migrations = "./migrations")]
async fn catchup_after_30_days_of_seconds_stores_one_span(pool: PgPool) {
    let app = app(pool).await;
    let worker = app.worker(false, Default::default());
    let back = chrono::Duration::days(30);
    let trigger = json!({"type": "interval", "every": "PT1S",
        "misfire_policy": "catchup", "catchup_limit": 3});
    let (id, ran) = paused_long_ago(&app, trigger, back).await;
    let uuid: uuid::Uuid = id.parse().unwrap_or_else(|e| panic!("{e}"));
    let rows = async |sql: &str| -> i64 {
        sqlx::query_scalar(sql)
            .bind(uuid)
            .fetch_one(&app.pool)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
    };
    let before = rows("SELECT count(*) FROM activity_runs WHERE activity_id = $1").await;
    let ran_before = ran_times(&app, &id).await;
    let resumed = resume(&app, &id, back, 1, ran).await;
    let missed = &resumed["missed"];
    assert!(missed["total"].as_u64() >= Some(2_592_000), "{resumed}");
    let run = times(&missed["runs"]);
    assert_eq!(run.len(), 3, "{resumed}");
    let until = at(&missed["until"]);
    let second = chrono::Duration::seconds(1);
    let newest = until.duration_trunc(second).unwrap_or(until);
    assert_eq!(
        run,
        latest_missed(newest, second, 3, &ran_before),
        "{resumed}"
    );
    wait_succeeded(&app, &id, &run).await;
    // Storage: the three runs, one span; not 2.6 million rows.
    let decided = rows(&format!(
        "SELECT count(*) FROM activity_runs WHERE activity_id = $1 AND scheduled_for <= '{}'",
        newest.to_rfc3339()
    ))
    .await;
    assert_eq!(decided, before + 3);
    assert_eq!(
        rows("SELECT count(*) FROM skipped_spans WHERE activity_id = $1").await,
        1
    );
    // The timeline expands the span: its first 1000 seconds and its end.
    let from = at(&missed["from"]);
    let first = from.duration_trunc(second).unwrap_or(from) + second;
    let (tally, _) = timeline(&app, &id, first, first + second * 1000, second * 1000).await;
    assert_eq!(
        tally.get(&key("skipped", "catchup_limit")),
        Some(&1000),
        "{tally:?}"
    );
    // The last 10 seconds: the span's end, the 3 caught up, and what ran
    // before the pause took effect (a moment before the resume).
    let (tally, seen) =
        timeline(&app, &id, newest - second * 9, newest + second, second * 10).await;
    assert_eq!(seen.len(), 10, "{tally:?}");
    let skipped = tally
        .get(&key("skipped", "catchup_limit"))
        .copied()
        .unwrap_or(0);
    let succeeded = tally.get(&key("succeeded", "")).copied().unwrap_or(0);
    assert_eq!((skipped + succeeded, tally.len()), (10, 2), "{tally:?}");
    assert!(succeeded >= 3 && succeeded <= 3 + ran, "{tally:?}");
    worker.stop().await;
}
