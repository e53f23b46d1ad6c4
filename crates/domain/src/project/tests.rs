//! Table tests of project IDs, definitions and count quotas.
use super::*;

#[test]
fn a_count_quota_admits_below_its_limit_only() {
    let quotas = Quotas {
        activities: Some(2),
        sources: Some(0),
        ..Quotas::default()
    };
    let refused = |quota: CountQuota, limit: i64, usage: i64| {
        Err(QuotaExceeded {
            quota,
            limit,
            usage,
        })
    };
    let cases = [
        (CountQuota::Activities, 0, Ok(())),
        (CountQuota::Activities, 1, Ok(())),
        (
            CountQuota::Activities,
            2,
            refused(CountQuota::Activities, 2, 2),
        ),
        // Lowered below what the project already has.
        (
            CountQuota::Activities,
            5,
            refused(CountQuota::Activities, 2, 5),
        ),
        (CountQuota::Sources, 0, refused(CountQuota::Sources, 0, 0)),
        // Unlimited.
        (CountQuota::Subscriptions, 1_000_000, Ok(())),
    ];
    for (quota, usage, expected) in cases {
        assert_eq!(
            quota.admit(&quotas, usage),
            expected,
            "{quota:?} at {usage}"
        );
    }
}

#[test]
fn project_ids() {
    for good in [
        "default",
        "a",
        "team-a",
        "a1",
        &format!("a{}", "b".repeat(62)),
    ] {
        assert!(ProjectId::parse(good).is_ok(), "{good}");
    }
    for bad in [
        "",
        "A",
        "1a",
        "-a",
        "a_b",
        "a b",
        "é",
        &format!("a{}", "b".repeat(63)),
    ] {
        assert!(ProjectId::parse(bad).is_err(), "{bad}");
    }
}

fn input(weight: Option<i64>, quotas: QuotasInput) -> ProjectInput {
    ProjectInput {
        name: "Team A".into(),
        weight,
        quotas,
    }
}

fn fields(input: &ProjectInput) -> Vec<String> {
    match Project::parse(input) {
        Ok(_) => vec![],
        Err(errors) => errors.into_iter().map(|e| e.field).collect(),
    }
}

#[test]
fn weights_and_quotas() {
    let q = QuotasInput::default;
    let cases: Vec<(ProjectInput, Vec<&str>)> = vec![
        (input(None, q()), vec![]),
        (input(Some(1000), q()), vec![]),
        (input(Some(0), q()), vec!["weight"]),
        (input(Some(1001), q()), vec!["weight"]),
        (
            input(
                None,
                QuotasInput {
                    activities: Some(0),
                    events_per_second: Some(10),
                    events_burst: Some(20),
                    ..q()
                },
            ),
            vec![],
        ),
        (
            input(
                None,
                QuotasInput {
                    activities: Some(-1),
                    runs_running: Some(MAX_QUOTA + 1),
                    ..q()
                },
            ),
            vec!["quotas.activities", "quotas.runs_running"],
        ),
        (
            input(
                None,
                QuotasInput {
                    events_burst: Some(5),
                    ..q()
                },
            ),
            vec!["quotas.events_burst"],
        ),
        (
            input(
                None,
                QuotasInput {
                    events_per_second: Some(5),
                    events_burst: Some(0),
                    ..q()
                },
            ),
            vec!["quotas.events_burst"],
        ),
        (
            input(
                None,
                QuotasInput {
                    runs_guaranteed: Some(4),
                    runs_running: Some(4),
                    ..q()
                },
            ),
            vec![],
        ),
        (
            input(
                None,
                QuotasInput {
                    runs_guaranteed: Some(5),
                    runs_running: Some(4),
                    ..q()
                },
            ),
            vec!["quotas.runs_guaranteed"],
        ),
        (
            input(
                None,
                QuotasInput {
                    runs_guaranteed: Some(-1),
                    ..q()
                },
            ),
            vec!["quotas.runs_guaranteed"],
        ),
    ];
    for (input, expected) in cases {
        assert_eq!(fields(&input), expected, "{input:?}");
    }
    let blank = ProjectInput {
        name: " ".into(),
        ..input(None, q())
    };
    assert_eq!(fields(&blank), vec!["name"]);
}

#[test]
fn a_project_reads_back_from_its_input() {
    let parsed = Project::parse(&input(
        Some(3),
        QuotasInput {
            sources: Some(2),
            runs_guaranteed: Some(1),
            ..Default::default()
        },
    ))
    .unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(Project::parse(&parsed.to_input()), Ok(parsed));
}

#[test]
fn what_a_project_owns_is_named() {
    let owned = Owned {
        activities: 1,
        keys: 2,
        ..Default::default()
    };
    assert!(!owned.is_empty());
    assert_eq!(owned.describe(), "1 activity, 2 keys");
    assert!(Owned::default().is_empty());
}
