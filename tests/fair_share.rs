//! Fair share across projects, through the dispatchers' lease: pending
//! dispatches of a weight-3 and a weight-1 project are leased 3:1 while both
//! have work (whatever a round's room, since what a project has leased counts
//! as in flight), each project's activities take turns, and a project alone
//! gets everything; a project's guaranteed runs go first and its cap holds
//! the rest pending. No Temporal: the store's lease is what decides, the rows
//! are seeded directly, and the projects API only sets the weights, the
//! guarantee and the cap.

use std::collections::HashMap;
use std::time::Duration;

use crate::common;

use acp_store::EventStore;
use common::*;
use reqwest::Method;
use serde_json::json;
use sqlx::PgPool;
use uuid::Uuid;

/// Long enough that nothing leased in a test lapses during it.
const LEASE: Duration = Duration::from_secs(600);

async fn exec(pool: &PgPool, sql: &str) {
    sqlx::query(sql)
        .execute(pool)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

/// Project `id` with `weight`, and `activities` event activities of it.
pub async fn project(pool: &PgPool, id: &str, weight: i32, activities: usize) -> Vec<Uuid> {
    sqlx::query("INSERT INTO projects (id, name, weight) VALUES ($1, $1, $2)")
        .bind(id)
        .bind(weight)
        .execute(pool)
        .await
        .unwrap_or_else(|e| panic!("project {id}: {e}"));
    activities_of(pool, id, activities).await
}

/// `activities` event activities of project `id`.
pub async fn activities_of(pool: &PgPool, id: &str, activities: usize) -> Vec<Uuid> {
    let mut ids = Vec::new();
    for n in 0..activities {
        let activity = Uuid::new_v4();
        sqlx::query(
            "INSERT INTO activities (id, version, definition, name, enabled, trigger_type,
                                     sync_state, project_id)
             VALUES ($1, 1, '{}', $2, true, 'event', 'not_applicable', $3)",
        )
        .bind(activity)
        .bind(format!("{id}-{n}"))
        .bind(id)
        .execute(pool)
        .await
        .unwrap_or_else(|e| panic!("activity of {id}: {e}"));
        ids.push(activity);
    }
    ids
}

/// `n` pending dispatches of `activity`'s project, arriving `at_ms` + i
/// milliseconds after a fixed instant (so the test decides who is older).
pub async fn pending(pool: &PgPool, project: &str, activity: Uuid, n: i64, at_ms: i64) {
    sqlx::query(
        "WITH s AS (
             SELECT i, $1 || '-' || $2::text || '-' || ($4 + i) AS event_id
             FROM generate_series(1, $3) AS i
         ), e AS (
             INSERT INTO events (event_id, event_id_origin, event_type, source, payload, project_id)
             SELECT event_id, 'client', 'test.fair', 'test', '{}', $1 FROM s
         )
         INSERT INTO event_dispatches (project_id, event_id, activity_id, workflow_id, run_id,
                                       state, definition_version, created_at)
         SELECT $1, s.event_id, $2, 'wf-' || s.event_id, gen_random_uuid(), 'pending', 1,
                timestamptz '2026-01-01' + ($4 + s.i) * interval '1 millisecond'
         FROM s",
    )
    .bind(project)
    .bind(activity)
    .bind(n)
    .bind(at_ms)
    .execute(pool)
    .await
    .unwrap_or_else(|e| panic!("pending of {project}: {e}"));
}

/// Leases one round of `room` and counts what each activity got.
async fn round(store: &EventStore, room: i64, got: &mut HashMap<Uuid, i64>) -> usize {
    let leased = store
        .lease_due(room, LEASE)
        .await
        .unwrap_or_else(|e| panic!("lease: {e}"));
    for d in &leased {
        *got.entry(d.activity_id).or_default() += 1;
    }
    leased.len()
}

fn sum(got: &HashMap<Uuid, i64>, activities: &[Uuid]) -> i64 {
    activities
        .iter()
        .map(|a| got.get(a).copied().unwrap_or(0))
        .sum()
}

