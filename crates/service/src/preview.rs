//! Preview: the nominal times a trigger would have, without saving it, from
//! the same definition every other consumer uses (`domain::calendar`).

use chrono::{DateTime, Utc};

use acp_domain::business_calendar::{BusinessCalendar, runs_after, runs_before};
use acp_domain::calendar::NominalTime;
use acp_domain::trigger::ScheduledTrigger;
use acp_domain::window::{preceding, preceding_times, upcoming, upcoming_times};

/// The most times one preview answers in each list.
pub const MAX_COUNT: usize = 1000;

/// A trigger's times: the next ones after `now`, and, when asked, the ones
/// on either side of an instant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preview {
    pub next: Vec<NominalTime>,
    pub around: Option<Around>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Around {
    pub at: DateTime<Utc>,
    /// Strictly before `at`, oldest first.
    pub before: Vec<NominalTime>,
    /// At or after `at`, oldest first.
    pub after: Vec<NominalTime>,
}

/// `count` times in each list (callers bound it by `MAX_COUNT`), within the
/// trigger's `start_at`/`end_at`, with the business calendar its trigger
/// names (`calendar`) applied: the times that run.
pub fn preview(
    trigger: &ScheduledTrigger,
    calendar: Option<&BusinessCalendar>,
    now: DateTime<Utc>,
    count: usize,
    around: Option<DateTime<Utc>>,
) -> Preview {
    let count = count.min(MAX_COUNT);
    let after = |after: DateTime<Utc>| match (&trigger.calendar, calendar) {
        (Some(rule), Some(calendar)) => {
            runs_after(calendar, rule, upcoming_times(trigger, after), after, count)
        }
        _ => upcoming(trigger, after, count),
    };
    let before = |before: DateTime<Utc>| match (&trigger.calendar, calendar) {
        (Some(rule), Some(calendar)) => runs_before(
            calendar,
            rule,
            preceding_times(trigger, before),
            before,
            count,
        ),
        _ => preceding(trigger, before, count),
    };
    Preview {
        next: after(now),
        around: around.map(|at| {
            let mut before = before(at);
            before.reverse();
            Around {
                at,
                before,
                after: after(at - chrono::Duration::seconds(1))
                    .into_iter()
                    .filter(|t| t.at >= at)
                    .collect(),
            }
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use acp_domain::calendar::{DstPolicy, Repeated, TimeNote};
    use acp_domain::duration::IsoDuration;
    use acp_domain::trigger::{Cadence, CatchupLimit, CronExpr, MisfirePolicy, TimeZoneName};
    use chrono::TimeZone;

    fn berlin(cron: &str, dst: DstPolicy) -> ScheduledTrigger {
        ScheduledTrigger {
            cadence: Cadence::Cron {
                cron: CronExpr::parse(cron).unwrap(),
                timezone: TimeZoneName::parse("Europe/Berlin").unwrap(),
                dst,
            },
            misfire_policy: MisfirePolicy::Skip,
            catchup_limit: CatchupLimit::default(),
            misfire_grace: IsoDuration::from_secs(60),
            start_at: None,
            end_at: None,
            jitter: None,
            calendar: None,
        }
    }

    #[test]
    fn around_a_dst_change_names_it() {
        // Berlin, 2027-03-28: 02:30 does not exist; shifted to 03:00 CEST = 01:00Z.
        let at = Utc.with_ymd_and_hms(2027, 3, 28, 0, 0, 0).unwrap();
        let p = preview(
            &berlin("30 2 * * *", DstPolicy::default()),
            None,
            at,
            2,
            Some(at),
        );
        let around = p.around.unwrap();
        assert_eq!(
            around.before.last().unwrap().at,
            Utc.with_ymd_and_hms(2027, 3, 27, 1, 30, 0).unwrap()
        );
        assert_eq!(
            around.after[0].at,
            Utc.with_ymd_and_hms(2027, 3, 28, 1, 0, 0).unwrap()
        );
        assert_eq!(around.after[0].note, TimeNote::DstGap);
        assert_eq!(p.next, around.after);
        // 2027-10-31: 02:30 happens twice; `both` runs 00:30Z and 01:30Z.
        let at = Utc.with_ymd_and_hms(2027, 10, 31, 0, 0, 0).unwrap();
        let both = DstPolicy {
            repeated: Repeated::Both,
            ..DstPolicy::default()
        };
        let p = preview(&berlin("30 2 * * *", both), None, at, 2, None);
        assert_eq!(
            p.next.iter().map(|t| (t.at, t.note)).collect::<Vec<_>>(),
            vec![
                (
                    Utc.with_ymd_and_hms(2027, 10, 31, 0, 30, 0).unwrap(),
                    TimeNote::DstRepeat
                ),
                (
                    Utc.with_ymd_and_hms(2027, 10, 31, 1, 30, 0).unwrap(),
                    TimeNote::DstRepeat
                ),
            ]
        );
    }

    #[test]
    fn count_is_bounded() {
        let at = Utc.with_ymd_and_hms(2027, 1, 1, 0, 0, 0).unwrap();
        let p = preview(
            &berlin("* * * * *", DstPolicy::default()),
            None,
            at,
            5000,
            Some(at),
        );
        assert_eq!(p.next.len(), MAX_COUNT);
        let around = p.around.unwrap();
        assert_eq!(
            (around.before.len(), around.after.len()),
            (MAX_COUNT, MAX_COUNT)
        );
        assert_eq!(around.after[0].at, at);
    }
}
