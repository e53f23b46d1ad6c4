//! THE definition of a trigger's nominal times: the times the service plans,
//! runs and accounts for. Lazy in both directions, never capped.

use std::collections::VecDeque;

use chrono::{DateTime, Days, NaiveDate, NaiveTime, Timelike, Utc};
use chrono_tz::Tz;
use serde::Serialize;

use super::cron::CronSchedule;
use super::dst::{DstPolicy, Repeated, Skipped, WallTime, resolve};
use crate::trigger::Cadence;

/// Nominal times exist from 1970 through 2100 (local years for cron): the
/// engine stops at 2100, and before 1970 nothing of ours ran.
pub const FIRST_YEAR: i32 = 1970;
pub const LAST_YEAR: i32 = 2100;

/// What a nominal time has to do with daylight saving.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TimeNote {
    Normal,
    /// Shifted: its wall time did not exist; it runs at the first instant
    /// after the gap.
    DstGap,
    /// Its wall time happened twice.
    DstRepeat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct NominalTime {
    pub at: DateTime<Utc>,
    pub note: TimeNote,
}

/// A cron expression's times on one local day, ascending, each instant once.
pub fn day_times(cron: &CronSchedule, tz: Tz, dst: DstPolicy, day: NaiveDate) -> Vec<NominalTime> {
    let mut out = Vec::new();
    if !cron.matches_day(day) {
        return out;
    }
    for h in cron.hours().values() {
        for m in cron.minutes().values() {
            let Some(time) = NaiveTime::from_hms_opt(u32::from(h), u32::from(m), 0) else {
                continue;
            };
            let note = |at, note| NominalTime { at, note };
            match resolve(tz, day.and_time(time)) {
                WallTime::Unique(at) => out.push(note(at, TimeNote::Normal)),
                WallTime::Repeated(first, last) => match dst.repeated {
                    Repeated::First => out.push(note(first, TimeNote::DstRepeat)),
                    Repeated::Last => out.push(note(last, TimeNote::DstRepeat)),
                    Repeated::Both => {
                        out.push(note(first, TimeNote::DstRepeat));
                        out.push(note(last, TimeNote::DstRepeat));
                    }
                },
                WallTime::Skipped(after_gap) => match dst.skipped {
                    // A gap at the end of the day can shift a time onto the
                    // next day's first instant; if that is one of the next
                    // day's own times, it belongs there, as a normal time.
                    Skipped::Shift if !next_day_owns(cron, tz, day, after_gap) => {
                        out.push(note(after_gap, TimeNote::DstGap))
                    }
                    Skipped::Shift | Skipped::Skip => {}
                },
            }
        }
    }
    // Repeats interleave with later wall times; a shifted time can meet a
    // real one (Berlin `0 2,3`: 02:00 shifts onto 03:00), which then stays
    // a normal time.
    out.sort_by_key(|t| (t.at, t.note != TimeNote::Normal));
    out.dedup_by_key(|t| t.at);
    out
}

fn next_day_owns(cron: &CronSchedule, tz: Tz, day: NaiveDate, at: DateTime<Utc>) -> bool {
    let wall = at.with_timezone(&tz).naive_local();
    wall.date() != day
        && cron.matches_day(wall.date())
        && cron.hours().contains(wall.hour())
        && cron.minutes().contains(wall.minute())
        && wall.second() == 0
}

enum Walk {
    Cron {
        cron: CronSchedule,
        tz: Tz,
        dst: DstPolicy,
        day: Option<NaiveDate>,
        buffer: VecDeque<NominalTime>,
    },
    Interval {
        step: i64,
        next: Option<i64>,
    },
}

/// Nominal times in one direction from a bound (exclusive).
pub struct NominalTimes {
    walk: Walk,
    forward: bool,
    bound: DateTime<Utc>,
    last: Option<DateTime<Utc>>,
}

/// Nominal times strictly after `after`, oldest first.
pub fn times_after(cadence: &Cadence, after: DateTime<Utc>) -> NominalTimes {
    walk(cadence, after, true)
}

/// Nominal times strictly before `before`, newest first.
pub fn times_before(cadence: &Cadence, before: DateTime<Utc>) -> NominalTimes {
    walk(cadence, before, false)
}

