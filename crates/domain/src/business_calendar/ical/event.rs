//! One `VEVENT` read into an all-day [`Event`], and its dates.

use chrono::{Datelike, NaiveDate};
use icalendar::parser::{Component, Property};

use super::ImportWarning;
use crate::business_calendar::input::{parse_date, parse_name};

/// The longest an all-day event may last.
const MAX_EVENT_DAYS: u64 = 366;

/// One all-day event, before its dates are expanded.
pub(super) struct Event {
    pub(super) line: usize,
    pub(super) name: String,
    pub(super) start: NaiveDate,
    pub(super) days: u64,
    yearly: Option<Yearly>,
    exdates: Vec<NaiveDate>,
}

struct Yearly {
    count: Option<u32>,
    until: Option<NaiveDate>,
}

/// The file's lines, to name where a component or property is.
pub(super) struct Lines<'a>(pub(super) Vec<&'a str>);

impl Lines<'_> {
    /// 1-based lines of each `BEGIN:`, in document order.
    pub(super) fn begins(&self) -> Vec<usize> {
        (0..self.0.len())
            .filter(|i| {
                self.0[*i]
                    .trim_end()
                    .to_ascii_uppercase()
                    .starts_with("BEGIN:")
            })
            .map(|i| i + 1)
            .collect()
    }

    /// The line of property `name` in the component that begins at `from`.
    fn property(&self, from: usize, name: &str) -> usize {
        let name = name.to_ascii_uppercase();
        self.0
            .iter()
            .enumerate()
            .skip(from)
            .take_while(|(_, l)| !l.trim_end().to_ascii_uppercase().starts_with("END:"))
            .find(|(_, l)| {
                let l = l.to_ascii_uppercase();
                l.strip_prefix(&name)
                    .is_some_and(|rest| rest.starts_with([':', ';']))
            })
            .map_or(from, |(i, _)| i + 1)
    }
}

pub(super) fn size(component: &Component<'_>) -> usize {
    1 + component.components.iter().map(size).sum::<usize>()
}

fn param<'a>(property: &'a Property<'_>, key: &str) -> Option<&'a str> {
    property
        .params
        .iter()
        .find(|p| p.key.as_str().eq_ignore_ascii_case(key))
        .and_then(|p| p.val.as_ref().map(|v| v.as_str()))
}

/// An iCalendar DATE (`20260703`); a DATE-TIME is refused by name.
fn ical_date(text: &str) -> Result<NaiveDate, String> {
    if text.contains('T') {
        return Err(format!(
            "`{text}` has a time of day: only all-day events (VALUE=DATE) are holidays"
        ));
    }
    let shaped = text.len() == 8 && text.bytes().all(|b| b.is_ascii_digit());
    let date = shaped
        .then(|| NaiveDate::parse_from_str(text, "%Y%m%d").ok())
        .flatten()
        .ok_or_else(|| format!("`{text}` is not a date (YYYYMMDD)"))?;
    parse_date(&date.to_string())
}

fn date_property(event: &Component<'_>, name: &str) -> Option<Result<NaiveDate, String>> {
    let property = event.find_prop(name)?;
    if let Some(kind) = param(property, "VALUE")
        && !kind.eq_ignore_ascii_case("DATE")
    {
        return Some(Err(format!(
            "VALUE={kind}: only all-day events (VALUE=DATE) are holidays"
        )));
    }
    Some(ical_date(property.val.as_str().trim()))
}

/// `PnD` or `PnW`, in days.
fn duration_days(text: &str) -> Result<u64, String> {
    let bad = || format!("`{text}` is not a duration of whole days (PnD or PnW)");
    let body = text.strip_prefix('P').ok_or_else(bad)?;
    let (digits, factor) = match body.as_bytes().last() {
        Some(b'D') => (&body[..body.len() - 1], 1),
        Some(b'W') => (&body[..body.len() - 1], 7),
        _ => return Err(bad()),
    };
    digits
        .parse::<u64>()
        .ok()
        .filter(|_| digits.bytes().all(|b| b.is_ascii_digit()))
        .map(|d| d * factor)
        .ok_or_else(bad)
}

