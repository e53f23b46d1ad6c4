//! Run statistics: runs of a window counted per bucket and status, with
//! exact duration percentiles, in one statement over the runs' indexes
//! (`activity_runs_list_idx`, or `activity_runs_activity_idx` for one
//! activity): only the window's rows are read.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::StoreResult;
use super::runs::RunStore;
use crate::domain::run::RunTrigger;
use crate::domain::stats::StatsWindow;

/// One bucket's runs, by status.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BucketCounts {
    pub start: Option<DateTime<Utc>>,
    pub queued: i64,
    pub running: i64,
    pub succeeded: i64,
    pub failed: i64,
    pub cancelled: i64,
    pub timed_out: i64,
    pub skipped: i64,
    /// Over the bucket's runs that started and finished, in seconds.
    pub duration_p50: Option<f64>,
    pub duration_p95: Option<f64>,
}

/// Which runs count.
#[derive(Debug, Clone, Default)]
pub struct StatsFilter {
    pub activity_id: Option<Uuid>,
    pub trigger_type: Option<RunTrigger>,
}

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
                start: Some(r.0),
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
