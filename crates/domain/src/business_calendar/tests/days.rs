use super::*;

#[test]
fn days_of_a_week_with_a_friday_holiday_and_a_make_up_saturday() {
    let calendar = us_2026("2026-12-31");
    let table: &[(&str, DayKind, Option<&str>)] = &[
        ("2026-07-02", DayKind::Business, None),
        (
            "2026-07-03",
            DayKind::Holiday,
            Some("Independence Day (observed)"),
        ),
        ("2026-07-04", DayKind::Weekend, None),
        ("2026-07-05", DayKind::Weekend, None),
        ("2026-07-06", DayKind::Business, None),
        ("2026-07-11", DayKind::WorkingDay, Some("Make-up day")),
        ("2026-07-12", DayKind::Weekend, None),
    ];
    for (day, kind, name) in table {
        let status = calendar.day(date(day));
        assert_eq!(status.kind, *kind, "{day}");
        assert_eq!(status.name.as_deref(), *name, "{day}");
        assert!(!status.beyond_coverage, "{day}");
        let business = matches!(kind, DayKind::Business | DayKind::WorkingDay);
        assert_eq!(calendar.is_business_day(date(day)), business, "{day}");
        assert_eq!(status.is_business_day(), business, "{day}");
    }
    assert_eq!(
        calendar.reason_not_business(date("2026-07-03")),
        Some(NotBusiness::Holiday {
            name: "Independence Day (observed)"
        })
    );
    assert_eq!(
        calendar.reason_not_business(date("2026-07-04")),
        Some(NotBusiness::Weekend)
    );
    assert_eq!(calendar.reason_not_business(date("2026-07-11")), None);
    assert!(calendar.day(date("2027-01-01")).beyond_coverage);
    let listed = calendar.days(date("2026-07-01"), date("2026-07-12"));
    assert_eq!(listed.len(), 12);
    assert_eq!(listed.iter().filter(|d| d.is_business_day()).count(), 8);
}

#[test]
fn roll_across_a_friday_holiday_and_the_weekend() {
    let calendar = us_2026("2026-12-31");
    let table: &[(&str, Roll, Option<&str>, bool)] = &[
        ("2026-07-02", Roll::Next, Some("2026-07-02"), false),
        ("2026-07-03", Roll::Skip, None, false),
        ("2026-07-02", Roll::Skip, Some("2026-07-02"), false),
        ("2026-07-03", Roll::Next, Some("2026-07-06"), false),
        ("2026-07-04", Roll::Next, Some("2026-07-06"), false),
        ("2026-07-05", Roll::Previous, Some("2026-07-02"), false),
        ("2026-07-03", Roll::Previous, Some("2026-07-02"), false),
        // The make-up Saturday is a business day: nothing rolls past it.
        ("2026-07-11", Roll::Previous, Some("2026-07-11"), false),
        ("2026-07-12", Roll::Previous, Some("2026-07-11"), false),
        ("2026-12-26", Roll::Previous, Some("2026-12-24"), false),
        ("2026-12-25", Roll::Next, Some("2026-12-28"), false),
        // After covered_until only the weekends are known: the answer says so.
        ("2027-01-02", Roll::Next, Some("2027-01-04"), true),
        ("2027-01-02", Roll::Previous, Some("2027-01-01"), true),
        ("2027-01-02", Roll::Skip, None, true),
        ("2026-12-31", Roll::Next, Some("2026-12-31"), false),
    ];
    for (day, roll, expected, beyond) in table {
        let rolled = calendar.roll(date(day), *roll);
        assert_eq!(rolled.date, expected.map(date), "{day} {roll}");
        assert_eq!(rolled.beyond_coverage, *beyond, "{day} {roll}");
    }
    // Rolling forward from the last covered date looks past it.
    let short = us_2026("2026-07-03");
    let rolled = short.roll(date("2026-07-03"), Roll::Next);
    assert_eq!(rolled.date, Some(date("2026-07-06")));
    assert!(rolled.beyond_coverage);
    assert!(
        !short
            .roll(date("2026-07-03"), Roll::Previous)
            .beyond_coverage
    );
}

