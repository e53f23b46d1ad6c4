//! History retention: the change log in day partitions, the oldest dropped
//! whole by the `history_retention` duty while writers and a reader carry
//! on, the dry run (`GET /v1/retention`) before and after, and the
//! partitioning migration keeping every row of a populated log.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use acp_store::changes::{ChangeStore, SEQUENCER_LOCK_KEY};
use common::*;
use serde_json::Value;
use sqlx::PgPool;
use sqlx::migrate::Migrator;

async fn dry_run(http: &reqwest::Client, base: &str) -> Value {
    let response = http
        .get(format!("{base}/v1/retention"))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(response.status(), 200);
    response.json().await.unwrap_or_else(|e| panic!("{e}"))
}

/// The change log's partitions in the dry run: (name, dropped_next).
fn listed(report: &Value) -> Vec<(String, bool)> {
    report["tables"][0]["partitions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            (
                p["name"].as_str().unwrap_or_default().to_owned(),
                p["dropped_next"].as_bool().unwrap_or_default(),
            )
        })
        .collect()
}

/// A day partition three days old, with 100 changes, appears in the dry run
/// marked for the next pass; the duty drops it while four writers log
/// changes into today's partition and a reader pages the log; afterwards it is gone from the
/// catalog and the dry run, a `since` inside it must reload, and every
/// write reached the log in order.
#[sqlx::test(migrations = "./migrations")]
async fn the_duty_drops_old_partitions_under_load(pool: PgPool) {
    let temporal = shared_temporal();
    let namespace = new_namespace(&temporal.address()).await;
    let env = [
        ("ACP_AUTH_DISABLED", "true"),
        ("ACP_RETENTION_INTERVAL", "3"),
        ("ACP_CHANGE_LOG_RETENTION_HOURS", "1"),
        ("ACP_RECONCILE_INTERVAL", "0.5"),
    ];
    let serve = ServeProcess::start(&pool, &temporal.address(), &namespace, &env).await;
    let http = reqwest::Client::new();
    // The first pass has run: the next one is an interval away.
    eventually(Duration::from_secs(30), || async {
        dry_run(&http, &serve.base).await["last_pass_at"]
            .is_string()
            .then_some(())
    })
    .await;

    let (old,): (String,) = sqlx::query_as(
        "SELECT 'change_log_p' || to_char(now() AT TIME ZONE 'UTC' - interval '3 days', 'YYYYMMDD')",
    )
    .fetch_one(&pool)
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    sqlx::raw_sql(&format!(
        "CREATE TABLE {old} PARTITION OF change_log FOR VALUES
             FROM (date_trunc('day', now() AT TIME ZONE 'UTC' - interval '3 days') AT TIME ZONE 'UTC')
             TO (date_trunc('day', now() AT TIME ZONE 'UTC' - interval '2 days') AT TIME ZONE 'UTC');
         INSERT INTO change_log (seq, at, kind, subject, data, logged_at)
         SELECT nextval('change_log_seq'), now() - interval '3 days', 'test.old', 'old', '{{}}',
                (date_trunc('day', now() AT TIME ZONE 'UTC' - interval '3 days')
                 + interval '1 hour') AT TIME ZONE 'UTC'
           FROM generate_series(1, 100);"
    ))
    .execute(&pool)
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let report = dry_run(&http, &serve.base).await;
    assert!(
        listed(&report).contains(&(old.clone(), true)),
        "the dry run lists {old} for the next pass: {report}"
    );
    assert_eq!(
        report["tables"][0]["dropped_next"]["partitions"], 1,
        "{report}"
    );

    // Writers insert into today's partition while the duty drops the old
    // one; each insert is timed by the server's clock.
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let pool = pool.clone();
            let stop = stop.clone();
            tokio::spawn(async move {
                let (mut written, mut longest) = (0i64, 0f64);
                while !stop.load(Ordering::SeqCst) {
                    let mut tx = pool.begin().await.unwrap_or_else(|e| panic!("{e}"));
                    // In the sequencer's place: under its lock, so that
                    // `seq` commits in order for the reader.
                    sqlx::query("SELECT pg_advisory_xact_lock($1)")
                        .bind(SEQUENCER_LOCK_KEY)
                        .execute(&mut *tx)
                        .await
                        .unwrap_or_else(|e| panic!("writer {w}: {e}"));
                    let (t0,): (f64,) =
                        sqlx::query_as("SELECT extract(epoch FROM clock_timestamp())::float8")
                            .fetch_one(&mut *tx)
                            .await
                            .unwrap_or_else(|e| panic!("writer {w}: {e}"));
                    let (waited,): (f64,) = sqlx::query_as(
                        "WITH w AS (INSERT INTO change_log (seq, at, kind, subject, data)
                                    VALUES (nextval('change_log_seq'), now(), 'test.write', $1, '{}')
                                    RETURNING seq)
                         SELECT extract(epoch FROM clock_timestamp())::float8 - $2 FROM w",
                    )
                    .bind(format!("writer-{w}"))
                    .bind(t0)
                    .fetch_one(&mut *tx)
                    .await
                    .unwrap_or_else(|e| panic!("writer {w}: {e}"));
                    tx.commit().await.unwrap_or_else(|e| panic!("writer {w}: {e}"));
                    written += 1;
                    longest = longest.max(waited);
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
                (written, longest)
            })
        })
        .collect();
    // A reader pages the log as the stream's replay does, from the start,
    // until every writer has committed its last change (a writer that sees
    // `stop` may still be inside its transaction).
    let written_all = Arc::new(AtomicBool::new(false));
    let reader = {
        let store = ChangeStore::new(pool.clone());
        let written_all = written_all.clone();
        tokio::spawn(async move {
            let (mut after, mut seen) = (0i64, Vec::new());
            loop {
                let done = written_all.load(Ordering::SeqCst);
                let page = store
                    .after(after, 100)
                    .await
                    .unwrap_or_else(|e| panic!("reader: {e}"));
                for change in &page {
                    assert!(change.seq > after, "the log reads in order");
                    after = change.seq;
                    if change.kind == "test.write" {
                        seen.push(change.seq);
                    }
                }
                if page.is_empty() {
                    if done {
                        return seen;
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            }
        })
    };

    let gone = format!("SELECT to_regclass('{old}') IS NULL");
    eventually(Duration::from_secs(30), || async {
        let (dropped,): (bool,) = sqlx::query_as(&gone)
            .fetch_one(&pool)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        dropped.then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    stop.store(true, Ordering::SeqCst);
    let mut written = 0;
    for writer in writers {
        let (n, longest) = writer.await.unwrap_or_else(|e| panic!("{e}"));
        println!("a writer logged {n} changes; its longest insert took {longest:.4} s");
        assert!(longest < 5.0, "no writer waits on the drop: {longest} s");
        written += n;
    }
    written_all.store(true, Ordering::SeqCst);
    // Every write is sequenced into the log, and the reader saw each once.
    eventually(Duration::from_secs(20), || async {
        let (n,): (i64,) =
            sqlx::query_as("SELECT count(*) FROM change_log WHERE kind = 'test.write'")
                .fetch_one(&pool)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
        (n == written).then_some(())
    })
    .await;
    let seen = reader.await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        seen.len() as i64,
        written,
        "the reader saw every write once"
    );

    let report = dry_run(&http, &serve.base).await;
    assert!(
        !listed(&report).iter().any(|(name, _)| *name == old),
        "{report}"
    );
    let (pruned,): (i64,) = sqlx::query_as("SELECT pruned_through FROM change_log_meta")
        .fetch_one(&pool)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        pruned >= 100,
        "pruned through the dropped changes: {pruned}"
    );
    let response = http
        .get(format!("{}/v1/stream?since=50", serve.base))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        response.status(),
        410,
        "a since inside the dropped day must reload"
    );
}