#[sqlx::test(migrations = "./migrations")]
async fn weights_three_to_one_lease_three_to_one(pool: PgPool) {
    let heavy = project(&pool, "heavy", 3, 2).await;
    let light = project(&pool, "light", 1, 1).await;
    // The heavy project's burst arrived first: oldest-first would lease
    // all 600 of it before any of the light one's.
    pending(&pool, "heavy", heavy[0], 300, 0).await;
    pending(&pool, "heavy", heavy[1], 300, 0).await;
    pending(&pool, "light", light[0], 100, 10_000).await;
    let store = EventStore::new(pool.clone());

    // Rounds of varied room, as the admission gives them, while both have
    // work: 3:1 within 10 %, the heavy project's activities taking turns.
    let mut got = HashMap::new();
    for room in [1, 7, 2, 16, 1, 3].into_iter().cycle().take(60) {
        assert_eq!(round(&store, room, &mut got).await, room as usize);
    }
    let (h, l) = (sum(&got, &heavy), sum(&got, &light));
    assert_eq!(h + l, 30 * 10);
    let ratio = h as f64 / l as f64;
    assert!((2.7..=3.3).contains(&ratio), "heavy {h} : light {l}");
    let (h0, h1) = (sum(&got, &heavy[..1]), sum(&got, &heavy[1..]));
    assert!(
        (h0 - h1).abs() <= 2,
        "the heavy project's activities: {h0} and {h1}"
    );

    // The light project's backlog drains; then the heavy one, alone with
    // work, gets every lease though it has three times the light one's in
    // flight already.
    while sum(&got, &light) < 100 {
        assert!(round(&store, 8, &mut got).await > 0);
    }
    let mut alone = HashMap::new();
    assert_eq!(round(&store, 20, &mut alone).await, 20);
    assert_eq!(sum(&alone, &heavy), 20, "{alone:?}");

    // The light project's runs are done; its next event goes before the
    // heavy project's backlog (which has its share in flight), not behind.
    exec(
        &pool,
        "UPDATE event_dispatches SET state = 'completed', outcome = 'started'
         WHERE activity_id IN (SELECT id FROM activities WHERE project_id = 'light')",
    )
    .await;
    pending(&pool, "light", light[0], 1, 20_000).await;
    let mut next = HashMap::new();
    assert_eq!(round(&store, 1, &mut next).await, 1);
    assert_eq!(sum(&next, &light), 1, "{next:?}");

    // With nothing held (every lease lapsed, as when the admission lets one
    // run start at a time and each finishes at once), the runs a project
    // started lately still count: the heavy project's three just finished
    // put its next run after the light project's new one, not before it.
    exec(
        &pool,
        "UPDATE event_dispatches SET leased_until = now() - interval '1 second'",
    )
    .await;
    exec(
        &pool,
        "UPDATE event_dispatches SET state = 'completed', outcome = 'started'
         WHERE activity_id IN (SELECT id FROM activities WHERE project_id = 'light')",
    )
    .await;
    for n in 0..3 {
        sqlx::query(
            "INSERT INTO activity_runs (run_id, activity_id, workflow_id, trigger_type, status,
                                        created_at, started_at, finished_at)
             VALUES (gen_random_uuid(), $1, $2, 'event', 'succeeded', now(), now(), now())",
        )
        .bind(heavy[0])
        .bind(format!("recent-{n}"))
        .execute(&pool)
        .await
        .unwrap_or_else(|e| panic!("a recent run: {e}"));
    }
    pending(&pool, "light", light[0], 1, 30_000).await;
    let mut after = HashMap::new();
    assert_eq!(round(&store, 1, &mut after).await, 1);
    assert_eq!(sum(&after, &light), 1, "{after:?}");
}

/// The projects of `leased`, in the order the round leased them.
async fn round_of(store: &EventStore, room: i64, small: &[Uuid]) -> Vec<&'static str> {
    store
        .lease_due(room, LEASE)
        .await
        .unwrap_or_else(|e| panic!("lease: {e}"))
        .iter()
        .map(|d| {
            if small.contains(&d.activity_id) {
                "small"
            } else {
                "big"
            }
        })
        .collect()
}

