//! Rate limits of flow-controlled activities: the log of starts per key
//! (`flow_starts`) and the runs waiting for room in its window
//! (`flow_rate_waits`), granted under the key's own advisory lock.

use uuid::Uuid;

use super::{FlowStore, Grant, requeue, skip_queued};
use crate::StoreResult;
use acp_domain::flow::{RateAdmission, RateFacts, RateOnLimit, admit_rate};

/// The rate-limit locks of a key, apart from its concurrency lock (the two
/// are never held at once: each grant is its own transaction).
const RATE_LOCK_CLASS: i32 = 0x0f10_0015;

impl FlowStore {
    /// Asks for a start of `run_id` under its key's rate limit: joins the
    /// key's rate queue on the first call, and starts the run (with those
    /// queued ahead of it) when [`admit_rate`] says so.
    ///
    /// Why the limit is exact: every start of one (activity, key) is granted
    /// in a transaction holding that key's advisory lock, which reads the
    /// starts within `period` before the database's clock and adds one only
    /// if the window has room; a start row is never deleted while a window
    /// of `period` can still hold it. `owns_flow_fields`: the run has no
    /// concurrency limit, so its `flow.key` and `flow.queued_at` are this
    /// limit's.
    #[allow(clippy::too_many_arguments)]
    pub async fn acquire_rate(
        &self,
        run_id: Uuid,
        activity_id: Uuid,
        key: &str,
        limit: u32,
        period: chrono::Duration,
        on_limit: RateOnLimit,
        owns_flow_fields: bool,
    ) -> StoreResult<Grant> {
        let mut tx = self.pool.begin().await?;
        sqlx::query!(
            "SELECT pg_advisory_xact_lock($1, hashtext($2))",
            RATE_LOCK_CLASS,
            format!("{activity_id}/{key}"),
        )
        .fetch_one(&mut *tx)
        .await?;
        let now = sqlx::query_scalar!(r#"SELECT clock_timestamp() AS "now!""#)
            .fetch_one(&mut *tx)
            .await?;
        let run = sqlx::query!(
            r#"SELECT r.status, EXISTS (SELECT 1 FROM flow_starts s
                                         WHERE s.run_id = r.run_id AND s.attempt = r.attempt)
                        AS "started!"
               FROM activity_runs r WHERE r.run_id = $1 FOR UPDATE"#,
            run_id,
        )
        .fetch_optional(&mut *tx)
        .await?;
        match run.as_ref().map(|r| (r.status.as_str(), r.started)) {
            // Started before: a retried request, or together with a run
            // behind it in the queue.
            Some(("running", true)) => {
                tx.commit().await?;
                return Ok(Grant::Acquired);
            }
            Some(("queued", _)) => {}
            // Running without a start of this attempt: a retry of an ended
            // run moved it to `running`. It waits like any other.
            Some(("running", false)) => requeue(&mut tx, run_id).await?,
            _ => {
                tx.commit().await?;
                return Ok(Grant::Ended);
            }
        }
        let joined = sqlx::query!(
            "INSERT INTO flow_rate_waits (run_id, activity_id, flow_key, queued_at)
             VALUES ($1, $2, $3, $4) ON CONFLICT (run_id) DO NOTHING",
            run_id,
            activity_id,
            key,
            now,
        )
        .execute(&mut *tx)
        .await?;
        if joined.rows_affected() == 1 && owns_flow_fields {
            sqlx::query!(
                "UPDATE activity_runs SET queued_at = $2, flow_key = $3 WHERE run_id = $1",
                run_id,
                now,
                key,
            )
            .execute(&mut *tx)
            .await?;
        }
        // Starts too old for any window of the current period (kept an hour
        // at least, so that a retried grant still finds its row).
        sqlx::query!(
            "DELETE FROM flow_starts WHERE activity_id = $1 AND flow_key = $2
                AND started_at <= $3::timestamptz - greatest($4 * interval '1 millisecond', interval '1 hour')",
            activity_id,
            key,
            now,
            period.num_milliseconds() as f64,
        )
        .execute(&mut *tx)
        .await?;
        let window = sqlx::query_scalar!(
            "SELECT started_at FROM flow_starts
              WHERE activity_id = $1 AND flow_key = $2 AND started_at > $3
              ORDER BY started_at",
            activity_id,
            key,
            now - period,
        )
        .fetch_all(&mut *tx)
        .await?;
        // The queue, head first, as far as this run.
        let waiting = sqlx::query_scalar!(
            "SELECT run_id FROM flow_rate_waits
              WHERE activity_id = $1 AND flow_key = $2
                AND seq <= (SELECT seq FROM flow_rate_waits WHERE run_id = $3)
              ORDER BY seq",
            activity_id,
            key,
            run_id,
        )
        .fetch_all(&mut *tx)
        .await?;
        let ahead = waiting.len().saturating_sub(1).min(u32::MAX as usize) as u32;
        let facts = RateFacts {
            limit,
            period,
            now,
            window: &window,
            ahead,
        };
        let grant = match admit_rate(facts, on_limit) {
            RateAdmission::Start => {
                // This run and those ahead of it start now, in queue order
                // (whose workflows find themselves started when they ask next).
                for waiting_run in &waiting {
                    sqlx::query!(
                        "INSERT INTO flow_starts (run_id, attempt, activity_id, flow_key, started_at)
                         SELECT run_id, attempt, $2, $3, $4 FROM activity_runs WHERE run_id = $1
                         ON CONFLICT DO NOTHING",
                        waiting_run,
                        activity_id,
                        key,
                        now,
                    )
                    .execute(&mut *tx)
                    .await?;
                    sqlx::query!("DELETE FROM flow_rate_waits WHERE run_id = $1", waiting_run)
                        .execute(&mut *tx)
                        .await?;
                    sqlx::query!(
                        "UPDATE activity_runs SET status = 'running', started_at = $2
                         WHERE run_id = $1 AND status = 'queued'",
                        waiting_run,
                        now,
                    )
                    .execute(&mut *tx)
                    .await?;
                }
                Grant::Acquired
            }
            RateAdmission::Skip => {
                // The trigger on status removes its queue rows (and frees a
                // concurrency slot it held).
                skip_queued(&mut tx, run_id, "rate_limited").await?;
                Grant::Skipped
            }
            RateAdmission::WaitUntil(at) => Grant::WaitFor {
                millis: (at - now).num_milliseconds().max(1) as u64,
            },
        };
        tx.commit().await?;
        Ok(grant)
    }

    /// Deletes starts older than any rate-limit window (a `period` is at most
    /// a day): a key's own grants prune its rows, this pass those of keys
    /// that stopped getting runs. Returns how many it deleted.
    pub async fn prune_starts(&self) -> StoreResult<u64> {
        let done = sqlx::query!(
            "DELETE FROM flow_starts WHERE started_at < now() - interval '1 day' - interval '1 hour'"
        )
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected())
    }
}
