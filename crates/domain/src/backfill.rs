//! What a backfill of `[start, end)` does with each nominal time, decided
//! from the one calendar under the trigger's DST policy. Pure: the caller
//! supplies the times that already ran.

use std::collections::HashSet;

use chrono::{DateTime, Duration, Utc};

use super::calendar::{NominalTime, TimeNote, dst_declined, engine_backfills, times_after};
use super::misfire::SkipReason;
use super::timeline::TimelineReason;
use super::trigger::ScheduledTrigger;

/// How a time the policy wants is handed to Temporal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// A schedule backfill of exactly `[t, t]`: the engine fires `t` itself.
    Schedule,
    /// The engine would not fire `t` for a backfill (a DST time the policy
    /// wants and the engine does not fire, a time outside the spec's start
    /// and end): the service starts the launcher itself, under the workflow
    /// ID the schedule would have given it, and the launcher runs `t` under
    /// its contract ID.
    Launcher,
}

/// What becomes of one time of the range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Planned {
    /// Not run yet: it runs.
    Run(Route),
    /// It already ran.
    Duplicate,
    /// The DST policy does not run it (`dst_gap` or `dst_repeat`).
    Declined(TimelineReason),
    /// The trigger's business calendar does not run it here (a holiday, a
    /// weekend day, a blackout, beyond coverage, or rolled to another
    /// day): recorded as a skipped run with this reason.
    Excluded(SkipReason),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlannedTime {
    pub at: DateTime<Utc>,
    pub note: TimeNote,
    pub planned: Planned,
}

/// A backfill's decisions, oldest first, and where the range was cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackfillPlan {
    pub times: Vec<PlannedTime>,
    /// `None` when the whole range is decided; otherwise the range holds more
    /// than `cap` of the policy's times, the plan covers `[start, next_start)`
    /// and a backfill from `next_start` continues it.
    pub next_start: Option<DateTime<Utc>>,
}

/// How a time the policy wants reaches Temporal.
pub fn route(trigger: &ScheduledTrigger, at: DateTime<Utc>) -> Route {
    // The engine clips a backfill to the spec's start and end as well.
    let inside = trigger.start_at.is_none_or(|s| at >= s) && trigger.end_at.is_none_or(|e| at <= e);
    if inside && engine_backfills(&trigger.cadence, at) {
        Route::Schedule
    } else {
        Route::Launcher
    }
}

/// Decides every time in `[start, end)`: the policy's times run unless they
/// ran (`ran`), and the times the DST policy declines are named. At most
/// `cap` of the policy's times are decided; the rest of the range is left to
/// a next call from `next_start`.
pub fn plan_backfill(
    trigger: &ScheduledTrigger,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
    ran: &HashSet<DateTime<Utc>>,
    cap: usize,
) -> BackfillPlan {
    let tick = Duration::nanoseconds(1);
    let Some(before_start) = start.checked_sub_signed(tick) else {
        return BackfillPlan {
            times: Vec::new(),
            next_start: None,
        };
    };
    let mut wanted: Vec<NominalTime> = times_after(&trigger.cadence, before_start)
        .take_while(|t| t.at < end)
        .take(cap.saturating_add(1))
        .collect();
    let next_start = if wanted.len() > cap {
        wanted.pop().map(|t| t.at)
    } else {
        None
    };
    let covered_end = next_start.unwrap_or(end);
    let declined = covered_end
        .checked_sub_signed(tick)
        .map(|until| dst_declined(&trigger.cadence, before_start, until))
        .unwrap_or_default();
    let mut times: Vec<PlannedTime> = wanted
        .iter()
        .map(|t| PlannedTime {
            at: t.at,
            note: t.note,
            planned: if ran.contains(&t.at) {
                Planned::Duplicate
            } else {
                Planned::Run(route(trigger, t.at))
            },
        })
        .chain(declined.iter().map(|t| PlannedTime {
            at: t.at,
            note: t.note,
            planned: if ran.contains(&t.at) {
                Planned::Duplicate
            } else {
                Planned::Declined(declined_reason(t.note))
            },
        }))
        .collect();
    times.sort_by_key(|t| t.at);
    BackfillPlan { times, next_start }
}

