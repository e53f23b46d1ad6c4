//! An activity's times under a business calendar: which of its cadence's
//! times run, which the calendar excludes and why, and which roll to
//! another business day (at the same wall time in the calendar's zone).
//!
//! Pure: the caller brings the calendar and the cadence's times. The same
//! [`fate`] answers the preview, `next_fires`, the timeline and the
//! launcher, so what is shown is what runs.

use std::collections::BTreeMap;

use chrono::{DateTime, Datelike, Days, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::{BusinessCalendar, BusinessDayRule, NotBusiness, Roll};
use crate::calendar::{NominalTime, TimeNote, WallTime, resolve};

named_enum! {
    /// How a trigger uses its calendar.
    pub enum CalendarMode ("calendar mode") {
        /// No fire on a non-business day or inside a blackout.
        Exclude = "exclude",
        /// A time on a non-business day is skipped or rolled (`roll`);
        /// none inside a blackout.
        BusinessDays = "business_days",
    }
}

named_enum! {
    /// What a time after the calendar's `covered_until` does.
    pub enum BeyondCoverage ("beyond_coverage") {
        /// It is judged by what the calendar knows (its weekend days,
        /// blackouts and the holidays it lists).
        Run = "run",
        /// It is skipped with reason `beyond_coverage`.
        Skip = "skip",
        /// It is skipped with reason `beyond_coverage` and the activity is
        /// paused until someone extends the calendar and resumes it.
        Pause = "pause",
    }
}

/// A scheduled trigger's calendar: which one, and how it applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CalendarRule {
    /// The calendar's ID (`/v1/calendars/{id}`).
    pub id: Uuid,
    pub mode: CalendarMode,
    /// `skip` in mode `exclude`.
    pub roll: Roll,
    pub beyond_coverage: BeyondCoverage,
    /// The cron's business-day offset (`BD3`): the cadence is then a
    /// superset (every day of the allowed months) and only the offset's day
    /// of each month is a time of the trigger. Set from the cron with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub business_day: Option<BusinessDayRule>,
}

/// Why the calendar keeps a time from running at its own instant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CalendarReason {
    Holiday { name: String },
    Weekend,
    Blackout { name: Option<String> },
    BeyondCoverage,
}

/// What the calendar does with one time of the cadence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fate {
    Run,
    /// Not a time of the trigger at all: a time of the plain cadence on a
    /// day other than the business-day offset's. Nothing runs and nothing
    /// is recorded, as for any instant the cron does not name.
    NotATime,
    /// Does not run.
    Excluded(CalendarReason),
    /// Does not run at its own time; runs at `to` instead, if `to` itself
    /// runs ([`fate`] of `to`). `None`: no business day within reach.
    Rolled {
        to: Option<DateTime<Utc>>,
        reason: CalendarReason,
    },
}

pub(super) fn local_date(calendar: &BusinessCalendar, at: DateTime<Utc>) -> NaiveDate {
    at.with_timezone(&calendar.timezone().tz()).date_naive()
}

/// `at`'s wall time on `date`, in the calendar's zone: the first occurrence
/// of a repeated time, the first instant after a gap for a missing one.
fn same_wall_time(
    calendar: &BusinessCalendar,
    at: DateTime<Utc>,
    date: NaiveDate,
) -> DateTime<Utc> {
    let tz = calendar.timezone().tz();
    let time = at.with_timezone(&tz).time();
    match resolve(tz, date.and_time(time)) {
        WallTime::Unique(t) | WallTime::Repeated(t, _) | WallTime::Skipped(t) => t,
    }
}

/// What `rule` makes of the time `at`.
pub fn fate(calendar: &BusinessCalendar, rule: &CalendarRule, at: DateTime<Utc>) -> Fate {
    let date = local_date(calendar, at);
    if let Some(offset) = rule.business_day {
        let day = calendar.business_day_of_month(date.year(), date.month(), offset);
        if day.date != Some(date) {
            return Fate::NotATime;
        }
        // Finding the day looked past the coverage (`BDL` in a month the
        // calendar covers only in part): the day may be wrong, so the time
        // is beyond coverage as a time on an uncovered date is.
        if day.beyond_coverage && rule.beyond_coverage != BeyondCoverage::Run {
            return Fate::Excluded(CalendarReason::BeyondCoverage);
        }
    }
    if !calendar.covers(date) && rule.beyond_coverage != BeyondCoverage::Run {
        return Fate::Excluded(CalendarReason::BeyondCoverage);
    }
    if let Some(blackout) = calendar.in_blackout(at) {
        return Fate::Excluded(CalendarReason::Blackout {
            name: blackout.name.clone(),
        });
    }
    let reason = match calendar.reason_not_business(date) {
        None => return Fate::Run,
        Some(NotBusiness::Weekend) => CalendarReason::Weekend,
        Some(NotBusiness::Holiday { name }) => CalendarReason::Holiday {
            name: name.to_owned(),
        },
    };
    match (rule.mode, rule.roll) {
        (CalendarMode::Exclude, _) | (_, Roll::Skip) => Fate::Excluded(reason),
        (CalendarMode::BusinessDays, roll) => Fate::Rolled {
            to: calendar
                .roll(date, roll)
                .date
                .map(|d| same_wall_time(calendar, at, d)),
            reason,
        },
    }
}

