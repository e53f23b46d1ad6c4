//! Context windows: the span of time a run covers.

use chrono::{DateTime, Utc};

use super::trigger::Cadence;

/// The nominal fire time just before `at` (strictly earlier), if any.
pub fn previous_nominal(cadence: &Cadence, at: DateTime<Utc>) -> Option<DateTime<Utc>> {
    match cadence {
        Cadence::Interval { every } => Some(at - every.as_chrono()),
        Cadence::Cron { cron, timezone } => {
            let tz = timezone.tz();
            // Look back further and further until a fire time shows up; cron
            // gaps range from a minute to years (Feb 29).
            for days in [1i64, 32, 366, 366 * 8] {
                let from = (at - chrono::Duration::days(days)).with_timezone(&tz);
                let mut cursor = cron.next_after(from)?;
                if cursor.with_timezone(&Utc) >= at {
                    continue;
                }
                let mut steps = 0;
                while let Some(next) = cron.next_after(cursor) {
                    if next.with_timezone(&Utc) >= at || steps > 100_000 {
                        break;
                    }
                    cursor = next;
                    steps += 1;
                }
                return Some(cursor.with_timezone(&Utc));
            }
            None
        }
    }
}

/// Nominal fire times in `(after, until]`, oldest first, at most `cap`.
pub fn nominal_times_between(
    cadence: &Cadence,
    after: DateTime<Utc>,
    until: DateTime<Utc>,
    cap: usize,
) -> Vec<DateTime<Utc>> {
    let mut out = Vec::new();
    match cadence {
        Cadence::Interval { every } => {
            // Temporal aligns interval schedules to the Unix epoch.
            let step = every.as_std().as_secs().max(1) as i64;
            let first = (after.timestamp().div_euclid(step) + 1) * step;
            let mut t = first;
            while t <= until.timestamp() && out.len() < cap {
                if let Some(at) = DateTime::from_timestamp(t, 0) {
                    out.push(at);
                }
                t += step;
            }
        }
        Cadence::Cron { cron, timezone } => {
            let mut cursor = after.with_timezone(&timezone.tz());
            while out.len() < cap {
                let Some(next) = cron.next_after(cursor) else {
                    break;
                };
                if next.with_timezone(&Utc) > until {
                    break;
                }
                out.push(next.with_timezone(&Utc));
                cursor = next;
            }
        }
    }
    out
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
        };
        // 09:00 Berlin is 08:00 UTC in winter.
        assert_eq!(
            previous_nominal(&cadence, at(8, 0, 0)),
            Some(at(8, 0, 0) - chrono::Duration::days(1))
        );
        let hourly = Cadence::Cron {
            cron: CronExpr::parse("0 * * * *").unwrap(),
            timezone: TimeZoneName::default(),
        };
        assert_eq!(previous_nominal(&hourly, at(9, 0, 0)), Some(at(8, 0, 0)));
        assert_eq!(previous_nominal(&hourly, at(9, 30, 0)), Some(at(9, 0, 0)));
        assert_eq!(
            nominal_times_between(&hourly, at(9, 0, 0), at(11, 0, 0), 10),
            vec![at(10, 0, 0), at(11, 0, 0)]
        );
    }
}
