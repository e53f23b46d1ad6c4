//! Fair share across projects, through the dispatchers' lease: pending
//! dispatches of a weight-3 and a weight-1 project are leased 3:1 while both
//! have work (whatever a round's room, since what a project has leased counts
//! as in flight), each project's activities take turns, and a project alone
//! gets everything. No Temporal and no service: the store's lease is what
//! decides, and the rows are seeded directly.

use std::collections::HashMap;
use std::time::Duration;

use acp_store::EventStore;
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
         INSERT INTO event_dispatches (event_id, activity_id, workflow_id, run_id, state,
                                       definition_version, created_at)
         SELECT s.event_id, $2, 'wf-' || s.event_id, gen_random_uuid(), 'pending', 1,
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
}
