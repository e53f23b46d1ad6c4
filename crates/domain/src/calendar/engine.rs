//! An exact model of what Temporal Server 1.32 fires for the spec we send it.
//!
//! Learned from the server's Go sources (service/worker/scheduler/spec.go and
//! calendar.go; both the workflow scheduler and the CHASM one call the same
//! `CompiledSpec.GetNextTime`, and so does `ListScheduleMatchingTimes`), not
//! from observations alone; docs/TIME.md explains it in prose. Written here in
//! our own terms so that the service can say, for any range, which times the
//! engine fires that our DST policy does not want, and the reverse.

use chrono::{DateTime, Datelike, NaiveDate, Timelike, Utc};
use chrono_tz::Tz;

use super::cron::{CronSchedule, FieldSet};
use super::days::days_in_month;
use super::dst::offset_at;
use super::engine_days::{YearSet, day_patterns};
use crate::trigger::Cadence;

/// The engine's last year (`maxCalendarYear`).
const MAX_YEAR: i32 = 2100;

/// One structured calendar as Temporal holds it: a time matches when every
/// field matches. Seconds are always `{0}` for us.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EngineCalendar {
    pub seconds: FieldSet,
    pub minutes: FieldSet,
    pub hours: FieldSet,
    /// Every year unless the days depend on it (February's last day).
    pub years: YearSet,
    pub days_of_month: FieldSet,
    pub months: FieldSet,
    /// 0 = Sunday .. 6 = Saturday.
    pub days_of_week: FieldSet,
}

/// The calendars that make the engine fire a cron expression's POSIX set on
/// ordinary days: Temporal ANDs all fields of one calendar and ORs calendars,
/// so "day-of-month OR day-of-week" becomes two calendars, and a Quartz day
/// form a few (see `engine_days`). A calendar whose days can never happen
/// (`31 2`) is left out: the engine would walk to the year 2100 looking for
/// it on every call.
pub fn engine_calendars(cron: &CronSchedule) -> Vec<EngineCalendar> {
    day_patterns(cron)
        .into_iter()
        .map(|days| EngineCalendar {
            seconds: FieldSet::single(0),
            minutes: cron.minutes(),
            hours: cron.hours(),
            years: days.years,
            days_of_month: days.days_of_month,
            months: days.months,
            days_of_week: days.days_of_week,
        })
        .collect()
}

/// Go's `time.Date` in a zone, for a wall time that may be out of range
/// (hour 24, say) or fall in a gap or a repeat. Go reads the wall clock as
/// UTC, looks up the offset there, and then the offset at that guess. Where
/// the wall clock read as UTC is already past the change (east of
/// Greenwich, and London), a repeated wall time resolves to its second
/// occurrence and a missing one to a time past the gap by the gap's size
/// (Berlin 02:30 -> 03:30); elsewhere (west) to the first occurrence and to
/// a time before the gap (New York 02:30 -> 01:30).
fn go_date(tz: Tz, y: i32, month: u32, d: i64, h: i64, mi: i64, s: i64) -> i64 {
    let first = NaiveDate::from_ymd_opt(y, month, 1)
        .map(|day| day.and_time(Default::default()).and_utc().timestamp())
        .unwrap_or_default();
    let wall = first + (d - 1) * 86_400 + h * 3600 + mi * 60 + s;
    wall - offset_at(tz, wall - offset_at(tz, wall))
}

fn local(tz: Tz, unix: i64) -> DateTime<Tz> {
    DateTime::from_timestamp(unix, 0)
        .unwrap_or_default()
        .with_timezone(&tz)
}