/// Whether `at`, a time of the trigger's plain cadence, is a time of the
/// trigger: always, but under a business-day offset only on the offset's
/// day of the month.
pub fn is_time(calendar: &BusinessCalendar, rule: &CalendarRule, at: DateTime<Utc>) -> bool {
    rule.business_day.is_none() || fate(calendar, rule, at) != Fate::NotATime
}

/// Where `at` runs, if anywhere: itself, or the time it rolls to when that
/// time runs.
pub fn runs_at(
    calendar: &BusinessCalendar,
    rule: &CalendarRule,
    at: DateTime<Utc>,
) -> Option<DateTime<Utc>> {
    match fate(calendar, rule, at) {
        Fate::Run => Some(at),
        Fate::NotATime | Fate::Excluded(_) => None,
        Fate::Rolled { to, .. } => {
            to.filter(|to| *to != at && fate(calendar, rule, *to) == Fate::Run)
        }
    }
}

/// How many of the cadence's times one question looks at before giving up
/// (a calendar that excludes everything, a frequent cadence in a long
/// blackout).
pub const MAX_SCANNED: usize = 200_000;

/// Whether no time after `t` (a time of the cadence) can land at or before
/// `cutoff`: `previous` rolls land before their time, but never before the
/// last business day before `t`'s date.
fn settled_forward(
    calendar: &BusinessCalendar,
    rule: &CalendarRule,
    t: DateTime<Utc>,
    cutoff: DateTime<Utc>,
) -> bool {
    if t <= cutoff {
        return false;
    }
    if rule.roll != Roll::Previous {
        return true;
    }
    let day_before = local_date(calendar, t).checked_sub_days(Days::new(1));
    day_before
        .and_then(|d| calendar.roll(d, Roll::Previous).date)
        .is_some_and(|d| d > local_date(calendar, cutoff))
}

fn settled_backward(
    calendar: &BusinessCalendar,
    rule: &CalendarRule,
    t: DateTime<Utc>,
    cutoff: DateTime<Utc>,
) -> bool {
    if t >= cutoff {
        return false;
    }
    if rule.roll != Roll::Next {
        return true;
    }
    let day_after = local_date(calendar, t).checked_add_days(Days::new(1));
    day_after
        .and_then(|d| calendar.roll(d, Roll::Next).date)
        .is_some_and(|d| d < local_date(calendar, cutoff))
}

/// The first `count` times that run strictly after `after`, from the
/// cadence's times after `after` (`times`, ascending, already clipped to the
/// trigger's start and end). A rolled time carries the note `normal`.
pub fn runs_after(
    calendar: &BusinessCalendar,
    rule: &CalendarRule,
    times: impl Iterator<Item = NominalTime>,
    after: DateTime<Utc>,
    count: usize,
) -> Vec<NominalTime> {
    let mut out: BTreeMap<DateTime<Utc>, NominalTime> = BTreeMap::new();
    for t in times.take(MAX_SCANNED) {
        // Past the coverage, under `skip` or `pause`, nothing later runs.
        if rule.beyond_coverage != BeyondCoverage::Run
            && !calendar.covers(local_date(calendar, t.at))
        {
            break;
        }
        if out.len() >= count {
            let cutoff = out.keys().nth(count - 1).copied();
            if cutoff.is_some_and(|c| settled_forward(calendar, rule, t.at, c)) {
                break;
            }
        }
        match runs_at(calendar, rule, t.at) {
            Some(at) if at == t.at => {
                out.insert(at, t);
            }
            Some(at) if at > after => {
                out.entry(at).or_insert(NominalTime {
                    at,
                    note: TimeNote::Normal,
                });
            }
            _ => {}
        }
    }
    out.into_values().take(count).collect()
}

/// The last `count` times that run strictly before `before`, newest first,
/// from the cadence's times before `before` (`times`, descending).
pub fn runs_before(
    calendar: &BusinessCalendar,
    rule: &CalendarRule,
    times: impl Iterator<Item = NominalTime>,
    before: DateTime<Utc>,
    count: usize,
) -> Vec<NominalTime> {
    let mut out: BTreeMap<DateTime<Utc>, NominalTime> = BTreeMap::new();
    for t in times.take(MAX_SCANNED) {
        if out.len() >= count {
            let cutoff = out.keys().rev().nth(count - 1).copied();
            if cutoff.is_some_and(|c| settled_backward(calendar, rule, t.at, c)) {
                break;
            }
        }
        match runs_at(calendar, rule, t.at) {
            Some(at) if at == t.at => {
                out.insert(at, t);
            }
            Some(at) if at < before => {
                out.entry(at).or_insert(NominalTime {
                    at,
                    note: TimeNote::Normal,
                });
            }
            _ => {}
        }
    }
    out.into_values().rev().take(count).collect()
}

