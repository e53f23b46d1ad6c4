//! `/v1/audit`: which API key made which write to what, newest first
//! (scope `admin`).

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::api::AppState;
use crate::api::caller::Caller;
use crate::api::error::{ApiError, ApiResult};
use crate::api::extract::{path_uuid, query_instant};
use crate::api::pagination::{Cursor, Listing, Page, page};
use crate::api::problems;
use acp_domain::audit::{AuditEntry, AuditFilter, SUBJECT_KINDS};

/// The audit log's cursor: the last entry's sequence number.
pub struct AuditCursor;

impl Cursor for AuditCursor {
    const SCOPE: &'static str = "audit";
    type Key = i64;
}

/// The longest operation or subject ID a filter takes.
const MAX_FILTER_CHARS: usize = 200;

/// One write, as the audit log keeps it.
#[derive(Debug, Serialize, ToSchema)]
pub struct AuditEntryResponse {
    /// Grows with every entry: the order entries were appended in.
    pub seq: i64,
    /// When the write was made (its transaction's time).
    pub at: DateTime<Utc>,
    /// The API key that made it; `null` with authentication disabled or
    /// from the command line (`acp keys …`).
    pub key_id: Option<Uuid>,
    /// That key's name at the time.
    pub key_name: Option<String>,
    /// The operation's ID in the OpenAPI document, e.g. `pause_activity`.
    #[schema(example = "pause_activity")]
    pub operation: String,
    /// What kind of resource the write was to.
    #[schema(example = "activity")]
    pub subject_type: String,
    /// Which one: its ID.
    pub subject_id: String,
    /// The request's `x-request-id`, as its response and the service's log
    /// line carry it.
    pub request_id: String,
    /// A definition's write: `{"before": …, "after": …}` (`null` for the
    /// side where there is none). An action (trigger, cancel, retry,
    /// backfill, bulk): `{"summary": …}`, what was asked and done.
    #[schema(value_type = Object)]
    pub change: serde_json::Value,
}

fn render(e: AuditEntry) -> AuditEntryResponse {
    AuditEntryResponse {
        seq: e.seq,
        at: e.at,
        key_id: e.key_id,
        key_name: e.key_name,
        operation: e.operation,
        subject_type: e.subject_type,
        subject_id: e.subject_id,
        request_id: e.request_id,
        change: e.change,
    }
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListAuditQuery {
    /// Page size, 1 to 200 (default 50).
    #[param(value_type = Option<i32>, minimum = 1, maximum = 200)]
    pub limit: Option<String>,
    /// `next_cursor` of the previous page.
    pub cursor: Option<String>,
    /// Only this key's writes.
    #[param(value_type = Option<String>, format = Uuid)]
    pub key_id: Option<String>,
    /// Only this operation's entries (an operation ID, e.g. `delete_activity`).
    #[param(value_type = Option<String>, max_length = 200)]
    pub operation: Option<String>,
    /// Only writes to this kind of resource.
    #[param(value_type = Option<String>, pattern = "^(activity|run|calendar|source|subscription|api_key|project)$")]
    pub subject_type: Option<String>,
    /// Only writes to the resource with this ID.
    #[param(value_type = Option<String>, max_length = 200)]
    pub subject_id: Option<String>,
    /// Made at or after (RFC 3339).
    #[param(value_type = Option<String>, format = DateTime)]
    pub since: Option<String>,
    /// Made before (RFC 3339).
    #[param(value_type = Option<String>, format = DateTime)]
    pub until: Option<String>,
}

fn bounded(field: &str, text: Option<String>) -> ApiResult<Option<String>> {
    match text {
        Some(t) if t.chars().count() > MAX_FILTER_CHARS => Err(ApiError::bad_field(
            field,
            format!("is longer than {MAX_FILTER_CHARS} characters"),
        )),
        other => Ok(other),
    }
}

fn filter_of(query: ListAuditQuery) -> ApiResult<AuditFilter> {
    let subject_type = match query.subject_type {
        Some(t) if !SUBJECT_KINDS.contains(&t.as_str()) => {
            return Err(ApiError::bad_field(
                "subject_type",
                format!("must be one of {}", SUBJECT_KINDS.join(", ")),
            ));
        }
        other => other,
    };
    Ok(AuditFilter {
        key_id: query
            .key_id
            .as_deref()
            .map(|t| path_uuid("key_id", t))
            .transpose()?,
        operation: bounded("operation", query.operation)?,
        subject_type,
        subject_id: bounded("subject_id", query.subject_id)?,
        since: query_instant("since", query.since.as_deref())?,
        until: query_instant("until", query.until.as_deref())?,
    })
}

/// List the audit log, newest first: one entry per write the API accepted
/// (event ingestion aside), naming the key, the operation and the subject.
#[utoipa::path(
    get,
    path = "/v1/audit",
    security(("bearer" = ["admin"])),
    tag = "audit",
    params(ListAuditQuery),
    responses(
        (status = 200, description = "A page of entries", body = Page<AuditEntryResponse>),
        problems::BadParameter,
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip_all)]
pub async fn list_audit(
    State(state): State<AppState>,
    Caller(actor): Caller,
    Listing {
        query,
        limit,
        after,
    }: Listing<ListAuditQuery, AuditCursor>,
) -> ApiResult<Json<Page<AuditEntryResponse>>> {
    let filter = filter_of(query)?;
    let rows = state
        .services
        .audit
        .list(&actor.project, &filter, after, limit + 1)
        .await?;
    Ok(Json(page(
        rows,
        limit,
        AuditCursor::SCOPE,
        |e| e.seq,
        render,
    )))
}