/// The engine's next time of one calendar strictly after `after` (whole
/// seconds), or `None` past 2100. A field-by-field walk over the wall clock,
/// carrying like an odometer, with the engine's two DST devices: a probe
/// that, when the next hour is more than an hour away, re-walks the current
/// hour "one hour later" (its repeat), and a check that drops a match whose
/// resolved hour is not the hour it walked (a gap; but a gap of 30 minutes
/// keeps its hour, so Lord Howe's 02:15 fires at 02:45).
fn calendar_next(cal: &EngineCalendar, tz: Tz, after: i64) -> Option<i64> {
    let start = local(tz, after);
    let (mut y, mut mo) = (start.year(), start.month());
    let (mut d, mut h, mut m, mut s) = (
        i64::from(start.day()),
        i64::from(start.hour()),
        i64::from(start.minute()),
        i64::from(start.second()),
    );
    // Starting inside the second copy of a repeated hour: an hour ago the
    // clock showed the same hour.
    let mut shift: i64 = if i64::from(local(tz, after - 3600).hour()) == h {
        3600
    } else {
        0
    };
    s += 1;
    let fits = |set: FieldSet, v: i64| u32::try_from(v).is_ok_and(|v| set.contains(v));
    // The weekday is that of the resolved instant, which near a gap at
    // midnight can be the day before.
    let weekday = |y, mo, d, h, m, s| {
        i64::from(
            local(tz, go_date(tz, y, mo, d, h, m, s))
                .weekday()
                .num_days_from_sunday(),
        )
    };
    'walk: loop {
        // Carry.
        if s >= 60 {
            m += 1;
            s = 0;
        }
        if m >= 60 {
            let this_hour = go_date(tz, y, mo, d, h, 0, 0);
            h += 1;
            m = 0;
            let next_hour = go_date(tz, y, mo, d, h, 0, 0);
            if shift == 0 && next_hour - this_hour > 3600 {
                h -= 1;
                shift = 3600;
            } else {
                shift = 0;
            }
        }
        if h >= 24 {
            d += 1;
            h = 0;
        }
        if d > i64::from(days_in_month(y, mo)) {
            mo += 1;
            d = 1;
        }
        if mo > 12 {
            y += 1;
            mo = 1;
        }
        if y > MAX_YEAR {
            return None;
        }
        if !cal.years.contains(y) {
            (y, mo, d, h, m, s, shift) = (y + 1, 1, 1, 0, 0, 0, 0);
            continue 'walk;
        }
        // Match from the outside in; a field that fails resets the inner
        // ones. Each field is checked once per pass, as the engine does: the
        // day is not checked again when the hour moves on.
        while !fits(cal.months, i64::from(mo)) {
            (mo, d, h, m, s, shift) = (mo + 1, 1, 0, 0, 0, 0);
            if mo > 12 {
                continue 'walk;
            }
        }
        while !fits(cal.days_of_month, d) || !fits(cal.days_of_week, weekday(y, mo, d, h, m, s)) {
            (d, h, m, s, shift) = (d + 1, 0, 0, 0, 0);
            if d > i64::from(days_in_month(y, mo)) {
                continue 'walk;
            }
        }
        while !fits(cal.hours, h) {
            (h, m, s, shift) = (h + 1, 0, 0, 0);
            if h >= 24 {
                continue 'walk;
            }
        }
        while !fits(cal.minutes, m) {
            (m, s) = (m + 1, 0);
            if m >= 60 {
                continue 'walk;
            }
        }
        while !fits(cal.seconds, s) {
            s += 1;
            if s >= 60 {
                continue 'walk;
            }
        }
        let found = go_date(tz, y, mo, d, h, m, s);
        if i64::from(local(tz, found).hour()) != h {
            (h, m, s) = (h + 1, 0, 0);
            continue 'walk;
        }
        return Some(found + shift);
    }
}

/// The engine's next nominal time strictly after `after` (Temporal's
/// `GetNextTime` without jitter, start, end or exclusions, which we never send).
pub fn engine_next(cadence: &Cadence, after: DateTime<Utc>) -> Option<DateTime<Utc>> {
    let secs = after.timestamp();
    let next = match cadence {
        Cadence::Interval { every } => {
            let step = i64::try_from(every.as_std().as_secs())
                .unwrap_or(i64::MAX)
                .max(1);
            secs.div_euclid(step).checked_add(1)?.checked_mul(step)?
        }
        Cadence::Cron { cron, timezone, .. } => engine_calendars(cron.schedule())
            .iter()
            .filter_map(|cal| calendar_next(cal, timezone.tz(), secs))
            .min()?,
    };
    DateTime::from_timestamp(next, 0).filter(|t| t.year() <= MAX_YEAR)
}

/// The engine's times after `after`, each found from the one before, as the
/// scheduler and `ListScheduleMatchingTimes` chain them. The engine's walk
/// always moves forward; the guard only keeps a broken model from spinning.
pub fn engine_times(
    cadence: &Cadence,
    after: DateTime<Utc>,
) -> impl Iterator<Item = DateTime<Utc>> + '_ {
    std::iter::successors(engine_next(cadence, after), move |t| {
        engine_next(cadence, *t).filter(|next| next > t)
    })
}
