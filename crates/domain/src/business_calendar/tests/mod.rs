//! Table tests of business calendars: validation, the questions asked of a
//! calendar, `BDn` rules, and iCalendar import.

mod backfill;
mod days;
mod ical;
mod offsets;
mod plan;
mod validation;

use super::*;

pub(super) fn date(text: &str) -> NaiveDate {
    NaiveDate::parse_from_str(text, "%Y-%m-%d").unwrap()
}

/// A US-style 2026 calendar: a holiday on a Friday (Independence Day
/// observed, 3 July), Christmas on a Friday, a make-up Saturday (11 July),
/// known through `covered_until` (and listing only the dates up to it).
pub(super) fn us_2026(covered_until: &str) -> BusinessCalendar {
    let holiday = |date: &str, name: &str| HolidayInput {
        date: date.into(),
        name: name.into(),
    };
    let mut input = CalendarInput {
        name: "US 2026".into(),
        timezone: Some("America/New_York".into()),
        weekend_days: None,
        holidays: vec![
            holiday("2026-01-01", "New Year's Day"),
            holiday("2026-07-03", "Independence Day (observed)"),
            holiday("2026-05-25", "Memorial Day"),
            holiday("2026-12-25", "Christmas Day"),
        ],
        working_days: vec![WorkingDayInput {
            date: "2026-07-11".into(),
            name: Some("Make-up day".into()),
        }],
        blackouts: vec![],
        covered_until: Some(covered_until.into()),
    };
    input.holidays.retain(|h| h.date.as_str() <= covered_until);
    input
        .working_days
        .retain(|w| w.date.as_str() <= covered_until);
    BusinessCalendar::parse(&input).unwrap()
}
