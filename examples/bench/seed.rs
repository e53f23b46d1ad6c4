//! The data benchmark 2 reads: a million runs written straight into the
//! tables with `generate_series`, shaped as the service writes them.

use anyhow::bail;
use uuid::Uuid;

use acp::api::activities::model::ActivityRequest;

/// The share of runs that belong to the activity being read (one in ten), so
/// that it has a history deep enough to page 10,000 rows into.
const HOT_EVERY: i64 = 10;

/// Seeds `activities` event-triggered activities and `runs` finished cron
/// runs straight into the tables, shaped as the service writes them: run IDs
/// are UUIDv5 over `activity-{id}:{isoformat}` workflow IDs (when the
/// uuid-ossp extension is there), one run a second going back from now.
/// Every tenth run belongs to the first activity, the one that is read.
pub async fn seed(pool: &sqlx::PgPool, runs: usize, activities: usize) -> anyhow::Result<Uuid> {
    if activities < 2 {
        bail!("ACP_BENCH_ACTIVITIES must be at least 2");
    }
    let request: ActivityRequest = serde_json::from_value(serde_json::json!({
        "name": "bench-history",
        "trigger": {"type": "event", "event_types": ["bench.history"]},
        "tasks": [{"task_type": "noop"}]
    }))?;
    let definition = request
        .into_definition()
        .map_err(|e| anyhow::anyhow!("bench definition is invalid: {e:?}"))?;
    sqlx::query(
        "INSERT INTO activities (id, version, definition, name, enabled, trigger_type, event_types,
             sync_state, synced_version, last_synced_at, created_at, updated_at)
         SELECT md5('bench-activity-' || a)::uuid, 1,
                jsonb_set($1::jsonb, '{name}', to_jsonb('bench-history-' || a)),
                'bench-history-' || a, true, 'event', ARRAY['bench.history'],
                'not_applicable', 1, now(), now() - interval '30 days', now() - interval '30 days'
         FROM generate_series(0, $2 - 1) AS a",
    )
    .bind(sqlx::types::Json(&definition))
    .bind(activities as i64)
    .execute(pool)
    .await?;
    sqlx::query(
        "INSERT INTO activity_versions (activity_id, version, definition, created_at)
         SELECT id, version, definition, created_at FROM activities",
    )
    .execute(pool)
    .await?;
    let run_id = if sqlx::query("CREATE EXTENSION IF NOT EXISTS \"uuid-ossp\"")
        .execute(pool)
        .await
        .is_ok()
    {
        format!(
            "uuid_generate_v5('{}'::uuid, r.workflow_id)",
            acp_domain::ids::ID_NAMESPACE
        )
    } else {
        "md5(r.workflow_id)::uuid".to_owned()
    };
    sqlx::query(&format!(
        "INSERT INTO activity_runs (run_id, activity_id, workflow_id, trigger_type, scheduled_for,
             status, skip_reason, definition_version, started_at, finished_at, error, tasks_total,
             tasks_succeeded, tasks_failed, created_at)
         SELECT {run_id}, r.activity_id, r.workflow_id, 'cron', r.scheduled_for, r.status,
                CASE WHEN r.status = 'skipped' THEN 'misfire' END, 1,
                CASE WHEN r.status <> 'skipped' THEN r.created_at END,
                r.created_at + interval '2 seconds',
                CASE WHEN r.status = 'failed' THEN 'task 0 (noop) failed: simulated' END,
                1, (r.status = 'succeeded')::int, (r.status = 'failed')::int, r.created_at
         FROM (
             SELECT s.activity_id, s.scheduled_for,
                    s.scheduled_for + interval '250 milliseconds' AS created_at,
                    'activity-' || s.activity_id || ':'
                        || to_char(s.scheduled_for AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"+00:00\"')
                        AS workflow_id,
                    CASE WHEN s.i % 50 = 7 THEN 'failed' WHEN s.i % 97 = 3 THEN 'skipped'
                         ELSE 'succeeded' END AS status
             FROM (
                 SELECT i, date_trunc('second', now()) - make_interval(secs => i) AS scheduled_for,
                        md5('bench-activity-' || CASE WHEN i % $3 = 0 THEN 0 ELSE 1 + i % ($2 - 1) END)::uuid
                            AS activity_id
                 FROM generate_series(0::bigint, $1 - 1) AS i
             ) s
         ) r"
    ))
    .bind(runs as i64)
    .bind(activities as i64)
    .bind(HOT_EVERY)
    .execute(pool)
    .await?;
    // The seeded rows are history, not changes anyone streams: the triggers
    // logged each one, and a sequencer numbering a million of them would
    // run beside the timed rows.
    sqlx::query("TRUNCATE change_inbox").execute(pool).await?;
    sqlx::query("VACUUM ANALYZE activities, activity_versions, activity_runs")
        .execute(pool)
        .await?;
    Ok(
        sqlx::query_scalar("SELECT id FROM activities WHERE name = 'bench-history-0'")
            .fetch_one(pool)
            .await?,
    )
}
