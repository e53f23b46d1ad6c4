//! A calendar as a client writes it, and its parsing into a
//! [`BusinessCalendar`] with every problem named by its field.

use std::collections::BTreeMap;

use chrono::{DateTime, Datelike, NaiveDate, NaiveDateTime, Offset, TimeZone, Utc};
use serde::{Deserialize, Serialize};

use super::{
    Blackout, BlackoutSpan, BusinessCalendar, FIRST_YEAR, LAST_YEAR, MAX_BLACKOUTS, MAX_HOLIDAYS,
    MAX_NAME, MAX_WORKING_DAYS, WeekendDays,
};
use crate::FieldError;
use crate::trigger::TimeZoneName;

/// A calendar's fields as written: text, parsed by [`BusinessCalendar::parse`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CalendarInput {
    pub name: String,
    pub timezone: Option<String>,
    pub weekend_days: Option<Vec<i64>>,
    pub holidays: Vec<HolidayInput>,
    pub working_days: Vec<WorkingDayInput>,
    pub blackouts: Vec<BlackoutInput>,
    pub covered_until: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HolidayInput {
    pub date: String,
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkingDayInput {
    pub date: String,
    pub name: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlackoutInput {
    pub from: String,
    pub to: String,
    pub name: Option<String>,
}

/// A name: trimmed, 1 to [`MAX_NAME`] characters, no control characters.
pub fn parse_name(text: &str) -> Result<String, String> {
    let name = text.trim();
    if name.is_empty() || name.chars().count() > MAX_NAME || name.chars().any(char::is_control) {
        return Err(format!(
            "must be 1 to {MAX_NAME} characters, no control characters"
        ));
    }
    Ok(name.to_owned())
}

/// A date written `YYYY-MM-DD`, in the calendar's years.
pub fn parse_date(text: &str) -> Result<NaiveDate, String> {
    let shaped = text.len() == 10
        && text.bytes().enumerate().all(|(i, b)| {
            if i == 4 || i == 7 {
                b == b'-'
            } else {
                b.is_ascii_digit()
            }
        });
    let date = shaped
        .then(|| NaiveDate::parse_from_str(text, "%Y-%m-%d").ok())
        .flatten()
        .ok_or_else(|| format!("`{text}` is not a date (YYYY-MM-DD)"))?;
    in_years(date)
}

fn in_years(date: NaiveDate) -> Result<NaiveDate, String> {
    if (FIRST_YEAR..=LAST_YEAR).contains(&date.year()) {
        Ok(date)
    } else {
        Err(format!(
            "{date} is outside the years {FIRST_YEAR} to {LAST_YEAR}"
        ))
    }
}

/// A wall-clock time written `YYYY-MM-DDTHH:MM` or `YYYY-MM-DDTHH:MM:SS`,
/// without an offset: it is read in the calendar's zone.
pub fn parse_local(text: &str) -> Result<NaiveDateTime, String> {
    let bad = || {
        format!(
            "`{text}` is not a local date-time (YYYY-MM-DDTHH:MM[:SS], no offset: it is read in the calendar's time zone)"
        )
    };
    let (date, time) = text.split_once('T').ok_or_else(bad)?;
    let date = parse_date(date).map_err(|_| bad())?;
    let time_shaped = matches!(time.len(), 5 | 8)
        && time.bytes().enumerate().all(|(i, b)| {
            if i == 2 || i == 5 {
                b == b':'
            } else {
                b.is_ascii_digit()
            }
        });
    let format = if time.len() == 5 { "%H:%M" } else { "%H:%M:%S" };
    let time = time_shaped
        .then(|| chrono::NaiveTime::parse_from_str(time, format).ok())
        .flatten()
        .ok_or_else(bad)?;
    Ok(date.and_time(time))
}

/// A local date-time as [`parse_local`] reads it back.
pub fn format_local(at: NaiveDateTime) -> String {
    at.format("%Y-%m-%dT%H:%M:%S").to_string()
}

/// The instant of a wall-clock time in `zone`. A time that occurs twice (the
/// clocks go back) is its first occurrence for a window's start and its
/// second for its end, so the window covers both; a time skipped by the
/// clocks going forward is read with the offset before the change (shifted
/// forward by the gap).
pub fn resolve_local(zone: TimeZoneName, at: NaiveDateTime, end: bool) -> DateTime<Utc> {
    let tz = zone.tz();
    match tz.from_local_datetime(&at) {
        chrono::LocalResult::Single(t) => t.with_timezone(&Utc),
        chrono::LocalResult::Ambiguous(first, second) => {
            if end { second } else { first }.with_timezone(&Utc)
        }
        chrono::LocalResult::None => {
            let before = tz
                .offset_from_utc_datetime(&(at - chrono::Duration::days(1)))
                .fix();
            (at - chrono::Duration::seconds(i64::from(before.local_minus_utc()))).and_utc()
        }
    }
}

/// Collects field errors while parsing.
#[derive(Default)]
struct Problems(Vec<FieldError>);

impl Problems {
    fn take<T>(&mut self, field: impl Into<String>, result: Result<T, String>) -> Option<T> {
        result
            .map_err(|m| self.0.push(FieldError::new(field, m)))
            .ok()
    }

    fn add(&mut self, field: impl Into<String>, message: impl Into<String>) {
        self.0.push(FieldError::new(field, message));
    }
}

fn parse_weekend(days: Option<&[i64]>, problems: &mut Problems) -> WeekendDays {
    let Some(days) = days else {
        return WeekendDays::SATURDAY_SUNDAY;
    };
    let mut mask = 0u8;
    for (i, day) in days.iter().enumerate() {
        match u8::try_from(*day).ok().filter(|d| *d <= 6) {
            None => problems.add(
                format!("weekend_days[{i}]"),
                format!("{day} is not a day of the week: 0 (Sunday) to 6 (Saturday)"),
            ),
            Some(d) if mask & (1 << d) != 0 => {
                problems.add(format!("weekend_days[{i}]"), format!("{d} is listed twice"))
            }
            Some(d) => mask |= 1 << d,
        }
    }
    if mask == 0b111_1111 {
        problems.add(
            "weekend_days",
            "cannot be every day of the week: a calendar needs business days",
        );
    }
    WeekendDays(mask)
}

fn check_count(problems: &mut Problems, field: &str, count: usize, max: usize) {
    if count > max {
        problems.add(field, format!("at most {max} entries, got {count}"));
    }
}

impl BusinessCalendar {
    /// Parses and checks a calendar, naming every bad field: dates that are
    /// not dates or are listed twice, a date both a holiday and an added
    /// working day, an added working day that is not a weekend day, a
    /// blackout that ends before it starts, a `covered_until` before a date
    /// the calendar lists, counts over the limits.
    pub fn parse(input: &CalendarInput) -> Result<Self, Vec<FieldError>> {
        let mut problems = Problems::default();
        let name = problems.take("name", parse_name(&input.name));
        let timezone = match input.timezone.as_deref() {
            None => Some(TimeZoneName::default()),
            Some(text) => problems.take("timezone", TimeZoneName::parse(text)),
        };
        let weekend_days = parse_weekend(input.weekend_days.as_deref(), &mut problems);
        check_count(
            &mut problems,
            "holidays",
            input.holidays.len(),
            MAX_HOLIDAYS,
        );
        check_count(
            &mut problems,
            "working_days",
            input.working_days.len(),
            MAX_WORKING_DAYS,
        );
        check_count(
            &mut problems,
            "blackouts",
            input.blackouts.len(),
            MAX_BLACKOUTS,
        );

        let mut holidays: BTreeMap<NaiveDate, (usize, String)> = BTreeMap::new();
        for (i, holiday) in input.holidays.iter().enumerate() {
            let date = problems.take(format!("holidays[{i}].date"), parse_date(&holiday.date));
            let name = problems.take(format!("holidays[{i}].name"), parse_name(&holiday.name));
            if let (Some(date), Some(name)) = (date, name) {
                if let Some((first, _)) = holidays.get(&date) {
                    problems.add(
                        format!("holidays[{i}].date"),
                        format!("{date} is listed twice (also holidays[{first}])"),
                    );
                } else {
                    holidays.insert(date, (i, name));
                }
            }
        }

        let mut working_days: BTreeMap<NaiveDate, (usize, Option<String>)> = BTreeMap::new();
        for (i, day) in input.working_days.iter().enumerate() {
            let field = format!("working_days[{i}].date");
            let date = problems.take(field.clone(), parse_date(&day.date));
            let name = match day.name.as_deref() {
                None => Some(None),
                Some(text) => problems
                    .take(format!("working_days[{i}].name"), parse_name(text))
                    .map(Some),
            };
            let (Some(date), Some(name)) = (date, name) else {
                continue;
            };
            if let Some((first, _)) = working_days.get(&date) {
                problems.add(
                    field,
                    format!("{date} is listed twice (also working_days[{first}])"),
                );
            } else if let Some((h, _)) = holidays.get(&date) {
                problems.add(
                    field,
                    format!("{date} is also a holiday (holidays[{h}]): a date is one or the other"),
                );
            } else if !weekend_days.contains(date.weekday()) {
                problems.add(
                    field,
                    format!("{date} is a {} and a business day already: added working days are weekend days that are worked", date.format("%A")),
                );
            } else {
                working_days.insert(date, (i, name));
            }
        }

        let mut blackouts = Vec::new();
        for (i, blackout) in input.blackouts.iter().enumerate() {
            let from = problems.take(format!("blackouts[{i}].from"), parse_local(&blackout.from));
            let to = problems.take(format!("blackouts[{i}].to"), parse_local(&blackout.to));
            let name = match blackout.name.as_deref() {
                None => Some(None),
                Some(text) => problems
                    .take(format!("blackouts[{i}].name"), parse_name(text))
                    .map(Some),
            };
            let (Some(from), Some(to), Some(name)) = (from, to, name) else {
                continue;
            };
            if to <= from {
                problems.add(
                    format!("blackouts[{i}].to"),
                    format!("must be after `from` ({})", format_local(from)),
                );
                continue;
            }
            blackouts.push(Blackout { from, to, name });
        }

        let covered_until = match input.covered_until.as_deref() {
            None => None,
            Some(text) => problems.take("covered_until", parse_date(text)),
        };
        if let Some(last) = covered_until {
            let latest = [
                holidays
                    .iter()
                    .next_back()
                    .map(|(d, (i, _))| (*d, format!("holidays[{i}]"))),
                working_days
                    .iter()
                    .next_back()
                    .map(|(d, (i, _))| (*d, format!("working_days[{i}]"))),
            ];
            if let Some((date, field)) = latest
                .into_iter()
                .flatten()
                .filter(|(d, _)| *d > last)
                .max()
            {
                problems.add(
                    "covered_until",
                    format!("{last} is before {date} ({field}): the calendar is known to be right at least through the dates it lists"),
                );
            }
        }

        match (name, timezone) {
            (Some(name), Some(timezone)) if problems.0.is_empty() => {
                let mut blackouts: Vec<_> = blackouts
                    .into_iter()
                    .map(|b| {
                        let span = BlackoutSpan {
                            from: resolve_local(timezone, b.from, false),
                            to: resolve_local(timezone, b.to, true),
                        };
                        (b, span)
                    })
                    .collect();
                blackouts.sort_by_key(|b| (b.1.from, b.1.to));
                Ok(Self {
                    name,
                    timezone,
                    weekend_days,
                    holidays: holidays.into_iter().map(|(d, (_, n))| (d, n)).collect(),
                    working_days: working_days.into_iter().map(|(d, (_, n))| (d, n)).collect(),
                    blackouts,
                    covered_until,
                })
            }
            _ => Err(problems.0),
        }
    }
}
