//! Quartz's day forms: what parses, what is refused (naming the field), which
//! days each form picks, and that the engine's calendars pick the same.

use chrono::{Datelike, NaiveDate};

use super::*;

fn days_picked(expr: &str, year: i32, month: u32) -> Vec<u32> {
    let c = CronSchedule::parse(expr).unwrap_or_else(|e| panic!("{expr}: {e}"));
    (1..=31)
        .filter_map(|d| NaiveDate::from_ymd_opt(year, month, d))
        .filter(|d| c.matches_day(*d))
        .map(|d| d.day())
        .collect()
}

#[test]
fn the_days_each_form_picks() {
    let table: [(&str, i32, u32, &[u32]); 33] = [
        ("0 9 L * *", 2026, 1, &[31]),
        ("0 9 L * *", 2026, 4, &[30]),
        ("0 9 L * *", 2026, 2, &[28]),
        ("0 9 L * *", 2028, 2, &[29]),
        ("0 9 l * *", 2100, 2, &[28]),
        ("0 9 L-2 * *", 2026, 2, &[26]),
        ("0 9 L-1 * *", 2028, 2, &[28]),
        ("0 9 L-30 * *", 2026, 1, &[1]),
        ("0 9 L-30 * *", 2026, 4, &[]),
        // 15th on a Saturday: Friday the 14th; on a Sunday: Monday the 16th.
        ("0 9 15W * *", 2026, 8, &[14]),
        ("0 9 15W * *", 2026, 11, &[16]),
        ("0 9 15W * *", 2026, 1, &[15]),
        // Saturday the 1st: Monday the 3rd, not the Friday before.
        ("0 9 1W * *", 2026, 8, &[3]),
        ("0 9 1W * *", 2026, 2, &[2]),
        // Sunday the 31st: Friday the 29th, not the Monday after.
        ("0 9 31W * *", 2026, 5, &[29]),
        ("0 9 31W * *", 2026, 4, &[]),
        ("0 9 31W * *", 2026, 2, &[]),
        ("0 9 30W * *", 2025, 11, &[28]),
        ("0 9 LW * *", 2026, 5, &[29]),
        ("0 9 LW * *", 2026, 1, &[30]),
        ("0 9 LW * *", 2026, 2, &[27]),
        ("0 9 lw * *", 2026, 4, &[30]),
        ("0 9 * * 5#5", 2026, 1, &[30]),
        ("0 9 * * 5#5", 2026, 2, &[]),
        ("0 9 * * FRI#2", 2026, 2, &[13]),
        ("0 9 * * 0#1", 2026, 2, &[1]),
        ("0 9 * * 7#1", 2026, 2, &[1]),
        ("0 9 * * 1L", 2026, 8, &[31]),
        ("0 9 * * 5L", 2026, 2, &[27]),
        ("0 9 * * fril", 2026, 2, &[27]),
        ("0 9 * * 7L", 2026, 5, &[31]),
        // `L` with an ordinary day-of-week ORs, as croniter and Vixie do.
        ("0 9 L * MON", 2026, 2, &[2, 9, 16, 23, 28]),
        ("0 9 L 2 *", 2026, 3, &[]),
    ];
    for (expr, year, month, want) in table {
        assert_eq!(
            days_picked(expr, year, month),
            want,
            "{expr} in {year}-{month}"
        );
    }
}

