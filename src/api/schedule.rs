//! Pause, resume, backfill, and the live and historical views of a schedule.

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::AppState;
use super::extract::{ApiQuery, IdParam, JsonBody, OptionalJsonBody};
use crate::domain::activity::Activity;
use crate::domain::ids;
use crate::domain::misfire::SkipReason;
use crate::domain::run::RunTrigger;
use crate::domain::trigger::{Cadence, MisfirePolicy, ScheduledTrigger};
use crate::domain::window::nominal_times_between;
use crate::error::{ApiError, ApiResult, Problem};
use crate::reconcile::sync_activity;
use crate::store::StoreError;
use crate::temporal::GatewayError;

const MAX_TIMES: usize = 1000;

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PauseRequest {
    /// Shown on the Temporal schedule.
    pub note: Option<String>,
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
    pub action: String,
    /// For `skipped`: `paused`, `catchup_limit` or `compressed`.
    pub reason: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct PauseResponse {
    pub activity_id: uuid::Uuid,
    pub paused: bool,
    pub note: Option<String>,
    /// For a resume: every nominal time missed while paused, and what the
    /// misfire policy did with it.
    pub missed: Vec<NominalTimeOutcome>,
    pub sync_state: String,
}

fn not_found(err: StoreError) -> ApiError {
    match err {
        StoreError::NotFound => ApiError::NotFound("activity"),
        other => other.into(),
    }
}

fn scheduled(activity: &Activity) -> ApiResult<&ScheduledTrigger> {
    activity
        .definition
        .trigger
        .as_scheduled()
        .ok_or_else(|| ApiError::Conflict("event-triggered activities have no schedule".into()))
}

fn kind(trigger: &ScheduledTrigger) -> RunTrigger {
    match trigger.cadence {
        Cadence::Cron { .. } => RunTrigger::Cron,
        Cadence::Interval { .. } => RunTrigger::Interval,
    }
}

fn temporal_error(err: GatewayError) -> ApiError {
    match err {
        GatewayError::Rejected(m) => ApiError::Conflict(format!("Temporal refused: {m}")),
        _ => ApiError::Unavailable("Temporal".into()),
    }
}

/// Records `times` as requested and asks Temporal to backfill them. `true`
/// when Temporal accepted; `false` when it could not be reached: the request
/// stays recorded and the reconciler dispatches it when Temporal returns.
async fn request_backfill(
    state: &AppState,
    id: uuid::Uuid,
    times: &[DateTime<Utc>],
) -> ApiResult<bool> {
    state.runs.request_times(id, times).await?;
    match state.gateway.backfill(&ids::schedule_id(id), times).await {
        Ok(()) => {
            state.runs.mark_dispatched(id, times).await?;
            Ok(true)
        }
        Err(GatewayError::Rejected(m)) => Err(ApiError::Conflict(format!("Temporal refused: {m}"))),
        Err(err) => {
            tracing::warn!(error = %err, "backfill recorded; Temporal unreachable, the reconciler will dispatch it");
            Ok(false)
        }
    }
}

fn check_note(note: &Option<String>) -> ApiResult<()> {
    if note.as_ref().is_some_and(|n| n.chars().count() > 500) {
        return Err(ApiError::invalid_field(
            "note",
            "must be at most 500 characters",
        ));
    }
    Ok(())
}

/// Pauses or resumes a scheduled activity and brings its schedule along.
/// Returns the activity, since when it had been paused (for a resume), and
/// the sync outcome.
async fn set_paused(
    state: &AppState,
    id: uuid::Uuid,
    paused: bool,
    request: PauseRequest,
) -> ApiResult<(
    Activity,
    Option<DateTime<Utc>>,
    crate::reconcile::SyncOutcome,
)> {
    check_note(&request.note)?;
    let current = state.store.get(id).await.map_err(not_found)?;
    scheduled(&current)?;
    let (activity, paused_since) = state
        .store
        .set_paused(id, paused, request.note.as_deref())
        .await
        .map_err(not_found)?;
    let outcome = sync_activity(&state.store, &state.gateway, &state.task_queue, &activity).await?;
    Ok((activity, paused_since, outcome))
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
    let (activity, _, outcome) = set_paused(&state, id, true, request).await?;
    Ok(Json(PauseResponse {
        activity_id: id,
        paused: true,
        note: activity.pause_note,
        missed: vec![],
        sync_state: outcome.state.as_str().to_owned(),
    }))
}

/// Resume the schedule and apply the misfire policy to the nominal times
/// missed while paused: `skip` runs none, `catchup` backfills the most
/// recent `catchup_limit`, `compress` runs one for the latest with a window
/// widened over the whole pause.
#[utoipa::path(
    post,
    path = "/v1/activities/{id}/resume",
    security(("bearer" = ["write"])),
    tag = "schedules",
    request_body(content = Option<PauseRequest>, description = "Optional; an empty body is no note"),
    params(("id" = uuid::Uuid, Path, description = "Activity ID")),
    responses(
        (status = 200, description = "Resumed", body = PauseResponse),
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
    OptionalJsonBody(request): OptionalJsonBody<PauseRequest>,
) -> ApiResult<Json<PauseResponse>> {
    // The instant before the schedule is unpaused: a time after it may be
    // fired by Temporal itself, so it is not one this resume has to account for.
    let now = Utc::now();
    let (activity, paused_since, outcome) = set_paused(&state, id, false, request).await?;
    let trigger = scheduled(&activity)?;
    let mut missed = Vec::new();
    if let Some(since) = paused_since {
        let schedule_id = ids::schedule_id(id);
        // The schedule's own matching times; our own computation if Temporal
        // cannot say (it is the same spec).
        let times = match state.gateway.matching_times(&schedule_id, since, now).await {
            Ok(times) => times,
            Err(_) => nominal_times_between(&trigger.cadence, since, now, 100_000),
        };
        // A time fired in the moment before the pause took effect has run:
        // it was not missed.
        let ran: std::collections::HashSet<DateTime<Utc>> = state
            .runs
            .scheduled_between(id, since, now + chrono::Duration::seconds(1))
            .await?
            .into_iter()
            .filter(|r| r.status != "skipped")
            .filter_map(|r| r.scheduled_for)
            .collect();
        let times: Vec<DateTime<Utc>> = times
            .into_iter()
            .filter(|t| *t > since && *t <= now && !ran.contains(t))
            .collect();
        let run_count = match trigger.misfire_policy {
            MisfirePolicy::Skip => 0,
            MisfirePolicy::Catchup => trigger.catchup_limit.get() as usize,
            MisfirePolicy::Compress => 1,
        };
        let split = times.len().saturating_sub(run_count);
        let (dropped, to_run) = times.split_at(split);
        let reason = match trigger.misfire_policy {
            MisfirePolicy::Skip => None,
            MisfirePolicy::Catchup => Some(SkipReason::CatchupLimit),
            MisfirePolicy::Compress => Some(SkipReason::Compressed),
        };
        for t in dropped {
            let workflow_id = ids::scheduled_run_workflow_id(id, *t);
            if let Some(reason) = reason {
                state
                    .runs
                    .insert_skipped(
                        ids::run_id(&workflow_id),
                        id,
                        &workflow_id,
                        kind(trigger),
                        *t,
                        reason.as_str(),
                        activity.version,
                    )
                    .await?;
            }
            missed.push(NominalTimeOutcome {
                scheduled_for: *t,
                workflow_id,
                action: "skipped".into(),
                reason: Some(reason.map(|r| r.as_str()).unwrap_or("paused").to_owned()),
            });
        }
        let dispatched = to_run.is_empty() || request_backfill(&state, id, to_run).await?;
        for t in to_run {
            missed.push(NominalTimeOutcome {
                scheduled_for: *t,
                workflow_id: ids::scheduled_run_workflow_id(id, *t),
                action: if dispatched { "backfilled" } else { "pending" }.into(),
                reason: None,
            });
        }
    }
    Ok(Json(PauseResponse {
        activity_id: id,
        paused: false,
        note: activity.pause_note,
        missed,
        sync_state: outcome.state.as_str().to_owned(),
    }))
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
}

#[derive(Debug, Serialize, ToSchema)]
pub struct BackfillResponse {
    pub times: Vec<NominalTimeOutcome>,
}

fn parse_instant(field: &str, text: &str) -> ApiResult<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|_| {
            ApiError::invalid_field(field, format!("`{text}` is not an RFC 3339 timestamp"))
        })
}

