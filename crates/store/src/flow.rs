//! Concurrency slots of flow-controlled activities, in PostgreSQL so that one
//! limit holds across every API replica and worker.
//!
//! Why the limit is exact: every grant for one (activity, key) happens in a
//! transaction holding that key's advisory lock, which counts the slots held
//! and takes one only if `domain::flow::admit` says a slot is free for this
//! run; a slot row goes away only in the transaction that ends its run (a
//! trigger on `activity_runs.status`) or, for a run whose workflow Temporal
//! reports closed or unknown, in the recovery pass. A retried grant finds
//! its own slot. So at no commit do more than `limit` runs of a key hold a
//! slot, and a run starts its tasks only after its grant committed.

use sqlx::PgPool;
use uuid::Uuid;

use super::StoreResult;
use acp_domain::flow::{Admission, KeyUsage, OnLimit, SlotFacts, admit};

mod rate;

/// Separates these advisory locks from the other users of advisory locks.
const LOCK_CLASS: i32 = 0x0f10_0014;
/// What a run asking for a slot got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Grant {
    /// It holds a slot and is `running`.
    Acquired,
    /// It is `queued`; ask again later.
    Waiting,
    /// It was recorded `skipped` (`concurrency_limit`).
    Skipped,
    /// The key is full: cancel this run (the oldest holding a slot), then ask again.
    CancelOldest { run_id: Uuid },
    /// The run has ended already (cancelled while queued): nothing to run.
    Ended,
    /// Its key's rate limit is reached: ask again in this many milliseconds.
    WaitFor { millis: u64 },
}

#[derive(Clone)]
pub struct FlowStore {
    pool: PgPool,
}

