//! One clock: the nominal times of a trigger, and how they meet the engine.
//!
//! - [`times_after`] / [`times_before`] are THE definition of the times the
//!   service plans, runs and accounts for (cron with its zone and DST policy,
//!   or an epoch-aligned interval), lazily, in either direction, uncapped.
//! - [`engine_times`] models exactly what Temporal fires for the spec that
//!   `temporal::translate` sends (built from [`engine_calendars`]).
//! - [`dst_exceptions`] is where the two differ, which only happens around
//!   offset changes: the times the policy wants and the engine will not fire
//!   (`extra`: the service starts them itself under their contract workflow
//!   ID), and the times the engine fires that the policy does not want
//!   (`excluded`: recorded as skipped with reason `dst_policy`).
//!
//! So `(engine − excluded) ∪ extra == policy` over any range; the conformance
//! test checks it against a real dev server. docs/TIME.md tells the story.

mod cron;
mod days;
mod dst;
mod engine;
mod engine_days;
mod times;

use chrono::{DateTime, Duration, Utc};

pub use cron::{CronSchedule, DayRule, FieldSet};
pub use days::{MonthDay, WeekDay};
pub use dst::{DstPolicy, Repeated, Skipped, Transition, WallTime, resolve, transitions};
pub use engine::{EngineCalendar, engine_calendars, engine_next, engine_times};
pub use engine_days::YearSet;
pub use times::{
    FIRST_YEAR, LAST_YEAR, NominalTime, NominalTimes, TimeNote, day_times, times_after,
    times_before,
};

use crate::trigger::Cadence;

/// Where the DST policy and the engine disagree in a range.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DstExceptions {
    /// Wanted by the policy, not fired by the engine: the service runs them.
    pub extra: Vec<NominalTime>,
    /// Fired by the engine, not wanted by the policy: recorded as skipped.
    pub excluded: Vec<DateTime<Utc>>,
}

/// How far from an offset change the engine and the policy can disagree: the
/// engine looks one hour ahead, and a change at midnight touches the day
/// before. Two days is generous.
const REACH: Duration = Duration::days(2);

/// The DST exceptions in `(after, until]`, oldest first. Empty for intervals
/// and for zones without offset changes in the range; otherwise only the
/// days around each change are compared, so a long range costs little.
pub fn dst_exceptions(
    cadence: &Cadence,
    after: DateTime<Utc>,
    until: DateTime<Utc>,
) -> DstExceptions {
    let mut out = DstExceptions::default();
    let Cadence::Cron { timezone, .. } = cadence else {
        return out;
    };
    // Nothing happens outside the years; clamping also keeps the arithmetic
    // below far from chrono's limits, whatever range a caller passes.
    let (first, end) = times::domain();
    let (after, until) = (
        after.clamp(first - REACH, end),
        until.clamp(first, end + REACH),
    );
    if until <= after {
        return out;
    }
    for (from, to) in change_windows(timezone.tz(), after, until) {
        let policy = policy_between(cadence, from, to);
        let engine = engine_between(cadence, from, to);
        out.extra.extend(
            policy
                .iter()
                .filter(|p| engine.binary_search(&p.at).is_err()),
        );
        out.excluded.extend(
            engine
                .iter()
                .filter(|e| policy.binary_search_by_key(*e, |p| p.at).is_err()),
        );
    }
    out
}

/// The stretches of `(after, until]` within `REACH` of an offset change of
/// `tz`, merged where they touch: the only places where the policy and the
/// engine can disagree.
fn change_windows(
    tz: chrono_tz::Tz,
    after: DateTime<Utc>,
    until: DateTime<Utc>,
) -> Vec<(DateTime<Utc>, DateTime<Utc>)> {
    let mut windows: Vec<(DateTime<Utc>, DateTime<Utc>)> = Vec::new();
    for change in transitions(tz, after - REACH, until + REACH) {
        let (from, to) = (
            (change.at - REACH).max(after),
            (change.at + REACH).min(until),
        );
        match windows.last_mut() {
            Some(last) if last.1 >= from => last.1 = last.1.max(to),
            _ => windows.push((from, to)),
        }
    }
    windows
}

/// The policy's times in `(from, to]`.
fn policy_between(cadence: &Cadence, from: DateTime<Utc>, to: DateTime<Utc>) -> Vec<NominalTime> {
    times_after(cadence, from)
        .take_while(|t| t.at <= to)
        .collect()
}

/// The engine's times in `(from, to]`, its chain started a day early, on an
/// ordinary day, as the running schedule would have reached this window.
fn engine_between(cadence: &Cadence, from: DateTime<Utc>, to: DateTime<Utc>) -> Vec<DateTime<Utc>> {
    engine_times(cadence, from - Duration::days(1))
        .skip_while(|t| *t <= from)
        .take_while(|t| *t <= to)
        .collect()
}

