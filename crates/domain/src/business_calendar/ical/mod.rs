//! Holidays from an iCalendar file (RFC 5545), read with the `icalendar`
//! crate's parser.
//!
//! Each all-day `VEVENT` (`DTSTART;VALUE=DATE`) is a holiday named by its
//! `SUMMARY`, one per date from `DTSTART` up to `DTEND` (exclusive) or
//! `DURATION` (`PnD`, `PnW`). A plain yearly rule (`RRULE:FREQ=YEARLY`, with
//! `COUNT`, `UNTIL`, `INTERVAL=1`, or `BYMONTH`/`BYMONTHDAY` repeating
//! `DTSTART`'s) repeats it each year, less its `EXDATE`s, through `UNTIL`,
//! `COUNT` or the calendar's `covered_until`. Anything that would make the
//! holidays wrong if ignored (an event with a time of day, another
//! recurrence rule, `RDATE`, a missing `SUMMARY`) is refused, naming its
//! line; what can be left out without that (other components, cancelled
//! events, a date listed twice, dates after `covered_until`) is, with a
//! warning naming its line.

use std::collections::BTreeMap;

mod event;

use chrono::{Datelike, NaiveDate};
use icalendar::parser::{read_calendar, unfold};

use super::input::parse_date;
use super::{BusinessCalendar, CalendarInput, HolidayInput, MAX_HOLIDAYS};
use crate::FieldError;
use event::{Lines, event, size, starts};

/// What the file does not say, from the request: each overrides the file's
/// own (`X-WR-CALNAME`, `X-WR-TIMEZONE`) where it has one.
#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    pub name: Option<String>,
    pub timezone: Option<String>,
    pub weekend_days: Option<Vec<i64>>,
    /// Default: the 31st of December of the year of the latest event.
    pub covered_until: Option<String>,
}

/// Something of the file that was left out, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportWarning {
    /// 1-based line of the file.
    pub line: usize,
    pub message: String,
}

/// A calendar read from a file.
#[derive(Debug, Clone)]
pub struct Imported {
    pub calendar: BusinessCalendar,
    /// The events that became holidays.
    pub events: usize,
    pub warnings: Vec<ImportWarning>,
}

/// The most errors one answer lists.
const MAX_ERRORS: usize = 20;

/// Reads a calendar from an iCalendar file (see the module's documentation).
/// Errors name the request's field (`body`, with the file's line, or the
/// option's own name).
pub fn import_ical(text: &str, options: &ImportOptions) -> Result<Imported, Vec<FieldError>> {
    let body = |message: String| vec![FieldError::new("body", message)];
    let unfolded = unfold(text);
    let parsed = read_calendar(&unfolded).map_err(|e| {
        let first: String = e.lines().take(3).collect::<Vec<_>>().join(" ");
        body(format!(
            "not an iCalendar file (lines as unfolded): {}",
            first.chars().take(300).collect::<String>()
        ))
    })?;
    let lines = Lines(text.lines().collect());
    let begins = lines.begins();
    let root_is_calendar = begins.first().is_some_and(|l| {
        lines.0[*l - 1]
            .trim()
            .eq_ignore_ascii_case("BEGIN:VCALENDAR")
    });
    let mut index = usize::from(root_is_calendar);
    let (mut events, mut errors, mut warnings) = (Vec::new(), Vec::new(), Vec::new());
    for component in &parsed.components {
        let line = begins.get(index).copied().unwrap_or(0);
        index += size(component);
        match component.name.as_str().to_ascii_uppercase().as_str() {
            "VEVENT" => match event(component, line, &lines, &mut warnings) {
                Ok(Some(e)) => events.push(e),
                Ok(None) => {}
                Err(mut e) => errors.append(&mut e),
            },
            "VTIMEZONE" => {}
            other => warnings.push(ImportWarning {
                line,
                message: format!("a {other} is not a holiday: left out"),
            }),
        }
    }
    if !errors.is_empty() {
        errors.truncate(MAX_ERRORS);
        return Err(errors
            .into_iter()
            .map(|m| FieldError::new("body", m))
            .collect());
    }
    if events.is_empty() && warnings.is_empty() {
        return Err(body("the file has no VEVENT: no holidays to import".into()));
    }
    let covered_until = match options.covered_until.as_deref() {
        Some(text) => {
            Some(parse_date(text).map_err(|m| vec![FieldError::new("covered_until", m)])?)
        }
        None => events
            .iter()
            .map(|e| e.start.year())
            .max()
            .and_then(|y| NaiveDate::from_ymd_opt(y, 12, 31)),
    };
    let horizon = covered_until.unwrap_or(NaiveDate::MAX);

    let mut holidays: BTreeMap<NaiveDate, (String, usize)> = BTreeMap::new();
    let mut beyond = 0usize;
    for event in &events {
        for start in starts(event, horizon) {
            for date in start.iter_days().take(event.days as usize) {
                if date > horizon {
                    beyond += 1;
                    continue;
                }
                if let Err(m) = parse_date(&date.to_string()) {
                    return Err(body(format!("line {}: {m}", event.line)));
                }
                if let Some((name, line)) = holidays.get(&date) {
                    warnings.push(ImportWarning {
                        line: event.line,
                        message: format!(
                            "{date} is already `{name}` (line {line}): `{}` left out for it",
                            event.name
                        ),
                    });
                } else {
                    holidays.insert(date, (event.name.clone(), event.line));
                }
                if holidays.len() > MAX_HOLIDAYS {
                    return Err(body(format!("more than {MAX_HOLIDAYS} holiday dates")));
                }
            }
        }
    }
    warnings.sort_by_key(|w| w.line);
    if beyond > 0 {
        warnings.insert(
            0,
            ImportWarning {
                line: 0,
                message: format!("{beyond} dates after covered_until left out"),
            },
        );
    }
    let file_property = |name: &str| {
        parsed
            .properties
            .iter()
            .find(|p| p.name.as_str().eq_ignore_ascii_case(name))
            .map(|p| p.val.clone().unescape_text().as_str().trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    let name = options
        .name
        .clone()
        .or_else(|| file_property("X-WR-CALNAME"))
        .ok_or_else(|| {
            vec![FieldError::new(
                "name",
                "is required: the file has no X-WR-CALNAME to name the calendar",
            )]
        })?;
    let timezone = options.timezone.clone().or_else(|| {
        file_property("X-WR-TIMEZONE").filter(|z| crate::trigger::TimeZoneName::parse(z).is_ok())
    });
    let input = CalendarInput {
        name,
        timezone,
        weekend_days: options.weekend_days.clone(),
        holidays: holidays
            .into_iter()
            .map(|(date, (name, _))| HolidayInput {
                date: date.to_string(),
                name,
            })
            .collect(),
        working_days: Vec::new(),
        blackouts: Vec::new(),
        covered_until: covered_until.map(|d| d.to_string()),
    };
    let calendar = BusinessCalendar::parse(&input)?;
    Ok(Imported {
        calendar,
        events: events.len(),
        warnings,
    })
}
