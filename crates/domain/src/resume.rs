//! What a resume does with the nominal times missed while paused, at any
//! scale: the policy's choice is made over the lazy calendar (no cap), and
//! what does not run is one span, not a list, so neither the answer nor what
//! is stored grows with the length of the pause.

use std::collections::HashSet;

use chrono::{DateTime, Utc};

use super::misfire::SkipReason;
use super::trigger::{MisfirePolicy, ScheduledTrigger};
use super::window::previous_nominal;
use crate::calendar::{times_after, times_before};

/// The missed times that do not run: every nominal time in `[first, last]`
/// that did not run before the pause took effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SkippedSpan {
    pub first: DateTime<Utc>,
    pub last: DateTime<Utc>,
    pub count: u64,
    /// What the span is recorded as; `None` under `skip`, whose missed times
    /// are simply not run (the timeline calls them `paused`).
    pub reason: Option<SkipReason>,
}

/// A resume's decision on every missed time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResumePlan {
    /// Missed times: nominal times in `(since, until]` within the trigger's
    /// `start_at`/`end_at` that had not run.
    pub missed: u64,
    /// The times that run, oldest first: the most recent `catchup_limit`
    /// (catchup), the latest (compress), none (skip).
    pub run: Vec<DateTime<Utc>>,
    /// The others.
    pub skipped: Option<SkippedSpan>,
    /// Compress: where the run's window starts, the end of the last covered
    /// window or, if that is later, the start of the first missed interval.
    pub window_start: Option<DateTime<Utc>>,
}

/// How many of the most recent missed times a policy runs.
fn run_count(policy: MisfirePolicy, trigger: &ScheduledTrigger) -> (usize, Option<SkipReason>) {
    match policy {
        MisfirePolicy::Skip => (0, None),
        MisfirePolicy::Catchup => (
            trigger.catchup_limit.get() as usize,
            Some(SkipReason::CatchupLimit),
        ),
        MisfirePolicy::Compress => (1, Some(SkipReason::Compressed)),
    }
}

