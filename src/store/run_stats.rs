//! Run statistics: runs of a window counted per bucket and status, with
//! exact duration percentiles, in one statement over the runs' indexes
//! (`activity_runs_list_idx`, or `activity_runs_activity_idx` for one
//! activity): only the window's rows are read.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::StoreResult;
use super::runs::RunStore;
use crate::domain::query::StatsFilter;
use crate::domain::stats::{ActivitySummary, BucketCounts, LastRun, StatsWindow};

/// The statement behind [`RunStore::run_stats`]; `scripts/bench` runs the
/// very same text with pgbench. Parameters: `$1` from, `$2` to, `$3` the
/// bucket in seconds, `$4` activity (or NULL), `$5` trigger type (or NULL).
pub const RUN_STATS_SQL: &str = "\
SELECT date_bin(make_interval(secs => $3), created_at, timestamptz '1970-01-01 00:00:00+00') AS bucket,
       count(*) FILTER (WHERE status = 'queued'),
       count(*) FILTER (WHERE status = 'running'),
       count(*) FILTER (WHERE status = 'succeeded'),
       count(*) FILTER (WHERE status = 'failed'),
       count(*) FILTER (WHERE status = 'cancelled'),
       count(*) FILTER (WHERE status = 'timed_out'),
       count(*) FILTER (WHERE status = 'skipped'),
       percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM finished_at - started_at))
           FILTER (WHERE finished_at IS NOT NULL AND started_at IS NOT NULL),
       percentile_cont(0.95) WITHIN GROUP (ORDER BY extract(epoch FROM finished_at - started_at))
           FILTER (WHERE finished_at IS NOT NULL AND started_at IS NOT NULL)
  FROM activity_runs
 WHERE created_at >= $1 AND created_at < $2
   AND ($4::uuid IS NULL OR activity_id = $4)
   AND ($5::text IS NULL OR trigger_type = $5)
 GROUP BY 1
 ORDER BY 1";

type StatsRow = (
    DateTime<Utc>,
    i64,
    i64,
    i64,
    i64,
    i64,
    i64,
    i64,
    Option<f64>,
    Option<f64>,
);

impl RunStore {
    /// Every bucket of `window` that has runs, in order (empty buckets are
    /// the caller's to fill).
    pub async fn run_stats(
        &self,
        window: &StatsWindow,
        filter: &StatsFilter,
    ) -> StoreResult<Vec<BucketCounts>> {
        let rows: Vec<StatsRow> = sqlx::query_as(RUN_STATS_SQL)
            .bind(window.from)
            .bind(window.to)
            .bind(window.bucket.seconds() as f64)
            .bind(filter.activity_id)
            .bind(filter.trigger_type.map(|t| t.as_str()))
            .fetch_all(&self.pool)
            .await?;
        Ok(rows
            .into_iter()
            .map(|r| BucketCounts {
                start: r.0,
                queued: r.1,
                running: r.2,
                succeeded: r.3,
                failed: r.4,
                cancelled: r.5,
                timed_out: r.6,
                skipped: r.7,
                duration_p50: r.8,
                duration_p95: r.9,
            })
            .collect())
    }
}

type SummaryRow = (
    Uuid,
    Option<Uuid>,
    Option<String>,
    Option<DateTime<Utc>>,
    Option<DateTime<Utc>>,
    Option<DateTime<Utc>>,
    i64,
    i64,
    i64,
    i64,
    i64,
    i64,
);

impl RunStore {
    /// Summaries of `activities` (runs recorded since `since`), one
    /// statement for a whole page: each activity's newest run and its
    /// counts come from its own range of `activity_runs_activity_idx`.
    pub async fn summaries(
        &self,
        activities: &[Uuid],
        since: DateTime<Utc>,
    ) -> StoreResult<std::collections::HashMap<Uuid, ActivitySummary>> {
        let rows: Vec<SummaryRow> = sqlx::query_as(
            "SELECT a.id, lr.run_id, lr.status, lr.scheduled_for, lr.created_at, lr.finished_at,
                    s.runs, s.succeeded, s.failed, s.timed_out, s.cancelled,
                    (SELECT count(*) FROM alerts al WHERE al.activity_id = a.id AND al.resolved_at IS NULL)
               FROM unnest($1::uuid[]) AS a(id)
               LEFT JOIN LATERAL (
                    SELECT run_id, status, scheduled_for, created_at, finished_at FROM activity_runs r
                     WHERE r.activity_id = a.id ORDER BY created_at DESC, run_id DESC LIMIT 1) lr ON true
               CROSS JOIN LATERAL (
                    SELECT count(*) AS runs,
                           count(*) FILTER (WHERE status = 'succeeded') AS succeeded,
                           count(*) FILTER (WHERE status = 'failed') AS failed,
                           count(*) FILTER (WHERE status = 'timed_out') AS timed_out,
                           count(*) FILTER (WHERE status = 'cancelled') AS cancelled
                      FROM activity_runs r WHERE r.activity_id = a.id AND r.created_at >= $2) s",
        )
        .bind(activities)
        .bind(since)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|r| {
                let last_run = match (r.1, r.2, r.4) {
                    (Some(run_id), Some(status), Some(created_at)) => Some(LastRun {
                        run_id,
                        status,
                        scheduled_for: r.3,
                        created_at,
                        finished_at: r.5,
                    }),
                    _ => None,
                };
                let summary = ActivitySummary {
                    last_run,
                    runs: r.6,
                    succeeded: r.7,
                    failed: r.8,
                    timed_out: r.9,
                    cancelled: r.10,
                    open_alerts: r.11,
                };
                (r.0, summary)
            })
            .collect())
    }
}
