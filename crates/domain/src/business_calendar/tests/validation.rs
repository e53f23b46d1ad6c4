use super::*;

fn base() -> CalendarInput {
    CalendarInput {
        name: "Ops".into(),
        ..Default::default()
    }
}

fn holiday(date: &str) -> HolidayInput {
    HolidayInput {
        date: date.into(),
        name: "Holiday".into(),
    }
}

fn working(date: &str) -> WorkingDayInput {
    WorkingDayInput {
        date: date.into(),
        name: None,
    }
}

fn fields(input: &CalendarInput) -> Vec<String> {
    match BusinessCalendar::parse(input) {
        Ok(_) => vec![],
        Err(errors) => errors.into_iter().map(|e| e.field).collect(),
    }
}

#[test]
fn each_problem_is_named_by_its_field() {
    type Edit = fn(&mut CalendarInput);
    let table: &[(&str, Edit, &[&str])] = &[
        ("valid", |_| {}, &[]),
        ("blank name", |c| c.name = "  ".into(), &["name"]),
        ("long name", |c| c.name = "x".repeat(201), &["name"]),
        (
            "unknown zone",
            |c| c.timezone = Some("Mars/Olympus".into()),
            &["timezone"],
        ),
        (
            "day 7",
            |c| c.weekend_days = Some(vec![0, 7]),
            &["weekend_days[1]"],
        ),
        (
            "day twice",
            |c| c.weekend_days = Some(vec![6, 6]),
            &["weekend_days[1]"],
        ),
        (
            "every day",
            |c| c.weekend_days = Some((0..7).collect()),
            &["weekend_days"],
        ),
        ("no weekend", |c| c.weekend_days = Some(vec![]), &[]),
        (
            "not a date",
            |c| c.holidays = vec![holiday("2026-02-30")],
            &["holidays[0].date"],
        ),
        (
            "short date",
            |c| c.holidays = vec![holiday("2026-7-3")],
            &["holidays[0].date"],
        ),
        (
            "out of years",
            |c| c.holidays = vec![holiday("2101-01-01")],
            &["holidays[0].date"],
        ),
        (
            "holiday twice",
            |c| c.holidays = vec![holiday("2026-07-03"), holiday("2026-07-03")],
            &["holidays[1].date"],
        ),
        (
            "unnamed holiday",
            |c| {
                c.holidays = vec![HolidayInput {
                    date: "2026-07-03".into(),
                    name: String::new(),
                }]
            },
            &["holidays[0].name"],
        ),
        (
            "holiday and working day",
            |c| {
                c.holidays = vec![holiday("2026-07-04")];
                c.working_days = vec![working("2026-07-04")];
            },
            &["working_days[0].date"],
        ),
        (
            "working Tuesday",
            |c| c.working_days = vec![working("2026-07-07")],
            &["working_days[0].date"],
        ),
        (
            "working day twice",
            |c| c.working_days = vec![working("2026-07-11"), working("2026-07-11")],
            &["working_days[1].date"],
        ),
        (
            "working Tuesday with no weekend",
            |c| {
                c.weekend_days = Some(vec![2]);
                c.working_days = vec![working("2026-07-07")];
            },
            &[],
        ),
        (
            "blackout backwards",
            |c| {
                c.blackouts = vec![BlackoutInput {
                    from: "2026-07-03T10:00".into(),
                    to: "2026-07-03T09:00".into(),
                    name: None,
                }]
            },
            &["blackouts[0].to"],
        ),
        (
            "blackout with an offset",
            |c| {
                c.blackouts = vec![BlackoutInput {
                    from: "2026-07-03T10:00+02:00".into(),
                    to: "2026-07-03T11:00".into(),
                    name: None,
                }]
            },
            &["blackouts[0].from"],
        ),
        (
            "coverage before a holiday",
            |c| {
                c.holidays = vec![holiday("2026-12-25"), holiday("2027-01-01")];
                c.covered_until = Some("2026-12-31".into());
            },
            &["covered_until"],
        ),
        (
            "coverage before a working day",
            |c| {
                c.working_days = vec![working("2026-07-11")];
                c.covered_until = Some("2026-07-10".into());
            },
            &["covered_until"],
        ),
        (
            "coverage not a date",
            |c| c.covered_until = Some("soon".into()),
            &["covered_until"],
        ),
        (
            "too many holidays",
            |c| {
                c.holidays = (0..=MAX_HOLIDAYS)
                    .map(|i| HolidayInput {
                        date: (date("2000-01-01") + chrono::Days::new(i as u64)).to_string(),
                        name: "h".into(),
                    })
                    .collect()
            },
            &["holidays"],
        ),
    ];
    for (what, edit, expected) in table {
        let mut input = base();
        edit(&mut input);
        assert_eq!(fields(&input), *expected, "{what}");
    }
}

#[test]
fn a_calendar_reads_back_as_it_was_written() {
    let calendar = us_2026("2026-12-31");
    let input = calendar.to_input();
    assert_eq!(input.weekend_days, Some(vec![0, 6]));
    assert_eq!(input.holidays[0].date, "2026-01-01");
    assert_eq!(input.covered_until.as_deref(), Some("2026-12-31"));
    assert_eq!(BusinessCalendar::parse(&input).as_ref(), Ok(&calendar));
}
