//! Business-day offsets in a cron's day-of-month (`BD3`, `BDL`, `BDL-1`):
//! how the cron is split, and which times of the plain cadence they keep.

use chrono::{DateTime, NaiveDate, TimeZone, Utc};

use super::*;
use crate::calendar::{DstPolicy, times_after};
use crate::trigger::{Cadence, CronExpr, TimeZoneName};

fn offset_rule(text: &str, beyond: BeyondCoverage) -> CalendarRule {
    CalendarRule {
        id: uuid::Uuid::nil(),
        mode: CalendarMode::BusinessDays,
        roll: Roll::Next,
        beyond_coverage: beyond,
        business_day: Some(BusinessDayRule::parse(text).unwrap()),
    }
}

fn cadence(cron: &str, zone: &str) -> Cadence {
    Cadence::Cron {
        cron: CronExpr::parse(cron).unwrap(),
        timezone: TimeZoneName::parse(zone).unwrap(),
        dst: DstPolicy::default(),
    }
}

/// The dates (in New York) of the first `count` times that run after the
/// start of 2026.
fn run_dates(calendar: &BusinessCalendar, rule: &CalendarRule, cron: &str) -> Vec<NaiveDate> {
    let after = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
    let times = times_after(&cadence(cron, "America/New_York"), after);
    runs_after(calendar, rule, times, after, 12)
        .into_iter()
        .map(|t| {
            t.at.with_timezone(&chrono_tz::America::New_York)
                .date_naive()
        })
        .collect()
}

#[test]
fn the_cron_splits_into_a_daily_cadence_and_the_offset() {
    let table: &[(&str, Option<(&str, &str)>)] = &[
        ("0 9 BD3 * *", Some(("0 9 * * *", "BD3"))),
        ("30 17 bdl * *", Some(("30 17 * * *", "BDL"))),
        ("0 9 BDL-1 1-6 *", Some(("0 9 * 1-6 *", "BDL-1"))),
        ("0 9 BD03 * *", Some(("0 9 * * *", "BD3"))),
        ("0 9 3 * *", None),
        ("0 9 L * *", None),
        ("@monthly", None),
    ];
    for (text, want) in table {
        let got = split_cron(text).unwrap();
        let got = got.map(|(plain, rule)| (plain, rule.to_string()));
        let want = want.map(|(plain, rule)| (plain.to_owned(), rule.to_owned()));
        assert_eq!(got, want, "{text}");
    }
}

#[test]
fn mixed_or_malformed_offsets_are_refused_naming_the_field() {
    let table: &[(&str, &str)] = &[
        ("0 9 BD3,15 * *", "stands alone"),
        ("0 9 15,BDL * *", "stands alone"),
        ("0 9 BD3 * 1-5", "day-of-week"),
        ("0 9 BDL-1 * 1-6", "day-of-week"),
        ("0 9 BD0 * *", "out of range"),
        ("0 9 BD32 * *", "out of range"),
        ("0 9 BDL-31 * *", "out of range"),
        ("0 9 BD1-BD3 * *", "day-of-month"),
        ("0 9 BD3/2 * *", "day-of-month"),
        ("0 9 BDX * *", "day-of-month"),
    ];
    for (text, says) in table {
        let err = CronExpr::parse(text).unwrap_err();
        assert!(err.contains(says), "{text}: {err}");
    }
    // The rest of the cron is checked as ever.
    assert!(CronExpr::parse("0 25 BD3 * *").is_err());
    assert!(CronExpr::parse("0 9 BD3 13 *").is_err());
}

#[test]
fn offsets_across_a_holiday_friday_and_a_make_up_saturday() {
    let calendar = us_2026("2026-12-31");
    let d = |m, day| NaiveDate::from_ymd_opt(2026, m, day).unwrap();
    let bd3 = run_dates(
        &calendar,
        &offset_rule("BD3", BeyondCoverage::Run),
        "0 9 BD3 * *",
    );
    // January: the 1st is a holiday (Thursday): 2, 5, 6. July: 1, 2, then
    // the holiday Friday and the weekend: Monday the 6th.
    assert_eq!(
        &bd3[..7],
        &[
            d(1, 6),
            d(2, 4),
            d(3, 4),
            d(4, 3),
            d(5, 5),
            d(6, 3),
            d(7, 6)
        ]
    );
    // The make-up Saturday (11 July) counts: 1, 2, 6, 7, 8, 9, 10, 11.
    let bd8 = run_dates(
        &calendar,
        &offset_rule("BD8", BeyondCoverage::Run),
        "0 9 BD8 7 *",
    );
    assert_eq!(bd8[0], d(7, 11));
    let bdl = run_dates(
        &calendar,
        &offset_rule("BDL", BeyondCoverage::Run),
        "30 17 BDL * *",
    );
    // December: Christmas is Friday the 25th; the 31st is a Thursday.
    assert_eq!(bdl[6], d(7, 31));
    assert_eq!(bdl[11], d(12, 31));
    // May: the 29th is a Friday (Memorial Day is the 25th).
    assert_eq!(bdl[4], d(5, 29));
    let bdl1 = run_dates(
        &calendar,
        &offset_rule("BDL-1", BeyondCoverage::Run),
        "0 9 BDL-1 * *",
    );
    assert_eq!(bdl1[4], d(5, 28));
    assert_eq!(bdl1[11], d(12, 30));
}