#[test]
fn the_forms_parse() {
    let c = CronSchedule::parse("0 9 L-3 * *").unwrap();
    assert_eq!(c.month_day(), Some(MonthDay::FromLast(3)));
    assert_eq!(c.day_rule(), DayRule::Both);
    let c = CronSchedule::parse("0 9 L * mon-fri").unwrap();
    assert_eq!(c.month_day(), Some(MonthDay::FromLast(0)));
    assert_eq!(c.day_rule(), DayRule::Either);
    assert_eq!(
        CronSchedule::parse("0 9 15W 1-6 *").unwrap().month_day(),
        Some(MonthDay::NearestWeekday(15))
    );
    assert_eq!(
        CronSchedule::parse("0 9 LW * *").unwrap().month_day(),
        Some(MonthDay::LastWeekday)
    );
    let nth = |text: &str| CronSchedule::parse(text).unwrap().week_day();
    assert_eq!(nth("0 9 * * 7#3"), Some(WeekDay::Nth { weekday: 0, n: 3 }));
    assert_eq!(
        nth("0 9 * * wed#1"),
        Some(WeekDay::Nth { weekday: 3, n: 1 })
    );
    assert_eq!(nth("0 9 * * WEDL"), Some(WeekDay::Last { weekday: 3 }));
    assert_eq!(nth("0 9 * * 0L"), Some(WeekDay::Last { weekday: 0 }));
    // Names that hold a W are still names.
    assert_eq!(nth("0 9 * * WED"), None);
    // Months with a fifth Friday in February exist (leap years).
    assert!(CronSchedule::parse("0 9 * 2 5#5").is_ok());
}

#[test]
fn refused_forms_name_their_field_and_why() {
    let table = [
        ("0 9 L,15 * *", "day-of-month", "alone"),
        ("0 9 15W,L * *", "day-of-month", "alone"),
        ("0 9 1-5W * *", "day-of-month", "one day"),
        ("0 9 15W/2 * *", "day-of-month", "alone"),
        ("0 9 L/2 * *", "day-of-month", "alone"),
        (
            "0 9 W15 * *",
            "day-of-month",
            "`15W` is the weekday nearest the 15th",
        ),
        ("0 9 L-0 * *", "day-of-month", "1 to 30"),
        ("0 9 L-31 * *", "day-of-month", "1 to 30"),
        ("0 9 0W * *", "day-of-month", "1 to 31"),
        ("0 9 32W * *", "day-of-month", "1 to 31"),
        ("0 9 15L * *", "day-of-month", "the forms are"),
        ("0 9 5#2 * *", "day-of-month", "belongs in day-of-week"),
        ("0 9 ? * MON", "day-of-month", "Quartz"),
        ("0 9 * * ?", "day-of-week", "1 = Sunday"),
        ("0 9 * * 1-5#2", "day-of-week", "`1-5#2` is refused"),
        ("0 9 * * 1#2,3#2", "day-of-week", "alone"),
        ("0 9 * * 5L,1", "day-of-week", "alone"),
        ("0 9 * * 1-5L", "day-of-week", "`1-5L` is refused"),
        (
            "0 9 * * 2W",
            "day-of-week",
            "nearest the 2nd, not the second weekday",
        ),
        (
            "0 9 * * W2",
            "day-of-week",
            "nearest the 2nd, not the second weekday",
        ),
        ("0 9 * * 5#6", "day-of-week", "1 to 5"),
        ("0 9 * * 5#0", "day-of-week", "1 to 5"),
        ("0 9 * * 8#1", "day-of-week", "0 or 7 is Sunday"),
        ("0 9 * * FRIDAY#1", "day-of-week", "SUN-SAT"),
        ("0 9 * * L", "day-of-week", "Saturday"),
        ("0 9 * * L5", "day-of-week", "`5L`"),
        // Pairs that Vixie, Quartz and croniter read differently.
        ("0 9 15W * MON", "day-of-week", "must be `*`"),
        ("0 9 LW * 1-5", "day-of-week", "must be `*`"),
        ("0 9 L-2 * MON", "day-of-week", "must be `*`"),
        ("0 9 L * */2", "day-of-week", "must be `*`"),
        ("0 9 L * 5L", "day-of-week", "must be `*`"),
        ("0 9 1 * 5#2", "day-of-month", "must be `*`"),
        ("0 9 */2 * 5L", "day-of-month", "must be `*`"),
        // Never fires.
        ("0 9 31W 4,6,9,11 *", "", "never fires"),
        ("0 9 L-30 2 *", "", "never fires"),
        ("0 9 30W 2 *", "", "never fires"),
        // Elsewhere the letters are not cron.
        ("L 9 * * *", "minute", "day fields"),
        ("0 9 * L *", "month", "day fields"),
    ];
    for (text, field, why) in table {
        let err = CronSchedule::parse(text).expect_err(text);
        assert!(err.contains(field), "{text}: {err}");
        assert!(err.contains(why), "{text}: {err}");
    }
}

