//! Run statistics: runs of a window per bucket and status, with duration
//! percentiles, read from the rollups that triggers on `activity_runs` keep
//! (see the run rollups' migration): one row per bucket, key and status,
//! and one per duration bin, whatever the number of runs.

use uuid::Uuid;

use super::StoreResult;
use super::runs::RunStore;
use acp_domain::query::StatsFilter;
use acp_domain::sketch::Histogram;
use acp_domain::stats::{ActivitySummary, BucketCounts, LastRun, StatsWindow, SummarySpan};

/// Hands the text of [`RUN_STATS_SQL`] to a macro, first: the query
/// macros check a literal, not a constant, and `scripts/bench` needs the
/// constant.
macro_rules! with_run_stats_sql {
    ($($m:ident)::+ ! ($($args:tt)*)) => {
        $($m)::+!(
            r#"WITH counts AS (
    SELECT bucket,
           coalesce(sum(runs) FILTER (WHERE status = 'queued'), 0)::bigint AS queued,
           coalesce(sum(runs) FILTER (WHERE status = 'running'), 0)::bigint AS running,
           coalesce(sum(runs) FILTER (WHERE status = 'succeeded'), 0)::bigint AS succeeded,
           coalesce(sum(runs) FILTER (WHERE status = 'failed'), 0)::bigint AS failed,
           coalesce(sum(runs) FILTER (WHERE status = 'cancelled'), 0)::bigint AS cancelled,
           coalesce(sum(runs) FILTER (WHERE status = 'timed_out'), 0)::bigint AS timed_out,
           coalesce(sum(runs) FILTER (WHERE status = 'skipped'), 0)::bigint AS skipped
      FROM run_rollups
     WHERE bucket_seconds = $3 AND bucket >= $1 AND bucket < $2
       AND ($4::uuid IS NULL OR activity_id = $4)
       AND ($5::text IS NULL OR trigger_type = $5)
       AND ($6::text IS NULL
            OR activity_id IN (SELECT id FROM activities WHERE project_id = $6))
     GROUP BY bucket
), bins AS (
    SELECT bucket, bin, sum(n)::bigint AS n
      FROM run_rollup_bins
     WHERE bucket_seconds = $3 AND bucket >= $1 AND bucket < $2
       AND ($4::uuid IS NULL OR activity_id = $4)
       AND ($5::text IS NULL OR trigger_type = $5)
       AND ($6::text IS NULL
            OR activity_id IN (SELECT id FROM activities WHERE project_id = $6))
     GROUP BY bucket, bin
    HAVING sum(n) <> 0
), histograms AS (
    SELECT bucket, array_agg(bin ORDER BY bin) AS bins, array_agg(n ORDER BY bin) AS ns
      FROM bins GROUP BY bucket
)
SELECT c.bucket AS "bucket!", c.queued AS "queued!", c.running AS "running!",
       c.succeeded AS "succeeded!", c.failed AS "failed!", c.cancelled AS "cancelled!",
       c.timed_out AS "timed_out!", c.skipped AS "skipped!",
       coalesce(h.bins, '{}') AS "bins!: Vec<i32>", coalesce(h.ns, '{}') AS "ns!: Vec<i64>"
  FROM counts c LEFT JOIN histograms h USING (bucket)
 ORDER BY c.bucket"#,
            $($args)*
        )
    };
}

/// The statement behind [`RunStore::run_stats`]; `scripts/bench` runs the
/// very same text with pgbench. Parameters: `$1` from, `$2` to, `$3` the
/// bucket in seconds (60, 3600 or 86400), `$4` activity (or NULL), `$5`
/// trigger type (or NULL), `$6` project (or NULL: every project's). The
/// window must be whole buckets.
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
            window.bucket.seconds() as i32,
            filter.activity_id,
            filter.trigger_type.map(|t| t.as_str()),
            filter.project.as_ref().map(|p| p.as_str()),
        ))
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|r| {
                let durations: Histogram = r.bins.into_iter().zip(r.ns).collect();
                BucketCounts {
                    start: r.bucket,
                    queued: r.queued,
                    running: r.running,
                    succeeded: r.succeeded,
                    failed: r.failed,
                    cancelled: r.cancelled,
                    timed_out: r.timed_out,
                    skipped: r.skipped,
                    duration_p50: durations.quantile(0.5),
                    duration_p95: durations.quantile(0.95),
                    duration_p99: durations.quantile(0.99),
                }
            })
            .collect())
    }
}

impl RunStore {
    /// Summaries of `activities` (runs recorded in `span`), one statement
    /// for a whole page: each activity's newest run comes from its range of
    /// `activity_runs_activity_idx`, its counts from its minute and hour
    /// rollups.
    pub async fn summaries(
        &self,
        activities: &[Uuid],
        span: SummarySpan,
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
                    SELECT coalesce(sum(runs), 0)::bigint AS runs,
                           coalesce(sum(runs) FILTER (WHERE status = 'succeeded'), 0)::bigint AS succeeded,
                           coalesce(sum(runs) FILTER (WHERE status = 'failed'), 0)::bigint AS failed,
                           coalesce(sum(runs) FILTER (WHERE status = 'timed_out'), 0)::bigint AS timed_out,
                           coalesce(sum(runs) FILTER (WHERE status = 'cancelled'), 0)::bigint AS cancelled
                      FROM run_rollups r
                     WHERE r.activity_id = a.id
                       AND ((r.bucket_seconds = 60 AND r.bucket >= $2 AND r.bucket < $3)
                            OR (r.bucket_seconds = 3600 AND r.bucket >= $3))) s"#,
            activities,
            span.minutes_from,
            span.hours_from,
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
