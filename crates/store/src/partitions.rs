//! Time partitions of the history tables (see `acp_domain::retention`):
//! what exists, making one ahead, dropping one whole.
//!
//! The statements that name a partition are built here at run time (DDL
//! takes no parameters); the names come from
//! [`HistoryTable::partition_name`] or the catalog and are quoted as
//! identifiers, the bounds are formatted instants. No statement here takes
//! a lock that writers or readers of the parent wait for: a partition is
//! made apart and attached (SHARE UPDATE EXCLUSIVE on the parent), and
//! dropped after DETACH ... CONCURRENTLY, which waits for the queries that
//! may still read it instead of locking them out.

use chrono::{DateTime, SecondsFormat, Utc};
use sqlx::PgPool;

use super::StoreResult;
use acp_domain::retention::{HistoryTable, Partition};

/// How long one statement here waits for a lock before giving up (the
/// pass tries again later), so that it never makes a writer queue behind it.
const LOCK_TIMEOUT: &str = "5s";
/// How long a detach may wait for queries that still read the partition.
const DETACH_TIMEOUT: &str = "60s";

/// A partition as the catalog has it.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredPartition {
    pub partition: Partition,
    /// The planner's estimate of its rows; `None` before it was analysed.
    pub rows_estimate: Option<i64>,
    /// Its size with indexes and TOAST (`pg_total_relation_size`).
    pub bytes: i64,
    /// A concurrent detach began and did not finish.
    pub detach_pending: bool,
}

#[derive(Clone)]
pub struct PartitionStore {
    pool: PgPool,
}

