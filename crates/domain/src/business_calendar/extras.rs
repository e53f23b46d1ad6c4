//! The times only a roll makes: a time of the cadence on a non-business
//! day rolled to a day the engine does not fire, which the service then
//! starts itself (as it does the DST corrections' extra times).

use chrono::{DateTime, Days, NaiveDate, Utc};

use super::plan::{CalendarMode, CalendarRule, MAX_SCANNED, local_date, runs_at};
use super::{BusinessCalendar, Roll};
use crate::calendar::{NominalTime, WallTime, resolve};

/// The dates before `from`'s and after `to`'s whose times may roll into
/// `[from, to)`: the run of non-business days next to the range on the side
/// the rule rolls from. `None` on a side that nothing rolls from.
pub fn near_range(
    calendar: &BusinessCalendar,
    rule: &CalendarRule,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> Option<(DateTime<Utc>, DateTime<Utc>)> {
    if rule.mode != CalendarMode::BusinessDays {
        return None;
    }
    let tz = calendar.timezone().tz();
    let start_of = |d: NaiveDate| match resolve(tz, d.and_time(chrono::NaiveTime::MIN)) {
        WallTime::Unique(t) | WallTime::Repeated(t, _) | WallTime::Skipped(t) => t,
    };
    match rule.roll {
        Roll::Skip => None,
        Roll::Next => {
            // Times on the non-business days just before `from`'s date.
            let mut first = local_date(calendar, from);
            for _ in 0..3 * 366 {
                match first.checked_sub_days(Days::new(1)) {
                    Some(d) if !calendar.is_business_day(d) => first = d,
                    _ => break,
                }
            }
            Some((start_of(first), from))
        }
        Roll::Previous => {
            let mut last = local_date(calendar, to);
            for _ in 0..3 * 366 {
                match last.checked_add_days(Days::new(1)) {
                    Some(d) if !calendar.is_business_day(d) => last = d,
                    _ => break,
                }
            }
            let end = last.checked_add_days(Days::new(1)).map_or(to, start_of);
            Some((to, end))
        }
    }
}

/// The times in `(after, until]` that run only because a time of the
/// cadence rolled to them: the engine does not fire them (`is_fired` says
/// which times it fires), so the service starts them itself. `originals`
/// are the cadence's times that may roll into the range (those in it and
/// those of [`near_range`]).
pub fn rolled_extras(
    calendar: &BusinessCalendar,
    rule: &CalendarRule,
    originals: impl Iterator<Item = NominalTime>,
    is_fired: impl Fn(DateTime<Utc>) -> bool,
    after: DateTime<Utc>,
    until: DateTime<Utc>,
) -> Vec<DateTime<Utc>> {
    let mut out: Vec<DateTime<Utc>> = originals
        .take(MAX_SCANNED)
        .filter_map(|t| runs_at(calendar, rule, t.at).filter(|at| *at != t.at))
        .filter(|at| after < *at && *at <= until && !is_fired(*at))
        .collect();
    out.sort();
    out.dedup();
    out
}
