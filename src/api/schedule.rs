//! Pause, resume, backfill, and the live and historical views of a schedule.

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::AppState;
use super::extract::{ApiQuery, IdParam, JsonBody, OptionalJsonBody, query_instant};
use crate::domain::activity::SyncState;
use crate::domain::calendar::TimeNote;
use crate::domain::timeline::{TimeAction, TimelineReason, TimelineStatus};
use crate::error::{ApiError, ApiResult, Problem};
use crate::service::schedules::{PauseOutcome, TimeOutcome, TimelineEntry as Entry};

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PauseRequest {
    /// Shown on the Temporal schedule.
    pub note: Option<String>,
}

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ResumeRequest {
    /// Shown on the Temporal schedule.
    pub note: Option<String>,
    /// Answer what a resume now would do about the missed times, and
    /// change nothing: the activity stays paused and nothing runs.
    #[serde(default)]
    pub dry_run: bool,
}

/// What happened to one nominal time.
#[derive(Debug, Serialize, ToSchema)]
pub struct NominalTimeOutcome {
    pub scheduled_for: DateTime<Utc>,
    /// `workflow_id` the time runs (or would run) under.
    pub workflow_id: String,
    /// `backfilled` (Temporal accepted it: it will run), `pending` (recorded,
    /// but Temporal could not be reached: the reconciler hands it over when
    /// Temporal returns, and it runs then), `duplicate` (it already ran), or
    /// `skipped`.
    pub action: TimeAction,
    /// For `skipped`: `paused`, `catchup_limit`, `compressed` (a resume), or
    /// `dst_gap` / `dst_repeat` (a backfill: the trigger's `dst` policy does
    /// not run this time).
    pub reason: Option<TimelineReason>,
}

impl From<TimeOutcome> for NominalTimeOutcome {
    fn from(o: TimeOutcome) -> Self {
        Self {
            scheduled_for: o.scheduled_for,
            workflow_id: o.workflow_id,
            action: o.action,
            reason: o.reason,
        }
    }
}

/// The missed times a resume did not run: every nominal time in
/// `[first, last]` without a run of its own (the timeline lists them).
#[derive(Debug, Serialize, ToSchema)]
pub struct SkippedSpan {
    pub first: DateTime<Utc>,
    pub last: DateTime<Utc>,
    #[schema(minimum = 1)]
    pub count: u64,
    /// `paused` (policy `skip`), `catchup_limit` or `compressed`.
    pub reason: TimelineReason,
}

/// What a resume decided on every nominal time in `(from, until]`. Bounded
/// however long the pause: counts, the one span that does not run, and the
/// times that run (at most `catchup_limit`).
#[derive(Debug, Serialize, ToSchema)]
pub struct MissedTimes {
    /// Where the pause began.
    pub from: DateTime<Utc>,
    /// When the resume was asked for: the misfire policy decides up to here.
    pub until: DateTime<Utc>,
    /// When Temporal had taken the unpause: every later time is the engine's.
    /// Equal to `until` when Temporal could not be reached (the reconciler
    /// unpauses the schedule later).
    pub unpaused_at: DateTime<Utc>,
    /// Nominal times in `(from, until]` that had not run.
    pub total: u64,
    /// Of those, asked of Temporal and accepted: they run.
    pub backfilled: u64,
    /// Of those, recorded while Temporal was unreachable: they run when the
    /// reconciler hands them over.
    pub pending: u64,
    /// Of those, not run (the span says which and why).
    pub skipped: u64,
    pub skipped_span: Option<SkippedSpan>,
    /// The times the policy runs, oldest first.
    pub runs: Vec<NominalTimeOutcome>,
    /// Times in `(until, unpaused_at]` that had not run: due whatever the
    /// policy, so asked for as well (the unpaused engine may have fired them
    /// too; the contract workflow ID runs each once).
    pub in_flight: Vec<NominalTimeOutcome>,
}

