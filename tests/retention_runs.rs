//! The run history's retention: a day partition of runs and tasks dropped
//! whole while runs are written and read, the rollups unchanged by it, a
//! pruned run answering `run-expired`, and the event whose run was pruned
//! never running again.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use common::*;
use serde_json::{Value, json};
use sqlx::PgPool;
use uuid::Uuid;

/// The serving process's settings: passes every 3 s, runs kept two days.
const ENV: [(&str, &str); 4] = [
    ("ACP_AUTH_DISABLED", "true"),
    ("ACP_RETENTION_INTERVAL", "3"),
    ("ACP_RUN_RETENTION_HOURS", "48"),
    ("ACP_RECONCILE_INTERVAL", "0.5"),
];

async fn get(http: &reqwest::Client, url: String) -> (u16, Value) {
    json(http.get(url).send().await.unwrap_or_else(|e| panic!("{e}"))).await
}

/// The runs' and tasks' partition of the day three days ago, carved out
/// of the `_before` partitions (empty in a fresh database), as the
/// migration would have made it for a history that old. Returns its name.
async fn partition_three_days_ago(pool: &PgPool) -> String {
    sqlx::raw_sql(
        "DO $$
         DECLARE
             day date := (now() AT TIME ZONE 'UTC')::date - 3;
             t   text;
         BEGIN
             FOREACH t IN ARRAY ARRAY['activity_runs', 'task_instances'] LOOP
                 EXECUTE format('ALTER TABLE %I DETACH PARTITION %I', t, t || '_before');
                 EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (MINVALUE) TO (%L)',
                     t, t || '_before', day::timestamp AT TIME ZONE 'UTC');
                 EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
                     t || '_p' || to_char(day, 'YYYYMMDD'), t,
                     day::timestamp AT TIME ZONE 'UTC', (day + 1)::timestamp AT TIME ZONE 'UTC');
             END LOOP;
         END $$",
    )
    .execute(pool)
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let (name,): (String,) = sqlx::query_as(
        "SELECT 'activity_runs_p' || to_char((now() AT TIME ZONE 'UTC')::date - 3, 'YYYYMMDD')",
    )
    .fetch_one(pool)
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    name
}

/// Waits until the retention duty has dropped `name` (and its tasks' twin).
async fn dropped(pool: &PgPool, name: &str) {
    let tasks = name.replace("activity_runs_", "task_instances_");
    let gone = format!("SELECT to_regclass('{name}') IS NULL AND to_regclass('{tasks}') IS NULL");
    eventually(Duration::from_secs(60), || async {
        let (gone,): (bool,) = sqlx::query_as(&gone)
            .fetch_one(pool)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        gone.then_some(())
    })
    .await;
}

/// Every rollup row of the days before yesterday: what no run written
/// now changes, and what dropping old runs must not change.
async fn old_rollups(pool: &PgPool) -> Vec<(i32, String, String, String, i64)> {
    sqlx::query_as(
        "SELECT bucket_seconds, bucket::text, trigger_type, status, runs::bigint FROM run_rollups
          WHERE bucket < now() - interval '2 days'
          ORDER BY bucket_seconds, bucket, trigger_type, status",
    )
    .fetch_all(pool)
    .await
    .unwrap_or_else(|e| panic!("{e}"))
}

fn partition_listed(report: &Value, name: &str) -> Option<Value> {
    report["tables"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["table"] == "activity_runs")
        .flat_map(|t| t["partitions"].as_array().cloned().unwrap_or_default())
        .find(|p| p["name"] == name)
}