impl FlowStore {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }

    /// Asks for a slot for `run_id` under its key: joins the key's queue on
    /// the first call, and takes a slot when [`admit`] says so. With
    /// `starts_run` the grant makes the run `running`; without (a rate limit
    /// follows, whose grant starts it) the run stays `queued` holding its slot.
    pub async fn acquire(
        &self,
        run_id: Uuid,
        activity_id: Uuid,
        key: &str,
        limit: u32,
        on_limit: OnLimit,
        starts_run: bool,
    ) -> StoreResult<Grant> {
        let mut tx = self.pool.begin().await?;
        sqlx::query!(
            "SELECT pg_advisory_xact_lock($1, hashtext($2))",
            LOCK_CLASS,
            format!("{activity_id}/{key}"),
        )
        .fetch_one(&mut *tx)
        .await?;
        let status = sqlx::query_scalar!(
            "SELECT status FROM activity_runs WHERE run_id = $1 FOR UPDATE",
            run_id,
        )
        .fetch_optional(&mut *tx)
        .await?;
        let status = status.as_deref();
        if matches!(status, Some("queued" | "running")) {
            let held = sqlx::query_scalar!(
                r#"SELECT acquired_at IS NOT NULL AS "held!" FROM flow_slots WHERE run_id = $1"#,
                run_id,
            )
            .fetch_optional(&mut *tx)
            .await?;
            if held == Some(true) {
                // Granted before: to a retried request, or together with a
                // run behind it in the queue (a run waiting for its rate
                // limit after that stays `queued` holding its slot).
                tx.commit().await?;
                return Ok(Grant::Acquired);
            }
        }
        match status {
            Some("queued") => {}
            Some("running") => {
                // Running without a slot: a retry of an ended run moved it
                // to `running`. It queues like any other run.
                requeue(&mut tx, run_id).await?;
            }
            _ => {
                tx.commit().await?;
                return Ok(Grant::Ended);
            }
        }
        let joined = sqlx::query!(
            "INSERT INTO flow_slots (run_id, activity_id, flow_key) VALUES ($1, $2, $3)
             ON CONFLICT (run_id) DO NOTHING",
            run_id,
            activity_id,
            key,
        )
        .execute(&mut *tx)
        .await?;
        if joined.rows_affected() == 1 {
            sqlx::query!(
                "UPDATE activity_runs SET queued_at = clock_timestamp(), flow_key = $2
                 WHERE run_id = $1",
                run_id,
                key,
            )
            .execute(&mut *tx)
            .await?;
        }
        let held = sqlx::query_scalar!(
            r#"SELECT count(*) AS "held!" FROM flow_slots
              WHERE activity_id = $1 AND flow_key = $2 AND acquired_at IS NOT NULL"#,
            activity_id,
            key,
        )
        .fetch_one(&mut *tx)
        .await?;
        let held = held.clamp(0, i64::from(u32::MAX)) as u32;
        // The queue, head first, as far as this run.
        let waiting = sqlx::query_scalar!(
            "SELECT run_id FROM flow_slots
              WHERE activity_id = $1 AND flow_key = $2 AND acquired_at IS NULL
                AND seq <= (SELECT seq FROM flow_slots WHERE run_id = $3)
              ORDER BY seq",
            activity_id,
            key,
            run_id,
        )
        .fetch_all(&mut *tx)
        .await?;
        let ahead = waiting.len().saturating_sub(1).min(u32::MAX as usize) as u32;
        let facts = SlotFacts { limit, held, ahead };
        let grant = match admit(facts, on_limit) {
            Admission::Acquire => {
                // The free slots go to the head of the queue in order, this
                // run's and those ahead of it (whose workflows find them
                // granted when they ask next): a slot is never handed past
                // an earlier run, so the queue is first in first out.
                for waiting_run in &waiting {
                    sqlx::query!(
                        "UPDATE flow_slots SET acquired_at = clock_timestamp() WHERE run_id = $1",
                        waiting_run,
                    )
                    .execute(&mut *tx)
                    .await?;
                    if starts_run {
                        sqlx::query!(
                            "UPDATE activity_runs SET status = 'running', started_at = clock_timestamp()
                             WHERE run_id = $1 AND status = 'queued'",
                            waiting_run,
                        )
                        .execute(&mut *tx)
                        .await?;
                    }
                }
                Grant::Acquired
            }
            Admission::Wait => Grant::Waiting,
            Admission::Skip => {
                // The trigger on status removes its queue row.
                skip_queued(&mut tx, run_id, "concurrency_limit").await?;
                Grant::Skipped
            }
            Admission::CancelOldest => {
                let oldest = sqlx::query_scalar!(
                    "SELECT run_id FROM flow_slots
                      WHERE activity_id = $1 AND flow_key = $2 AND acquired_at IS NOT NULL
                      ORDER BY acquired_at, seq LIMIT 1",
                    activity_id,
                    key,
                )
                .fetch_optional(&mut *tx)
                .await?;
                match oldest {
                    Some(run_id) => Grant::CancelOldest { run_id },
                    None => Grant::Waiting,
                }
            }
        };
        tx.commit().await?;
        Ok(grant)
    }

    /// Slots in use and queue length per key of one activity, busiest first
    /// (runs waiting for a rate limit count as queued).
    pub async fn usage(&self, activity_id: Uuid) -> StoreResult<Vec<KeyUsage>> {
        let rows = sqlx::query!(
            r#"SELECT key AS "key!", sum(in_use)::bigint AS "in_use!", sum(queued)::bigint AS "queued!"
             FROM (
                 SELECT flow_key AS key, count(acquired_at) AS in_use,
                        count(*) - count(acquired_at) AS queued
                   FROM flow_slots WHERE activity_id = $1 GROUP BY flow_key
                 UNION ALL
                 SELECT flow_key, 0, count(*) FROM flow_rate_waits
                  WHERE activity_id = $1 GROUP BY flow_key
             ) u
             GROUP BY key ORDER BY sum(in_use) + sum(queued) DESC, key LIMIT 100"#,
            activity_id,
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|r| KeyUsage {
                key: r.key,
                in_use: r.in_use,
                queued: r.queued,
            })
            .collect())
    }

    /// Queued runs per activity, and how long the longest-waiting of them
    /// has waited (seconds), for `/metrics`.
    pub async fn queued_per_activity(&self) -> StoreResult<Vec<(Uuid, i64, f64)>> {
        let rows = sqlx::query!(
            r#"SELECT activity_id AS "activity_id!", count(*) AS "queued!",
                    EXTRACT(EPOCH FROM clock_timestamp() - min(queued_at))::float8 AS "waited!"
               FROM (
                 SELECT activity_id, queued_at FROM flow_slots WHERE acquired_at IS NULL
                 UNION ALL
                 SELECT activity_id, queued_at FROM flow_rate_waits
             ) q GROUP BY activity_id"#
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|r| (r.activity_id, r.queued, r.waited))
            .collect())
    }

    /// Runs holding a slot for longer than `older_than_secs`, with their
    /// workflow IDs: the recovery pass asks Temporal whether each still runs.
    pub async fn long_held(&self, older_than_secs: i64) -> StoreResult<Vec<(Uuid, String)>> {
        let rows = sqlx::query!(
            "SELECT s.run_id, r.workflow_id FROM flow_slots s JOIN activity_runs r USING (run_id)
              WHERE s.acquired_at < now() - make_interval(secs => $1)
              ORDER BY s.acquired_at LIMIT 500",
            older_than_secs as f64,
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|r| (r.run_id, r.workflow_id))
            .collect())
    }

    /// Frees the slot of a run whose workflow is no longer running.
    pub async fn release(&self, run_id: Uuid) -> StoreResult<bool> {
        let done = sqlx::query!("DELETE FROM flow_slots WHERE run_id = $1", run_id)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// The workflows of the first `count` runs queued for the key `run_id`
    /// had, to wake once it has ended and freed its slot.
    pub async fn heads_after(&self, run_id: Uuid, count: i64) -> StoreResult<Vec<String>> {
        Ok(sqlx::query_scalar!(
            "SELECT r.workflow_id FROM flow_slots s JOIN activity_runs r USING (run_id)
              JOIN activity_runs me ON me.run_id = $1
             WHERE s.activity_id = me.activity_id AND s.flow_key = me.flow_key
               AND s.acquired_at IS NULL
             ORDER BY s.seq LIMIT $2",
            run_id,
            count,
        )
        .fetch_all(&self.pool)
        .await?)
    }
}

/// Puts a run back to `queued` (not started) inside a grant's transaction.
async fn requeue(tx: &mut sqlx::Transaction<'_, sqlx::Postgres>, run_id: Uuid) -> StoreResult<()> {
    sqlx::query!(
        "UPDATE activity_runs SET status = 'queued', started_at = NULL WHERE run_id = $1",
        run_id,
    )
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Records a queued run `skipped` with `reason` inside a grant's transaction
/// (the trigger on status removes its queue rows and frees a slot it held).
async fn skip_queued(
    tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
    run_id: Uuid,
    reason: &str,
) -> StoreResult<()> {
    sqlx::query!(
        "UPDATE activity_runs SET status = 'skipped', skip_reason = $2, finished_at = now()
          WHERE run_id = $1 AND status = 'queued'",
        run_id,
        reason,
    )
    .execute(&mut **tx)
    .await?;
    Ok(())
}
