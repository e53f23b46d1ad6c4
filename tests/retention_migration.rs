//! The run history's partitioning migration on a populated database: every
//! run and task kept, each in its day's partition, every run's key
//! written, and nothing counted twice (rollups, change log, notifications).

use sqlx::PgPool;
use sqlx::migrate::Migrator;

const PARTITIONED: i64 = 20261210300000;

type Rollup = (i32, String, String, String, i64);

async fn rollups(pool: &PgPool) -> Vec<Rollup> {
    sqlx::query_as(
        "SELECT bucket_seconds, bucket::text, trigger_type, status, runs::bigint FROM run_rollups
          ORDER BY bucket_seconds, bucket, trigger_type, status",
    )
    .fetch_all(pool)
    .await
    .unwrap_or_else(|e| panic!("{e}"))
}

async fn count(pool: &PgPool, sql: &str) -> i64 {
    sqlx::query_as::<_, (i64,)>(sql)
        .fetch_one(pool)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .0
}

#[sqlx::test(migrations = false)]
async fn partitioning_keeps_every_run_task_and_count(pool: PgPool) {
    let all = Migrator::new(std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/migrations"
    )))
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let before = Migrator {
        migrations: all
            .migrations
            .iter()
            .filter(|m| m.version < PARTITIONED)
            .cloned()
            .collect::<Vec<_>>()
            .into(),
        ..Migrator::DEFAULT
    };
    before.run(&pool).await.unwrap_or_else(|e| panic!("{e}"));
    // Three days of runs, an hour apart, each with a task.
    sqlx::raw_sql(
        "INSERT INTO activities (id, version, definition, name, enabled, trigger_type, sync_state)
         VALUES ('00000000-0000-0000-0000-0000000000a1', 1, '{}', 'migrated', true, 'interval', 'pending');
         INSERT INTO activity_runs (run_id, activity_id, workflow_id, trigger_type, status, created_at,
             started_at, finished_at)
         SELECT gen_random_uuid(), '00000000-0000-0000-0000-0000000000a1', 'migrated-' || g, 'manual',
                CASE WHEN g % 3 = 0 THEN 'failed' ELSE 'succeeded' END,
                now() - (72 - g) * interval '1 hour', now() - (72 - g) * interval '1 hour',
                now() - (72 - g) * interval '1 hour' + g * interval '1 second'
           FROM generate_series(1, 72) g;
         INSERT INTO task_instances (id, run_id, workflow_id, task_type, task_index, status)
         SELECT gen_random_uuid(), run_id, 'task-' || run_id || ':noop:0', 'noop', 0, status
           FROM activity_runs;",
    )
    .execute(&pool)
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let runs_sql =
        "SELECT run_id::text || created_at::text || status FROM activity_runs ORDER BY 1";
    let runs_before: Vec<(String,)> = sqlx::query_as(runs_sql)
        .fetch_all(&pool)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let rollups_before = rollups(&pool).await;
    let changes = "SELECT (SELECT count(*) FROM change_inbox) + (SELECT count(*) FROM change_log)
                        + (SELECT count(*) FROM notifications)";
    let changes_before = count(&pool, changes).await;

    all.run(&pool).await.unwrap_or_else(|e| panic!("{e}"));

    let runs_after: Vec<(String,)> = sqlx::query_as(runs_sql)
        .fetch_all(&pool)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(runs_after, runs_before, "every run is kept as it was");
    assert_eq!(
        rollups(&pool).await,
        rollups_before,
        "nothing counted twice"
    );
    assert_eq!(
        count(&pool, changes).await,
        changes_before,
        "no change logged again"
    );
    let misplaced = count(
        &pool,
        "SELECT count(*) FROM activity_runs
          WHERE tableoid::regclass::text
                <> 'activity_runs_p' || to_char(created_at AT TIME ZONE 'UTC', 'YYYYMMDD')",
    )
    .await;
    assert_eq!(misplaced, 0, "each run in its day's partition");
    let tasks = count(
        &pool,
        "SELECT count(*) FROM task_instances t JOIN activity_runs r USING (run_id)
          WHERE t.run_created_at = r.created_at
            AND t.tableoid::regclass::text
                = 'task_instances_p' || to_char(r.created_at AT TIME ZONE 'UTC', 'YYYYMMDD')",
    )
    .await;
    assert_eq!(tasks, 72, "each task beside its run");
    let keyed = count(
        &pool,
        "SELECT count(*) FROM run_keys k JOIN activity_runs r
            ON r.run_id = k.run_id AND r.created_at = k.created_at AND r.workflow_id = k.workflow_id",
    )
    .await;
    assert_eq!(keyed, 72, "every run has its key");

    // A run written again under a kept key is skipped, not duplicated.
    let again = sqlx::query(
        "INSERT INTO activity_runs (run_id, activity_id, workflow_id, trigger_type, status)
         SELECT run_id, activity_id, workflow_id, 'manual', 'running' FROM run_keys",
    )
    .execute(&pool)
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(again.rows_affected(), 0);
    assert_eq!(count(&pool, "SELECT count(*) FROM activity_runs").await, 72);
}