#[test]
fn business_days_of_a_month() {
    let calendar = us_2026("2026-12-31");
    let table: &[(i32, u32, &str, Option<&str>, bool)] = &[
        // July 2026: 1 Wed, 2 Thu, (3 Fri holiday), 6 Mon, …, 11 Sat worked.
        (2026, 7, "BD1", Some("2026-07-01"), false),
        (2026, 7, "BD3", Some("2026-07-06"), false),
        (2026, 7, "BD8", Some("2026-07-11"), false),
        (2026, 7, "BDL", Some("2026-07-31"), false),
        (2026, 7, "BDL-1", Some("2026-07-30"), false),
        // December: Christmas on Friday the 25th.
        (2026, 12, "BDL-4", Some("2026-12-24"), false),
        // January: New Year's Day on Thursday the 1st.
        (2026, 1, "BD1", Some("2026-01-02"), false),
        // February 2026 has 20 business days: there is no 21st.
        (2026, 2, "BD20", Some("2026-02-27"), false),
        (2026, 2, "BD21", None, false),
        (2026, 2, "BDL-19", Some("2026-02-02"), false),
        (2026, 2, "BDL-20", None, false),
        // Beyond covered_until: weekends only, and said so.
        (2027, 1, "BD1", Some("2027-01-01"), true),
    ];
    for (year, month, rule, expected, beyond) in table {
        let rule = BusinessDayRule::parse(rule).unwrap();
        let found = calendar.business_day_of_month(*year, *month, rule);
        assert_eq!(found.date, expected.map(date), "{year}-{month} {rule}");
        assert_eq!(found.beyond_coverage, *beyond, "{year}-{month} {rule}");
    }
    // Covered through 10 July: BD3 is known, the last business day is not.
    let short = us_2026("2026-07-10");
    let bd3 = short.business_day_of_month(2026, 7, BusinessDayRule::Nth(3));
    assert_eq!(
        (bd3.date, bd3.beyond_coverage),
        (Some(date("2026-07-06")), false)
    );
    assert!(
        short
            .business_day_of_month(2026, 7, BusinessDayRule::FromLast(0))
            .beyond_coverage
    );
    assert_eq!(
        calendar
            .business_day_of_month(2026, 13, BusinessDayRule::Nth(1))
            .date,
        None
    );
    assert_eq!(
        calendar
            .business_day_of_month(2026, 7, BusinessDayRule::Nth(0))
            .date,
        None
    );
}

#[test]
fn business_day_rules_parse_within_bounds() {
    let table: &[(&str, Option<BusinessDayRule>)] = &[
        ("BD1", Some(BusinessDayRule::Nth(1))),
        ("BD3", Some(BusinessDayRule::Nth(3))),
        ("BD31", Some(BusinessDayRule::Nth(31))),
        ("BDL", Some(BusinessDayRule::FromLast(0))),
        ("BDL-1", Some(BusinessDayRule::FromLast(1))),
        ("BDL-30", Some(BusinessDayRule::FromLast(30))),
        ("BD0", None),
        ("BD32", None),
        ("BDL-0", None),
        ("BDL-31", None),
        ("BDL1", None),
        ("BD", None),
        ("bd3", None),
        ("BD+3", None),
        ("BD-3", None),
        ("BD123", None),
        ("", None),
    ];
    for (text, expected) in table {
        assert_eq!(BusinessDayRule::parse(text).ok(), *expected, "{text}");
        if let Some(rule) = expected {
            assert_eq!(rule.to_string(), *text);
        }
    }
}

#[test]
fn blackouts_are_wall_clock_windows_in_the_calendar_zone() {
    let calendar = BusinessCalendar::parse(&CalendarInput {
        name: "Berlin".into(),
        timezone: Some("Europe/Berlin".into()),
        blackouts: vec![
            BlackoutInput {
                from: "2026-12-24T18:00".into(),
                to: "2026-12-27T06:00:00".into(),
                name: Some("Christmas freeze".into()),
            },
            // 02:30 happens twice on 25 October: from the first to the second.
            BlackoutInput {
                from: "2026-10-25T02:30".into(),
                to: "2026-10-25T02:45".into(),
                name: None,
            },
            // 02:30 never happens on 29 March: read as 03:30.
            BlackoutInput {
                from: "2026-03-29T02:30".into(),
                to: "2026-03-29T04:00".into(),
                name: Some("gap".into()),
            },
        ],
        ..Default::default()
    })
    .unwrap();
    let at = |text: &str| {
        DateTime::parse_from_rfc3339(text)
            .unwrap()
            .with_timezone(&Utc)
    };
    let table: &[(&str, Option<&str>)] = &[
        ("2026-12-24T16:59:59Z", None),
        ("2026-12-24T17:00:00Z", Some("Christmas freeze")),
        ("2026-12-27T04:59:59Z", Some("Christmas freeze")),
        ("2026-12-27T05:00:00Z", None),
        ("2026-10-25T00:29:59Z", None),
        ("2026-10-25T00:30:00Z", Some("")),
        ("2026-10-25T01:44:59Z", Some("")),
        ("2026-10-25T01:45:00Z", None),
        ("2026-03-29T01:29:59Z", None),
        ("2026-03-29T01:30:00Z", Some("gap")),
    ];
    for (instant, expected) in table {
        let found = calendar.in_blackout(at(instant));
        assert_eq!(
            found.map(|b| b.name.as_deref().unwrap_or_default()),
            *expected,
            "{instant}"
        );
    }
    let first = calendar.blackouts().next().map(|(b, _)| b.from);
    assert_eq!(first, Some(input::parse_local("2026-03-29T02:30").unwrap()));
}
