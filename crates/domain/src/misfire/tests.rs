use super::*;
use crate::duration::IsoDuration;
use crate::trigger::{Cadence, CatchupLimit};
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
        calendar: None,
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
    use crate::calendar::{DstPolicy, Repeated, Skipped};
    use crate::trigger::{CronExpr, TimeZoneName};
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

/// Under a business-day offset only some of the cadence's times are the
/// trigger's (here every third, as one day a month is of a daily cadence):
/// the rule counts, windows and compresses over those alone.
#[test]
fn the_rule_counts_only_the_triggers_own_times() {
    // The times at 0, 30, 60 … are the trigger's; its cadence fires every 10.
    let own: IsTime<'_> = &|at: DateTime<Utc>| (at - t(0)).num_seconds() % 30 == 0;
    // Compress, 25 seconds late: the cadence's 100 and 110 are no times of
    // the trigger, so the fire at 90 runs itself, from the previous own
    // time (60), not for the cadence's latest time.
    let tr = trigger(MisfirePolicy::Compress, 10);
    assert_eq!(
        decide_among(&tr, own, fire(90, 115, None)),
        Decision::Run {
            window_start: Some(t(60))
        }
    );
    assert_eq!(
        decide(&tr, fire(90, 115, None)),
        Decision::Compress {
            latest: t(110),
            window_start: Some(t(80))
        }
    );
    // Catch-up with a limit of 2: two of the cadence's times behind, but
    // none of the trigger's, so it runs; four of its own behind, it skips
    // and the newest two of its own are caught up.
    let tr = trigger(MisfirePolicy::Catchup, 2);
    assert_eq!(
        decide_among(&tr, own, fire(90, 115, None)),
        Decision::Run {
            window_start: Some(t(60))
        }
    );
    assert_eq!(
        decide_among(&tr, own, fire(90, 215, None)),
        Decision::Skip(SkipReason::CatchupLimit)
    );
    assert_eq!(
        catch_up_times_among(&tr, own, t(90), t(215)),
        vec![t(180), t(210)]
    );
}
