use chrono::{DateTime, TimeZone, Utc};

use super::*;
use crate::calendar::{NominalTime, TimeNote};

/// 09:00 in New York (EDT, UTC-4) on a July 2026 day.
fn nine(day: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 7, day, 13, 0, 0).unwrap()
}

fn times(days: &[u32]) -> Vec<NominalTime> {
    days.iter()
        .map(|d| NominalTime {
            at: nine(*d),
            note: TimeNote::Normal,
        })
        .collect()
}

fn rule(mode: CalendarMode, roll: Roll, beyond: BeyondCoverage) -> CalendarRule {
    CalendarRule {
        id: uuid::Uuid::nil(),
        mode,
        roll,
        beyond_coverage: beyond,
        business_day: None,
    }
}

fn holiday() -> CalendarReason {
    CalendarReason::Holiday {
        name: "Independence Day (observed)".into(),
    }
}

#[test]
fn fates_of_a_holiday_friday_and_its_weekend() {
    let calendar = us_2026("2026-12-31");
    use BeyondCoverage::Run as R;
    use CalendarMode::*;
    let table: &[(CalendarRule, u32, Fate)] = &[
        (rule(Exclude, Roll::Skip, R), 2, Fate::Run),
        (rule(Exclude, Roll::Skip, R), 3, Fate::Excluded(holiday())),
        (
            rule(Exclude, Roll::Skip, R),
            4,
            Fate::Excluded(CalendarReason::Weekend),
        ),
        // The make-up Saturday is a business day.
        (rule(Exclude, Roll::Skip, R), 11, Fate::Run),
        (
            rule(BusinessDays, Roll::Skip, R),
            3,
            Fate::Excluded(holiday()),
        ),
        (
            rule(BusinessDays, Roll::Next, R),
            3,
            Fate::Rolled {
                to: Some(nine(6)),
                reason: holiday(),
            },
        ),
        (
            rule(BusinessDays, Roll::Next, R),
            5,
            Fate::Rolled {
                to: Some(nine(6)),
                reason: CalendarReason::Weekend,
            },
        ),
        (
            rule(BusinessDays, Roll::Previous, R),
            3,
            Fate::Rolled {
                to: Some(nine(2)),
                reason: holiday(),
            },
        ),
        (
            rule(BusinessDays, Roll::Previous, R),
            5,
            Fate::Rolled {
                to: Some(nine(2)),
                reason: CalendarReason::Weekend,
            },
        ),
        (rule(BusinessDays, Roll::Next, R), 6, Fate::Run),
    ];
    for (rule, day, want) in table {
        assert_eq!(
            &fate(&calendar, rule, nine(*day)),
            want,
            "{rule:?} on {day}"
        );
    }
}

#[test]
fn beyond_coverage_runs_skips_or_pauses() {
    let calendar = us_2026("2026-07-04");
    let mode = CalendarMode::BusinessDays;
    // 6 July is past the coverage: a business day by the weekend days alone.
    let run = rule(mode, Roll::Next, BeyondCoverage::Run);
    assert_eq!(fate(&calendar, &run, nine(6)), Fate::Run);
    for beyond in [BeyondCoverage::Skip, BeyondCoverage::Pause] {
        let r = rule(mode, Roll::Next, beyond);
        assert_eq!(
            fate(&calendar, &r, nine(6)),
            Fate::Excluded(CalendarReason::BeyondCoverage)
        );
        assert_eq!(fate(&calendar, &r, nine(2)), Fate::Run);
        // Friday's holiday rolls to a Monday past the coverage: it does
        // not run there.
        assert_eq!(runs_at(&calendar, &r, nine(3)), None);
        // Nothing past the coverage runs; the search stops there.
        let ats: Vec<DateTime<Utc>> =
            runs_after(&calendar, &r, times(&[2, 6, 7]).into_iter(), nine(1), 3)
                .into_iter()
                .map(|t| t.at)
                .collect();
        assert_eq!(ats, vec![nine(2)]);
    }
}

#[test]
fn blackouts_exclude_in_both_modes() {
    let mut input = us_2026("2026-12-31").to_input();
    input.blackouts.push(BlackoutInput {
        from: "2026-07-06T08:30".into(),
        to: "2026-07-06T09:30".into(),
        name: Some("freeze".into()),
    });
    let calendar = BusinessCalendar::parse(&input).unwrap();
    let freeze = CalendarReason::Blackout {
        name: Some("freeze".into()),
    };
    for r in [
        rule(CalendarMode::Exclude, Roll::Skip, BeyondCoverage::Run),
        rule(CalendarMode::BusinessDays, Roll::Next, BeyondCoverage::Run),
    ] {
        assert_eq!(fate(&calendar, &r, nine(6)), Fate::Excluded(freeze.clone()));
        assert_eq!(runs_at(&calendar, &r, nine(3)), None, "{r:?}");
    }
}