/// The partitioning migration on a populated log: every change is kept,
/// each in the partition of its day, and the log reads back in order.
#[sqlx::test(migrations = false)]
async fn partitioning_keeps_every_change(pool: PgPool) {
    const PARTITIONED: i64 = 20261207200000;
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
    // Three days of changes, an hour apart, newest last.
    sqlx::raw_sql(
        "INSERT INTO change_log (seq, at, kind, subject, data)
         SELECT g, now() - (72 - g) * interval '1 hour', 'test.kept', g::text,
                jsonb_build_object('n', g)
           FROM generate_series(1, 72) g;
         SELECT setval('change_log_seq', 72);",
    )
    .execute(&pool)
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    all.run(&pool).await.unwrap_or_else(|e| panic!("{e}"));

    let changes = ChangeStore::new(pool.clone())
        .after(0, 1000)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let seqs: Vec<i64> = changes.iter().map(|c| c.seq).collect();
    assert_eq!(seqs, (1..=72).collect::<Vec<_>>());
    assert!(changes.iter().all(|c| c.data["n"] == c.seq));
    let (misplaced,): (i64,) = sqlx::query_as(
        "SELECT count(*) FROM change_log
          WHERE tableoid::regclass::text
                <> 'change_log_p' || to_char(logged_at AT TIME ZONE 'UTC', 'YYYYMMDD')
             OR logged_at <> at",
    )
    .fetch_one(&pool)
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(misplaced, 0);
    // New changes land in today's partition.
    let newest = ChangeStore::new(pool.clone());
    sqlx::query("SELECT acp_log_change('test.new', NULL, 'new', '{}')")
        .execute(&pool)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        newest.sequence(100).await.unwrap_or_else(|e| panic!("{e}")),
        1
    );
    assert_eq!(
        newest
            .bounds()
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .newest,
        73
    );
}
