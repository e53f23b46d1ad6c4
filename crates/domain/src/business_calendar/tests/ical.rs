use super::*;

const US: &str = include_str!("../../../../../tests/fixtures/us-holidays-2026-2027.ics");

fn file(events: &str) -> String {
    format!("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//EN\r\n{events}END:VCALENDAR\r\n")
}

fn event(lines: &[&str]) -> String {
    let mut out = String::from("BEGIN:VEVENT\r\nUID:x\r\n");
    for line in lines {
        out.push_str(line);
        out.push_str("\r\n");
    }
    out.push_str("END:VEVENT\r\n");
    out
}

fn named(name: &str) -> ImportOptions {
    ImportOptions {
        name: Some(name.into()),
        ..Default::default()
    }
}

#[test]
fn a_holiday_file_becomes_a_calendar() {
    let imported = import_ical(US, &ImportOptions::default()).unwrap();
    let calendar = &imported.calendar;
    assert_eq!(calendar.name(), "US federal holidays");
    assert_eq!(calendar.timezone().name(), "America/New_York");
    assert_eq!(imported.events, 23);
    // Thanksgiving lasts two days each year: 25 dates from 23 events.
    assert_eq!(calendar.holidays().count(), 25);
    assert_eq!(calendar.covered_until(), Some(date("2027-12-31")));
    assert!(imported.warnings.is_empty(), "{:?}", imported.warnings);
    let day = calendar.day(date("2026-07-03"));
    assert_eq!(day.kind, DayKind::Holiday);
    assert_eq!(day.name.as_deref(), Some("Independence Day (observed)"));
    assert_eq!(
        calendar.day(date("2026-01-19")).name.as_deref(),
        Some("Birthday of Martin Luther King, Jr.")
    );
    assert_eq!(calendar.day(date("2026-11-27")).kind, DayKind::Holiday);
    assert_eq!(calendar.day(date("2026-11-28")).kind, DayKind::Weekend);
    // The request's options win over the file's.
    let options = ImportOptions {
        name: Some("US".into()),
        timezone: Some("UTC".into()),
        weekend_days: Some(vec![0]),
        covered_until: Some("2026-12-31".into()),
    };
    let imported = import_ical(US, &options).unwrap();
    assert_eq!(imported.calendar.name(), "US");
    assert_eq!(imported.calendar.timezone().name(), "UTC");
    assert!(imported.calendar.is_business_day(date("2026-07-04")));
    assert_eq!(imported.calendar.holidays().count(), 12);
    assert_eq!(imported.warnings.len(), 1, "{:?}", imported.warnings);
    assert!(
        imported.warnings[0]
            .message
            .contains("13 dates after covered_until")
    );
}

#[test]
fn yearly_rules_expand_through_the_coverage() {
    let text = file(
        &[
            event(&[
                "DTSTART;VALUE=DATE:20260101",
                "RRULE:FREQ=YEARLY",
                "SUMMARY:New Year",
            ]),
            event(&[
                "DTSTART;VALUE=DATE:20261225",
                "RRULE:FREQ=YEARLY;COUNT=2",
                "SUMMARY:Christmas",
            ]),
            event(&[
                "DTSTART;VALUE=DATE:20260501",
                "RRULE:FREQ=YEARLY;BYMONTH=5;BYMONTHDAY=1;UNTIL=20280501",
                "EXDATE;VALUE=DATE:20270501",
                "SUMMARY:May Day",
            ]),
        ]
        .concat(),
    );
    let options = ImportOptions {
        covered_until: Some("2029-12-31".into()),
        ..named("rules")
    };
    let calendar = import_ical(&text, &options).unwrap().calendar;
    let dates: Vec<String> = calendar.holidays().map(|h| h.date.to_string()).collect();
    assert_eq!(
        dates,
        [
            "2026-01-01",
            "2026-05-01",
            "2026-12-25",
            "2027-01-01",
            "2027-12-25",
            "2028-01-01",
            "2028-05-01",
            "2029-01-01"
        ]
    );
}