/// The timeline reason of a time the DST policy declines.
pub fn declined_reason(note: TimeNote) -> TimelineReason {
    match note {
        TimeNote::DstRepeat => TimelineReason::DstRepeat,
        TimeNote::DstGap | TimeNote::Normal => TimelineReason::DstGap,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calendar::{DstPolicy, Repeated, Skipped};
    use crate::duration::IsoDuration;
    use crate::trigger::{Cadence, CatchupLimit, CronExpr, MisfirePolicy, TimeZoneName};

    fn at(s: &str) -> DateTime<Utc> {
        s.parse().unwrap()
    }

    fn trigger(cadence: Cadence) -> ScheduledTrigger {
        ScheduledTrigger {
            cadence,
            misfire_policy: MisfirePolicy::Skip,
            catchup_limit: CatchupLimit::default(),
            misfire_grace: IsoDuration::from_secs(60),
            start_at: None,
            end_at: None,
            jitter: None,
            calendar: None,
        }
    }

    fn berlin(repeated: Repeated, skipped: Skipped) -> ScheduledTrigger {
        trigger(Cadence::Cron {
            cron: CronExpr::parse("30 2 * * *").unwrap(),
            timezone: TimeZoneName::parse("Europe/Berlin").unwrap(),
            dst: DstPolicy { repeated, skipped },
        })
    }

    fn summary(plan: &BackfillPlan) -> Vec<(String, Planned)> {
        plan.times
            .iter()
            .map(|t| (t.at.format("%m-%dT%H:%MZ").to_string(), t.planned))
            .collect()
    }

    #[test]
    fn a_spring_day_under_each_gap_policy() {
        let (start, end) = (at("2026-03-28T00:00:00Z"), at("2026-03-31T00:00:00Z"));
        let none = HashSet::new();
        let shift = plan_backfill(
            &berlin(Repeated::First, Skipped::Shift),
            start,
            end,
            &none,
            100,
        );
        // The shifted 03:00 CEST is not fired by the engine: the launcher
        // route; the ordinary days are the schedule's.
        assert_eq!(
            summary(&shift),
            [
                ("03-28T01:30Z".into(), Planned::Run(Route::Schedule)),
                ("03-29T01:00Z".into(), Planned::Run(Route::Launcher)),
                ("03-30T00:30Z".into(), Planned::Run(Route::Schedule)),
            ]
        );
        assert_eq!(shift.next_start, None);
        let skip = plan_backfill(
            &berlin(Repeated::First, Skipped::Skip),
            start,
            end,
            &none,
            100,
        );
        assert_eq!(
            summary(&skip)[1],
            (
                "03-29T01:00Z".into(),
                Planned::Declined(TimelineReason::DstGap)
            )
        );
    }

    #[test]
    fn an_autumn_day_under_each_repeat_policy() {
        let (start, end) = (at("2026-10-25T00:00:00Z"), at("2026-10-25T12:00:00Z"));
        let ran = HashSet::from([at("2026-10-25T01:30:00Z")]);
        let plan = |r| {
            summary(&plan_backfill(
                &berlin(r, Skipped::Shift),
                start,
                end,
                &ran,
                10,
            ))
        };
        let (first, second) = ("10-25T00:30Z".to_owned(), "10-25T01:30Z".to_owned());
        assert_eq!(
            plan(Repeated::First),
            [
                (first.clone(), Planned::Run(Route::Launcher)),
                (second.clone(), Planned::Duplicate),
            ]
        );
        let none = HashSet::new();
        assert_eq!(
            summary(&plan_backfill(
                &berlin(Repeated::First, Skipped::Shift),
                start,
                end,
                &none,
                10
            )),
            [
                (first.clone(), Planned::Run(Route::Launcher)),
                (second.clone(), Planned::Declined(TimelineReason::DstRepeat)),
            ]
        );
        assert_eq!(
            plan(Repeated::Both),
            [
                (first, Planned::Run(Route::Launcher)),
                (second, Planned::Duplicate),
            ]
        );
    }

    #[test]
    fn a_long_range_is_cut_and_says_where_to_continue() {
        let every_minute = trigger(Cadence::Interval {
            every: IsoDuration::from_secs(60),
        });
        let start = at("2026-01-01T00:00:00Z");
        let plan = plan_backfill(
            &every_minute,
            start,
            start + Duration::days(1),
            &HashSet::new(),
            1000,
        );
        assert_eq!(plan.times.len(), 1000);
        assert_eq!(plan.next_start, Some(start + Duration::minutes(1000)));
        assert_eq!(
            plan.times.last().map(|t| t.at),
            Some(start + Duration::minutes(999))
        );
        // Exactly `cap` times: nothing left over.
        let exact = plan_backfill(
            &every_minute,
            start,
            start + Duration::minutes(1000),
            &HashSet::new(),
            1000,
        );
        assert_eq!((exact.times.len(), exact.next_start), (1000, None));
    }
}
