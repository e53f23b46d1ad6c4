//! `GET /v1/retention`: the dry run of the history retention duty, for
//! `admin` keys: every partition of every history table, what the next
//! pass drops, and when it runs.

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use super::AppState;
use crate::api::error::ApiResult;
use crate::api::problems;
use acp_domain::retention::{HistoryTable, Period};
use acp_service::retention::{RetentionReport, TableReport};

/// What the retention duty keeps and what its next pass does.
#[derive(Debug, Serialize, ToSchema)]
pub struct RetentionResponse {
    /// The database's clock when this was read.
    pub now: DateTime<Utc>,
    /// When a pass last ran, in any process; null before the first.
    pub last_pass_at: Option<DateTime<Utc>>,
    /// When the next pass runs, at the latest (the duty's leader passes
    /// every `interval_seconds`; its first pass when it takes the lead).
    pub next_pass_at: DateTime<Utc>,
    #[schema(minimum = 0)]
    pub interval_seconds: f64,
    pub tables: Vec<RetentionTable>,
}

/// One history table.
#[derive(Debug, Serialize, ToSchema)]
pub struct RetentionTable {
    pub table: HistoryTable,
    /// How much time one partition covers.
    pub period: Period,
    /// How long a row is kept at least; a partition is dropped once all of
    /// it is older. Null: kept for ever.
    #[schema(minimum = 0)]
    pub retention_seconds: Option<i64>,
    /// Every partition, oldest first.
    pub partitions: Vec<RetentionPartition>,
    /// Partitions the next pass makes (names).
    pub created_next: Vec<String>,
    /// What the next pass drops, summed.
    pub dropped_next: DroppedTotals,
}

/// One partition.
#[derive(Debug, Serialize, ToSchema)]
pub struct RetentionPartition {
    #[schema(example = "change_log_p20261207", pattern = "^[a-z_]+_p[0-9]{8,10}$")]
    pub name: String,
    /// Its first instant.
    pub from: DateTime<Utc>,
    /// The instant after its last.
    pub to: DateTime<Utc>,
    /// The planner's estimate of its rows; null until it was analysed.
    #[schema(minimum = 0)]
    pub rows_estimate: Option<i64>,
    /// Its size on disk with its indexes and TOAST.
    #[schema(minimum = 0)]
    pub bytes: i64,
    /// The next pass drops it.
    pub dropped_next: bool,
}

/// What a pass drops, summed over its partitions.
#[derive(Debug, Serialize, ToSchema)]
pub struct DroppedTotals {
    #[schema(minimum = 0)]
    pub partitions: i64,
    /// The sum of their row estimates (those not analysed count 0).
    #[schema(minimum = 0)]
    pub rows_estimate: i64,
    #[schema(minimum = 0)]
    pub bytes: i64,
}

fn render_table(table: TableReport) -> RetentionTable {
    let partitions: Vec<RetentionPartition> = table
        .partitions
        .into_iter()
        .map(|p| RetentionPartition {
            name: p.stored.partition.name,
            from: p.stored.partition.from,
            to: p.stored.partition.to,
            rows_estimate: p.stored.rows_estimate,
            bytes: p.stored.bytes,
            dropped_next: p.dropped_next,
        })
        .collect();
    let dropped: Vec<&RetentionPartition> = partitions.iter().filter(|p| p.dropped_next).collect();
    let dropped_next = DroppedTotals {
        partitions: dropped.len() as i64,
        rows_estimate: dropped.iter().filter_map(|p| p.rows_estimate).sum(),
        bytes: dropped.iter().map(|p| p.bytes).sum(),
    };
    RetentionTable {
        table: table.table,
        period: table.period,
        retention_seconds: table.retention.map(|r| r.num_seconds()),
        created_next: table.created_next.into_iter().map(|p| p.name).collect(),
        partitions,
        dropped_next,
    }
}

fn render(report: RetentionReport) -> RetentionResponse {
    RetentionResponse {
        now: report.now,
        last_pass_at: report.last_pass_at,
        next_pass_at: report.next_pass_at,
        interval_seconds: report.interval.as_secs_f64(),
        tables: report.tables.into_iter().map(render_table).collect(),
    }
}

/// What history is kept and what the next retention pass drops (a dry run).
#[utoipa::path(
    get,
    path = "/v1/retention",
    security(("bearer" = ["operator"])),
    tag = "retention",
    description = "The history tables (today the change log behind `GET /v1/stream`) are kept in time partitions; the `history_retention` duty makes them ahead and drops each whole once all of it is older than the table's retention. This lists every partition with its row estimate and size, which ones the next pass drops (planned at its time) and what it makes, without changing anything. The partitions hold every project's history, so this is the operator's.",
    responses(
        (status = 200, description = "The partitions and the next pass", body = RetentionResponse),
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip_all)]
pub async fn get_retention(State(state): State<AppState>) -> ApiResult<Json<RetentionResponse>> {
    Ok(Json(render(state.services.retention.report().await?)))
}