#[sqlx::test(migrations = "./migrations")]
async fn a_guarantee_goes_first_and_a_cap_holds_the_rest_pending(pool: PgPool) {
    let app = TestApp::without_temporal(pool.clone()).await;
    let (status, big) = json(
        app.post(
            "/v1/projects",
            &json!({"id": "big", "name": "Big", "weight": 9}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 201, "{big}");
    let quotas = json!({"runs_running": 5, "runs_guaranteed": 3});
    let body = json!({"id": "small", "name": "Small", "quotas": quotas});
    let (status, small) = json(app.post("/v1/projects", &body).await).await;
    assert_eq!(status, 201, "{small}");
    assert_eq!(small["quotas"]["runs_guaranteed"], 3, "{small}");
    // A guarantee above the cap is refused, naming the field; PUT and
    // PATCH keep it.
    let request = |method: Method, body: serde_json::Value| {
        let app = &app;
        async move {
            json(
                app.http
                    .request(method, app.url("/v1/projects/small"))
                    .json(&body)
                    .send()
                    .await
                    .unwrap_or_else(|e| panic!("{e}")),
            )
            .await
        }
    };
    let (status, problem) = request(Method::PATCH, json!({"quotas": {"runs_guaranteed": 6}})).await;
    assert_eq!(status, 422, "{problem}");
    assert_eq!(
        problem["errors"][0]["field"], "quotas.runs_guaranteed",
        "{problem}"
    );
    let (status, put) = request(
        Method::PUT,
        json!({"name": "Small", "quotas": {"runs_running": 5, "runs_guaranteed": 2}}),
    )
    .await;
    assert_eq!(
        (status, &put["quotas"]["runs_guaranteed"]),
        (200, &json!(2)),
        "{put}"
    );
    let (status, patched) = request(Method::PATCH, json!({"quotas": {"runs_guaranteed": 3}})).await;
    assert_eq!(status, 200, "{patched}");
    assert_eq!(
        patched["quotas"],
        json!({"activities": null, "events_per_second": null,
        "events_burst": null, "runs_running": 5, "runs_guaranteed": 3, "sources": null,
        "subscriptions": null})
    );

    let big = activities_of(&pool, "big", 1).await;
    let small = activities_of(&pool, "small", 1).await;
    // The big project's backlog is older and nine times the weight.
    pending(&pool, "big", big[0], 200, 0).await;
    pending(&pool, "small", small[0], 20, 10_000).await;
    let store = EventStore::new(pool.clone());

    // Its guarantee first, then the weights: 3 of small's, then big's ninefold.
    let first = round_of(&store, 5, &small).await;
    assert_eq!(first, ["small", "small", "small", "big", "big"]);
    // Its cap of 5 holds: rounds lease big's work and at most 2 more of small's.
    let mut smalls = 3;
    for _ in 0..8 {
        let leased = round_of(&store, 10, &small).await;
        assert_eq!(leased.len(), 10, "big has work left: {leased:?}");
        smalls += leased.iter().filter(|p| **p == "small").count();
        assert!(smalls <= 5, "beyond the cap: {smalls}");
    }
    assert_eq!(smalls, 5);
    // Two of small's runs are done: two more start, ahead of big's backlog
    // (big has its share in flight), and no more than two.
    exec(
        &pool,
        "UPDATE event_dispatches SET state = 'completed', outcome = 'started'
         WHERE (event_id, activity_id) IN (
             SELECT event_id, activity_id FROM event_dispatches
             WHERE state = 'pending' AND leased_until > now()
               AND activity_id IN (SELECT id FROM activities WHERE project_id = 'small')
             LIMIT 2)",
    )
    .await;
    let leased = round_of(&store, 4, &small).await;
    assert_eq!(leased, ["small", "small", "big", "big"]);
    // Nothing is dropped: small's 20 are all there, 7 leased or done.
    let pending_small: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM event_dispatches d JOIN activities a ON a.id = d.activity_id
         WHERE a.project_id = 'small' AND d.state = 'pending'
           AND (d.leased_until IS NULL OR d.leased_until < now())",
    )
    .fetch_one(&pool)
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(pending_small, 13);
}

#[sqlx::test(migrations = "./migrations")]
async fn a_guarantee_starts_even_when_the_admission_has_no_room(pool: PgPool) {
    let big = project(&pool, "big", 1, 1).await;
    let small = project(&pool, "small", 1, 1).await;
    let none = project(&pool, "none", 1, 1).await;
    exec(
        &pool,
        "UPDATE projects SET runs_guaranteed = 2, quota_runs_running = 4 WHERE id = 'small'",
    )
    .await;
    // The big project's burst fills the admission: no room for anyone.
    pending(&pool, "big", big[0], 100, 0).await;
    pending(&pool, "small", small[0], 5, 10_000).await;
    pending(&pool, "none", none[0], 5, 10_000).await;
    let store = EventStore::new(pool.clone());
    let mut got = HashMap::new();
    assert_eq!(round(&store, 0, &mut got).await, 2, "{got:?}");
    assert_eq!(sum(&got, &small), 2, "small's guarantee: {got:?}");
    // Its two are in flight (leased, being started): its guarantee is
    // used, and with no room nothing more starts, of anyone's.
    assert_eq!(round(&store, 0, &mut got).await, 0, "{got:?}");
    // One of them finished: one more of small's, beyond the room again;
    // a project without a guarantee still waits for room.
    exec(
        &pool,
        "UPDATE event_dispatches SET state = 'completed', outcome = 'started'
         WHERE (event_id, activity_id) IN (
             SELECT event_id, activity_id FROM event_dispatches
             WHERE state = 'pending' AND leased_until > now() LIMIT 1)",
    )
    .await;
    assert_eq!(round(&store, 0, &mut got).await, 1, "{got:?}");
    assert_eq!((sum(&got, &small), sum(&got, &none)), (3, 0), "{got:?}");
    // With room, the others' turn comes by weight as before.
    assert_eq!(round(&store, 4, &mut got).await, 4, "{got:?}");
    assert!(sum(&got, &none) >= 1, "{got:?}");
}