/// 200 runs (with a task each) three days old appear in the dry run,
/// marked for the next pass; the duty drops their partitions while four
/// writers create and end runs and a reader lists and reads them over
/// HTTP, none failing; afterwards the old runs answer `run-expired`, the
/// rollups and the statistics of their day are what they were, and every
/// run written meanwhile is there.
#[sqlx::test(migrations = "./migrations")]
async fn the_duty_drops_run_partitions_under_load(pool: PgPool) {
    let temporal = shared_temporal();
    let namespace = new_namespace(&temporal.address()).await;
    let serve = ServeProcess::start(&pool, &temporal.address(), &namespace, &ENV).await;
    let http = reqwest::Client::new();
    let base = serve.base.clone();
    eventually(Duration::from_secs(30), || async {
        let (_, report) = get(&http, format!("{base}/v1/retention")).await;
        report["last_pass_at"].is_string().then_some(())
    })
    .await;

    let (status, activity) = json(
        http.post(format!("{base}/v1/activities"))
            .json(&interval_activity("PT1H"))
            .send()
            .await
            .unwrap_or_else(|e| panic!("{e}")),
    )
    .await;
    assert_eq!(status, 201, "{activity}");
    let activity: Uuid = activity["id"]
        .as_str()
        .unwrap_or_default()
        .parse()
        .unwrap_or_else(|e| panic!("{e}"));
    let old = partition_three_days_ago(&pool).await;
    let old_runs: Vec<Uuid> = sqlx::query_scalar(
        "WITH day AS (SELECT date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
                             - interval '3 days' AS start)
         INSERT INTO activity_runs (run_id, activity_id, workflow_id, trigger_type, status,
             created_at, started_at, finished_at)
         SELECT gen_random_uuid(), $1, 'old-' || g, 'manual', 'succeeded',
                start + g * interval '1 minute', start + g * interval '1 minute',
                start + g * interval '1 minute' + g * interval '10 milliseconds'
           FROM day, generate_series(1, 200) g
         RETURNING run_id",
    )
    .bind(activity)
    .fetch_all(&pool)
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    sqlx::query(
        "INSERT INTO task_instances (id, run_id, workflow_id, task_type, task_index, status, run_created_at)
         SELECT gen_random_uuid(), run_id, 'task-' || run_id || ':noop:0', 'noop', 0, 'succeeded', created_at
           FROM run_keys WHERE run_id = ANY($1)",
    )
    .bind(&old_runs)
    .execute(&pool)
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let (status, run) = get(&http, format!("{base}/v1/runs/{}", old_runs[0])).await;
    assert_eq!(status, 200, "kept until dropped: {run}");

    let rollups_before = old_rollups(&pool).await;
    let (from, to): (String, String) = sqlx::query_as(
        "SELECT to_char(d, 'YYYY-MM-DD\"T00:00:00Z\"'), to_char(d + 1, 'YYYY-MM-DD\"T00:00:00Z\"')
           FROM (SELECT (now() AT TIME ZONE 'UTC')::date - 3 AS d) day",
    )
    .fetch_one(&pool)
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let stats =
        format!("{base}/v1/stats/runs?activity_id={activity}&bucket=P1D&from={from}&to={to}");
    let (_, report) = get(&http, format!("{base}/v1/retention")).await;
    let listed = partition_listed(&report, &old).unwrap_or_else(|| panic!("{old}: {report}"));
    assert_eq!(listed["dropped_next"], true, "{report}");
    assert!(listed["bytes"].as_i64() > Some(0), "{listed}");
    let day_total = |body: &Value| body["buckets"][0]["total"].as_i64();
    let (status, stats_before) = get(&http, stats.clone()).await;
    assert_eq!(status, 200, "{stats_before}");
    assert_eq!(day_total(&stats_before), Some(200), "{stats_before}");

    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let (pool, stop) = (pool.clone(), stop.clone());
            tokio::spawn(async move {
                let mut written = Vec::new();
                while !stop.load(Ordering::SeqCst) {
                    let run_id = Uuid::new_v4();
                    sqlx::query(
                        "INSERT INTO activity_runs (run_id, activity_id, workflow_id, trigger_type, status, started_at)
                         VALUES ($1, $2, 'load-' || $1, 'manual', 'running', now())",
                    )
                    .bind(run_id)
                    .bind(activity)
                    .execute(&pool)
                    .await
                    .unwrap_or_else(|e| panic!("writer {w}: {e}"));
                    sqlx::query(
                        "UPDATE activity_runs SET status = 'succeeded', finished_at = now() WHERE run_id = $1",
                    )
                    .bind(run_id)
                    .execute(&pool)
                    .await
                    .unwrap_or_else(|e| panic!("writer {w}: {e}"));
                    written.push(run_id);
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
                written
            })
        })
        .collect();
    let reader = {
        let (http, base, stop) = (http.clone(), base.clone(), stop.clone());
        tokio::spawn(async move {
            let mut reads = 0;
            while !stop.load(Ordering::SeqCst) {
                let (status, page) = get(
                    &http,
                    format!("{base}/v1/runs?activity_id={activity}&limit=50"),
                )
                .await;
                assert_eq!(status, 200, "{page}");
                if let Some(newest) = page["items"][0]["run_id"].as_str() {
                    let (status, run) = get(&http, format!("{base}/v1/runs/{newest}")).await;
                    assert_eq!(status, 200, "{run}");
                }
                reads += 1;
            }
            reads
        })
    };

    dropped(&pool, &old).await;
    stop.store(true, Ordering::SeqCst);
    let reads = reader.await.unwrap_or_else(|e| panic!("{e}"));
    let mut written = Vec::new();
    for writer in writers {
        written.extend(writer.await.unwrap_or_else(|e| panic!("{e}")));
    }
    println!(
        "{} runs written and {reads} pages read during the drop",
        written.len()
    );
    let (kept,): (i64,) = sqlx::query_as(
        "SELECT count(*) FROM activity_runs WHERE run_id = ANY($1) AND status = 'succeeded'",
    )
    .bind(&written)
    .fetch_one(&pool)
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        kept as usize,
        written.len(),
        "every run written meanwhile is kept"
    );

    let (_, report) = get(&http, format!("{base}/v1/retention")).await;
    assert!(partition_listed(&report, &old).is_none(), "{report}");
    assert_eq!(
        old_rollups(&pool).await,
        rollups_before,
        "the rollups count dropped runs"
    );
    let (_, stats_after) = get(&http, stats).await;
    assert_eq!(day_total(&stats_after), Some(200), "{stats_after}");

    let (status, problem) = get(&http, format!("{base}/v1/runs/{}", old_runs[0])).await;
    assert_eq!(status, 410, "{problem}");
    assert_eq!(
        problem["type"],
        "https://activity-control-plane.dev/problems/run-expired"
    );
    let (status, page) = get(
        &http,
        format!("{base}/v1/runs?activity_id={activity}&limit=200"),
    )
    .await;
    assert_eq!(status, 200);
    assert!(
        page["items"]
            .as_array()
            .into_iter()
            .flatten()
            .all(|r| !old_runs.iter().any(|o| r["run_id"] == o.to_string())),
        "no dropped run is listed"
    );
}

