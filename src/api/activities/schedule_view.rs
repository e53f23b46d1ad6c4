//! `/v1/activities/{id}/schedule` and `/v1/activities/{id}/timeline`: the
//! schedule as Temporal holds it now, and every nominal time of a window with
//! its run, or why there is none.

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::api::AppState;
use crate::api::caller::Caller;
use crate::api::error::{ApiError, ApiResult};
use crate::api::extract::{ApiQuery, IdParam, query_instant};
use crate::api::problems;
use acp_domain::calendar::TimeNote;
use acp_domain::timeline::{TimelineReason, TimelineStatus};
use acp_service::schedules::TimelineEntry as Entry;

#[derive(Debug, Serialize, ToSchema)]
pub struct ScheduleActionResponse {
    pub scheduled_time: Option<DateTime<Utc>>,
    pub actual_time: Option<DateTime<Utc>>,
    /// The launcher workflow the action started.
    pub workflow_id: Option<String>,
}

/// The live Temporal view of the schedule.
#[derive(Debug, Serialize, ToSchema)]
pub struct ScheduleResponse {
    pub schedule_id: String,
    pub paused: bool,
    pub note: Option<String>,
    pub next_fire_times: Vec<DateTime<Utc>>,
    pub recent_actions: Vec<ScheduleActionResponse>,
    pub running_workflow_ids: Vec<String>,
    pub action_count: i64,
    /// Fires dropped because a run was still going (overlap policy `Skip`).
    pub overlap_skipped: i64,
    /// Fires the Temporal service itself missed beyond the catch-up window.
    pub missed_catchup_window: i64,
    /// Fires dropped because the buffer was full.
    pub buffer_dropped: i64,
}

/// The schedule as Temporal holds it now.
#[utoipa::path(
    get,
    path = "/v1/activities/{id}/schedule",
    security(("bearer" = ["read"])),
    tag = "schedules",
    params(("id" = uuid::Uuid, Path, description = "Activity ID")),
    responses(
        (status = 200, description = "The schedule", body = ScheduleResponse),
        problems::BadId,
        problems::NoSuchActivityOrSchedule,
        problems::PostgresOrTemporalUnavailable,
    )
)]
#[tracing::instrument(skip(state, actor))]
pub async fn get_schedule(
    State(state): State<AppState>,
    Caller(actor): Caller,
    IdParam(id): IdParam,
) -> ApiResult<Json<ScheduleResponse>> {
    let view = state.services.schedules.view(id, &actor.project).await?;
    Ok(Json(ScheduleResponse {
        schedule_id: acp_domain::ids::schedule_id(id),
        paused: view.paused,
        note: view.note,
        next_fire_times: view.future_action_times,
        recent_actions: view
            .recent_actions
            .into_iter()
            .map(|a| ScheduleActionResponse {
                scheduled_time: a.scheduled_time,
                actual_time: a.actual_time,
                workflow_id: a.workflow_id,
            })
            .collect(),
        running_workflow_ids: view.running_workflow_ids,
        action_count: view.action_count,
        overlap_skipped: view.overlap_skipped,
        missed_catchup_window: view.missed_catchup_window,
        buffer_dropped: view.buffer_dropped,
    }))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct TimelineQuery {
    /// Start of the range (inclusive, RFC 3339).
    #[param(required = true, value_type = String, format = DateTime)]
    pub from: Option<String>,
    /// End of the range (exclusive, RFC 3339).
    #[param(required = true, value_type = String, format = DateTime)]
    pub to: Option<String>,
}

/// One nominal time and what became of it.
#[derive(Debug, Serialize, ToSchema)]
pub struct TimelineEntry {
    pub scheduled_for: DateTime<Utc>,
    pub workflow_id: String,
    /// The run, when there is one (including `skipped` runs).
    pub run_id: Option<uuid::Uuid>,
    /// The run's status, or `none`.
    pub status: TimelineStatus,
    /// Why there is no execution: `misfire`, `catchup_limit`, `compressed`
    /// (recorded skips), `paused`, `before_start`, `not_yet_fired`,
    /// `temporal_unavailable` (Temporal could not be reached then, and never
    /// fired the time: it fell outside the catch-up window by the time
    /// Temporal came back), `overlap_skipped` (Temporal dropped the fire:
    /// a run was still going, or the worker was down past the catch-up window),
    /// or the trigger's `dst` policy does not run it: `dst_gap` (the instant
    /// after a gap for a wall time that did not exist, under `skipped: skip`,
    /// or a time the engine fired there that the policy does not want) and
    /// `dst_repeat` (the occurrence of a repeated wall time that `repeated:
    /// first` or `last` does not run; a fire of it is recorded as a skipped
    /// run with skip_reason `dst_policy`), or the trigger's calendar does
    /// not run it here: `holiday`, `weekend`, `blackout`, `rolled` (it runs
    /// on another business day instead) or `beyond_coverage` (`calendar`
    /// says which holiday, blackout or roll).
    pub reason: Option<TimelineReason>,
    /// How many attempts the run has had: 1, or more once retried (its
    /// `status` is the latest attempt's, so the time's final outcome).
    /// Absent without an executed run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attempts: Option<i32>,
    /// What the time has to do with daylight saving, for a cron trigger's
    /// times near an offset change: `dst_gap` (its wall time did not exist:
    /// shifted to the first instant after the gap, or declined there) or
    /// `dst_repeat` (its wall time happened twice). Absent for ordinary times.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dst: Option<TimeNote>,
    /// What the trigger's business calendar did with the time, e.g.
    /// `holiday: "Independence Day" in us-nyse v3` or `rolled from
    /// 2026-07-03T09:00 to 2026-07-06T09:00 (...)` (wall times in the
    /// calendar's zone), on the time rolled from and the time rolled to.
    /// Absent where the calendar changed nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calendar: Option<String>,
}

impl From<Entry> for TimelineEntry {
    fn from(e: Entry) -> Self {
        Self {
            scheduled_for: e.scheduled_for,
            workflow_id: e.workflow_id,
            run_id: e.run_id,
            status: e.status,
            reason: e.reason,
            attempts: e.attempts,
            dst: e.dst,
            calendar: e.calendar,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TimelineResponse {
    pub items: Vec<TimelineEntry>,
}

/// Every nominal time in `[from, to)` with its run, or why there is none.
#[utoipa::path(
    get,
    path = "/v1/activities/{id}/timeline",
    security(("bearer" = ["read"])),
    tag = "schedules",
    params(("id" = uuid::Uuid, Path, description = "Activity ID"), TimelineQuery),
    responses(
        (status = 200, description = "The timeline", body = TimelineResponse),
        problems::BadParameter,
        problems::NoSuchActivity,
        problems::NotScheduled,
        problems::InvalidTimelineRange,
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip(state, actor, query))]
pub async fn get_timeline(
    State(state): State<AppState>,
    Caller(actor): Caller,
    IdParam(id): IdParam,
    ApiQuery(query): ApiQuery<TimelineQuery>,
) -> ApiResult<Json<TimelineResponse>> {
    let from = query_instant("from", query.from.as_deref())?
        .ok_or_else(|| ApiError::bad_field("from", "is required"))?;
    let to = query_instant("to", query.to.as_deref())?
        .ok_or_else(|| ApiError::bad_field("to", "is required"))?;
    let items = state
        .services
        .schedules
        .timeline(id, &actor.project, from, to)
        .await?;
    Ok(Json(TimelineResponse {
        items: items.into_iter().map(Into::into).collect(),
    }))
}
