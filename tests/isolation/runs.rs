//! Runs and their statistics: a run is its activity's project's. Team-a's
//! key neither reads nor acts on team-b's runs, alone or in bulk, and its
//! statistics count only team-a's runs.

use reqwest::Method;
use serde_json::{Value, json};

use super::world::World;

pub async fn walk(world: &World) -> Vec<&'static str> {
    let (a, b) = (&world.a, &world.b);
    let before = b_runs(world).await;

    for path in [
        "/v1/runs?limit=200".to_owned(),
        "/v1/runs?limit=200&status=failed".to_owned(),
        "/v1/runs?limit=200&trigger_type=manual".to_owned(),
        format!("/v1/activities/{}/runs?limit=200", a.activity),
    ] {
        world
            .assert_listed_only_own(&path, "run_id", &a.run, &b.run)
            .await;
    }
    // Filtering by B's activity shows nothing of B's: the same empty page
    // as an activity that never existed.
    let of_b = world
        .listed_by_a(
            &format!("/v1/runs?limit=200&activity_id={}", b.activity),
            "run_id",
        )
        .await;
    assert!(of_b.is_empty(), "B's runs by activity_id: {of_b:?}");

    let activity_runs = format!("/v1/activities/{}/runs", b.activity);
    let run = format!("/v1/runs/{}", b.run);
    let cases: Vec<(Method, String, Option<Value>)> = vec![
        (Method::GET, activity_runs.clone(), None),
        (
            Method::POST,
            format!("{activity_runs}/retry"),
            Some(json!({})),
        ),
        (
            Method::POST,
            format!("{activity_runs}/retry"),
            Some(json!({"dry_run": true})),
        ),
        (
            Method::POST,
            format!("{activity_runs}/cancel"),
            Some(json!({})),
        ),
        (Method::GET, run.clone(), None),
        (Method::POST, format!("{run}/retry"), None),
        (Method::POST, format!("{run}/cancel"), Some(json!({}))),
        (
            Method::POST,
            format!("{run}/cancel"),
            Some(json!({"force": true})),
        ),
        (
            Method::GET,
            format!("/v1/stats/runs?activity_id={}", b.activity),
            None,
        ),
    ];
    for (method, path, body) in &cases {
        world
            .assert_hidden(method.clone(), path, body.as_ref())
            .await;
    }

    // Statistics count each project's own runs: one failed run each, and
    // none in `default` (the operator's).
    assert_eq!(failed_counted(world, &a.token, "").await, 1);
    let own = format!("&activity_id={}", a.activity);
    assert_eq!(failed_counted(world, &a.token, &own).await, 1);
    assert_eq!(failed_counted(world, &b.token, "").await, 1);
    assert_eq!(failed_counted(world, &world.app.token, "").await, 0);

    assert_eq!(b_runs(world).await, before, "B's runs changed");

    vec![
        "list_runs",
        "list_activity_runs",
        "get_run",
        "cancel_run",
        "retry_run",
        "cancel_activity_runs",
        "retry_activity_runs",
        "run_stats",
    ]
}

/// Failed runs of the last 24 hours that `token`'s statistics count.
async fn failed_counted(world: &World, token: &str, filter: &str) -> i64 {
    let path = format!("/v1/stats/runs?bucket=PT1H{filter}");
    let (status, stats) = world.call(token, Method::GET, &path, None).await;
    assert_eq!(status, 200, "GET {path}: {stats}");
    stats["buckets"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|bucket| bucket["counts"]["failed"].as_i64())
        .sum()
}

/// What of B's runs an action could change: status, attempt, whether a
/// cancel was asked for; and that no run was added.
async fn b_runs(world: &World) -> Vec<(String, i32, bool)> {
    sqlx::query_as(
        "SELECT r.status, r.attempt, r.cancel_requested_at IS NOT NULL FROM activity_runs r \
         JOIN activities a ON a.id = r.activity_id WHERE a.project_id = $1 ORDER BY r.run_id",
    )
    .bind(&world.b.project)
    .fetch_all(&world.app.pool)
    .await
    .unwrap_or_else(|e| panic!("{e}"))
}
