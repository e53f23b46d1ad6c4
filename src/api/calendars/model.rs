//! Calendars' wire models. A request is the domain's `CalendarInput` with
//! its schema; a response adds what the service keeps.

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use acp_domain::business_calendar::{
    BlackoutInput, CalendarInput, CalendarRecord, DayKind, DayStatus, HolidayInput, WorkingDayInput,
};

/// A business calendar as a client writes it.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CalendarRequest {
    /// Unique; 1 to 200 characters.
    #[schema(min_length = 1, max_length = 200)]
    pub name: String,
    /// IANA time zone the blackouts' wall-clock times are read in (default
    /// `UTC`).
    #[serde(default)]
    pub timezone: Option<String>,
    /// Days of the week that are not business days, 0 = Sunday to 6 =
    /// Saturday, each once, never all seven (default `[0, 6]`).
    #[serde(default)]
    #[schema(max_items = 6)]
    pub weekend_days: Option<Vec<i64>>,
    /// Dates that are not business days, each once.
    #[serde(default)]
    #[schema(max_items = 2000)]
    pub holidays: Vec<Holiday>,
    /// Weekend dates that are business days (a make-up Saturday), each once,
    /// none a holiday.
    #[serde(default)]
    #[schema(max_items = 500)]
    pub working_days: Vec<WorkingDay>,
    /// Windows of wall-clock time in `timezone` in which nothing should
    /// start.
    #[serde(default)]
    #[schema(max_items = 500)]
    pub blackouts: Vec<Blackout>,
    /// The last date the calendar is known to be right, not before any date
    /// it lists; after it only the weekend days are known, and answers that
    /// look there say so. Absent: no limit.
    #[serde(default)]
    #[schema(pattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$")]
    pub covered_until: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Holiday {
    #[schema(pattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$", example = "2026-07-03")]
    pub date: String,
    #[schema(
        min_length = 1,
        max_length = 200,
        example = "Independence Day (observed)"
    )]
    pub name: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkingDay {
    #[schema(pattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$", example = "2026-07-11")]
    pub date: String,
    #[serde(default)]
    #[schema(min_length = 1, max_length = 200)]
    pub name: Option<String>,
}

/// `[from, to)` in wall-clock time of the calendar's zone. A time the
/// clocks pass twice is its first occurrence for `from` and its second for
/// `to`; a time they skip is shifted forward by the gap.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Blackout {
    #[schema(
        pattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(:[0-9]{2})?$",
        example = "2026-12-24T18:00:00"
    )]
    pub from: String,
    #[schema(
        pattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(:[0-9]{2})?$",
        example = "2026-12-27T06:00:00"
    )]
    pub to: String,
    #[serde(default)]
    #[schema(min_length = 1, max_length = 200)]
    pub name: Option<String>,
}

impl CalendarRequest {
    pub fn into_input(self) -> CalendarInput {
        CalendarInput {
            name: self.name,
            timezone: self.timezone,
            weekend_days: self.weekend_days,
            holidays: self
                .holidays
                .into_iter()
                .map(|h| HolidayInput {
                    date: h.date,
                    name: h.name,
                })
                .collect(),
            working_days: self
                .working_days
                .into_iter()
                .map(|w| WorkingDayInput {
                    date: w.date,
                    name: w.name,
                })
                .collect(),
            blackouts: self
                .blackouts
                .into_iter()
                .map(|b| BlackoutInput {
                    from: b.from,
                    to: b.to,
                    name: b.name,
                })
                .collect(),
            covered_until: self.covered_until,
        }
    }
}

/// A blackout with its bounds as instants.
#[derive(Debug, Serialize, ToSchema)]
pub struct BlackoutResponse {
    /// Wall-clock start in the calendar's zone.
    pub from: String,
    /// Wall-clock end (exclusive) in the calendar's zone.
    pub to: String,
    pub name: Option<String>,
    /// `from` as an instant.
    pub starts_at: DateTime<Utc>,
    /// `to` as an instant.
    pub ends_at: DateTime<Utc>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CalendarResponse {
    pub id: Uuid,
    pub name: String,
    pub timezone: String,
    /// 0 = Sunday to 6 = Saturday.
    pub weekend_days: Vec<u8>,
    /// By date.
    pub holidays: Vec<Holiday>,
    /// By date.
    pub working_days: Vec<WorkingDay>,
    /// By start.
    pub blackouts: Vec<BlackoutResponse>,
    pub covered_until: Option<NaiveDate>,
    pub version: i64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

pub fn render(record: CalendarRecord) -> CalendarResponse {
    let calendar = &record.calendar;
    let input = calendar.to_input();
    CalendarResponse {
        id: record.id,
        name: input.name,
        timezone: calendar.timezone().name().to_owned(),
        weekend_days: calendar.weekend_days().numbers(),
        holidays: input
            .holidays
            .into_iter()
            .map(|h| Holiday {
                date: h.date,
                name: h.name,
            })
            .collect(),
        working_days: input
            .working_days
            .into_iter()
            .map(|w| WorkingDay {
                date: w.date,
                name: w.name,
            })
            .collect(),
        blackouts: input
            .blackouts
            .into_iter()
            .zip(calendar.blackouts())
            .map(|(b, (_, span))| BlackoutResponse {
                from: b.from,
                to: b.to,
                name: b.name,
                starts_at: span.from,
                ends_at: span.to,
            })
            .collect(),
        covered_until: calendar.covered_until(),
        version: record.version,
        created_at: record.created_at,
        updated_at: record.updated_at,
    }
}

/// One date of a calendar.
#[derive(Debug, Serialize, ToSchema)]
pub struct Day {
    pub date: NaiveDate,
    pub kind: DayKind,
    /// `business` and `working_day` dates are business days.
    pub business_day: bool,
    /// The holiday's or the added working day's name.
    pub name: Option<String>,
    /// After `covered_until`: only the weekend days are known there.
    pub beyond_coverage: bool,
}

pub fn render_day(day: DayStatus) -> Day {
    Day {
        business_day: day.is_business_day(),
        date: day.date,
        kind: day.kind,
        name: day.name,
        beyond_coverage: day.beyond_coverage,
    }
}

/// A calendar's dates from `from` through `to`.
#[derive(Debug, Serialize, ToSchema)]
pub struct CalendarDays {
    pub calendar_id: Uuid,
    pub version: i64,
    pub covered_until: Option<NaiveDate>,
    pub days: Vec<Day>,
}

/// Something of an imported file that was left out, and where.
#[derive(Debug, Serialize, ToSchema)]
pub struct ImportWarning {
    /// 1-based line of the file (0: the file as a whole).
    pub line: usize,
    pub message: String,
}

/// A calendar made from an iCalendar file.
#[derive(Debug, Serialize, ToSchema)]
pub struct ImportResponse {
    pub calendar: CalendarResponse,
    /// The events that became holidays.
    pub events: usize,
    pub warnings: Vec<ImportWarning>,
}
