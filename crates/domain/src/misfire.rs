//! The misfire rule (PRODUCT.md section 3), applied by the launcher when a
//! fire actually runs. Pure: the caller supplies `now` and history.

use chrono::{DateTime, Utc};

use super::calendar::{dst_excludes, times_after, times_before};
use super::trigger::{MisfirePolicy, ScheduledTrigger};

/// Which of a cadence's times are the trigger's own: all of them, except
/// under a business-day offset, whose cadence fires every day and whose
/// calendar keeps one day a month (`business_calendar::is_time`).
pub type IsTime<'a> = &'a dyn Fn(DateTime<Utc>) -> bool;

/// How many of the cadence's times a question looks back over for the
/// trigger's previous own time.
const MAX_LOOK_BACK: usize = 200_000;

/// The trigger's own times in `(after, until]`, oldest first, at most `cap`.
fn own_times_between(
    trigger: &ScheduledTrigger,
    is_time: IsTime<'_>,
    after: DateTime<Utc>,
    until: DateTime<Utc>,
    cap: usize,
) -> Vec<DateTime<Utc>> {
    times_after(&trigger.cadence, after)
        .map(|t| t.at)
        .take_while(|t| *t <= until)
        .filter(|t| is_time(*t))
        .take(cap)
        .collect()
}

/// The trigger's own time before `at`, if any.
fn own_previous(
    trigger: &ScheduledTrigger,
    is_time: IsTime<'_>,
    at: DateTime<Utc>,
) -> Option<DateTime<Utc>> {
    times_before(&trigger.cadence, at)
        .map(|t| t.at)
        .take(MAX_LOOK_BACK)
        .find(|t| is_time(*t))
}

named_enum! {
    /// Why a recorded run did not execute.
    pub enum SkipReason ("skip reason") {
        /// Later than `misfire_grace` (policy `skip`).
        Misfire = "misfire",
        /// Older than the most recent `catchup_limit` missed times (policy `catchup`).
        CatchupLimit = "catchup_limit",
        /// Folded into one run for the latest missed time (policy `compress`).
        Compressed = "compressed",
        /// Its key had `flow.concurrency.limit` runs running
        /// (`on_limit: skip`).
        ConcurrencyLimit = "concurrency_limit",
        /// A fire of the engine that the cron trigger's `dst` policy
        /// excludes (the occurrence of a repeated wall time it does not
        /// run, or a time the engine fires near a gap that it does not want).
        DstPolicy = "dst_policy",
        /// Its key had started `flow.rate_limit.limit` runs within
        /// `flow.rate_limit.period` (`on_limit: skip`).
        RateLimited = "rate_limited",
        /// A later event of its `flow.debounce` key arrived within the
        /// period: that event's run took it (its dispatch names the run).
        Debounced = "debounced",
        /// The trigger's calendar: a holiday.
        Holiday = "holiday",
        /// The trigger's calendar: a weekend day.
        Weekend = "weekend",
        /// The trigger's calendar: inside a blackout window.
        Blackout = "blackout",
        /// The trigger's calendar rolled the time to another business day,
        /// where it runs under that time's own ID.
        Rolled = "rolled",
        /// After the calendar's `covered_until` (`beyond_coverage: skip` or
        /// `pause`).
        BeyondCoverage = "beyond_coverage",
    }
}

impl From<&crate::business_calendar::CalendarReason> for SkipReason {
    fn from(reason: &crate::business_calendar::CalendarReason) -> Self {
        use crate::business_calendar::CalendarReason as C;
        match reason {
            C::Holiday { .. } => Self::Holiday,
            C::Weekend => Self::Weekend,
            C::Blackout { .. } => Self::Blackout,
            C::BeyondCoverage => Self::BeyondCoverage,
        }
    }
}

/// What a misfire policy does with a stretch of missed nominal times: the
/// newest `run` of them run, the older `skipped` do not. One rule for a
/// resume after a pause and for a launcher that finds itself behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MissedSplit<'a, T> {
    pub skipped: &'a [T],
    pub run: &'a [T],
    /// What the skipped times are recorded as; `None` under `skip`, whose
    /// missed times are simply not run (nothing to record).
    pub reason: Option<SkipReason>,
}

/// Splits missed times (oldest first) by policy: `skip` runs none, `catchup`
/// the most recent `catchup_limit`, `compress` the latest (its window then
/// reaches back over the others).
pub fn split_missed<'a, T>(trigger: &ScheduledTrigger, missed: &'a [T]) -> MissedSplit<'a, T> {
    let (run_count, reason) = match trigger.misfire_policy {
        MisfirePolicy::Skip => (0, None),
        MisfirePolicy::Catchup => (
            trigger.catchup_limit.get() as usize,
            Some(SkipReason::CatchupLimit),
        ),
        MisfirePolicy::Compress => (1, Some(SkipReason::Compressed)),
    };
    let (skipped, run) = missed.split_at(missed.len().saturating_sub(run_count));
    MissedSplit {
        skipped,
        run,
        reason,
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Run this fire, covering `[window_start, scheduled_for)`.
    Run { window_start: Option<DateTime<Utc>> },
    /// Do not run this fire.
    Skip(SkipReason),
    /// Do not run this fire; run ONE run for `latest` instead, covering
    /// `[window_start, latest)`.
    Compress {
        latest: DateTime<Utc>,
        window_start: Option<DateTime<Utc>>,
    },
}

