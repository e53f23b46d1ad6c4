//! The parser: fields, shorthands, Vixie's day rule, what is refused.

use chrono::NaiveDate;

use super::*;

fn set(values: &[u8]) -> FieldSet {
    values.iter().fold(FieldSet::default(), |s, v| s.with(*v))
}

fn day(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).unwrap()
}

#[test]
fn fields_ranges_steps_lists_names() {
    let c = CronSchedule::parse("*/15 9-17/4 1,15 JAN-mar,Dec MON-FRI").unwrap();
    assert_eq!(c.minutes(), set(&[0, 15, 30, 45]));
    assert_eq!(c.hours(), set(&[9, 13, 17]));
    assert_eq!(c.days_of_month(), set(&[1, 15]));
    assert_eq!(c.months(), set(&[1, 2, 3, 12]));
    assert_eq!(c.days_of_week(), set(&[1, 2, 3, 4, 5]));
    assert_eq!(c.day_rule(), DayRule::Either);
    let c = CronSchedule::parse("5/20 0 * * 5-7").unwrap();
    assert_eq!(c.minutes(), set(&[5, 25, 45]));
    assert_eq!(c.days_of_week(), set(&[0, 5, 6]), "7 is Sunday");
    assert_eq!(
        CronSchedule::parse("0 0 * * 7").unwrap().days_of_week(),
        set(&[0])
    );
    assert_eq!(
        CronSchedule::parse("0 0 * * sun").unwrap().days_of_week(),
        set(&[0])
    );
}

#[test]
fn shorthands() {
    let same = [
        ("@yearly", "0 0 1 1 *"),
        ("@annually", "0 0 1 1 *"),
        ("@monthly", "0 0 1 * *"),
        ("@weekly", "0 0 * * 0"),
        ("@daily", "0 0 * * *"),
        ("@midnight", "0 0 * * *"),
        ("@hourly", "0 * * * *"),
    ];
    for (short, long) in same {
        assert_eq!(
            CronSchedule::parse(short),
            CronSchedule::parse(long),
            "{short}"
        );
    }
}

#[test]
fn posix_day_of_month_or_day_of_week() {
    // Both restricted: either matches.
    let c = CronSchedule::parse("0 0 13 * FRI").unwrap();
    assert!(c.matches_day(day(2027, 8, 13)), "Friday the 13th");
    assert!(c.matches_day(day(2027, 8, 6)), "a Friday");
    assert!(c.matches_day(day(2027, 9, 13)), "a Monday the 13th");
    assert!(!c.matches_day(day(2027, 9, 14)));
    // One starts with `*` (even with a step, as Vixie reads it): both.
    let c = CronSchedule::parse("0 0 */2 * MON").unwrap();
    assert_eq!(c.day_rule(), DayRule::Both);
    assert!(c.matches_day(day(2027, 9, 13)), "Monday the 13th");
    assert!(!c.matches_day(day(2027, 9, 6)), "Monday the 6th");
    assert!(!c.matches_day(day(2027, 9, 15)), "Wednesday the 15th");
    // The month restricts both sides.
    let c = CronSchedule::parse("0 0 1 FEB SUN").unwrap();
    assert!(c.matches_day(day(2027, 2, 7)));
    assert!(!c.matches_day(day(2027, 3, 7)));
    assert!(!c.matches_day(day(2027, 3, 1)));
}

#[test]
fn refuses_what_cron_does_not_mean() {
    let table = [
        ("0 0 ? * MON", "Quartz"),
        ("H 0 * * *", "not supported"),
        ("0 0 0 * * *", "seconds and year"),
        ("0 0 * * * * 2027", "seconds and year"),
        ("@reboot", "@reboot"),
        ("@every 5m", "interval"),
        ("@fortnightly", "shorthand"),
        ("TZ=UTC 0 0 * * *", "time zone"),
        ("CRON_TZ=Europe/Berlin 0 0 * * *", "time zone"),
        ("* * * *", "five fields"),
        ("60 * * * *", "0 to 59"),
        ("0 24 * * *", "0 to 23"),
        ("0 0 0 * *", "1 to 31"),
        ("0 0 32 * *", "1 to 31"),
        ("0 0 * 13 *", "1 to 12"),
        ("0 0 * * 8", "0 to 7"),
        ("0 0 * * FRI-MON", "backwards"),
        ("*/0 * * * *", "step"),
        ("1-2-3 * * * *", "minute"),
        ("0 0 * JANUARY *", "names JAN-DEC"),
        ("0 0 30 2 *", "never fires"),
        ("0 0 31 4,6,9,11 *", "never fires"),
        ("hello world", "five fields"),
    ];
    for (text, why) in table {
        let err = CronSchedule::parse(text).expect_err(text);
        assert!(err.contains(why), "{text}: {err}");
    }
    // Feb 29 comes every four years; Feb 31 with a weekday fires weekly.
    assert!(CronSchedule::parse("0 0 29 2 *").is_ok());
    assert!(CronSchedule::parse("0 0 31 2 MON").is_ok());
}
