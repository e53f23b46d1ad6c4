//! `POST /v1/calendars:import` (a calendar from an iCalendar file) and
//! `GET /v1/calendars/{id}/days` (each date's status).

use crate::api::caller::Caller;
use axum::Json;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::http::header::CONTENT_TYPE;
use axum::response::Response;
use serde::Deserialize;
use utoipa::IntoParams;

use super::handlers::respond_with;
use super::model::{CalendarDays, ImportResponse, ImportWarning, render, render_day};
use crate::api::AppState;
use crate::api::error::{ApiError, ApiResult};
use crate::api::extract::{ApiQuery, IdParam, etag, read_body};
use crate::api::problems;
use acp_domain::business_calendar::{ImportOptions, parse_date};

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ImportQuery {
    /// The calendar's name (default: the file's `X-WR-CALNAME`).
    #[param(min_length = 1, max_length = 200)]
    pub name: Option<String>,
    /// IANA time zone (default: the file's `X-WR-TIMEZONE`, else `UTC`).
    pub timezone: Option<String>,
    /// Comma-separated days of the week that are not business days, 0 =
    /// Sunday to 6 = Saturday (default `0,6`).
    #[param(pattern = "^[0-6](,[0-6]){0,5}$")]
    pub weekend_days: Option<String>,
    /// The last date the calendar is known to be right (default: the 31st
    /// of December of the year of the file's latest event). Later dates are
    /// left out, with a warning.
    #[param(pattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$")]
    pub covered_until: Option<String>,
}

fn weekend_days(text: &str) -> ApiResult<Vec<i64>> {
    text.split(',')
        .map(|d| {
            d.trim().parse::<i64>().map_err(|_| {
                ApiError::bad_field(
                    "weekend_days",
                    format!(
                        "`{text}` is not a comma-separated list of days 0 (Sunday) to 6 (Saturday)"
                    ),
                )
            })
        })
        .collect()
}

/// Create a calendar from an iCalendar (RFC 5545) file of holidays.
///
/// Each all-day `VEVENT` (`DTSTART;VALUE=DATE`) is a holiday named by its
/// `SUMMARY`, one per date up to `DTEND` (exclusive) or `DURATION`; a plain
/// yearly `RRULE` repeats it through `UNTIL`, `COUNT` or `covered_until`.
/// What would make the holidays wrong if ignored (an event with a time of
/// day, another recurrence rule, `RDATE`, no `SUMMARY`) is refused, the
/// problem naming the line; what can be left out (other components,
/// cancelled events, a date listed twice, dates after `covered_until`) is,
/// with a warning naming the line.
#[utoipa::path(
    post,
    path = "/v1/calendars:import",
    security(("bearer" = ["admin"])),
    tag = "calendars",
    params(ImportQuery),
    request_body(content = String, content_type = "text/calendar",
                 description = "An iCalendar file"),
    responses(
        (status = 201, description = "Created", body = ImportResponse,
         headers(("Location" = String, description = "The new calendar"), ("ETag" = String, description = "Its version"))),
        problems::UnreadableBody,
        problems::CalendarNameTaken,
        problems::BodyTooLarge,
        problems::NotICalendar,
        problems::InvalidFields,
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip_all)]
pub async fn import_calendar(
    State(state): State<AppState>,
    Caller(actor): Caller,
    ApiQuery(query): ApiQuery<ImportQuery>,
    request: Request,
) -> ApiResult<Response> {
    let essence = request
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase())
        .unwrap_or_default();
    if essence != "text/calendar" {
        return Err(ApiError::UnsupportedMediaType(format!(
            "expected text/calendar, got `{}`",
            if essence.is_empty() {
                "nothing"
            } else {
                &essence
            }
        )));
    }
    let bytes = read_body(request, &state).await?;
    let text = std::str::from_utf8(&bytes)
        .map_err(|e| ApiError::bad_field("body", format!("is not UTF-8: {e}")))?;
    if text.contains('\0') {
        return Err(ApiError::bad_field(
            "body",
            "must not contain the NUL character",
        ));
    }
    let options = ImportOptions {
        name: query.name,
        timezone: query.timezone,
        weekend_days: query
            .weekend_days
            .as_deref()
            .map(weekend_days)
            .transpose()?,
        covered_until: query.covered_until,
    };
    let imported = state
        .services
        .calendars
        .import(text, &options, &actor)
        .await?;
    let id = imported.record.id;
    let tag = etag(imported.record.version);
    let body = ImportResponse {
        calendar: render(imported.record),
        events: imported.events,
        warnings: imported
            .warnings
            .into_iter()
            .map(|w| ImportWarning {
                line: w.line,
                message: w.message,
            })
            .collect(),
    };
    Ok(respond_with(StatusCode::CREATED, id, &tag, Json(body)))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct DaysQuery {
    /// First date listed.
    #[param(pattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$")]
    pub from: String,
    /// Last date listed (at most 800 days after `from`).
    #[param(pattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$")]
    pub to: String,
}

/// Each date of a range: a business day or not, and why (a weekend day, a
/// holiday and its name), added working days, and whether the date is past
/// the calendar's `covered_until`.
#[utoipa::path(
    get,
    path = "/v1/calendars/{id}/days",
    security(("bearer" = ["read"])),
    tag = "calendars",
    params(("id" = Uuid, Path, description = "Calendar ID"), DaysQuery),
    responses(
        (status = 200, description = "The dates", body = CalendarDays,
         headers(("ETag" = String, description = "The calendar's version"))),
        problems::BadParameter,
        problems::NoSuchCalendar,
        problems::InvalidRange,
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip(actor, state))]
pub async fn list_days(
    State(state): State<AppState>,
    Caller(actor): Caller,
    IdParam(id): IdParam,
    ApiQuery(query): ApiQuery<DaysQuery>,
) -> ApiResult<Response> {
    let from = parse_date(&query.from).map_err(|m| ApiError::bad_field("from", m))?;
    let to = parse_date(&query.to).map_err(|m| ApiError::bad_field("to", m))?;
    let (record, days) = state
        .services
        .calendars
        .days(id, &actor.project, from, to)
        .await?;
    let tag = etag(record.version);
    let body = CalendarDays {
        calendar_id: record.id,
        version: record.version,
        covered_until: record.calendar.covered_until(),
        days: days.into_iter().map(render_day).collect(),
    };
    Ok(respond_with(StatusCode::OK, id, &tag, Json(body)))
}