impl From<crate::service::schedules::MissedTimes> for MissedTimes {
    fn from(m: crate::service::schedules::MissedTimes) -> Self {
        Self {
            from: m.from,
            until: m.until,
            unpaused_at: m.unpaused_at,
            total: m.total,
            backfilled: m.backfilled,
            pending: m.pending,
            skipped: m.skipped,
            skipped_span: m.skipped_span.map(|s| SkippedSpan {
                first: s.first,
                last: s.last,
                count: s.count,
                reason: s.reason,
            }),
            runs: m.runs.into_iter().map(Into::into).collect(),
            in_flight: m.in_flight.into_iter().map(Into::into).collect(),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct PauseResponse {
    pub activity_id: uuid::Uuid,
    pub paused: bool,
    pub note: Option<String>,
    /// For a resume of a paused schedule: what became of the nominal times
    /// missed while paused; `null` for a pause.
    pub missed: Option<MissedTimes>,
    pub sync_state: SyncState,
    /// `true` for a resume's dry run: nothing changed, and `missed` says
    /// what a resume now would do (`null` when the activity is not paused).
    pub dry_run: bool,
}

impl From<PauseOutcome> for PauseResponse {
    fn from(o: PauseOutcome) -> Self {
        Self {
            activity_id: o.activity.id,
            paused: o.activity.paused,
            note: o.activity.pause_note,
            missed: o.missed.map(Into::into),
            sync_state: o.sync.state,
            dry_run: o.dry_run,
        }
    }
}

/// Pause the activity's schedule. Fires while paused are dropped by Temporal;
/// `resume` decides what to do about them.
#[utoipa::path(
    post,
    path = "/v1/activities/{id}/pause",
    security(("bearer" = ["write"])),
    tag = "schedules",
    request_body(content = Option<PauseRequest>, description = "Optional; an empty body is no note"),
    params(("id" = uuid::Uuid, Path, description = "Activity ID")),
    responses(
        (status = 200, description = "Paused", body = PauseResponse),
        (status = 400, description = "Bad request", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such activity", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "Not a scheduled activity", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid note", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "PostgreSQL unavailable", body = Problem, content_type = "application/problem+json"),
    )
)]
#[tracing::instrument(skip(state, request))]
pub async fn pause_activity(
    State(state): State<AppState>,
    IdParam(id): IdParam,
    OptionalJsonBody(request): OptionalJsonBody<PauseRequest>,
) -> ApiResult<Json<PauseResponse>> {
    let outcome = state
        .services
        .schedules
        .pause(id, request.note.as_deref())
        .await?;
    Ok(Json(outcome.into()))
}

/// Resume the schedule and apply the misfire policy to every nominal time
/// missed while paused, however many: `skip` runs none, `catchup` backfills
/// the most recent `catchup_limit`, `compress` runs one for the latest with a
/// window reaching back to where the last covered window ended. The answer
/// is bounded (counts, the skipped span, the times that run); the timeline
/// lists every time. With `dry_run`, the answer is what a resume now would
/// decide, and nothing changes.
#[utoipa::path(
    post,
    path = "/v1/activities/{id}/resume",
    security(("bearer" = ["write"])),
    tag = "schedules",
    request_body(content = Option<ResumeRequest>, description = "Optional; an empty body is no note and no dry run"),
    params(("id" = uuid::Uuid, Path, description = "Activity ID")),
    responses(
        (status = 200, description = "Resumed, or the dry run's answer", body = PauseResponse),
        (status = 400, description = "Bad request", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such activity", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "Not a scheduled activity", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid note", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "PostgreSQL or Temporal unavailable", body = Problem, content_type = "application/problem+json"),
    )
)]
#[tracing::instrument(skip(state, request))]
pub async fn resume_activity(
    State(state): State<AppState>,
    IdParam(id): IdParam,
    OptionalJsonBody(request): OptionalJsonBody<ResumeRequest>,
) -> ApiResult<Json<PauseResponse>> {
    let schedules = &state.services.schedules;
    let outcome = if request.dry_run {
        schedules.resume_dry_run(id).await?
    } else {
        schedules.resume(id, request.note.as_deref()).await?
    };
    Ok(Json(outcome.into()))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BackfillRequest {
    /// First nominal time to consider (inclusive, RFC 3339).
    #[schema(format = DateTime)]
    pub start: String,
    /// End of the range (exclusive, RFC 3339).
    #[schema(format = DateTime)]
    pub end: String,
    /// Answer what the backfill would do, and run nothing.
    #[serde(default)]
    pub dry_run: bool,
}

/// Every nominal time of the range (or of its first part, see
/// `next_start`), oldest first: the times that run (`backfilled`, or
/// `pending` while Temporal is unreachable), those that already ran
/// (`duplicate`), and those the trigger's `dst` policy does not run
/// (`skipped` with `dst_gap` or `dst_repeat`).
#[derive(Debug, Serialize, ToSchema)]
pub struct BackfillResponse {
    pub times: Vec<NominalTimeOutcome>,
    /// `null` when the whole range was decided. Otherwise the range holds
    /// more than 1000 of the trigger's nominal times: this answer covers
    /// `[start, next_start)` and nothing later was run; a backfill from
    /// `next_start` to the same `end` continues it.
    pub next_start: Option<DateTime<Utc>>,
    /// `true`: nothing was run; `backfilled` says what would run.
    pub dry_run: bool,
}

fn parse_instant(field: &str, text: &str) -> ApiResult<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|_| {
            ApiError::invalid_field(field, format!("`{text}` is not an RFC 3339 timestamp"))
        })
}

