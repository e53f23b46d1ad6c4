//! Business calendars: which dates are business days (weekend days,
//! holidays, added working days such as a make-up Saturday), which instants
//! fall in a blackout window, and up to which date the calendar is known to
//! be right (`covered_until`).
//!
//! A [`BusinessCalendar`] is parsed once from a [`CalendarInput`] (every
//! problem named by its field) and is valid from then on; the questions an
//! activity asks of it ([`BusinessCalendar::is_business_day`],
//! [`BusinessCalendar::roll`], [`BusinessCalendar::business_day_of_month`],
//! [`BusinessCalendar::in_blackout`]) are pure functions in `days`. Beyond
//! `covered_until` only the weekend days are known: the answers there say so
//! ([`Dated::beyond_coverage`]) rather than pretend.
//!
//! Not to be confused with [`crate::calendar`], the cron and clock engine.

mod backfill;
mod days;
mod extras;
mod ical;
mod input;
mod plan;
mod rule;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};
use serde::{Deserialize, Serialize};

pub use backfill::{CalendarTime, CatchUp, apply_to_backfill, apply_to_catch_up};
pub use days::{Dated, DayKind, DayStatus, NotBusiness, Roll};
pub use extras::{near_range, rolled_extras};
pub use ical::{ImportOptions, ImportWarning, Imported, import_ical};
pub use input::{
    BlackoutInput, CalendarInput, HolidayInput, WorkingDayInput, parse_date, parse_local,
};
pub use plan::{
    BeyondCoverage, CalendarMode, CalendarReason, CalendarRule, Fate, MAX_SCANNED, Named, Outcome,
    Planned, fate, is_time, plan, runs_after, runs_at, runs_before,
};
pub use rule::{BusinessDayRule, split_cron};

use crate::trigger::TimeZoneName;

/// At most this many holidays, added working days and blackouts: a calendar
/// is read whole for every question asked of it.
pub const MAX_HOLIDAYS: usize = 2000;
pub const MAX_WORKING_DAYS: usize = 500;
pub const MAX_BLACKOUTS: usize = 500;
/// The longest name of a calendar, a holiday, a working day or a blackout.
pub const MAX_NAME: usize = 200;
/// The years a calendar's dates may fall in: the clock's own
/// ([`crate::calendar::FIRST_YEAR`] to [`crate::calendar::LAST_YEAR`]).
pub const FIRST_YEAR: i32 = crate::calendar::FIRST_YEAR;
pub const LAST_YEAR: i32 = crate::calendar::LAST_YEAR;

/// A day of the week as the API numbers it: 0 = Sunday … 6 = Saturday.
pub fn weekday_number(weekday: chrono::Weekday) -> u8 {
    weekday.num_days_from_sunday() as u8
}

/// The days of the week that are not business days, as a set of
/// [`weekday_number`]s. Never all seven.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WeekendDays(u8);

impl WeekendDays {
    /// Saturday and Sunday.
    pub const SATURDAY_SUNDAY: Self = Self(0b100_0001);

    pub fn contains(self, weekday: chrono::Weekday) -> bool {
        self.0 & (1 << weekday_number(weekday)) != 0
    }

    /// The day numbers, ascending.
    pub fn numbers(self) -> Vec<u8> {
        (0..7).filter(|d| self.0 & (1 << d) != 0).collect()
    }
}

/// A holiday: a date that is not a business day, with its name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holiday {
    pub date: NaiveDate,
    pub name: String,
}

/// A date that is a business day although it falls on a weekend day (a
/// make-up Saturday).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkingDay {
    pub date: NaiveDate,
    pub name: Option<String>,
}

/// A window of wall-clock time in the calendar's zone, `[from, to)`, in
/// which nothing should start (a freeze, a maintenance window).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Blackout {
    pub from: NaiveDateTime,
    pub to: NaiveDateTime,
    pub name: Option<String>,
}

/// A blackout's bounds as instants, resolved once in the calendar's zone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlackoutSpan {
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
}

/// A valid business calendar (see the module's documentation).
#[derive(Debug, Clone, PartialEq)]
pub struct BusinessCalendar {
    name: String,
    timezone: TimeZoneName,
    weekend_days: WeekendDays,
    holidays: BTreeMap<NaiveDate, String>,
    working_days: BTreeMap<NaiveDate, Option<String>>,
    /// Ordered by start, each with its instants.
    blackouts: Vec<(Blackout, BlackoutSpan)>,
    covered_until: Option<NaiveDate>,
}

impl BusinessCalendar {
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn timezone(&self) -> TimeZoneName {
        self.timezone
    }

    pub fn weekend_days(&self) -> WeekendDays {
        self.weekend_days
    }

    /// The holidays, by date.
    pub fn holidays(&self) -> impl Iterator<Item = Holiday> + '_ {
        self.holidays.iter().map(|(date, name)| Holiday {
            date: *date,
            name: name.clone(),
        })
    }

    /// The added working days, by date.
    pub fn working_days(&self) -> impl Iterator<Item = WorkingDay> + '_ {
        self.working_days.iter().map(|(date, name)| WorkingDay {
            date: *date,
            name: name.clone(),
        })
    }

    /// The blackouts, by start, with their instants.
    pub fn blackouts(&self) -> impl Iterator<Item = (&Blackout, BlackoutSpan)> + '_ {
        self.blackouts.iter().map(|(b, span)| (b, *span))
    }

    /// The last date the calendar is known to be right; `None`: no limit.
    pub fn covered_until(&self) -> Option<NaiveDate> {
        self.covered_until
    }

    /// The note an activity is paused with when a time of it is past the
    /// coverage under `beyond_coverage: pause` (by the launcher, a backfill
    /// or a resume's catch-up).
    pub fn coverage_pause_note(&self) -> String {
        format!(
            "paused: {} is not covered past {}",
            self.name,
            self.covered_until
                .map_or_else(String::new, |d| d.to_string())
        )
    }

    /// Whether `date` is within the coverage.
    pub fn covers(&self, date: NaiveDate) -> bool {
        self.covered_until.is_none_or(|last| date <= last)
    }

    /// The calendar as a client would write it again: the form the store
    /// keeps and a merge patch applies to.
    pub fn to_input(&self) -> CalendarInput {
        CalendarInput {
            name: self.name.clone(),
            timezone: Some(self.timezone.name().to_owned()),
            weekend_days: Some(
                self.weekend_days
                    .numbers()
                    .into_iter()
                    .map(i64::from)
                    .collect(),
            ),
            holidays: self
                .holidays()
                .map(|h| HolidayInput {
                    date: h.date.to_string(),
                    name: h.name,
                })
                .collect(),
            working_days: self
                .working_days()
                .map(|w| WorkingDayInput {
                    date: w.date.to_string(),
                    name: w.name,
                })
                .collect(),
            blackouts: self
                .blackouts()
                .map(|(b, _)| BlackoutInput {
                    from: input::format_local(b.from),
                    to: input::format_local(b.to),
                    name: b.name.clone(),
                })
                .collect(),
            covered_until: self.covered_until.map(|d| d.to_string()),
        }
    }
}

/// A calendar as kept: its ID, version and times.
#[derive(Debug, Clone)]
pub struct CalendarRecord {
    pub id: uuid::Uuid,
    pub calendar: BusinessCalendar,
    pub version: i64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}
