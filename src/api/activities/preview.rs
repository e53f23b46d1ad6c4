//! `POST /v1/schedules/preview`: a trigger's nominal times, not saved.

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::trigger_model::{TriggerBody, parse_trigger_body};
use super::trigger_schema::ScheduledTriggerBody;
use crate::api::AppState;
use crate::api::caller::Caller;
use crate::api::error::{ApiError, ApiResult};
use crate::api::extract::{ApiQuery, JsonBody};
use crate::api::problems;
use acp_domain::FieldError;
use acp_domain::calendar::{NominalTime, TimeNote};
use acp_service::preview::{MAX_COUNT, preview};

const DEFAULT_COUNT: i64 = 10;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PreviewRequest {
    /// A `cron` or `interval` trigger, as in an activity; validated the same
    /// way (errors name `trigger.cron`, `trigger.dst.repeated`, ...).
    #[schema(value_type = ScheduledTriggerBody)]
    pub trigger: TriggerBody,
    /// How many times in each list: 1 to 1000, default 10 (or the `count`
    /// query parameter).
    #[serde(default)]
    #[schema(minimum = 1, maximum = 1000)]
    pub count: Option<i64>,
    /// Also answer `count` times before and `count` times from this instant
    /// (RFC 3339).
    #[serde(default)]
    #[schema(format = DateTime)]
    pub around: Option<String>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct PreviewQuery {
    /// How many times in each list: 1 to 1000, default 10.
    #[param(minimum = 1, maximum = 1000)]
    pub count: Option<i64>,
}

/// One nominal time and what daylight saving had to do with it.
#[derive(Debug, Serialize, ToSchema)]
pub struct PreviewTime {
    pub at: DateTime<Utc>,
    /// `normal`, `dst_gap` (its wall time did not exist: shifted to the
    /// first instant after the gap) or `dst_repeat` (its wall time happened
    /// twice).
    pub note: TimeNote,
}

impl From<NominalTime> for PreviewTime {
    fn from(t: NominalTime) -> Self {
        Self {
            at: t.at,
            note: t.note,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct PreviewAround {
    pub at: DateTime<Utc>,
    /// Up to `count` times strictly before `at`, oldest first.
    pub before: Vec<PreviewTime>,
    /// Up to `count` times at or after `at`, oldest first.
    pub after: Vec<PreviewTime>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct PreviewResponse {
    /// The next `count` times after now, within `start_at`/`end_at`: what
    /// an activity with this trigger would show as `next_fire_times`.
    pub next: Vec<PreviewTime>,
    /// Present when `around` was given.
    pub around: Option<PreviewAround>,
}

fn times(list: Vec<NominalTime>) -> Vec<PreviewTime> {
    list.into_iter().map(Into::into).collect()
}

/// Preview a trigger's nominal times (with their DST notes) without saving
/// anything: the same times an activity with this trigger runs.
#[utoipa::path(
    post,
    path = "/v1/schedules/preview",
    security(("bearer" = ["read"])),
    tag = "schedules",
    request_body = PreviewRequest,
    params(PreviewQuery),
    responses(
        (status = 200, description = "The trigger's times", body = PreviewResponse),
        problems::MalformedRequest,
        problems::InvalidPreview,
    )
)]
#[tracing::instrument(skip_all)]
pub async fn preview_schedule(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiQuery(query): ApiQuery<PreviewQuery>,
    JsonBody(request): JsonBody<PreviewRequest>,
) -> ApiResult<Json<PreviewResponse>> {
    let mut errors = Vec::new();
    // The body's count wins over the query's, but each given is checked.
    for given in [request.count, query.count].into_iter().flatten() {
        if !(1..=MAX_COUNT as i64).contains(&given) {
            errors.push(FieldError::new(
                "count",
                format!("must be between 1 and {MAX_COUNT}, got {given}"),
            ));
        }
    }
    let count = request.count.or(query.count).unwrap_or(DEFAULT_COUNT);
    let around = request.around.as_deref().and_then(|text| {
        DateTime::parse_from_rfc3339(text)
            .map(|t| t.with_timezone(&Utc))
            .map_err(|_| {
                errors.push(FieldError::new(
                    "around",
                    format!("`{text}` is not an RFC 3339 timestamp"),
                ))
            })
            .ok()
    });
    let trigger = match parse_trigger_body(request.trigger) {
        Ok(trigger) => trigger,
        Err(found) => {
            errors.extend(found);
            return Err(ApiError::Validation(errors));
        }
    };
    let Some(scheduled) = trigger.as_scheduled() else {
        errors.push(FieldError::new(
            "trigger.type",
            "an event trigger has no nominal times; preview a cron or interval trigger",
        ));
        return Err(ApiError::Validation(errors));
    };
    if !errors.is_empty() {
        return Err(ApiError::Validation(errors));
    }
    let calendar = match scheduled.calendar {
        Some(rule) => Some(
            state
                .services
                .calendars
                .named_by_trigger(rule.id, &actor.project)
                .await?
                .calendar,
        ),
        None => None,
    };
    let p = preview(
        scheduled,
        calendar.as_ref(),
        Utc::now(),
        count as usize,
        around,
    );
    Ok(Json(PreviewResponse {
        next: times(p.next),
        around: p.around.map(|a| PreviewAround {
            at: a.at,
            before: times(a.before),
            after: times(a.after),
        }),
    }))
}
