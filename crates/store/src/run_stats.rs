//! Run statistics: runs of a window counted per bucket and status, with
//! exact duration percentiles, in one statement over the runs' indexes
//! (`activity_runs_list_idx`, or `activity_runs_activity_idx` for one
//! activity): only the window's rows are read.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::StoreResult;
use super::runs::RunStore;
use acp_domain::query::StatsFilter;
use acp_domain::stats::{ActivitySummary, BucketCounts, LastRun, StatsWindow};

/// Hands the text of [`RUN_STATS_SQL`] to a macro, first: the query
/// macros check a literal, not a constant, and `scripts/bench` needs the
/// constant.
macro_rules! with_run_stats_sql {
    ($($m:ident)::+ ! ($($args:tt)*)) => {
        $($m)::+!(
            r#"SELECT date_bin(make_interval(secs => $3), created_at, timestamptz '1970-01-01 00:00:00+00') AS "bucket!",
       count(*) FILTER (WHERE status = 'queued') AS "queued!",
       count(*) FILTER (WHERE status = 'running') AS "running!",
       count(*) FILTER (WHERE status = 'succeeded') AS "succeeded!",
       count(*) FILTER (WHERE status = 'failed') AS "failed!",
       count(*) FILTER (WHERE status = 'cancelled') AS "cancelled!",
       count(*) FILTER (WHERE status = 'timed_out') AS "timed_out!",
       count(*) FILTER (WHERE status = 'skipped') AS "skipped!",
       percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM finished_at - started_at))
           FILTER (WHERE finished_at IS NOT NULL AND started_at IS NOT NULL) AS p50,
       percentile_cont(0.95) WITHIN GROUP (ORDER BY extract(epoch FROM finished_at - started_at))
           FILTER (WHERE finished_at IS NOT NULL AND started_at IS NOT NULL) AS p95
  FROM activity_runs
 WHERE created_at >= $1 AND created_at < $2
   AND ($4::uuid IS NULL OR activity_id = $4)
   AND ($5::text IS NULL OR trigger_type = $5)
 GROUP BY 1
 ORDER BY 1"#,
            $($args)*
        )
    };
}

/// The statement behind [`RunStore::run_stats`]; `scripts/bench` runs the
/// very same text with pgbench. Parameters: `$1` from, `$2` to, `$3` the
/// bucket in seconds, `$4` activity (or NULL), `$5` trigger type (or NULL).
pub const RUN_STATS_SQL: &str = with_run_stats_sql!(concat!());

impl RunStore {
    /// Every bucket of `window` that has runs, in order (empty buckets are
    /// the caller's to fill).
    pub async fn run_stats(
        &self,
        window: &StatsWindow,
        filter: &StatsFilter,
    ) -> StoreResult<Vec<BucketCounts>> {
        let rows = with_run_stats_sql!(sqlx::query!(
            window.from,
            window.to,
            window.bucket.seconds() as f64,
            filter.activity_id,
            filter.trigger_type.map(|t| t.as_str()),
        ))
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|r| BucketCounts {
                start: r.bucket,
                queued: r.queued,
                running: r.running,
                succeeded: r.succeeded,
                failed: r.failed,
                cancelled: r.cancelled,
                timed_out: r.timed_out,
                skipped: r.skipped,
                duration_p50: r.p50,
                duration_p95: r.p95,
            })
            .collect())
    }
}

impl RunStore {
    /// Summaries of `activities` (runs recorded since `since`), one
    /// statement for a whole page: each activity's newest run and its
    /// counts come from its own range of `activity_runs_activity_idx`.
    pub async fn summaries(
        &self,
        activities: &[Uuid],
        since: DateTime<Utc>,
    ) -> StoreResult<std::collections::HashMap<Uuid, ActivitySummary>> {
        let rows = sqlx::query!(
            r#"SELECT a.id AS "id!", lr.run_id AS "run_id?", lr.status AS "status?",
                    lr.scheduled_for AS "scheduled_for?", lr.created_at AS "created_at?",
                    lr.finished_at AS "finished_at?", s.runs AS "runs!", s.succeeded AS "succeeded!",
                    s.failed AS "failed!", s.timed_out AS "timed_out!", s.cancelled AS "cancelled!",
                    (SELECT count(*) FROM alerts al WHERE al.activity_id = a.id AND al.resolved_at IS NULL)
                        AS "open_alerts!"
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
                      FROM activity_runs r WHERE r.activity_id = a.id AND r.created_at >= $2) s"#,
            activities,
            since,
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|r| {
                let last_run = match (r.run_id, r.status, r.created_at) {
                    (Some(run_id), Some(status), Some(created_at)) => Some(LastRun {
                        run_id,
                        status,
                        scheduled_for: r.scheduled_for,
                        created_at,
                        finished_at: r.finished_at,
                    }),
                    _ => None,
                };
                let summary = ActivitySummary {
                    last_run,
                    runs: r.runs,
                    succeeded: r.succeeded,
                    failed: r.failed,
                    timed_out: r.timed_out,
                    cancelled: r.cancelled,
                    open_alerts: r.open_alerts,
                };
                (r.id, summary)
            })
            .collect())
    }
}
