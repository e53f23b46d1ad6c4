//! `/v1/stats/runs`: runs per bucket and status, for dashboards that would
//! otherwise page through every run and count. Answered from the rollups
//! the database keeps as runs are written.

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::AppState;
use super::caller::Caller;
use super::extract::{ApiQuery, path_uuid, query_instant};
use crate::api::error::{ApiError, ApiResult};
use crate::api::problems;
use acp_domain::query::StatsFilter;
use acp_domain::run::RunTrigger;
use acp_domain::stats::{ActivitySummary, BucketCounts};
use acp_domain::stats::{Bucket, StatsWindow};

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct RunStatsQuery {
    /// Start of the window (RFC 3339); default 24 hours before `to`. Widened
    /// to the start of its bucket: windows are always whole buckets.
    #[param(value_type = Option<String>, format = DateTime)]
    pub from: Option<String>,
    /// End of the window, exclusive (RFC 3339); default now. Widened to the
    /// end of its bucket.
    #[param(value_type = Option<String>, format = DateTime)]
    pub to: Option<String>,
    /// `PT1M`, `PT1H` (default) or `P1D`; buckets are aligned to UTC. At
    /// most 1000 buckets per window: a bucket too fine for the window is a
    /// 400 naming `bucket` (when a coarser one fits), a window too long for
    /// any bucket a 400 naming `from`.
    #[param(value_type = Option<String>, pattern = "^(PT1M|PT1H|P1D)$")]
    pub bucket: Option<String>,
    /// Only this activity's runs (a deleted activity's too).
    #[param(value_type = Option<String>, format = Uuid)]
    pub activity_id: Option<String>,
    /// Only runs of this trigger type.
    #[param(value_type = Option<RunTrigger>)]
    pub trigger_type: Option<String>,
}

/// Runs of one bucket by status.
#[derive(Debug, Serialize, ToSchema)]
pub struct RunStatusCounts {
    pub queued: i64,
    pub running: i64,
    pub succeeded: i64,
    pub failed: i64,
    pub cancelled: i64,
    pub timed_out: i64,
    pub skipped: i64,
}

/// The runs recorded in one bucket (by their `created_at`).
#[derive(Debug, Serialize, ToSchema)]
pub struct RunStatsBucket {
    /// Start of the bucket (inclusive).
    pub start: DateTime<Utc>,
    /// Every run of the bucket, whatever its status.
    pub total: i64,
    pub counts: RunStatusCounts,
    /// Median of `finished_at − started_at` over the bucket's runs that
    /// started and finished, in seconds; null when none did. Read from a
    /// histogram of the durations whose bins are 2 % wide: within 1 %
    /// (relative) of the exact median, interpolated between the two middle
    /// runs as PostgreSQL's `percentile_cont` does. Durations of zero (or
    /// below zero) read as 0.
    pub duration_p50_seconds: Option<f64>,
    /// 95th percentile of the same durations, within 1 % as the median.
    pub duration_p95_seconds: Option<f64>,
    /// 99th percentile of the same durations, within 1 % as the median.
    pub duration_p99_seconds: Option<f64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct RunStatsResponse {
    /// The window as counted: widened to whole buckets.
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    #[schema(example = "PT1H", pattern = "^(PT1M|PT1H|P1D)$")]
    pub bucket: String,
    /// Every bucket of the window in order, empty ones with zero counts.
    pub buckets: Vec<RunStatsBucket>,
}

fn render(b: BucketCounts) -> RunStatsBucket {
    RunStatsBucket {
        start: b.start,
        total: b.total(),
        counts: RunStatusCounts {
            queued: b.queued,
            running: b.running,
            succeeded: b.succeeded,
            failed: b.failed,
            cancelled: b.cancelled,
            timed_out: b.timed_out,
            skipped: b.skipped,
        },
        duration_p50_seconds: b.duration_p50,
        duration_p95_seconds: b.duration_p95,
        duration_p99_seconds: b.duration_p99,
    }
}

/// Runs per bucket and status, with duration percentiles.
#[utoipa::path(
    get,
    path = "/v1/stats/runs",
    security(("bearer" = ["read"])),
    tag = "runs",
    params(RunStatsQuery),
    responses(
        (status = 200, description = "Every bucket of the window", body = RunStatsResponse),
        problems::BadNamedParameter,
        problems::NoSuchActivity,
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip_all)]
pub async fn run_stats(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiQuery(query): ApiQuery<RunStatsQuery>,
) -> ApiResult<Json<RunStatsResponse>> {
    let bucket = match query.bucket.as_deref() {
        None => Bucket::Hour,
        Some(text) => Bucket::parse(text).map_err(|m| ApiError::bad_field("bucket", m))?,
    };
    let window = StatsWindow::new(
        query_instant("from", query.from.as_deref())?,
        query_instant("to", query.to.as_deref())?,
        bucket,
        Utc::now(),
    )
    .map_err(|e| ApiError::BadRequest(vec![e]))?;
    let filter = StatsFilter {
        activity_id: query
            .activity_id
            .as_deref()
            .map(|t| path_uuid("activity_id", t))
            .transpose()?,
        trigger_type: query
            .trigger_type
            .as_deref()
            .map(|t| RunTrigger::parse(t).map_err(|m| ApiError::bad_field("trigger_type", m)))
            .transpose()?,
        project: Some(actor.project),
    };
    let buckets = state.services.runs.stats(&window, &filter).await?;
    Ok(Json(RunStatsResponse {
        from: window.from,
        to: window.to,
        bucket: bucket.as_str().to_owned(),
        buckets: buckets.into_iter().map(render).collect(),
    }))
}