#[test]
fn engine_calendars_are_few_and_exact() {
    let count = |text: &str| engine_calendars(&CronSchedule::parse(text).unwrap()).len();
    // Long months, 30-day months, February in leap years and in others.
    assert_eq!(count("0 9 L * *"), 4);
    assert_eq!(count("0 9 * * 5L"), 4);
    assert_eq!(count("0 9 15W * *"), 3);
    assert_eq!(count("0 9 * * 5#2"), 1);
    assert_eq!(count("0 9 L * MON"), 5);
    let feb = engine_calendars(&CronSchedule::parse("0 9 L 2 *").unwrap());
    assert_eq!(feb.len(), 2);
    let leap: Vec<i32> = feb[0].years.values().collect();
    assert_eq!(leap.first(), Some(&2000));
    assert!(leap.iter().all(|y| y % 4 == 0) && !leap.contains(&2100));
    assert!(feb[1].years.contains(2100) && !feb[1].years.contains(2028));
}

const EXTENSIONS: [&str; 17] = [
    "0 9 L * *",
    "30 2 L-1 * *",
    "0 0 L-30 * *",
    "0 9 15W * *",
    "0 9 1W * *",
    "0 9 31W * *",
    "0 0 30W 1-6 *",
    "0 9 LW * *",
    "0 9 * * 5#5",
    "0 0 * * 0#1",
    "0 9 * * 1L",
    "30 1 * * SUNL",
    // Europe's changes fall on the last Sunday: into the gap and the repeat.
    "30 2 * * 0L",
    "0 9 L * MON",
    "0 9 L 2 *",
    "0 9 * 2 5#5",
    "0 0 LW * *",
];

#[test]
fn the_engine_fires_what_the_policy_wants_on_ordinary_days() {
    // UTC has no offset changes: the engine's chain is the policy's times.
    for expr in EXTENSIONS {
        let c = cron(expr, "UTC", DEFAULT);
        let (from, to) = ("2026-01-01T00:00:00Z", "2037-01-01T00:00:00Z");
        let want = policy_in(&c, from, to);
        assert!(!want.is_empty(), "{expr}");
        assert_eq!(engine_in(&c, from, to), want, "{expr}");
    }
    // The engine ends with 2100; so does February's leap-year list.
    let c = cron("0 9 L 2 *", "UTC", DEFAULT);
    assert_eq!(
        engine_in(&c, "2095-01-01T00:00:00Z", "2101-12-31T00:00:00Z"),
        policy_in(&c, "2095-01-01T00:00:00Z", "2101-12-31T00:00:00Z"),
    );
}

#[test]
fn exceptions_make_the_engine_the_policy_for_the_forms() {
    // Across both of Berlin's and Lord Howe's changes of 2026-2028, every policy.
    for zone in ["Europe/Berlin", "Australia/Lord_Howe", "America/Santiago"] {
        for expr in EXTENSIONS {
            for repeated in Repeated::ALL {
                for skipped in Skipped::ALL {
                    let c = cron(expr, zone, policy(repeated, skipped));
                    let (from, to) = (utc("2026-01-01T00:00:00Z"), utc("2029-01-01T00:00:00Z"));
                    let want: Vec<_> = times_after(&c, from)
                        .map(|t| t.at)
                        .take_while(|t| *t <= to)
                        .collect();
                    let x = dst_exceptions(&c, from, to);
                    let mut got: Vec<_> = engine_times(&c, from)
                        .take_while(|t| *t <= to)
                        .filter(|t| !x.excluded.contains(t))
                        .chain(x.extra.iter().map(|t| t.at))
                        .collect();
                    got.sort();
                    assert_eq!(got, want, "{expr} {zone} {repeated:?} {skipped:?}");
                }
            }
        }
    }
}