#[test]
fn other_days_of_the_cadence_are_not_times() {
    let calendar = us_2026("2026-12-31");
    let rule = offset_rule("BD3", BeyondCoverage::Run);
    let nine = |day| Utc.with_ymd_and_hms(2026, 7, day, 13, 0, 0).unwrap();
    assert_eq!(fate(&calendar, &rule, nine(6)), Fate::Run);
    // The holiday itself and an ordinary day: neither is a time.
    assert_eq!(fate(&calendar, &rule, nine(3)), Fate::NotATime);
    assert_eq!(fate(&calendar, &rule, nine(7)), Fate::NotATime);
    assert!(!is_time(&calendar, &rule, nine(7)));
    // A timeline of the month lists the one day, with no reason.
    let in_range: Vec<_> = (1..=31)
        .map(|day| crate::calendar::NominalTime {
            at: nine(day),
            note: crate::calendar::TimeNote::Normal,
        })
        .collect();
    let named = Named {
        calendar: &calendar,
        version: 1,
    };
    let planned = plan(named, &rule, &in_range, &[], nine(1), nine(31));
    let ats: Vec<DateTime<Utc>> = planned.iter().map(|p| p.at).collect();
    assert_eq!(ats, vec![nine(6)]);
    assert_eq!(planned[0].outcome, Outcome::Run);
}

#[test]
fn beyond_coverage_decides_an_offset_that_looks_past_it() {
    // Covered to 15 July: BD3 (the 6th) is known; BDL (the 31st) is not.
    let calendar = us_2026("2026-07-15");
    let last = Utc.with_ymd_and_hms(2026, 7, 31, 21, 30, 0).unwrap();
    let third = Utc.with_ymd_and_hms(2026, 7, 6, 13, 0, 0).unwrap();
    assert_eq!(
        fate(&calendar, &offset_rule("BD3", BeyondCoverage::Skip), third),
        Fate::Run
    );
    for beyond in [BeyondCoverage::Skip, BeyondCoverage::Pause] {
        assert_eq!(
            fate(&calendar, &offset_rule("BDL", beyond), last),
            Fate::Excluded(CalendarReason::BeyondCoverage)
        );
    }
    // `run` judges the month by the weekend days past the coverage.
    assert_eq!(
        fate(&calendar, &offset_rule("BDL", BeyondCoverage::Run), last),
        Fate::Run
    );
    // Another day stays no time at all, covered or not.
    let thirtieth = Utc.with_ymd_and_hms(2026, 7, 30, 21, 30, 0).unwrap();
    assert_eq!(
        fate(
            &calendar,
            &offset_rule("BDL", BeyondCoverage::Pause),
            thirtieth
        ),
        Fate::NotATime
    );
}

#[test]
fn the_wall_time_is_the_triggers_and_the_day_the_calendars() {
    let calendar = us_2026("2026-12-31");
    let rule = offset_rule("BD3", BeyondCoverage::Run);
    // 09:00 in Tokyo on 7 July is 20:00 on 6 July in New York: the
    // calendar's third business day of July.
    let after = Utc.with_ymd_and_hms(2026, 7, 1, 0, 0, 0).unwrap();
    let times = times_after(&cadence("0 9 BD3 * *", "Asia/Tokyo"), after);
    let first = runs_after(&calendar, &rule, times, after, 1);
    assert_eq!(
        first[0].at,
        Utc.with_ymd_and_hms(2026, 7, 7, 0, 0, 0).unwrap()
    );
}

#[test]
fn an_offset_on_a_day_with_a_gap_follows_the_dst_policy() {
    // Every day a business day: `BDL-2` of March 2026 is Sunday the 29th,
    // when Berlin's clocks skip 02:00-03:00.
    let mut input = us_2026("2026-12-31").to_input();
    input.timezone = Some("Europe/Berlin".into());
    input.weekend_days = Some(vec![]);
    input.holidays.clear();
    input.working_days.clear();
    let calendar = BusinessCalendar::parse(&input).unwrap();
    let rule = offset_rule("BDL-2", BeyondCoverage::Run);
    let after = Utc.with_ymd_and_hms(2026, 3, 1, 0, 0, 0).unwrap();
    let first = |skipped: crate::calendar::Skipped| {
        let cadence = Cadence::Cron {
            cron: CronExpr::parse("30 2 BDL-2 3 *").unwrap(),
            timezone: TimeZoneName::parse("Europe/Berlin").unwrap(),
            dst: DstPolicy {
                skipped,
                ..DstPolicy::default()
            },
        };
        runs_after(&calendar, &rule, times_after(&cadence, after), after, 1)
            .first()
            .map(|t| t.at)
    };
    // `shift`: the first instant after the gap, 03:00 CEST.
    assert_eq!(
        first(crate::calendar::Skipped::Shift),
        Some(Utc.with_ymd_and_hms(2026, 3, 29, 1, 0, 0).unwrap())
    );
    // `skip`: none that month; the next is March 2027's (the 29th, a Monday).
    assert_eq!(
        first(crate::calendar::Skipped::Skip),
        Some(Utc.with_ymd_and_hms(2027, 3, 29, 0, 30, 0).unwrap())
    );
}