fn yearly_rule(text: &str, start: NaiveDate) -> Result<Yearly, String> {
    let refuse = || {
        format!(
            "`{text}` is not a plain yearly rule (FREQ=YEARLY with COUNT, UNTIL, BYMONTH or BYMONTHDAY of its DTSTART); list the dates as events instead"
        )
    };
    let mut yearly = Yearly {
        count: None,
        until: None,
    };
    let mut frequency = false;
    for part in text.split(';').filter(|p| !p.is_empty()) {
        let (key, value) = part.split_once('=').ok_or_else(refuse)?;
        match key.to_ascii_uppercase().as_str() {
            "FREQ" if value.eq_ignore_ascii_case("YEARLY") => frequency = true,
            "INTERVAL" if value == "1" => {}
            "COUNT" => yearly.count = Some(value.parse().map_err(|_| refuse())?),
            "UNTIL" => {
                let date = value.get(..8).ok_or_else(refuse)?;
                yearly.until = Some(ical_date(date).map_err(|_| refuse())?);
            }
            "BYMONTH" if value.parse::<u32>().ok() == Some(start.month()) => {}
            "BYMONTHDAY" if value.parse::<u32>().ok() == Some(start.day()) => {}
            _ => return Err(refuse()),
        }
    }
    if frequency { Ok(yearly) } else { Err(refuse()) }
}

/// Reads one `VEVENT`; `None` for a cancelled one (with a warning).
pub(super) fn event(
    component: &Component<'_>,
    line: usize,
    lines: &Lines<'_>,
    warnings: &mut Vec<ImportWarning>,
) -> Result<Option<Event>, Vec<String>> {
    let at = |name: &str, message: String| {
        format!("line {} ({name}): {message}", lines.property(line, name))
    };
    if component
        .find_prop("STATUS")
        .is_some_and(|s| s.val.as_str().trim().eq_ignore_ascii_case("CANCELLED"))
    {
        warnings.push(ImportWarning {
            line,
            message: "a cancelled event: left out".into(),
        });
        return Ok(None);
    }
    let mut errors = Vec::new();
    let start = match date_property(component, "DTSTART") {
        None => Err(format!("line {line} (VEVENT): has no DTSTART")),
        Some(result) => result.map_err(|m| at("DTSTART", m)),
    }
    .map_err(|e| errors.push(e))
    .ok();
    let name = match component.find_prop("SUMMARY") {
        None => Err(format!(
            "line {line} (VEVENT): has no SUMMARY to name the holiday"
        )),
        Some(s) => parse_name(s.val.clone().unescape_text().as_str()).map_err(|m| at("SUMMARY", m)),
    }
    .map_err(|e| errors.push(e))
    .ok();
    if component.find_prop("RDATE").is_some() {
        errors.push(at(
            "RDATE",
            "extra dates are not read; list them as events instead".into(),
        ));
    }
    let Some(start) = start else {
        return Err(errors);
    };
    let days = match (
        date_property(component, "DTEND"),
        component.find_prop("DURATION"),
    ) {
        (Some(end), _) => end.map_err(|m| at("DTEND", m)).and_then(|end| {
            u64::try_from((end - start).num_days())
                .ok()
                .filter(|d| *d > 0)
                .ok_or_else(|| at("DTEND", format!("{end} is not after DTSTART {start}")))
        }),
        (None, Some(duration)) => {
            duration_days(duration.val.as_str().trim()).map_err(|m| at("DURATION", m))
        }
        (None, None) => Ok(1),
    }
    .and_then(|d| {
        if d > MAX_EVENT_DAYS {
            Err(at(
                "DTEND",
                format!("the event lasts {d} days; at most {MAX_EVENT_DAYS}"),
            ))
        } else {
            Ok(d)
        }
    })
    .map_err(|e| errors.push(e))
    .ok();
    let yearly = component
        .find_prop("RRULE")
        .map(|r| yearly_rule(r.val.as_str().trim(), start).map_err(|m| at("RRULE", m)))
        .transpose()
        .map_err(|e| errors.push(e))
        .ok()
        .flatten();
    let mut exdates = Vec::new();
    for property in component
        .properties
        .iter()
        .filter(|p| p.name.as_str().eq_ignore_ascii_case("EXDATE"))
    {
        for text in property.val.as_str().split(',') {
            match ical_date(text.trim()) {
                Ok(date) => exdates.push(date),
                Err(m) => errors.push(at("EXDATE", m)),
            }
        }
    }
    match (name, days, errors.is_empty()) {
        (Some(name), Some(days), true) => Ok(Some(Event {
            line,
            name,
            start,
            days,
            yearly,
            exdates,
        })),
        _ => Err(errors),
    }
}

/// The start dates of an event's occurrences, through `horizon`.
pub(super) fn starts(event: &Event, horizon: NaiveDate) -> Vec<NaiveDate> {
    let Some(rule) = &event.yearly else {
        return vec![event.start];
    };
    let last = rule.until.map_or(horizon, |u| u.min(horizon));
    let mut out = Vec::new();
    let mut year = event.start.year();
    let mut counted = 0u32;
    while year <= last.year() && rule.count.is_none_or(|c| counted < c) {
        if let Some(date) = NaiveDate::from_ymd_opt(year, event.start.month(), event.start.day())
            && date <= last
        {
            counted += 1;
            if !event.exdates.contains(&date) {
                out.push(date);
            }
        }
        year += 1;
    }
    out
}