/// One time of a timeline under a calendar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    pub at: DateTime<Utc>,
    pub note: TimeNote,
    pub outcome: Outcome,
    /// Says what the calendar did, for people: `holiday: "Independence
    /// Day" in us-nyse v3`, `rolled from 2026-07-03T09:00 to
    /// 2026-07-06T09:00 (...)`. `None` for an ordinary time.
    pub detail: Option<String>,
}

/// What became of a planned time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Runs at its own time.
    Run,
    /// Does not run.
    Excluded(CalendarReason),
    /// Does not run here; runs at the time named in the detail (or nowhere
    /// when that time does not run either).
    RolledAway(CalendarReason),
    /// Runs here for a time of the cadence that rolled to it.
    RolledHere,
}

/// The calendar as the details name it: its name and version.
#[derive(Debug, Clone, Copy)]
pub struct Named<'a> {
    pub calendar: &'a BusinessCalendar,
    pub version: i64,
}

impl Named<'_> {
    fn describe(&self, reason: &CalendarReason) -> String {
        let of = format!("in {} v{}", self.calendar.name(), self.version);
        match reason {
            CalendarReason::Holiday { name } => format!("holiday: {name:?} {of}"),
            CalendarReason::Weekend => format!("weekend {of}"),
            CalendarReason::Blackout { name: Some(name) } => format!("blackout: {name:?} {of}"),
            CalendarReason::Blackout { name: None } => format!("blackout {of}"),
            CalendarReason::BeyondCoverage => format!(
                "beyond coverage: {} is covered until {}",
                self.calendar.name(),
                self.calendar
                    .covered_until()
                    .map_or_else(|| "-".to_owned(), |d| d.to_string())
            ),
        }
    }

    fn wall(&self, at: DateTime<Utc>) -> String {
        at.with_timezone(&self.calendar.timezone().tz())
            .format("%Y-%m-%dT%H:%M")
            .to_string()
    }

    fn rolled(&self, from: DateTime<Utc>, to: Option<DateTime<Utc>>, why: &str) -> String {
        match to {
            Some(to) => format!(
                "rolled from {} to {} ({why})",
                self.wall(from),
                self.wall(to)
            ),
            None => format!("rolled from {} to no business day ({why})", self.wall(from)),
        }
    }
}

/// The timeline of `[from, to)` under the calendar: each of the cadence's
/// times in the range (`in_range`, ascending) with its outcome, and each
/// time in the range that a time of the cadence rolled to, from in or out of
/// the range (`near`: the cadence's times just outside it that may roll in).
pub fn plan(
    named: Named<'_>,
    rule: &CalendarRule,
    in_range: &[NominalTime],
    near: &[NominalTime],
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> Vec<Planned> {
    let calendar = named.calendar;
    let mut out: BTreeMap<DateTime<Utc>, Planned> = BTreeMap::new();
    let mut rolled_in: Vec<(DateTime<Utc>, DateTime<Utc>, String)> = Vec::new();
    for t in in_range.iter().chain(near) {
        let own = in_range.contains(t);
        let (outcome, detail) = match fate(calendar, rule, t.at) {
            Fate::NotATime => continue,
            Fate::Run => (Outcome::Run, None),
            Fate::Excluded(reason) => {
                let detail = named.describe(&reason);
                (Outcome::Excluded(reason), Some(detail))
            }
            Fate::Rolled { to: target, reason } => {
                let why = named.describe(&reason);
                let detail = named.rolled(t.at, target, &why);
                if let Some(target) = target
                    && target != t.at
                    && fate(calendar, rule, target) == Fate::Run
                {
                    rolled_in.push((target, t.at, detail.clone()));
                }
                (Outcome::RolledAway(reason), Some(detail))
            }
        };
        if own {
            out.insert(
                t.at,
                Planned {
                    at: t.at,
                    note: t.note,
                    outcome,
                    detail,
                },
            );
        }
    }
    for (target, _, detail) in rolled_in {
        if target < from || target >= to {
            continue;
        }
        // A time the cadence has there runs anyway; say it also takes the
        // rolled one (the first that rolled there, in time order).
        out.entry(target)
            .and_modify(|p| {
                if p.outcome == Outcome::Run && p.detail.is_none() {
                    p.detail = Some(detail.clone());
                }
            })
            .or_insert(Planned {
                at: target,
                note: TimeNote::Normal,
                outcome: Outcome::RolledHere,
                detail: Some(detail),
            });
    }
    out.into_values().collect()
}