/// The nominal times of a trigger in `[start, end)`, at most `cap`.
fn times_in(
    trigger: &ScheduledTrigger,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
    cap: usize,
) -> Vec<DateTime<Utc>> {
    let tick = chrono::Duration::nanoseconds(1);
    nominal_times_between(&trigger.cadence, start - tick, end - tick, cap)
}

/// Run every nominal time in `[start, end)` that has not run yet (at most 1000).
#[utoipa::path(
    post,
    path = "/v1/activities/{id}/backfill",
    security(("bearer" = ["write"])),
    tag = "schedules",
    request_body = BackfillRequest,
    params(("id" = uuid::Uuid, Path, description = "Activity ID")),
    responses(
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
    if end <= start {
        return Err(ApiError::invalid_field("end", "must be after start"));
    }
    let activity = state.store.get(id).await.map_err(not_found)?;
    let trigger = scheduled(&activity)?;
    let times = times_in(trigger, start, end, MAX_TIMES + 1);
    if times.len() > MAX_TIMES {
        return Err(ApiError::invalid_field(
            "end",
            format!("the range holds more than {MAX_TIMES} nominal times"),
        ));
    }
    let ran: std::collections::HashSet<DateTime<Utc>> = state
        .runs
        .scheduled_between(id, start, end)
        .await?
        .into_iter()
        .filter(|r| r.status != "skipped")
        .filter_map(|r| r.scheduled_for)
        .collect();
    let (done, todo): (Vec<DateTime<Utc>>, Vec<DateTime<Utc>>) =
        times.iter().partition(|t| ran.contains(t));
    let dispatched = todo.is_empty() || request_backfill(&state, id, &todo).await?;
    let outcome = |t: &DateTime<Utc>, action: &str| NominalTimeOutcome {
        scheduled_for: *t,
        workflow_id: ids::scheduled_run_workflow_id(id, *t),
        action: action.into(),
        reason: None,
    };
    let mut outcomes: Vec<NominalTimeOutcome> =
        done.iter().map(|t| outcome(t, "duplicate")).collect();
    let action = if dispatched { "backfilled" } else { "pending" };
    outcomes.extend(todo.iter().map(|t| outcome(t, action)));
    outcomes.sort_by_key(|o| o.scheduled_for);
    Ok((
        axum::http::StatusCode::ACCEPTED,
        Json(BackfillResponse { times: outcomes }),
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
    state.store.get(id).await.map_err(not_found)?;
    let schedule_id = ids::schedule_id(id);
    let view = state
        .gateway
        .describe(&schedule_id)
        .await
        .map_err(temporal_error)?
        .ok_or(ApiError::NotFound("schedule"))?;
    Ok(Json(ScheduleResponse {
        schedule_id,
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
    pub status: String,
    /// Why there is no execution: `misfire`, `catchup_limit`, `compressed`
    /// (recorded skips), `paused`, `before_start`, `not_yet_fired`,
    /// `temporal_unavailable` (Temporal could not be reached then, and never
    /// fired the time: it fell outside the catch-up window by the time
    /// Temporal came back), or `overlap_skipped` (Temporal dropped the fire:
    /// a run was still going, or the worker was down past the catch-up window).
    pub reason: Option<String>,
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
        (status = 503, description = "PostgreSQL unavailable", body = Problem, content_type = "application/problem+json"),
    )
)]
#[tracing::instrument(skip(state, query))]
pub async fn get_timeline(
    State(state): State<AppState>,
    IdParam(id): IdParam,
    ApiQuery(query): ApiQuery<TimelineQuery>,
) -> ApiResult<Json<TimelineResponse>> {
    let bad = |field: &str, m: String| ApiError::bad_field(field, m);
    let from = query
        .from
        .as_deref()
        .ok_or_else(|| bad("from", "is required".into()))?;
    let to = query
        .to
        .as_deref()
        .ok_or_else(|| bad("to", "is required".into()))?;
    let from = DateTime::parse_from_rfc3339(from)
        .map_err(|_| bad("from", format!("`{from}` is not an RFC 3339 timestamp")))?
        .with_timezone(&Utc);
    let to = DateTime::parse_from_rfc3339(to)
        .map_err(|_| bad("to", format!("`{to}` is not an RFC 3339 timestamp")))?
        .with_timezone(&Utc);
    if to <= from {
        return Err(bad("to", "must be after from".into()));
    }
    let activity = state
        .store
        .get_any(id)
        .await?
        .ok_or(ApiError::NotFound("activity"))?;
    let trigger = scheduled(&activity)?;
    let times = times_in(trigger, from, to, MAX_TIMES + 1);
    if times.len() > MAX_TIMES {
        return Err(bad(
            "to",
            format!("the range holds more than {MAX_TIMES} nominal times"),
        ));
    }
    let runs: std::collections::HashMap<DateTime<Utc>, crate::domain::run::Run> = state
        .runs
        .scheduled_between(id, from, to)
        .await?
        .into_iter()
        .filter_map(|r| r.scheduled_for.map(|t| (t, r)))
        .collect();
    let pauses = state.store.pauses(id).await?;
    let outages = state.store.temporal_outages(from, to).await?;
    let now = Utc::now();
    let items = times
        .into_iter()
        .map(|t| {
            let workflow_id = ids::scheduled_run_workflow_id(id, t);
            if let Some(run) = runs.get(&t) {
                return TimelineEntry {
                    scheduled_for: t,
                    workflow_id,
                    run_id: Some(run.run_id),
                    status: run.status.clone(),
                    reason: run.skip_reason.clone(),
                };
            }
            let reason = if t < activity.created_at || trigger.start_at.is_some_and(|s| t < s) {
                "before_start"
            } else if pauses
                .iter()
                .any(|(p, r)| *p <= t && r.is_none_or(|r| t < r))
            {
                "paused"
            } else if t > now - chrono::Duration::seconds(5) {
                // In the future, or fired a moment ago and not recorded yet.
                "not_yet_fired"
            } else if outages.iter().any(|(start, end)| *start <= t && t < *end) {
                // Temporal was unreachable and never fired it (the time fell
                // outside the catch-up window by the time it came back).
                "temporal_unavailable"
            } else if !activity.definition.enabled && t >= activity.updated_at {
                // Disabled since its last change: the schedule is paused.
                "paused"
            } else {
                "overlap_skipped"
            };
            TimelineEntry {
                scheduled_for: t,
                workflow_id,
                run_id: None,
                status: "none".into(),
                reason: Some(reason.into()),
            }
        })
        .collect();
    Ok(Json(TimelineResponse { items }))
}