/// An event's run, pruned with its partition: the run answers
/// `run-expired`; the same event posted again is a `duplicate` with no new
/// run; and a `log_run` for it (a re-delivery that reached a worker)
/// writes nothing, because its key outlives the run.
#[sqlx::test(migrations = "./migrations")]
async fn an_event_whose_run_was_pruned_never_runs_again(pool: PgPool) {
    let temporal = shared_temporal();
    let namespace = new_namespace(&temporal.address()).await;
    let serve = ServeProcess::start(&pool, &temporal.address(), &namespace, &ENV).await;
    let http = reqwest::Client::new();
    let base = serve.base.clone();
    let (status, activity) = json(
        http.post(format!("{base}/v1/activities"))
            .json(&json!({
                "name": "on-event",
                "trigger": {"type": "event", "event_types": ["order.paid"]},
                "tasks": [{"task_type": "noop"}]
            }))
            .send()
            .await
            .unwrap_or_else(|e| panic!("{e}")),
    )
    .await;
    assert_eq!(status, 201, "{activity}");
    let activity_id = activity["id"].as_str().unwrap_or_default().to_owned();
    let event = json!({"event_id": "evt_pruned", "event_type": "order.paid", "source": "shop", "payload": {"order": 7}});
    let deliver = || async {
        json(
            http.post(format!("{base}/v1/events"))
                .header("prefer", "wait=10")
                .json(&event)
                .send()
                .await
                .unwrap_or_else(|e| panic!("{e}")),
        )
        .await
    };
    let (status, first) = deliver().await;
    assert!((200..300).contains(&status), "{first}");
    assert_eq!(first["dispatches"][0]["outcome"], "started", "{first}");
    let run_id = first["dispatches"][0]["run_id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let run = eventually(Duration::from_secs(60), || async {
        let (status, run) = get(&http, format!("{base}/v1/runs/{run_id}")).await;
        (status == 200 && run["status"] == "succeeded").then_some(run)
    })
    .await;

    // Age the run three days, as if it had been created then: its rows
    // move to that day's partitions (a run's created_at never changes in
    // service, hence the triggers off for this one statement).
    let old = partition_three_days_ago(&pool).await;
    sqlx::raw_sql(&format!(
        "BEGIN;
         SET LOCAL session_replication_role = replica;
         UPDATE run_keys SET created_at = created_at - interval '3 days' WHERE run_id = '{run_id}';
         UPDATE activity_runs SET created_at = created_at - interval '3 days' WHERE run_id = '{run_id}';
         UPDATE task_instances SET run_created_at = run_created_at - interval '3 days'
          WHERE run_id = '{run_id}';
         COMMIT;"
    ))
    .execute(&pool)
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let (status, aged) = get(&http, format!("{base}/v1/runs/{run_id}")).await;
    assert_eq!(status, 200, "{aged}");
    assert_eq!(
        aged["tasks"].as_array().map(Vec::len),
        run["tasks"].as_array().map(Vec::len)
    );
    dropped(&pool, &old).await;

    let (status, problem) = get(&http, format!("{base}/v1/runs/{run_id}")).await;
    assert_eq!(status, 410, "{problem}");
    assert_eq!(
        problem["type"],
        "https://activity-control-plane.dev/problems/run-expired"
    );
    assert!(
        problem["detail"]
            .as_str()
            .unwrap_or_default()
            .contains(&run_id),
        "{problem}"
    );

    let (status, again) = deliver().await;
    assert_eq!(status, 200, "{again}");
    assert_eq!(again["dispatches"][0]["outcome"], "duplicate", "{again}");
    assert_eq!(again["dispatches"][0]["run_id"], run_id.as_str());

    let run_uuid: Uuid = run_id.parse().unwrap_or_else(|e| panic!("{e}"));
    let workflow_id = format!("activity-{activity_id}:evt_pruned");
    let activity_uuid: Uuid = activity_id.parse().unwrap_or_else(|e| panic!("{e}"));
    let wrote = acp_store::runs::RunStore::new(pool.clone())
        .insert_run(&acp_store::runs::NewRun {
            run_id: run_uuid,
            activity_id: activity_uuid,
            workflow_id: &workflow_id,
            trigger: acp_domain::run::RunTrigger::Event,
            scheduled_for: None,
            event_id: Some("evt_pruned"),
            window_start: None,
            window_end: None,
            definition_version: 1,
            context: &json!({}),
            tasks_total: 1,
            queued: false,
        })
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(!wrote, "the pruned run is not written again");
    let (runs, keys): (i64, i64) = sqlx::query_as(
        "SELECT (SELECT count(*) FROM activity_runs WHERE run_id = $1),
                (SELECT count(*) FROM run_keys WHERE run_id = $1)",
    )
    .bind(run_uuid)
    .fetch_one(&pool)
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((runs, keys), (0, 1));
    let (status, _) = get(&http, format!("{base}/v1/runs/{run_id}")).await;
    assert_eq!(status, 410);
}
