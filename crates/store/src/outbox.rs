//! The outbox side of `event_dispatches`: what the dispatchers lease,
//! complete, release and count (see `service::events` and
//! `service::admission`). Ingest's side is in `events` and `ingest`.

use std::time::Duration;

use chrono::{DateTime, Utc};
use sqlx::types::Json;
use uuid::Uuid;

use super::StoreResult;
use super::events::EventStore;

mod fair;

/// A pending dispatch leased for starting, with what its run needs of the event.
#[derive(Debug, Clone)]
pub struct LeasedDispatch {
    pub event_id: String,
    pub activity_id: Uuid,
    pub workflow_id: String,
    pub definition_version: i64,
    pub event_type: String,
    pub source: String,
    pub occurred_at: Option<DateTime<Utc>>,
    pub payload: Json<serde_json::Value>,
    /// Set when the dispatch is debounced: it must be settled before it runs.
    pub debounce_key: Option<String>,
}

/// See [`EventStore::admission`].
#[derive(Debug, Clone, Copy)]
pub struct Admission {
    pub running: i64,
    pub first_task_wait: Option<Duration>,
    /// Some scheduled run's nominal time lies within the last minute.
    pub schedule_active: bool,
}

impl EventStore {
    /// What admitting event runs looks at, in one query: whether a schedule
    /// fired within the last minute, and (only when it did, or when `limit`
    /// says a limit applies anyway; otherwise they are 0 and `None`, and
    /// not computed) the runs started by an event or by hand that are
    /// running now, across every replica (those started within 15 minutes:
    /// a row left `running` by an execution that closed outside this service
    /// must not hold the allowance for ever, and a run that long waits on
    /// its tasks more than it loads the engine), plus those of `started`
    /// (runs one dispatcher started a moment ago) whose workflow has not
    /// written their row yet; and how long the event runs whose rows were
    /// written within `recent` waited, on average, from their start until
    /// their first workflow task wrote the row.
    pub async fn admission(
        &self,
        started: &[Uuid],
        recent: Duration,
        limit: bool,
    ) -> StoreResult<Admission> {
        // Uncorrelated subqueries are evaluated when first needed: a CASE
        // that does not need them does not run them.
        let row = sqlx::query!(
            r#"WITH active AS (
                 SELECT EXISTS (SELECT 1 FROM activity_runs
                                 WHERE trigger_type IN ('cron', 'interval')
                                   AND scheduled_for > now() - interval '1 minute') AS schedule_active
             )
             SELECT CASE WHEN $3 OR active.schedule_active THEN
                        (SELECT count(*) FROM activity_runs
                          WHERE status = 'running' AND trigger_type IN ('event', 'manual')
                            AND created_at > now() - interval '15 minutes')
                      + (SELECT count(*) FROM unnest($1::uuid[]) AS s(run_id)
                          WHERE NOT EXISTS (SELECT 1 FROM activity_runs r WHERE r.run_id = s.run_id))
                    ELSE 0 END AS "running!",
                    CASE WHEN active.schedule_active THEN
                        (SELECT extract(epoch FROM avg(greatest(r.created_at - d.completed_at, interval '0')))::float8
                           FROM activity_runs r JOIN event_dispatches d ON d.workflow_id = r.workflow_id
                          WHERE r.created_at > now() - $2::interval
                            AND r.trigger_type = 'event' AND r.attempt = 1)
                    END AS wait,
                    active.schedule_active AS "schedule_active!"
             FROM active"#,
            started,
            recent as _,
            limit,
        )
        .fetch_one(&self.pool)
        .await?;
        Ok(Admission {
            running: row.running,
            first_task_wait: row.wait.map(|s| Duration::from_secs_f64(s.max(0.0))),
            schedule_active: row.schedule_active,
        })
    }

    /// Gives a leased dispatch back to be retried no sooner than `after`.
    pub async fn release(
        &self,
        event_id: &str,
        activity_id: Uuid,
        after: std::time::Duration,
    ) -> StoreResult<()> {
        sqlx::query!(
            "UPDATE event_dispatches SET leased_until = now() + $3::interval
             WHERE event_id = $1 AND activity_id = $2 AND state = 'pending'",
            event_id,
            activity_id,
            after as _,
        )
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Marks a dispatch done: its workflow exists in Temporal.
    pub async fn complete(&self, event_id: &str, activity_id: Uuid) -> StoreResult<()> {
        sqlx::query!(
            "UPDATE event_dispatches SET state = 'completed', outcome = 'started', completed_at = now(),
                 attempts = attempts + 1, last_error = NULL
             WHERE event_id = $1 AND activity_id = $2 AND state = 'pending'",
            event_id,
            activity_id,
        )
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    pub async fn record_failure(
        &self,
        event_id: &str,
        activity_id: Uuid,
        error: &str,
    ) -> StoreResult<()> {
        sqlx::query!(
            "UPDATE event_dispatches SET attempts = attempts + 1, last_error = $3
             WHERE event_id = $1 AND activity_id = $2 AND state = 'pending'",
            event_id,
            activity_id,
            error,
        )
        .execute(&self.pool)
        .await?;
        Ok(())
    }
}
