//! The run history API: keyset pagination over many rows, filters, and
//! problems for bad parameters. Rows are seeded in SQL; no Temporal needed.

use crate::common;

use std::collections::HashSet;

use common::*;
use serde_json::{Value, json};
use sqlx::PgPool;

async fn seed(app: &TestApp, pool: &PgPool, count: i64) -> String {
    let created = app.create(&interval_activity("PT1M")).await;
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    // Three runs share each created_at, so ties are broken by run_id.
    sqlx::query(
        "INSERT INTO activity_runs (run_id, activity_id, workflow_id, trigger_type, scheduled_for, status,
             started_at, created_at, definition_version)
         SELECT gen_random_uuid(), $1, 'activity-' || $1 || ':seed-' || i, 'interval',
                timestamptz '2026-01-01' + i * interval '1 minute',
                CASE WHEN i % 5 = 0 THEN 'failed' ELSE 'succeeded' END,
                timestamptz '2026-01-01' + i * interval '1 minute',
                timestamptz '2026-01-01' + (i / 3) * interval '1 second', 1
         FROM generate_series(1, $2) AS i",
    )
    .bind(uuid::Uuid::parse_str(&id).unwrap_or_default())
    .bind(count)
    .execute(pool)
    .await
    .unwrap_or_else(|e| panic!("seed: {e}"));
    id
}

async fn page_through(
    app: &TestApp,
    base: &str,
    mut during: impl AsyncFnMut(usize),
) -> Vec<String> {
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let sep = if base.contains('?') { '&' } else { '?' };
        let path = match &cursor {
            Some(c) => format!("{base}{sep}cursor={c}"),
            None => base.to_owned(),
        };
        let (status, page) = json(app.get(&path).await).await;
        assert_eq!(status, 200, "{path}: {page}");
        for item in page["items"].as_array().cloned().unwrap_or_default() {
            seen.push(item["run_id"].as_str().unwrap_or_default().to_owned());
        }
        pages += 1;
        during(pages).await;
        match page["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => return seen,
        }
    }
}

#[sqlx::test(migrations = "./migrations")]
async fn pages_have_no_duplicates_or_gaps_while_runs_arrive(pool: PgPool) {
    let app = TestApp::without_temporal(pool.clone()).await;
    let id = seed(&app, &pool, 520).await;
    let activity = uuid::Uuid::parse_str(&id).unwrap_or_default();
    let all: Vec<(uuid::Uuid,)> = sqlx::query_as("SELECT run_id FROM activity_runs")
        .fetch_all(&pool)
        .await
        .unwrap_or_default();
    let expected: HashSet<String> = all.into_iter().map(|r| r.0.to_string()).collect();

    let pool_for_inserts = pool.clone();
    let seen = page_through(&app, "/v1/runs?limit=37", async |page| {
        // New runs arrive while a client pages: they are newer than any cursor.
        sqlx::query(
            "INSERT INTO activity_runs (run_id, activity_id, workflow_id, trigger_type, status)
             VALUES (gen_random_uuid(), $1, 'activity-' || $1 || ':late-' || $2, 'event', 'running')",
        )
        .bind(activity)
        .bind(page as i64)
        .execute(&pool_for_inserts)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    })
    .await;
    let unique: HashSet<String> = seen.iter().cloned().collect();
    assert_eq!(unique.len(), seen.len(), "duplicates across pages");
    assert_eq!(unique, expected, "gaps across pages");
    assert_eq!(seen.len(), 520);

    // Newest first, across the tie groups.
    let (_, first) = json(app.get("/v1/runs?limit=5").await).await;
    let created: Vec<&str> = first["items"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|i| i["created_at"].as_str())
                .collect()
        })
        .unwrap_or_default();
    let mut sorted = created.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(created, sorted);

    // Filters narrow, and the per-activity listing pages the same way.
    let failed = page_through(
        &app,
        &format!("/v1/activities/{id}/runs?status=failed&limit=50"),
        async |_| {},
    )
    .await;
    assert_eq!(failed.len(), 104);
    let window = page_through(
        &app,
        "/v1/runs?scheduled_after=2026-01-01T01:00:00Z&scheduled_before=2026-01-01T02:00:00Z&limit=200",
        async |_| {},
    )
    .await;
    assert_eq!(window.len(), 60);
    let started = page_through(
        &app,
        "/v1/runs?started_before=2026-01-01T00:10:00Z&trigger_type=interval",
        async |_| {},
    )
    .await;
    assert_eq!(started.len(), 9);
}

