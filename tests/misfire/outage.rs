//! Each misfire policy applied to the fires missed while the worker was
//! down.

use super::*;

async fn worker_outage(
    policy: &str,
    limit: i64,
    pool: PgPool,
) -> (TestApp, String, DateTime<Utc>, DateTime<Utc>) {
    let app = app(pool).await;
    let worker = app.worker(false, Default::default());
    let id = create(&app, policy, json!({"catchup_limit": limit})).await;
    wait_succeeded(&app, &id, 1).await;
    let down = Utc::now();
    worker.stop().await;
    tokio::time::sleep(Duration::from_secs(11)).await;
    let up = Utc::now();
    let worker = app.worker(false, Default::default());
    // Normal runs resume after the outage.
    eventually(Duration::from_secs(60), || async {
        let runs = runs_by_time(&app, &id).await;
        (runs
            .iter()
            .any(|(t, r)| *t > up + chrono::Duration::seconds(2) && r["status"] == "succeeded")
            && backlog_drained(&runs))
        .then_some(())
    })
    .await;
    let (_, _) = json(
        app.patch(&format!("/v1/activities/{id}"), &json!({"enabled": false}))
            .await,
    )
    .await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    worker.stop().await;
    (app, id, down, up)
}

#[sqlx::test(migrations = "./migrations")]
async fn skip_drops_fires_missed_while_the_worker_was_down(pool: PgPool) {
    let (app, id, down, up) = worker_outage("skip", 10, pool).await;
    let runs = runs_by_time(&app, &id).await;
    // At most one fire of the outage reached a launcher: the first after the
    // worker's last pickup (maybe a tick before `down`), which then ran too
    // late and is skipped as a misfire. If the worker stopped while the
    // previous launcher still had to record its run's end, that launcher held
    // the overlap and even this fire was dropped. Nothing of the outage ran.
    let misfires = runs
        .range(down - chrono::Duration::seconds(2)..up)
        .filter(|(_, r)| r["skip_reason"] == "misfire")
        .count();
    assert!(misfires <= 1, "{runs:?}");
    // Well inside the outage (edges are a tick either way), nothing ran.
    let inside = (down + chrono::Duration::seconds(2))..(up - chrono::Duration::seconds(2));
    assert!(
        runs.range(inside).all(|(_, r)| r["status"] != "succeeded"),
        "down {down} up {up}: {runs:?}"
    );
    let (_, schedule) = json(app.get(&format!("/v1/activities/{id}/schedule")).await).await;
    assert!(
        schedule["overlap_skipped"].as_i64().unwrap_or(0) >= 3,
        "{schedule}"
    );
    let items = check_timeline(
        &app,
        &id,
        down + chrono::Duration::seconds(2),
        up - chrono::Duration::seconds(2),
    )
    .await;
    assert!(items.iter().all(|i| i["status"] != "succeeded"));
}

#[sqlx::test(migrations = "./migrations")]
async fn catchup_runs_the_most_recent_limit_after_a_worker_outage(pool: PgPool) {
    let (app, id, down, up) = worker_outage("catchup", 3, pool).await;
    let runs = runs_by_time(&app, &id).await;
    let during = runs.range(down..up).count();
    assert!(during >= 5, "{runs:?}");
    // The first launcher of the backlog decided for all of it: the most
    // recent 3 times then due run, everything older is skipped, whatever the
    // clock says by the time each buffered fire is worked through.
    let (skipped, caught_up) = assert_caught_up(&runs, down, 3, chrono::Duration::seconds(2));
    assert!(skipped.len() + 3 >= 5, "{runs:?}");
    // The catch-up ran the outage's newest times: the third is at most a tick
    // after the worker came back.
    assert!(
        caught_up[2] >= up - chrono::Duration::seconds(2)
            && caught_up[2] <= up + chrono::Duration::seconds(4),
        "up {up}: {runs:?}"
    );
    check_timeline(&app, &id, down, up).await;
}

#[sqlx::test(migrations = "./migrations")]
async fn compress_covers_a_worker_outage_with_one_run(pool: PgPool) {
    let (app, id, down, up) = worker_outage("compress", 10, pool).await;
    let runs = runs_by_time(&app, &id).await;
    let last_before = runs
        .range(..down)
        .filter(|(_, r)| r["status"] == "succeeded")
        .map(|(_, r)| at(&r["window_end"]))
        .max();
    // Exactly one run covers the outage, its window reaching back to the last
    // window before it; the other outage fires are skipped as compressed.
    let covering: Vec<&Value> = runs
        .values()
        .filter(|r| {
            r["status"] == "succeeded"
                && Some(at(&r["window_start"])) == last_before
                && at(&r["scheduled_for"]) > down
        })
        .collect();
    assert_eq!(covering.len(), 1, "{runs:?}");
    assert!(
        (at(&covering[0]["window_end"]) - at(&covering[0]["window_start"])).num_seconds() >= 10
    );
    let reasons: HashSet<String> = runs
        .range(down..up)
        .filter(|(_, r)| r["status"] == "skipped")
        .map(|(_, r)| r["skip_reason"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert!(reasons.iter().all(|r| r == "compressed"), "{reasons:?}");
    check_timeline(&app, &id, down, up).await;
}
