//! The misfire rule (PRODUCT.md section 3), applied by the launcher when a
//! fire actually runs. Pure: the caller supplies `now` and history.

use chrono::{DateTime, Utc};

use super::calendar::dst_excludes;
use super::trigger::{MisfirePolicy, ScheduledTrigger};
use super::window::{nominal_times_between, previous_nominal};

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
    let due = nominal_times_between(&trigger.cadence, scheduled_for, now, 1_000_000);
    split_missed(trigger, &due).run.to_vec()
}

pub fn decide(trigger: &ScheduledTrigger, fire: Fire) -> Decision {
    // Exactly the policy's times run, whatever the engine fires; a time the
    // service asked for is one of the policy's, unless the trigger changed
    // since, and then the policy of now decides.
    if dst_excludes(&trigger.cadence, fire.scheduled_for) {
        return Decision::Skip(SkipReason::DstPolicy);
    }
    let previous = previous_nominal(&trigger.cadence, fire.scheduled_for);
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
                nominal_times_between(&trigger.cadence, fire.scheduled_for, fire.now, limit).len();
            if behind < limit {
                Decision::Run {
                    window_start: previous,
                }
            } else {
                Decision::Skip(SkipReason::CatchupLimit)
            }
        }
        MisfirePolicy::Compress => {
            let due =
                nominal_times_between(&trigger.cadence, fire.scheduled_for, fire.now, 1_000_000);
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
mod tests {
    use super::*;
    use crate::domain::duration::IsoDuration;
    use crate::domain::trigger::{Cadence, CatchupLimit};
    use chrono::TimeZone;

    fn trigger(policy: MisfirePolicy, limit: i64) -> ScheduledTrigger {
        ScheduledTrigger {
            cadence: Cadence::Interval {
                every: IsoDuration::from_secs(10),
            },
            misfire_policy: policy,
            catchup_limit: CatchupLimit::new(limit).unwrap(),
            misfire_grace: IsoDuration::from_secs(5),
            start_at: None,
            end_at: None,
            jitter: None,
        }
    }

    fn t(s: i64) -> DateTime<Utc> {
        Utc.timestamp_opt(1_767_225_600 + s, 0).unwrap()
    }

    fn fire(scheduled: i64, now: i64, last_end: Option<i64>) -> Fire {
        Fire {
            scheduled_for: t(scheduled),
            now: t(now),
            last_window_end: last_end.map(t),
            requested: false,
            requested_window_start: None,
        }
    }

    #[test]
    fn skip_runs_within_grace_only() {
        let tr = trigger(MisfirePolicy::Skip, 10);
        assert_eq!(
            decide(&tr, fire(100, 104, None)),
            Decision::Run {
                window_start: Some(t(90))
            }
        );
        assert_eq!(
            decide(&tr, fire(100, 106, None)),
            Decision::Skip(SkipReason::Misfire)
        );
        let requested = Fire {
            requested: true,
            ..fire(100, 500, None)
        };
        assert_eq!(
            decide(&tr, requested),
            Decision::Run {
                window_start: Some(t(90))
            }
        );
    }

    #[test]
    fn a_backlog_catches_up_its_most_recent_limit_times() {
        let tr = trigger(MisfirePolicy::Catchup, 3);
        // Fired for 100, decided at 155: 110..150 are due; the newest 3 run.
        assert_eq!(
            catch_up_times(&tr, t(100), t(155)),
            vec![t(130), t(140), t(150)]
        );
        // Fewer due than the limit: all of them.
        assert_eq!(catch_up_times(&tr, t(100), t(125)), vec![t(110), t(120)]);
        assert!(catch_up_times(&tr, t(100), t(105)).is_empty());
    }

    #[test]
    fn catchup_runs_the_most_recent_limit() {
        let tr = trigger(MisfirePolicy::Catchup, 3);
        // now = 150: nominal times after 100 are 110..150 (5 of them).
        assert_eq!(
            decide(&tr, fire(100, 150, None)),
            Decision::Skip(SkipReason::CatchupLimit)
        );
        assert_eq!(
            decide(&tr, fire(110, 150, None)),
            Decision::Skip(SkipReason::CatchupLimit)
        );
        assert_eq!(
            decide(&tr, fire(120, 150, None)),
            Decision::Skip(SkipReason::CatchupLimit)
        );
        // The three most recent (130, 140, 150) run.
        assert_eq!(
            decide(&tr, fire(130, 150, None)),
            Decision::Run {
                window_start: Some(t(120))
            }
        );
        assert_eq!(
            decide(&tr, fire(150, 151, None)),
            Decision::Run {
                window_start: Some(t(140))
            }
        );
    }

    #[test]
    fn compress_runs_one_for_the_latest_with_a_widened_window() {
        let tr = trigger(MisfirePolicy::Compress, 10);
        // Last covered window ended at 100; fires 110..150 were missed.
        assert_eq!(
            decide(&tr, fire(110, 152, Some(100))),
            Decision::Compress {
                latest: t(150),
                window_start: Some(t(100))
            }
        );
        // The fire for the latest itself, on time: a normal run, widened.
        assert_eq!(
            decide(&tr, fire(150, 151, Some(100))),
            Decision::Run {
                window_start: Some(t(100))
            }
        );
        // No gap: the ordinary window.
        assert_eq!(
            decide(&tr, fire(160, 161, Some(150))),
            Decision::Run {
                window_start: Some(t(150))
            }
        );
    }

    #[test]
    fn compress_never_overlaps_a_newer_window() {
        let tr = trigger(MisfirePolicy::Compress, 10);
        // Fire 110 delivered at 242, after a compressed run already covered
        // up to 220: its run for 240 covers [220, 240), not [100, 240).
        assert_eq!(
            decide(&tr, fire(110, 242, Some(220))),
            Decision::Compress {
                latest: t(240),
                window_start: Some(t(220))
            }
        );
        // The latest time itself already covered: the ordinary window (the
        // run is then a duplicate of the one that covered it).
        assert_eq!(
            decide(&tr, fire(110, 242, Some(240))),
            Decision::Compress {
                latest: t(240),
                window_start: Some(t(100))
            }
        );
    }

    #[test]
    fn missed_times_split_by_policy() {
        let missed: Vec<i64> = (1..=6).collect();
        // (policy, catchup_limit, skipped, run, recorded reason)
        type Row<'a> = (MisfirePolicy, i64, &'a [i64], &'a [i64], Option<SkipReason>);
        let table: [Row; 6] = [
            (MisfirePolicy::Skip, 10, &[1, 2, 3, 4, 5, 6], &[], None),
            (
                MisfirePolicy::Catchup,
                3,
                &[1, 2, 3],
                &[4, 5, 6],
                Some(SkipReason::CatchupLimit),
            ),
            (
                MisfirePolicy::Catchup,
                10,
                &[],
                &[1, 2, 3, 4, 5, 6],
                Some(SkipReason::CatchupLimit),
            ),
            (
                MisfirePolicy::Catchup,
                6,
                &[],
                &[1, 2, 3, 4, 5, 6],
                Some(SkipReason::CatchupLimit),
            ),
            (
                MisfirePolicy::Compress,
                10,
                &[1, 2, 3, 4, 5],
                &[6],
                Some(SkipReason::Compressed),
            ),
            (
                MisfirePolicy::Compress,
                1,
                &[1, 2, 3, 4, 5],
                &[6],
                Some(SkipReason::Compressed),
            ),
        ];
        for (policy, limit, skipped, run, reason) in table {
            let split = split_missed(&trigger(policy, limit), &missed);
            assert_eq!(
                (split.skipped, split.run, split.reason),
                (skipped, run, reason),
                "{policy:?} limit {limit}"
            );
        }
        // Nothing missed: nothing either way.
        let none: [i64; 0] = [];
        let split = split_missed(&trigger(MisfirePolicy::Compress, 3), &none);
        assert!(split.skipped.is_empty() && split.run.is_empty());
    }

    #[test]
    fn a_fire_the_dst_policy_excludes_is_skipped_whatever_the_misfire_policy() {
        use crate::domain::calendar::{DstPolicy, Repeated, Skipped};
        use crate::domain::trigger::{CronExpr, TimeZoneName};
        let at = |s: &str| s.parse::<DateTime<Utc>>().unwrap();
        for repeated in Repeated::ALL {
            for policy in [
                MisfirePolicy::Skip,
                MisfirePolicy::Catchup,
                MisfirePolicy::Compress,
            ] {
                let tr = ScheduledTrigger {
                    cadence: Cadence::Cron {
                        cron: CronExpr::parse("30 2 * * *").unwrap(),
                        timezone: TimeZoneName::parse("Europe/Berlin").unwrap(),
                        dst: DstPolicy {
                            repeated,
                            skipped: Skipped::Shift,
                        },
                    },
                    ..trigger(policy, 3)
                };
                // Berlin 02:30 twice on 2026-10-25: 00:30Z and 01:30Z.
                for (time, wanted) in [
                    ("2026-10-25T00:30:00Z", repeated != Repeated::Last),
                    ("2026-10-25T01:30:00Z", repeated != Repeated::First),
                ] {
                    for requested in [false, true] {
                        let f = Fire {
                            scheduled_for: at(time),
                            now: at(time),
                            last_window_end: None,
                            requested,
                            requested_window_start: None,
                        };
                        let decision = decide(&tr, f);
                        assert_eq!(
                            decision == Decision::Skip(SkipReason::DstPolicy),
                            !wanted,
                            "{repeated:?} {policy:?} {time} {requested}: {decision:?}"
                        );
                    }
                }
            }
        }
    }
}