/// Run every nominal time in `[start, end)` that has not run yet, computed
/// under the trigger's `dst` policy, each under its contract workflow ID (at
/// most 1000 per call: a longer range is cut and `next_start` says where to
/// continue). With `dry_run`, only answer what would run and why each other
/// time would not.
#[utoipa::path(
    post,
    path = "/v1/activities/{id}/backfill",
    security(("bearer" = ["write"])),
    tag = "schedules",
    request_body = BackfillRequest,
    params(("id" = uuid::Uuid, Path, description = "Activity ID")),
    responses(
        (status = 200, description = "Dry run: what a backfill would do; nothing ran", body = BackfillResponse),
        (status = 202, description = "Backfill requested", body = BackfillResponse),
        (status = 400, description = "Bad request", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such activity", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "Not a scheduled activity", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Invalid range", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "PostgreSQL or Temporal unavailable", body = Problem, content_type = "application/problem+json"),
    )
)]
#[tracing::instrument(skip(state, request))]
pub async fn backfill_activity(
    State(state): State<AppState>,
    IdParam(id): IdParam,
    JsonBody(request): JsonBody<BackfillRequest>,
) -> ApiResult<(axum::http::StatusCode, Json<BackfillResponse>)> {
    let start = parse_instant("start", &request.start)?;
    let end = parse_instant("end", &request.end)?;
    let outcome = state
        .services
        .schedules
        .backfill(id, start, end, request.dry_run)
        .await?;
    let status = if outcome.dry_run {
        axum::http::StatusCode::OK
    } else {
        axum::http::StatusCode::ACCEPTED
    };
    Ok((
        status,
        Json(BackfillResponse {
            times: outcome.times.into_iter().map(Into::into).collect(),
            next_start: outcome.next_start,
            dry_run: outcome.dry_run,
        }),
    ))
}

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
        (status = 400, description = "Bad ID", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such activity or schedule", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "PostgreSQL or Temporal unavailable", body = Problem, content_type = "application/problem+json"),
    )
)]
#[tracing::instrument(skip(state))]
pub async fn get_schedule(
    State(state): State<AppState>,
    IdParam(id): IdParam,
) -> ApiResult<Json<ScheduleResponse>> {
    let view = state.services.schedules.view(id).await?;
    Ok(Json(ScheduleResponse {
        schedule_id: crate::domain::ids::schedule_id(id),
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
    /// run with skip_reason `dst_policy`).
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
        (status = 400, description = "Bad parameter", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such activity", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "Not a scheduled activity", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Empty range, or more than 1000 nominal times", body = Problem, content_type = "application/problem+json"),
        (status = 503, description = "PostgreSQL unavailable", body = Problem, content_type = "application/problem+json"),
    )
)]
#[tracing::instrument(skip(state, query))]
pub async fn get_timeline(
    State(state): State<AppState>,
    IdParam(id): IdParam,
    ApiQuery(query): ApiQuery<TimelineQuery>,
) -> ApiResult<Json<TimelineResponse>> {
    let from = query_instant("from", query.from.as_deref())?
        .ok_or_else(|| ApiError::bad_field("from", "is required"))?;
    let to = query_instant("to", query.to.as_deref())?
        .ok_or_else(|| ApiError::bad_field("to", "is required"))?;
    let items = state.services.schedules.timeline(id, from, to).await?;
    Ok(Json(TimelineResponse {
        items: items.into_iter().map(Into::into).collect(),
    }))
}