impl PartitionStore {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }

    /// The database's clock: the instant a pass plans with, so that a
    /// partition is never judged old by a clock ahead of the one that
    /// stamps its rows.
    pub async fn now(&self) -> StoreResult<DateTime<Utc>> {
        Ok(sqlx::query_scalar!(r#"SELECT now() AS "now!""#)
            .fetch_one(&self.pool)
            .await?)
    }

    /// The range partitions of `table`, oldest first. A partition whose
    /// bounds are not a plain range (MINVALUE, a default) is left out: no
    /// pass touches it.
    pub async fn list(&self, table: HistoryTable) -> StoreResult<Vec<StoredPartition>> {
        let rows = sqlx::query!(
            r#"WITH p AS (
                 SELECT c.oid, c.relname::text AS name, c.reltuples, i.inhdetachpending,
                        regexp_match(pg_get_expr(c.relpartbound, c.oid),
                                     '^FOR VALUES FROM \(''([^'']+)''\) TO \(''([^'']+)''\)$') AS b
                   FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
                  WHERE i.inhparent = to_regclass($1))
             SELECT name AS "name!", b[1]::timestamptz AS "from!", b[2]::timestamptz AS "to!",
                    CASE WHEN reltuples < 0 THEN NULL ELSE reltuples::bigint END AS rows_estimate,
                    pg_total_relation_size(oid) AS "bytes!", inhdetachpending AS "detach_pending!"
               FROM p WHERE b IS NOT NULL ORDER BY b[1]::timestamptz"#,
            table.as_str(),
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|r| StoredPartition {
                partition: Partition {
                    name: r.name,
                    from: r.from,
                    to: r.to,
                },
                rows_estimate: r.rows_estimate,
                bytes: r.bytes,
                detach_pending: r.detach_pending,
            })
            .collect())
    }

    /// Tables named like `table`'s partitions but not attached: what a
    /// drop interrupted between its detach and its drop leaves.
    pub async fn detached(&self, table: HistoryTable) -> StoreResult<Vec<String>> {
        let names = sqlx::query_scalar!(
            r#"SELECT c.relname::text AS "name!" FROM pg_class c
                WHERE c.relnamespace = (SELECT relnamespace FROM pg_class WHERE oid = to_regclass($1))
                  AND c.relkind = 'r' AND NOT c.relispartition
                  AND starts_with(c.relname::text, $1 || '_p')"#,
            table.as_str(),
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(names
            .into_iter()
            .filter(|n| table.partition_start(n).is_some())
            .collect())
    }

    /// Makes `partition` of `table`: an empty table with the parent's
    /// columns, attached for its range (the parent's indexes are built on
    /// it as it attaches). One implicit transaction: both or neither.
    pub async fn create(&self, table: HistoryTable, partition: &Partition) -> StoreResult<()> {
        let parent = ident(table.as_str());
        let name = ident(&partition.name);
        let statements = format!(
            "SET LOCAL lock_timeout = '{LOCK_TIMEOUT}';
             CREATE TABLE {name} (LIKE {parent} INCLUDING DEFAULTS INCLUDING CONSTRAINTS);
             ALTER TABLE {parent} ATTACH PARTITION {name} FOR VALUES FROM ('{}') TO ('{}')",
            instant(partition.from),
            instant(partition.to),
        );
        execute(&mut *self.pool.acquire().await?, statements).await
    }

    /// Detaches `partition` of `table` concurrently (or finishes a detach
    /// that was interrupted), then drops it. What readers must learn of
    /// the loss (the change log's `pruned_through`) is recorded first, in
    /// its own transaction: a reader is told too early at worst, never
    /// too late.
    pub async fn drop_partition(
        &self,
        table: HistoryTable,
        partition: &Partition,
        detach_pending: bool,
    ) -> StoreResult<()> {
        match table {
            HistoryTable::ChangeLog => {
                sqlx::query!(
                    "UPDATE change_log_meta SET pruned_through = greatest(pruned_through,
                         (SELECT max(seq) FROM change_log WHERE logged_at >= $1 AND logged_at < $2))",
                    partition.from,
                    partition.to,
                )
                .execute(&self.pool)
                .await?;
            }
        }
        let parent = ident(table.as_str());
        let name = ident(&partition.name);
        let how = if detach_pending {
            "FINALIZE"
        } else {
            "CONCURRENTLY"
        };
        // Not in a transaction: a concurrent detach cannot run in one.
        let mut conn = self.pool.acquire().await?;
        let timeouts = format!(
            "SET lock_timeout = '{LOCK_TIMEOUT}'; SET statement_timeout = '{DETACH_TIMEOUT}'"
        );
        let mut done = execute(&mut conn, timeouts).await;
        if done.is_ok() {
            let detach = format!("ALTER TABLE {parent} DETACH PARTITION {name} {how}");
            done = execute(&mut conn, detach).await;
        }
        if done.is_ok() {
            done = execute(&mut conn, format!("DROP TABLE {name}")).await;
        }
        let reset = execute(
            &mut conn,
            "RESET lock_timeout; RESET statement_timeout".to_owned(),
        )
        .await;
        if reset.is_err() {
            // The session's timeouts must not follow it back to the pool.
            conn.close_on_drop();
        }
        done
    }

    /// Drops a table [`PartitionStore::detached`] found.
    pub async fn drop_detached(&self, name: &str) -> StoreResult<()> {
        let statements = format!(
            "SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'; DROP TABLE {}",
            ident(name)
        );
        execute(&mut *self.pool.acquire().await?, statements).await
    }

    /// When the last pass ran, in any process.
    pub async fn last_pass(&self) -> StoreResult<Option<DateTime<Utc>>> {
        Ok(
            sqlx::query_scalar!("SELECT last_pass_at FROM history_retention WHERE id = 1")
                .fetch_optional(&self.pool)
                .await?
                .flatten(),
        )
    }

    pub async fn record_pass(&self, at: DateTime<Utc>) -> StoreResult<()> {
        sqlx::query!(
            "UPDATE history_retention SET last_pass_at = $1 WHERE id = 1",
            at
        )
        .execute(&self.pool)
        .await?;
        Ok(())
    }
}

/// Runs statements built here (no parameters: the simple protocol, where
/// several statements are one implicit transaction). Boxed, so that the
/// callers' futures are `Send` for every lifetime, as a duty's must be.
fn execute(
    conn: &mut sqlx::PgConnection,
    statements: String,
) -> std::pin::Pin<Box<dyn Future<Output = StoreResult<()>> + Send + '_>> {
    Box::pin(async move {
        sqlx::Executor::execute(&mut *conn, statements.as_str()).await?;
        Ok(())
    })
}

/// An identifier, double-quoted.
fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// An instant as a timestamptz literal's text (UTC, no quotes in it).
fn instant(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Micros, true)
}