fn walk(cadence: &Cadence, bound: DateTime<Utc>, forward: bool) -> NominalTimes {
    let walk = match cadence {
        Cadence::Cron {
            cron,
            timezone,
            dst,
        } => {
            let tz = timezone.tz();
            let local = bound.with_timezone(&tz).date_naive();
            // Start one day out: a day's shifted time can land on the next
            // day's first instant. A bound far outside the years starts at
            // their edge, so it still finds the times inside.
            let first = NaiveDate::from_ymd_opt(FIRST_YEAR, 1, 1).unwrap_or_default();
            let last = NaiveDate::from_ymd_opt(LAST_YEAR, 12, 31).unwrap_or_default();
            let day = if forward {
                local.checked_sub_days(Days::new(1)).map(|d| d.max(first))
            } else {
                local.checked_add_days(Days::new(1)).map(|d| d.min(last))
            };
            Walk::Cron {
                cron: cron.schedule().clone(),
                tz,
                dst: *dst,
                day,
                buffer: VecDeque::new(),
            }
        }
        Cadence::Interval { every } => {
            // Temporal aligns intervals to the Unix epoch, in whole seconds.
            let step = i64::try_from(every.as_std().as_secs())
                .unwrap_or(i64::MAX)
                .max(1);
            // A bound far outside the years starts at their edge.
            let (first, end) = domain();
            let (secs, nanos) = if forward && bound < first {
                (first.timestamp() - 1, 0)
            } else if !forward && bound > end {
                (end.timestamp(), 0)
            } else {
                (bound.timestamp(), bound.timestamp_subsec_nanos())
            };
            let next = if forward {
                secs.div_euclid(step)
                    .checked_add(1)
                    .and_then(|k| k.checked_mul(step))
            } else {
                let floor = secs.div_euclid(step) * step;
                let exact = floor == secs && nanos == 0;
                Some(if exact { floor - step } else { floor })
            };
            Walk::Interval { step, next }
        }
    };
    NominalTimes {
        walk,
        forward,
        bound,
        last: None,
    }
}

/// The instants of the years, in UTC: `[FIRST_YEAR-01-01, (LAST_YEAR+1)-01-01)`.
pub(super) fn domain() -> (DateTime<Utc>, DateTime<Utc>) {
    let start = |y| {
        NaiveDate::from_ymd_opt(y, 1, 1)
            .map(|d| d.and_time(NaiveTime::MIN).and_utc())
            .unwrap_or_default()
    };
    (start(FIRST_YEAR), start(LAST_YEAR + 1))
}

fn in_years(at: DateTime<Utc>) -> bool {
    (FIRST_YEAR..=LAST_YEAR).contains(&chrono::Datelike::year(&at))
}

impl NominalTimes {
    fn raw_next(&mut self) -> Option<NominalTime> {
        let forward = self.forward;
        match &mut self.walk {
            Walk::Interval { step, next } => {
                let secs = (*next)?;
                *next = if forward {
                    secs.checked_add(*step)
                } else {
                    secs.checked_sub(*step)
                };
                let at = DateTime::from_timestamp(secs, 0).filter(|t| in_years(*t))?;
                Some(NominalTime {
                    at,
                    note: TimeNote::Normal,
                })
            }
            Walk::Cron {
                cron,
                tz,
                dst,
                day,
                buffer,
            } => loop {
                let popped = if forward {
                    buffer.pop_front()
                } else {
                    buffer.pop_back()
                };
                if let Some(t) = popped {
                    return Some(t);
                }
                let today = (*day)
                    .filter(|d| (FIRST_YEAR..=LAST_YEAR).contains(&chrono::Datelike::year(d)))?;
                *day = if forward {
                    today.checked_add_days(Days::new(1))
                } else {
                    today.checked_sub_days(Days::new(1))
                };
                buffer.extend(day_times(cron, *tz, *dst, today));
            },
        }
    }
}

impl Iterator for NominalTimes {
    type Item = NominalTime;

    fn next(&mut self) -> Option<NominalTime> {
        loop {
            let t = self.raw_next()?;
            let beyond = if self.forward {
                t.at > self.bound
            } else {
                t.at < self.bound
            };
            // Belt and braces: each instant once, whichever day produced it.
            if beyond && self.last != Some(t.at) {
                self.last = Some(t.at);
                return Some(t);
            }
        }
    }
}