/// The times in `(after, until]` that the DST policy declines, oldest first:
/// the occurrence of a repeated wall time it does not run (`dst_repeat`),
/// the instant after a gap for a wall time it skips (`dst_gap`), and any
/// time the engine fires that the policy does not want (named by its wall
/// time: `dst_repeat` when that happens twice, else `dst_gap`). These are
/// the times the service accounts for without running them. Empty for
/// intervals and away from offset changes.
pub fn dst_declined(
    cadence: &Cadence,
    after: DateTime<Utc>,
    until: DateTime<Utc>,
) -> Vec<NominalTime> {
    let Cadence::Cron { cron, timezone, .. } = cadence else {
        return Vec::new();
    };
    let (first, end) = times::domain();
    let (after, until) = (
        after.clamp(first - REACH, end),
        until.clamp(first, end + REACH),
    );
    if until <= after {
        return Vec::new();
    }
    // Every time any policy could want: both occurrences, and gaps shifted.
    let widest = Cadence::Cron {
        cron: cron.clone(),
        timezone: *timezone,
        dst: DstPolicy {
            repeated: Repeated::Both,
            skipped: Skipped::Shift,
        },
    };
    let tz = timezone.tz();
    let mut out: Vec<NominalTime> = Vec::new();
    for (from, to) in change_windows(tz, after, until) {
        let policy = policy_between(cadence, from, to);
        let wanted = |at: &DateTime<Utc>| policy.binary_search_by_key(at, |p| p.at).is_ok();
        let possible = policy_between(&widest, from, to);
        out.extend(possible.iter().filter(|p| !wanted(&p.at)));
        for at in engine_between(cadence, from, to) {
            if !wanted(&at) && possible.binary_search_by_key(&at, |p| p.at).is_err() {
                let wall = at.with_timezone(&tz).naive_local();
                let note = match resolve(tz, wall) {
                    WallTime::Repeated(..) => TimeNote::DstRepeat,
                    WallTime::Unique(_) | WallTime::Skipped(_) => TimeNote::DstGap,
                };
                out.push(NominalTime { at, note });
            }
        }
    }
    out.sort_by_key(|t| t.at);
    out.dedup_by_key(|t| t.at);
    out
}

/// Whether a schedule backfill of exactly `[at, at]` makes the engine fire
/// `at`. Temporal starts a backfill a millisecond before its start (the
/// start is inclusive) and takes the engine's next time from there; inside
/// a repeated hour that can differ from the running chain, and a time the
/// engine never fires (a policy's extra time) is not found at all.
pub fn engine_backfills(cadence: &Cadence, at: DateTime<Utc>) -> bool {
    at.checked_sub_signed(Duration::milliseconds(1))
        .and_then(|after| engine_next(cadence, after))
        == Some(at)
}

/// Whether a fire of the engine at `at` is one the DST policy excludes: the
/// policy does not want it, and it is near an offset change of the zone
/// (elsewhere the engine and the policy agree, so a time the policy does not
/// know is not the policy's to refuse, e.g. a fire of an earlier cron
/// delivered after an update).
pub fn dst_excludes(cadence: &Cadence, at: DateTime<Utc>) -> bool {
    let Cadence::Cron { timezone, .. } = cadence else {
        return false;
    };
    let (Some(from), Some(to)) = (at.checked_sub_signed(REACH), at.checked_add_signed(REACH))
    else {
        return false;
    };
    !transitions(timezone.tz(), from, to).is_empty() && policy_time(cadence, at).is_none()
}

/// Whether the policy wants a run at exactly `at`, and with which note.
pub fn policy_time(cadence: &Cadence, at: DateTime<Utc>) -> Option<NominalTime> {
    let before = at.checked_sub_signed(Duration::seconds(1))?;
    times_after(cadence, before).next().filter(|t| t.at == at)
}

/// Whether the engine fires at exactly `at`. Away from offset changes the
/// engine's next time after the second before is exact; near one, the chain
/// starts on an ordinary day before it, as the running schedule's did.
pub fn engine_fires(cadence: &Cadence, at: DateTime<Utc>) -> bool {
    let (first, end) = times::domain();
    if !(first..end).contains(&at) {
        return false;
    }
    let near_change = match cadence {
        Cadence::Cron { timezone, .. } => {
            !transitions(timezone.tz(), at - REACH, at + REACH).is_empty()
        }
        Cadence::Interval { .. } => false,
    };
    if !near_change {
        return engine_next(cadence, at - Duration::seconds(1)) == Some(at);
    }
    engine_times(cadence, at - REACH)
        .find(|t| *t >= at)
        .is_some_and(|t| t == at)
}

#[cfg(test)]
mod tests;
