//! Context windows: the span of time a run covers.

use chrono::{DateTime, Utc};

use super::calendar::{times_after, times_before};
use super::trigger::Cadence;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::duration::IsoDuration;
    use crate::domain::trigger::{CronExpr, TimeZoneName};
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
}