/// Decides the nominal times in `(since, until]` that are not in `ran`.
/// `last_window_end` is where the last window a run covered ended.
/// `is_time` says which of the cadence's times are the trigger's own (a
/// business-day offset keeps one day a month of its plain cadence).
pub fn plan_resume(
    trigger: &ScheduledTrigger,
    since: DateTime<Utc>,
    until: DateTime<Utc>,
    ran: &HashSet<DateTime<Utc>>,
    last_window_end: Option<DateTime<Utc>>,
    is_time: &dyn Fn(DateTime<Utc>) -> bool,
) -> ResumePlan {
    let within = |t: &DateTime<Utc>| {
        is_time(*t)
            && trigger.start_at.is_none_or(|s| *t >= s)
            && trigger.end_at.is_none_or(|e| *t <= e)
            && !ran.contains(t)
    };
    let mut forward = times_after(&trigger.cadence, since)
        .map(|t| t.at)
        .take_while(|t| *t <= until)
        .filter(within);
    let Some(first) = forward.next() else {
        return ResumePlan {
            missed: 0,
            run: vec![],
            skipped: None,
            window_start: None,
        };
    };
    let missed = 1 + forward.count() as u64;
    let (count, reason) = run_count(trigger.misfire_policy, trigger);
    // Newest first, from `until` itself.
    let mut backward = times_before(&trigger.cadence, until + chrono::Duration::nanoseconds(1))
        .map(|t| t.at)
        .take_while(|t| *t > since)
        .filter(within);
    let mut run: Vec<DateTime<Utc>> = backward.by_ref().take(count).collect();
    let skipped = backward.next().map(|last| SkippedSpan {
        first,
        last,
        count: missed - run.len() as u64,
        reason,
    });
    run.reverse();
    let window_start = match (trigger.misfire_policy, run.last()) {
        (MisfirePolicy::Compress, Some(_)) => {
            match (last_window_end, previous_nominal(&trigger.cadence, first)) {
                (Some(end), Some(start)) => Some(end.min(start)),
                (end, start) => start.or(end),
            }
        }
        _ => None,
    };
    ResumePlan {
        missed,
        run,
        skipped,
        window_start,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::duration::IsoDuration;
    use crate::trigger::{Cadence, CatchupLimit};
    use chrono::TimeZone;

    fn trigger(policy: MisfirePolicy, every: i64, limit: i64) -> ScheduledTrigger {
        ScheduledTrigger {
            cadence: Cadence::Interval {
                every: IsoDuration::from_secs(every as u64),
            },
            misfire_policy: policy,
            catchup_limit: CatchupLimit::new(limit).unwrap(),
            misfire_grace: IsoDuration::from_secs(5),
            start_at: None,
            end_at: None,
            jitter: None,
            calendar: None,
        }
    }

    fn t(s: i64) -> DateTime<Utc> {
        Utc.timestamp_opt(1_767_225_600 + s, 0).unwrap()
    }

    #[test]
    fn each_policy_over_a_pause() {
        // Every 10 s, paused at 5, resumed at 100: 10..=100 missed, 30 ran
        // in the moment before the pause took effect.
        let ran = HashSet::from([t(30)]);
        // (policy, limit, run, skipped span, window start)
        let cases = [
            (
                MisfirePolicy::Skip,
                3,
                vec![],
                Some((10, 100, 9, None)),
                None,
            ),
            (
                MisfirePolicy::Catchup,
                3,
                vec![80, 90, 100],
                Some((10, 70, 6, Some(SkipReason::CatchupLimit))),
                None,
            ),
            (
                MisfirePolicy::Catchup,
                20,
                vec![10, 20, 40, 50, 60, 70, 80, 90, 100],
                None,
                None,
            ),
            (
                MisfirePolicy::Compress,
                3,
                vec![100],
                Some((10, 90, 8, Some(SkipReason::Compressed))),
                Some(0),
            ),
        ];
        for (policy, limit, run, skipped, window) in cases {
            let plan = plan_resume(
                &trigger(policy, 10, limit),
                t(5),
                t(100),
                &ran,
                None,
                &|_| true,
            );
            assert_eq!(plan.missed, 9, "{policy:?}");
            assert_eq!(
                plan.run,
                run.into_iter().map(t).collect::<Vec<_>>(),
                "{policy:?}"
            );
            assert_eq!(
                plan.skipped,
                skipped.map(|(first, last, count, reason)| SkippedSpan {
                    first: t(first),
                    last: t(last),
                    count,
                    reason
                }),
                "{policy:?}"
            );
            assert_eq!(plan.window_start, window.map(t), "{policy:?}");
        }
    }

    #[test]
    fn compress_reaches_back_to_the_last_covered_window() {
        let tr = trigger(MisfirePolicy::Compress, 10, 1);
        let none = HashSet::new();
        // A window that ended before the pause widens the run further back.
        let plan = plan_resume(&tr, t(5), t(100), &none, Some(t(-20)), &|_| true);
        assert_eq!(plan.window_start, Some(t(-20)));
        // One that ended later (a run in the moment of the pause) does not
        // narrow it.
        let plan = plan_resume(&tr, t(5), t(100), &none, Some(t(30)), &|_| true);
        assert_eq!(plan.window_start, Some(t(0)));
    }

    #[test]
    fn nothing_missed_and_start_end_clip() {
        let tr = trigger(MisfirePolicy::Catchup, 10, 3);
        let none = HashSet::new();
        assert_eq!(
            plan_resume(&tr, t(1), t(9), &none, None, &|_| true).missed,
            0
        );
        let clipped = ScheduledTrigger {
            start_at: Some(t(50)),
            end_at: Some(t(70)),
            ..tr
        };
        let plan = plan_resume(&clipped, t(5), t(100), &none, None, &|_| true);
        assert_eq!((plan.missed, plan.run), (3, vec![t(50), t(60), t(70)]));
    }

    #[test]
    fn millions_of_missed_times_are_counted_not_listed() {
        // Every second for 30 days: 2,592,000 missed times.
        let tr = trigger(MisfirePolicy::Catchup, 1, 3);
        let days = 30 * 86_400;
        let plan = plan_resume(&tr, t(0), t(days), &HashSet::new(), None, &|_| true);
        assert_eq!(plan.missed, days as u64);
        assert_eq!(plan.run, vec![t(days - 2), t(days - 1), t(days)]);
        let span = plan.skipped.unwrap();
        assert_eq!(
            (span.first, span.last, span.count),
            (t(1), t(days - 3), days as u64 - 3)
        );
    }
}