#[test]
fn what_would_make_the_holidays_wrong_is_refused_by_line() {
    let table: &[(&str, &[&str], &str)] = &[
        (
            "timed",
            &["DTSTART:20260703T090000Z", "SUMMARY:Meeting"],
            "line 6 (DTSTART): `20260703T090000Z` has a time of day",
        ),
        (
            "date-time value",
            &["DTSTART;VALUE=DATE-TIME:20260703T090000", "SUMMARY:M"],
            "line 6 (DTSTART): VALUE=DATE-TIME",
        ),
        (
            "no summary",
            &["DTSTART;VALUE=DATE:20260703"],
            "line 4 (VEVENT): has no SUMMARY",
        ),
        (
            "no start",
            &["SUMMARY:Nothing"],
            "line 4 (VEVENT): has no DTSTART",
        ),
        (
            "monthly",
            &[
                "DTSTART;VALUE=DATE:20260703",
                "RRULE:FREQ=MONTHLY",
                "SUMMARY:M",
            ],
            "line 7 (RRULE): `FREQ=MONTHLY` is not a plain yearly rule",
        ),
        (
            "by day",
            &[
                "DTSTART;VALUE=DATE:20261126",
                "RRULE:FREQ=YEARLY;BYMONTH=11;BYDAY=4TH",
                "SUMMARY:T",
            ],
            "line 7 (RRULE)",
        ),
        (
            "rdate",
            &[
                "DTSTART;VALUE=DATE:20260703",
                "RDATE;VALUE=DATE:20270703",
                "SUMMARY:M",
            ],
            "line 7 (RDATE)",
        ),
        (
            "end first",
            &[
                "DTSTART;VALUE=DATE:20260703",
                "DTEND;VALUE=DATE:20260703",
                "SUMMARY:M",
            ],
            "line 7 (DTEND): 2026-07-03 is not after DTSTART",
        ),
        (
            "hours",
            &["DTSTART;VALUE=DATE:20260703", "DURATION:PT8H", "SUMMARY:M"],
            "line 7 (DURATION)",
        ),
        (
            "old",
            &["DTSTART;VALUE=DATE:19600101", "SUMMARY:M"],
            "line 6 (DTSTART): 1960-01-01 is outside the years",
        ),
    ];
    for (what, lines, expected) in table {
        let errors = import_ical(&file(&event(lines)), &named("x")).unwrap_err();
        assert_eq!(errors[0].field, "body", "{what}");
        assert!(
            errors[0].message.starts_with(expected),
            "{what}: {errors:?}"
        );
    }
    for garbage in ["", "hello", "BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n"] {
        let errors = import_ical(garbage, &named("x")).unwrap_err();
        assert_eq!(errors[0].field, "body", "{garbage:?}: {errors:?}");
    }
    let unnamed = import_ical(
        &file(&event(&["DTSTART;VALUE=DATE:20260703", "SUMMARY:M"])),
        &ImportOptions::default(),
    );
    assert_eq!(unnamed.unwrap_err()[0].field, "name");
    let bad_zone = ImportOptions {
        timezone: Some("Nowhere".into()),
        ..named("x")
    };
    let errors = import_ical(
        &file(&event(&["DTSTART;VALUE=DATE:20260703", "SUMMARY:M"])),
        &bad_zone,
    );
    assert_eq!(errors.unwrap_err()[0].field, "timezone");
}

#[test]
fn what_can_be_left_out_is_with_a_warning() {
    let text = file(
        &[
            event(&["DTSTART;VALUE=DATE:20260703", "SUMMARY:Independence Day"]),
            event(&["DTSTART;VALUE=DATE:20260703", "SUMMARY:Fourth"]),
            event(&[
                "DTSTART;VALUE=DATE:20260704",
                "STATUS:CANCELLED",
                "SUMMARY:Gone",
            ]),
            "BEGIN:VTODO\r\nUID:t\r\nSUMMARY:todo\r\nEND:VTODO\r\n".into(),
        ]
        .concat(),
    );
    let imported = import_ical(&text, &named("x")).unwrap();
    assert_eq!(imported.calendar.holidays().count(), 1);
    let warnings: Vec<(usize, &str)> = imported
        .warnings
        .iter()
        .map(|w| (w.line, w.message.as_str()))
        .collect();
    assert_eq!(warnings.len(), 3, "{warnings:?}");
    assert_eq!(warnings[0].0, 9);
    assert!(
        warnings[0]
            .1
            .contains("already `Independence Day` (line 4)"),
        "{warnings:?}"
    );
    assert_eq!(warnings[1], (14, "a cancelled event: left out"));
    assert_eq!(warnings[2], (20, "a VTODO is not a holiday: left out"));
}
