//! Context windows: the span of time a run covers.

use chrono::{DateTime, Utc};

use super::calendar::{NominalTime, times_after, times_before};
use super::trigger::{Cadence, ScheduledTrigger};

/// The nominal fire time just before `at` (strictly earlier), if any.
pub fn previous_nominal(cadence: &Cadence, at: DateTime<Utc>) -> Option<DateTime<Utc>> {
    times_before(cadence, at).next().map(|t| t.at)
}

/// Nominal fire times in `(after, until]`, oldest first, at most `cap`.
pub fn nominal_times_between(
    cadence: &Cadence,
    after: DateTime<Utc>,
    until: DateTime<Utc>,
    cap: usize,
) -> Vec<DateTime<Utc>> {
    times_after(cadence, after)
        .map(|t| t.at)
        .take_while(|t| *t <= until)
        .take(cap)
        .collect()
}

/// A trigger's nominal times strictly after `after`, within its `start_at`
/// (inclusive) and `end_at` (inclusive), as the engine clips the spec's
/// start and end times.
pub fn upcoming_times(
    trigger: &ScheduledTrigger,
    after: DateTime<Utc>,
) -> impl Iterator<Item = NominalTime> + '_ {
    // Times are whole seconds: start a second before `start_at` so that it
    // counts, without walking from `after` through a far-off start.
    let from = match trigger.start_at {
        Some(start) if start > after => start - chrono::Duration::seconds(1),
        _ => after,
    };
    times_after(&trigger.cadence, from)
        .skip_while(|t| trigger.start_at.is_some_and(|s| t.at < s))
        .take_while(|t| trigger.end_at.is_none_or(|e| t.at <= e))
}

/// A trigger's next `count` nominal times strictly after `after` (see
/// [`upcoming_times`]).
pub fn upcoming(
    trigger: &ScheduledTrigger,
    after: DateTime<Utc>,
    count: usize,
) -> Vec<NominalTime> {
    upcoming_times(trigger, after).take(count).collect()
}

/// A trigger's nominal times strictly before `before` within its
/// `start_at`/`end_at`, newest first.
pub fn preceding_times(
    trigger: &ScheduledTrigger,
    before: DateTime<Utc>,
) -> impl Iterator<Item = NominalTime> + '_ {
    let from = match trigger.end_at {
        Some(end) if end < before => end + chrono::Duration::seconds(1),
        _ => before,
    };
    times_before(&trigger.cadence, from)
        .skip_while(|t| trigger.end_at.is_some_and(|e| t.at > e))
        .take_while(|t| trigger.start_at.is_none_or(|s| t.at >= s))
}

/// A trigger's `count` nominal times strictly before `before` within its
/// `start_at`/`end_at`, newest first.
pub fn preceding(
    trigger: &ScheduledTrigger,
    before: DateTime<Utc>,
    count: usize,
) -> Vec<NominalTime> {
    preceding_times(trigger, before).take(count).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::duration::IsoDuration;
    use crate::trigger::{CronExpr, TimeZoneName};
    use chrono::TimeZone;

    fn at(h: u32, m: u32, s: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 3, 1, h, m, s).unwrap()
    }

    #[test]
    fn interval_previous_and_between() {
        let cadence = Cadence::Interval {
            every: IsoDuration::from_secs(30),
        };
        assert_eq!(previous_nominal(&cadence, at(9, 0, 0)), Some(at(8, 59, 30)));
        assert_eq!(
            nominal_times_between(&cadence, at(9, 0, 0), at(9, 1, 10), 10),
            vec![at(9, 0, 30), at(9, 1, 0)]
        );
    }

    #[test]
    fn cron_previous_respects_zone() {
        let cadence = Cadence::Cron {
            cron: CronExpr::parse("0 9 * * *").unwrap(),
            timezone: TimeZoneName::parse("Europe/Berlin").unwrap(),
            dst: Default::default(),
        };
        // 09:00 Berlin is 08:00 UTC in winter.
        assert_eq!(
            previous_nominal(&cadence, at(8, 0, 0)),
            Some(at(8, 0, 0) - chrono::Duration::days(1))
        );
        let hourly = Cadence::Cron {
            cron: CronExpr::parse("0 * * * *").unwrap(),
            timezone: TimeZoneName::default(),
            dst: Default::default(),
        };
        assert_eq!(previous_nominal(&hourly, at(9, 0, 0)), Some(at(8, 0, 0)));
        assert_eq!(previous_nominal(&hourly, at(9, 30, 0)), Some(at(9, 0, 0)));
        assert_eq!(
            nominal_times_between(&hourly, at(9, 0, 0), at(11, 0, 0), 10),
            vec![at(10, 0, 0), at(11, 0, 0)]
        );
    }

    #[test]
    fn upcoming_and_preceding_clip_to_start_and_end() {
        use crate::trigger::{CatchupLimit, MisfirePolicy};
        let trigger = ScheduledTrigger {
            cadence: Cadence::Interval {
                every: IsoDuration::from_secs(60),
            },
            misfire_policy: MisfirePolicy::Skip,
            catchup_limit: CatchupLimit::default(),
            misfire_grace: IsoDuration::from_secs(60),
            start_at: Some(at(9, 5, 0)),
            end_at: Some(at(9, 8, 0)),
            jitter: None,
            calendar: None,
        };
        let ats = |v: Vec<NominalTime>| v.into_iter().map(|t| t.at).collect::<Vec<_>>();
        // Start and end are both inclusive, like the engine's.
        assert_eq!(
            ats(upcoming(&trigger, at(9, 0, 0), 10)),
            vec![at(9, 5, 0), at(9, 6, 0), at(9, 7, 0), at(9, 8, 0)]
        );
        assert_eq!(ats(upcoming(&trigger, at(9, 6, 0), 1)), vec![at(9, 7, 0)]);
        assert_eq!(
            ats(preceding(&trigger, at(10, 0, 0), 2)),
            vec![at(9, 8, 0), at(9, 7, 0)]
        );
        assert_eq!(ats(preceding(&trigger, at(9, 6, 0), 10)), vec![at(9, 5, 0)]);
        assert!(upcoming(&trigger, at(9, 8, 0), 10).is_empty());
    }
}
