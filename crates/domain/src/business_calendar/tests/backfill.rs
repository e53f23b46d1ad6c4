use std::collections::HashSet;

use chrono::{DateTime, Duration, TimeZone, Utc};

use super::*;
use crate::backfill::{Planned, Route, plan_backfill};
use crate::calendar::{DstPolicy, times_after};
use crate::duration::IsoDuration;
use crate::misfire::SkipReason;
use crate::trigger::{
    Cadence, CatchupLimit, CronExpr, MisfirePolicy, ScheduledTrigger, TimeZoneName,
};

/// 09:00 in New York (EDT, UTC-4) on a July 2026 day.
fn nine(day: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 7, day, 13, 0, 0).unwrap()
}

fn fridays(rule: CalendarRule) -> ScheduledTrigger {
    ScheduledTrigger {
        cadence: Cadence::Cron {
            cron: CronExpr::parse("0 9 * * 5").unwrap(),
            timezone: TimeZoneName::parse("America/New_York").unwrap(),
            dst: DstPolicy::default(),
        },
        misfire_policy: MisfirePolicy::Skip,
        catchup_limit: CatchupLimit::default(),
        misfire_grace: IsoDuration::from_secs(60),
        start_at: None,
        end_at: None,
        jitter: None,
        calendar: Some(rule),
    }
}

fn rule(mode: CalendarMode, roll: Roll) -> CalendarRule {
    CalendarRule {
        id: uuid::Uuid::nil(),
        mode,
        roll,
        beyond_coverage: BeyondCoverage::Run,
        business_day: None,
    }
}

/// A time of July as (day, decision, detail).
type Decided = (u32, Planned, Option<String>);

/// The backfill of `[nine(from), nine(to))`.
fn backfill(rule: CalendarRule, from: u32, to: u32, ran: &[u32]) -> Vec<Decided> {
    let calendar = us_2026("2026-12-31");
    let trigger = fridays(rule);
    let (start, end) = (nine(from), nine(to));
    let ran: HashSet<DateTime<Utc>> = ran.iter().map(|d| nine(*d)).collect();
    let plain = plan_backfill(&trigger, start, end, &ran, 100);
    let near: Vec<_> = near_range(&calendar, &rule, start, end)
        .map(|(a, b)| {
            times_after(&trigger.cadence, a - Duration::nanoseconds(1))
                .take_while(|t| t.at < b)
                .collect()
        })
        .unwrap_or_default();
    let named = Named {
        calendar: &calendar,
        version: 3,
    };
    apply_to_backfill(named, &rule, &plain, &near, start, end, &ran)
        .into_iter()
        .map(|t| {
            let day = t.time.at.with_timezone(&chrono_tz::America::New_York);
            (chrono::Datelike::day(&day), t.time.planned, t.detail)
        })
        .collect()
}

#[test]
fn a_backfill_over_a_holiday_friday() {
    use CalendarMode::*;
    let holiday = r#"holiday: "Independence Day (observed)" in US 2026 v3"#;
    let rolled = |to: &str| format!("rolled from 2026-07-03T09:00 to {to} ({holiday})");
    let schedule = Planned::Run(Route::Schedule);
    let launcher = Planned::Run(Route::Launcher);
    type Case<'a> = (CalendarRule, u32, u32, &'a [u32], Vec<Decided>);
    let table: Vec<Case> = vec![
        // Excluded: not started, recorded skipped as a holiday.
        (
            rule(Exclude, Roll::Skip),
            1,
            11,
            &[],
            vec![
                (
                    3,
                    Planned::Excluded(SkipReason::Holiday),
                    Some(holiday.into()),
                ),
                (10, schedule, None),
            ],
        ),
        // Rolled to Monday: the Friday is skipped `rolled`, the Monday (a
        // day the engine does not fire) is the launcher's.
        (
            rule(BusinessDays, Roll::Next),
            1,
            11,
            &[],
            vec![
                (
                    3,
                    Planned::Excluded(SkipReason::Rolled),
                    Some(rolled("2026-07-06T09:00")),
                ),
                (6, launcher, Some(rolled("2026-07-06T09:00"))),
                (10, schedule, None),
            ],
        ),
        // The Monday ran already: once only.
        (
            rule(BusinessDays, Roll::Next),
            1,
            11,
            &[6],
            vec![
                (
                    3,
                    Planned::Excluded(SkipReason::Rolled),
                    Some(rolled("2026-07-06T09:00")),
                ),
                (6, Planned::Duplicate, Some(rolled("2026-07-06T09:00"))),
                (10, schedule, None),
            ],
        ),
        // A range that starts after the holiday still runs the Monday the
        // Friday before it rolled to.
        (
            rule(BusinessDays, Roll::Next),
            4,
            11,
            &[],
            vec![
                (6, launcher, Some(rolled("2026-07-06T09:00"))),
                (10, schedule, None),
            ],
        ),
        // Rolled back to Thursday, which a range ending on the holiday holds.
        (
            rule(BusinessDays, Roll::Previous),
            1,
            3,
            &[],
            vec![(2, launcher, Some(rolled("2026-07-02T09:00")))],
        ),
        // A Friday that ran before the calendar existed stays a duplicate.
        (
            rule(Exclude, Roll::Skip),
            1,
            11,
            &[3],
            vec![
                (3, Planned::Duplicate, Some(holiday.into())),
                (10, schedule, None),
            ],
        ),
    ];
    for (rule, from, to, ran, want) in table {
        assert_eq!(
            backfill(rule, from, to, ran),
            want,
            "{rule:?} {from}..{to} ran {ran:?}"
        );
    }
}

#[test]
fn a_catch_up_over_a_holiday_friday() {
    use CalendarMode::*;
    let calendar = us_2026("2026-12-31");
    let fridays = [nine(3), nine(10)];
    let catch_up = |rule: CalendarRule, until: u32, ran: &[u32]| {
        let ran: HashSet<DateTime<Utc>> = ran.iter().map(|d| nine(*d)).collect();
        apply_to_catch_up(&calendar, &rule, &fridays, nine(1), nine(until), &ran)
    };
    let holiday = SkipReason::Holiday;
    // (rule, resumed on, ran, runs, skipped)
    type Case<'a> = (
        CalendarRule,
        u32,
        &'a [u32],
        Vec<u32>,
        Vec<(u32, SkipReason)>,
    );
    let table: Vec<Case> = vec![
        (
            rule(Exclude, Roll::Skip),
            10,
            &[],
            vec![10],
            vec![(3, holiday)],
        ),
        // The Monday the Friday rolls to runs, once.
        (
            rule(BusinessDays, Roll::Next),
            10,
            &[],
            vec![6, 10],
            vec![(3, SkipReason::Rolled)],
        ),
        (
            rule(BusinessDays, Roll::Next),
            10,
            &[6],
            vec![10],
            vec![(3, SkipReason::Rolled)],
        ),
        // Resumed before the Monday: the engine fires it when it comes.
        (
            rule(BusinessDays, Roll::Next),
            4,
            &[],
            vec![10],
            vec![(3, SkipReason::Rolled)],
        ),
        (
            rule(BusinessDays, Roll::Previous),
            10,
            &[],
            vec![2, 10],
            vec![(3, SkipReason::Rolled)],
        ),
    ];
    for (rule, until, ran, runs, skipped) in table {
        let got = catch_up(rule, until, ran);
        assert_eq!(
            got,
            CatchUp {
                run: runs.iter().map(|d| nine(*d)).collect(),
                skipped: skipped.iter().map(|(d, r)| (nine(*d), *r)).collect(),
            },
            "{rule:?} until {until} ran {ran:?}"
        );
    }
}