/// An activity's newest run.
#[derive(Debug, Serialize, ToSchema)]
pub struct LastRunResponse {
    pub run_id: uuid::Uuid,
    pub status: acp_domain::run::RunStatus,
    pub scheduled_for: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
}

/// An activity at a glance, for a dashboard's list.
#[derive(Debug, Serialize, ToSchema)]
pub struct ActivitySummaryResponse {
    /// The newest run, whatever its status; null before the first.
    pub last_run: Option<LastRunResponse>,
    /// The next time the trigger fires (null for event triggers, or when
    /// nothing is due).
    pub next_fire: Option<DateTime<Utc>>,
    /// Runs recorded in the last 24 hours (from the start of the minute 24
    /// hours ago), by outcome.
    pub runs_24h: i64,
    pub succeeded_24h: i64,
    pub failed_24h: i64,
    /// `succeeded / (succeeded + failed + timed_out + cancelled)` over the
    /// last 24 hours' runs that ended; null when none ended.
    pub success_rate_24h: Option<f64>,
    pub open_alerts: i64,
}

/// `?include=summary` (the only value).
pub fn wants_summary(include: Option<&str>) -> ApiResult<bool> {
    match include {
        None => Ok(false),
        Some("summary") => Ok(true),
        Some(other) => Err(ApiError::bad_field(
            "include",
            format!("`{other}` cannot be included: use `summary`"),
        )),
    }
}

pub fn render_summary(
    s: ActivitySummary,
    next_fire: Option<DateTime<Utc>>,
) -> ActivitySummaryResponse {
    let ended = s.succeeded + s.failed + s.timed_out + s.cancelled;
    ActivitySummaryResponse {
        last_run: s.last_run.and_then(|r| {
            Some(LastRunResponse {
                run_id: r.run_id,
                status: acp_domain::run::RunStatus::parse(&r.status).ok()?,
                scheduled_for: r.scheduled_for,
                created_at: r.created_at,
                finished_at: r.finished_at,
            })
        }),
        next_fire,
        runs_24h: s.runs,
        succeeded_24h: s.succeeded,
        failed_24h: s.failed,
        success_rate_24h: (ended > 0).then(|| s.succeeded as f64 / ended as f64),
        open_alerts: s.open_alerts,
    }
}