#[sqlx::test(migrations = "./migrations")]
async fn one_run_with_its_tasks(pool: PgPool) {
    let app = TestApp::without_temporal(pool.clone()).await;
    let id = seed(&app, &pool, 1).await;
    let (run_id,): (uuid::Uuid,) = sqlx::query_as("SELECT run_id FROM activity_runs")
        .fetch_one(&pool)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    sqlx::query(
        "INSERT INTO task_instances (id, run_id, workflow_id, task_type, task_index, status, attempts, output)
         VALUES (gen_random_uuid(), $1, 'task-' || $1 || ':noop:0', 'noop', 0, 'succeeded', 1, '{}')",
    )
    .bind(run_id)
    .execute(&pool)
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let (status, run) = json(app.get(&format!("/v1/runs/{run_id}")).await).await;
    assert_eq!(status, 200);
    assert_eq!(run["activity_id"], id);
    assert_eq!(
        run["tasks"][0]["workflow_id"],
        format!("task-{run_id}:noop:0")
    );
    assert_eq!(run["tasks"][0]["output"], json!({}));
    // Lists leave tasks out.
    let (_, list) = json(app.get("/v1/runs").await).await;
    assert!(list["items"][0].get("tasks").is_none());

    // History outlives the activity.
    assert_eq!(
        app.delete(&format!("/v1/activities/{id}")).await.status(),
        204
    );
    assert_eq!(app.get(&format!("/v1/runs/{run_id}")).await.status(), 200);
    assert_eq!(app.runs_of(&id).await.len(), 1);
}

#[sqlx::test(migrations = "./migrations")]
async fn bad_filters_and_cursors_are_problems(pool: PgPool) {
    let app = TestApp::without_temporal(pool).await;
    let other_cursor = acp::api::pagination::encode_cursor(
        "activities",
        &(chrono::Utc::now(), uuid::Uuid::new_v4()),
    );
    let cases = [
        ("/v1/runs?status=done".to_owned(), 400, "status"),
        (
            "/v1/runs?trigger_type=hourly".to_owned(),
            400,
            "trigger_type",
        ),
        ("/v1/runs?activity_id=abc".to_owned(), 400, "activity_id"),
        (
            "/v1/runs?scheduled_after=yesterday".to_owned(),
            400,
            "scheduled_after",
        ),
        (
            "/v1/runs?started_before=2026-13-01".to_owned(),
            400,
            "started_before",
        ),
        ("/v1/runs?limit=500".to_owned(), 400, "limit"),
        ("/v1/runs?cursor=not-a-cursor".to_owned(), 400, "cursor"),
        (format!("/v1/runs?cursor={other_cursor}"), 400, "cursor"),
        ("/v1/runs?order=asc".to_owned(), 400, "order"),
        ("/v1/runs/not-a-uuid".to_owned(), 400, "run_id"),
        (format!("/v1/runs/{}", uuid::Uuid::new_v4()), 404, ""),
        (
            format!("/v1/activities/{}/runs", uuid::Uuid::new_v4()),
            404,
            "",
        ),
        ("/v1/activities/xyz/runs".to_owned(), 400, "id"),
    ];
    for (path, status, field) in cases {
        let response = app.get(&path).await;
        assert_eq!(
            response.headers()["content-type"],
            "application/problem+json",
            "{path}"
        );
        let (got, problem): (u16, Value) = json(response).await;
        assert_eq!(got, status, "{path}: {problem}");
        if !field.is_empty() {
            assert_eq!(problem["errors"][0]["field"], field, "{path}: {problem}");
        }
    }
}