#[test]
fn runs_after_and_before_with_rolled_fridays() {
    let calendar = us_2026("2026-12-31");
    let fridays = times(&[3, 10, 17, 24]);
    let ats = |list: Vec<NominalTime>| list.into_iter().map(|t| t.at).collect::<Vec<_>>();
    let after = nine(1);
    let next = rule(CalendarMode::BusinessDays, Roll::Next, BeyondCoverage::Run);
    assert_eq!(
        ats(runs_after(
            &calendar,
            &next,
            fridays.iter().copied(),
            after,
            3
        )),
        vec![nine(6), nine(10), nine(17)]
    );
    let previous = rule(
        CalendarMode::BusinessDays,
        Roll::Previous,
        BeyondCoverage::Run,
    );
    assert_eq!(
        ats(runs_after(
            &calendar,
            &previous,
            fridays.iter().copied(),
            after,
            2
        )),
        vec![nine(2), nine(10)]
    );
    let exclude = rule(CalendarMode::Exclude, Roll::Skip, BeyondCoverage::Run);
    assert_eq!(
        ats(runs_after(
            &calendar,
            &exclude,
            fridays.iter().copied(),
            after,
            2
        )),
        vec![nine(10), nine(17)]
    );
    // A daily cadence: Friday to Sunday collapse onto Monday, once.
    let daily = times(&[2, 3, 4, 5, 6, 7]);
    assert_eq!(
        ats(runs_after(
            &calendar,
            &next,
            daily.iter().copied(),
            after,
            3
        )),
        vec![nine(2), nine(6), nine(7)]
    );
    // Backwards, newest first: Monday 13 July back over the holiday weekend.
    let back = times(&[6, 5, 4, 3, 2, 1]);
    assert_eq!(
        ats(runs_before(
            &calendar,
            &next,
            back.iter().copied(),
            nine(10),
            3
        )),
        vec![nine(6), nine(2), nine(1)]
    );
    assert_eq!(
        ats(runs_before(
            &calendar,
            &previous,
            back.iter().copied(),
            nine(10),
            3
        )),
        vec![nine(6), nine(2), nine(1)]
    );
}

#[test]
fn the_timeline_says_why() {
    let calendar = us_2026("2026-12-31");
    let named = Named {
        calendar: &calendar,
        version: 3,
    };
    let holiday_text = r#"holiday: "Independence Day (observed)" in US 2026 v3"#;
    let next = rule(CalendarMode::BusinessDays, Roll::Next, BeyondCoverage::Run);
    let fridays = times(&[3, 10]);
    let planned = plan(named, &next, &fridays, &[], nine(1), nine(11));
    let got: Vec<(DateTime<Utc>, Outcome, Option<String>)> = planned
        .into_iter()
        .map(|p| (p.at, p.outcome, p.detail))
        .collect();
    let rolled = format!("rolled from 2026-07-03T09:00 to 2026-07-06T09:00 ({holiday_text})");
    assert_eq!(
        got,
        vec![
            (
                nine(3),
                Outcome::RolledAway(holiday()),
                Some(rolled.clone())
            ),
            (nine(6), Outcome::RolledHere, Some(rolled)),
            (nine(10), Outcome::Run, None),
        ]
    );
    // The rolled-to Monday alone in the range: the Friday comes from `near`.
    let monday = plan(named, &next, &[], &fridays[..1], nine(6), nine(7));
    assert_eq!(monday.len(), 1);
    assert_eq!(monday[0].outcome, Outcome::RolledHere);
    assert_eq!(
        near_range(&calendar, &next, nine(6), nine(7)).map(|(from, _)| from),
        Some(Utc.with_ymd_and_hms(2026, 7, 3, 4, 0, 0).unwrap())
    );
    let exclude = rule(CalendarMode::Exclude, Roll::Skip, BeyondCoverage::Run);
    let planned = plan(named, &exclude, &fridays, &[], nine(1), nine(11));
    assert_eq!(planned[0].detail.as_deref(), Some(holiday_text));
    assert_eq!(planned[0].outcome, Outcome::Excluded(holiday()));
    assert_eq!(near_range(&calendar, &exclude, nine(6), nine(7)), None);
}

#[test]
fn rolled_times_the_engine_does_not_fire_are_extras() {
    let calendar = us_2026("2026-12-31");
    let next = rule(CalendarMode::BusinessDays, Roll::Next, BeyondCoverage::Run);
    // Fridays: the engine fires 3, 10, 17 July; the holiday rolls to
    // Monday 6 July, which only the service starts.
    let fridays = times(&[3, 10]);
    let fired = |at: DateTime<Utc>| fridays.iter().any(|t| t.at == at);
    let extras = |after, until| {
        rolled_extras(
            &calendar,
            &next,
            fridays.iter().copied(),
            fired,
            after,
            until,
        )
    };
    assert_eq!(extras(nine(5), nine(7)), vec![nine(6)]);
    assert!(extras(nine(6), nine(7)).is_empty());
    // Daily: Monday is fired by the engine anyway.
    let daily = times(&[3, 4, 5, 6]);
    let fired = |at: DateTime<Utc>| daily.iter().any(|t| t.at == at);
    assert!(
        rolled_extras(
            &calendar,
            &next,
            daily.iter().copied(),
            fired,
            nine(1),
            nine(7)
        )
        .is_empty()
    );
}