/// The facts the rule needs.
#[derive(Debug, Clone, Copy)]
pub struct Fire {
    pub scheduled_for: DateTime<Utc>,
    pub now: DateTime<Utc>,
    /// End of the last window that a run covered (compress widens from here).
    pub last_window_end: Option<DateTime<Utc>>,
    /// Asked for explicitly (a backfill, or a resume's catch-up): runs
    /// whatever its lateness.
    pub requested: bool,
    /// The window a request chose for it (a resume's compressed run: from
    /// where the last covered window ended, over the whole pause).
    pub requested_window_start: Option<DateTime<Utc>>,
}

/// Compress widens a window back to where the last covered window ended.
/// For an explicitly requested time it only ever widens (a backfill of an old
/// time must not start after a newer window's end).
fn compress_window(
    previous: Option<DateTime<Utc>>,
    last_end: Option<DateTime<Utc>>,
) -> Option<DateTime<Utc>> {
    match (previous, last_end) {
        (Some(p), Some(e)) if e < p => Some(e),
        (p, _) => p,
    }
}

/// The window of a compressed run for `latest`: from the end of the last
/// covered window, wherever that is. An old fire delivered late (Temporal
/// caught up after an outage) may find that newer runs already covered part
/// of its span: the window then starts where they ended, so windows never
/// overlap.
fn compressed_start(
    previous: Option<DateTime<Utc>>,
    last_end: Option<DateTime<Utc>>,
    latest: DateTime<Utc>,
) -> Option<DateTime<Utc>> {
    match last_end {
        Some(e) if e < latest => Some(e),
        _ => previous,
    }
}

/// What a catch-up runs once a fire finds itself `catchup_limit` or more
/// nominal times behind: the most recent `catchup_limit` times after it, up
/// to `now`. The first fire of a backlog decides for the whole backlog, so
/// that the set does not slide while the backlog drains: the launcher records
/// these times as asked for, and each runs when its own fire arrives however
/// late by then. Older times of the backlog, decided one by one, find the
/// same newer times ahead of them and are skipped.
pub fn catch_up_times(
    trigger: &ScheduledTrigger,
    scheduled_for: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Vec<DateTime<Utc>> {
    catch_up_times_among(trigger, &|_| true, scheduled_for, now)
}

/// [`catch_up_times`] among the trigger's own times (`is_time`).
pub fn catch_up_times_among(
    trigger: &ScheduledTrigger,
    is_time: IsTime<'_>,
    scheduled_for: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Vec<DateTime<Utc>> {
    let due = own_times_between(trigger, is_time, scheduled_for, now, 1_000_000);
    split_missed(trigger, &due).run.to_vec()
}

pub fn decide(trigger: &ScheduledTrigger, fire: Fire) -> Decision {
    decide_among(trigger, &|_| true, fire)
}

/// [`decide`], counting only the trigger's own times (`is_time`): how far
/// behind a fire is, where its window starts, which time a compressed run
/// is for.
pub fn decide_among(trigger: &ScheduledTrigger, is_time: IsTime<'_>, fire: Fire) -> Decision {
    // Exactly the policy's times run, whatever the engine fires; a time the
    // service asked for is one of the policy's, unless the trigger changed
    // since, and then the policy of now decides.
    if dst_excludes(&trigger.cadence, fire.scheduled_for) {
        return Decision::Skip(SkipReason::DstPolicy);
    }
    let previous = own_previous(trigger, is_time, fire.scheduled_for);
    let policy = trigger.misfire_policy;
    if fire.requested {
        let window_start = match policy {
            MisfirePolicy::Compress => fire
                .requested_window_start
                .or_else(|| compress_window(previous, fire.last_window_end)),
            _ => previous,
        };
        return Decision::Run { window_start };
    }
    match policy {
        MisfirePolicy::Skip => {
            let late = fire.now - fire.scheduled_for;
            if late <= trigger.misfire_grace.as_chrono() {
                Decision::Run {
                    window_start: previous,
                }
            } else {
                Decision::Skip(SkipReason::Misfire)
            }
        }
        MisfirePolicy::Catchup => {
            let limit = trigger.catchup_limit.get() as usize;
            let behind =
                own_times_between(trigger, is_time, fire.scheduled_for, fire.now, limit).len();
            if behind < limit {
                Decision::Run {
                    window_start: previous,
                }
            } else {
                Decision::Skip(SkipReason::CatchupLimit)
            }
        }
        MisfirePolicy::Compress => {
            let due = own_times_between(trigger, is_time, fire.scheduled_for, fire.now, 1_000_000);
            match due.last() {
                None => Decision::Run {
                    window_start: compressed_start(
                        previous,
                        fire.last_window_end,
                        fire.scheduled_for,
                    ),
                },
                Some(&latest) => Decision::Compress {
                    latest,
                    window_start: compressed_start(previous, fire.last_window_end, latest),
                },
            }
        }
    }
}

#[cfg(test)]
mod tests;
