//! `/v1/alerts`: broken expectations of activities, open and resolved.

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::api::AppState;
use crate::api::caller::Caller;
use crate::api::error::{ApiError, ApiResult};
use crate::api::extract::{IdParam, path_uuid, query_instant};
use crate::api::pagination::{Cursor, Listing, Page, page};
use crate::api::problems;
use acp_domain::alert::{Alert, AlertKind};
use acp_domain::query::AlertFilter;

/// Alerts' cursor: the last alert's opening time and ID.
pub struct AlertCursor;

impl Cursor for AlertCursor {
    const SCOPE: &'static str = "alerts";
    type Key = (DateTime<Utc>, Uuid);
}

/// One incident of one broken expectation: opened when it broke, resolved
/// when it held again.
#[derive(Debug, Serialize, ToSchema)]
pub struct AlertResponse {
    pub id: Uuid,
    pub activity_id: Uuid,
    pub kind: AlertKind,
    /// `open` or `resolved`.
    #[schema(example = "open")]
    pub state: String,
    pub summary: String,
    /// The facts of the breach (nominal time, runs, events), as last seen.
    #[schema(value_type = Object)]
    pub detail: serde_json::Value,
    pub opened_at: DateTime<Utc>,
    /// The last evaluation that found it still broken.
    pub last_seen_at: DateTime<Utc>,
    pub resolved_at: Option<DateTime<Utc>>,
}

pub fn render(a: Alert) -> AlertResponse {
    AlertResponse {
        id: a.id,
        activity_id: a.activity_id,
        kind: a.kind,
        state: if a.resolved_at.is_some() {
            "resolved"
        } else {
            "open"
        }
        .into(),
        summary: a.summary,
        detail: a.detail,
        opened_at: a.opened_at,
        last_seen_at: a.last_seen_at,
        resolved_at: a.resolved_at,
    }
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListAlertsQuery {
    /// Page size, 1 to 200 (default 50).
    #[param(value_type = Option<i32>, minimum = 1, maximum = 200)]
    pub limit: Option<String>,
    /// `next_cursor` of the previous page.
    pub cursor: Option<String>,
    /// Only this activity's alerts.
    #[param(value_type = Option<String>, format = Uuid)]
    pub activity_id: Option<String>,
    #[param(value_type = Option<AlertKind>)]
    pub kind: Option<String>,
    /// `open` or `resolved`.
    #[param(value_type = Option<String>, pattern = "^(open|resolved)$")]
    pub state: Option<String>,
    /// Opened at or after (RFC 3339).
    #[param(value_type = Option<String>, format = DateTime)]
    pub opened_after: Option<String>,
    /// Opened before (RFC 3339).
    #[param(value_type = Option<String>, format = DateTime)]
    pub opened_before: Option<String>,
}

/// List alerts, newest first.
#[utoipa::path(
    get,
    path = "/v1/alerts",
    security(("bearer" = ["read"])),
    tag = "alerts",
    params(ListAlertsQuery),
    responses(
        (status = 200, description = "A page of alerts", body = Page<AlertResponse>),
        problems::BadParameter,
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip_all)]
pub async fn list_alerts(
    State(state): State<AppState>,
    Caller(actor): Caller,
    Listing {
        query,
        limit,
        after,
    }: Listing<ListAlertsQuery, AlertCursor>,
) -> ApiResult<Json<Page<AlertResponse>>> {
    let filter = AlertFilter {
        activity_id: query
            .activity_id
            .as_deref()
            .map(|t| path_uuid("activity_id", t))
            .transpose()?,
        kind: query
            .kind
            .as_deref()
            .map(|k| AlertKind::parse(k).map_err(|m| ApiError::bad_field("kind", m)))
            .transpose()?,
        open: match query.state.as_deref() {
            None => None,
            Some("open") => Some(true),
            Some("resolved") => Some(false),
            Some(_) => return Err(ApiError::bad_field("state", "must be `open` or `resolved`")),
        },
        opened_from: query_instant("opened_after", query.opened_after.as_deref())?,
        opened_to: query_instant("opened_before", query.opened_before.as_deref())?,
    };
    let rows = state
        .services
        .alerts
        .list(&actor.project, &filter, after, limit + 1)
        .await?;
    Ok(Json(page(
        rows,
        limit,
        AlertCursor::SCOPE,
        |a| (a.opened_at, a.id),
        render,
    )))
}

/// One alert.
#[utoipa::path(
    get,
    path = "/v1/alerts/{id}",
    security(("bearer" = ["read"])),
    tag = "alerts",
    params(("id" = Uuid, Path, description = "Alert ID")),
    responses(
        (status = 200, description = "The alert", body = AlertResponse),
        problems::BadId,
        problems::NoSuchAlert,
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip(actor, state))]
pub async fn get_alert(
    State(state): State<AppState>,
    Caller(actor): Caller,
    IdParam(id): IdParam,
) -> ApiResult<Json<AlertResponse>> {
    Ok(Json(render(
        state.services.alerts.get(id, &actor.project).await?,
    )))
}
