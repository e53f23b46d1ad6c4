//! Pause, resume and backfill of a schedule (its live view and timeline are
//! in `schedule_view`).

use crate::api::caller::Caller;
use axum::Json;
use axum::extract::State;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::api::AppState;
use crate::api::error::{ApiError, ApiResult};
use crate::api::extract::{IdParam, JsonBody, OptionalJsonBody};
use crate::api::problems;
use acp_domain::activity::SyncState;
use acp_domain::timeline::{TimeAction, TimelineReason};
use acp_service::schedules::{PauseOutcome, TimeOutcome};

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
    /// For `skipped`: `paused`, `catchup_limit`, `compressed` (a resume),
    /// `dst_gap` / `dst_repeat` (a backfill: the trigger's `dst` policy does
    /// not run this time), or the trigger's calendar's `holiday`, `weekend`,
    /// `blackout`, `rolled` (runs on another business day instead) or
    /// `beyond_coverage` (recorded as a skipped run).
    pub reason: Option<TimelineReason>,
    /// What the trigger's business calendar did with the time, as the
    /// timeline says it (`holiday: "Christmas Day" in us-nyse v3`, `rolled
    /// from 2026-07-03T09:00 to 2026-07-06T09:00 (...)`); absent for an
    /// ordinary time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calendar: Option<String>,
}

impl From<TimeOutcome> for NominalTimeOutcome {
    fn from(o: TimeOutcome) -> Self {
        Self {
            scheduled_for: o.scheduled_for,
            workflow_id: o.workflow_id,
            action: o.action,
            reason: o.reason,
            calendar: o.calendar,
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
    /// The times the policy runs, oldest first. Under a business calendar:
    /// the policy's times the calendar runs, and the business days of the
    /// pause its times roll to.
    pub runs: Vec<NominalTimeOutcome>,
    /// The times the policy would run that the trigger's business calendar
    /// keeps from running (`skipped` with its reason and `calendar` text),
    /// recorded as skipped runs.
    pub calendar_skipped: Vec<NominalTimeOutcome>,
    /// Times in `(until, unpaused_at]` that had not run: due whatever the
    /// policy, so asked for as well (the unpaused engine may have fired them
    /// too; the contract workflow ID runs each once).
    pub in_flight: Vec<NominalTimeOutcome>,
}

impl From<acp_service::schedules::MissedTimes> for MissedTimes {
    fn from(m: acp_service::schedules::MissedTimes) -> Self {
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
            calendar_skipped: m.calendar_skipped.into_iter().map(Into::into).collect(),
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
        problems::BadRequest,
        problems::NoSuchActivity,
        problems::NotScheduled,
        problems::InvalidNote,
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip(actor, state, request))]
pub async fn pause_activity(
    State(state): State<AppState>,
    Caller(actor): Caller,
    IdParam(id): IdParam,
    OptionalJsonBody(request): OptionalJsonBody<PauseRequest>,
) -> ApiResult<Json<PauseResponse>> {
    let outcome = state
        .services
        .schedules
        .pause(id, request.note.as_deref(), &actor)
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
        problems::BadRequest,
        problems::NoSuchActivity,
        problems::NotScheduled,
        problems::InvalidNote,
        problems::PostgresOrTemporalUnavailable,
    )
)]
#[tracing::instrument(skip(actor, state, request))]
pub async fn resume_activity(
    State(state): State<AppState>,
    Caller(actor): Caller,
    IdParam(id): IdParam,
    OptionalJsonBody(request): OptionalJsonBody<ResumeRequest>,
) -> ApiResult<Json<PauseResponse>> {
    let schedules = &state.services.schedules;
    let outcome = if request.dry_run {
        schedules.resume_dry_run(id, &actor.project).await?
    } else {
        schedules
            .resume(id, request.note.as_deref(), &actor)
            .await?
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
/// (`duplicate`), those the trigger's `dst` policy does not run (`skipped`
/// with `dst_gap` or `dst_repeat`), and those its business calendar keeps
/// from running (`skipped` with the calendar's reason, recorded as skipped
/// runs; a time rolled to a business day of the range runs there).
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
    /// Set when a time of the range is past the trigger's calendar's
    /// `covered_until` under `beyond_coverage: pause`: the backfill paused
    /// the activity, as a fire there would (a dry run only says it would),
    /// and this is the pause's note. Resume it once the calendar is
    /// extended. `null` otherwise.
    pub paused: Option<String>,
}

fn parse_instant(field: &str, text: &str) -> ApiResult<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|_| {
            ApiError::invalid_field(field, format!("`{text}` is not an RFC 3339 timestamp"))
        })
}

/// Run every nominal time in `[start, end)` that has not run yet, computed
/// under the trigger's `dst` policy and business calendar (a holiday's time
/// is recorded skipped with its reason, a rolled time runs on the day it
/// rolls to), each under its contract workflow ID (at
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
        problems::BadRequest,
        problems::NoSuchActivity,
        problems::NotScheduled,
        problems::InvalidRange,
        problems::PostgresOrTemporalUnavailable,
    )
)]
#[tracing::instrument(skip(actor, state, request))]
pub async fn backfill_activity(
    State(state): State<AppState>,
    Caller(actor): Caller,
    IdParam(id): IdParam,
    JsonBody(request): JsonBody<BackfillRequest>,
) -> ApiResult<(axum::http::StatusCode, Json<BackfillResponse>)> {
    let start = parse_instant("start", &request.start)?;
    let end = parse_instant("end", &request.end)?;
    let outcome = state
        .services
        .schedules
        .backfill(id, start, end, request.dry_run, &actor)
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
            paused: outcome.paused,
        }),
    ))
}
