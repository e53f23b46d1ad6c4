//! The model of the engine, and the exceptions that reconcile it with the policy.

use super::*;

/// (expr, zone, from, to, what the default policy says, what the engine fires)
type Row<'a> = (
    &'a str,
    &'a str,
    &'a str,
    &'a str,
    &'a [&'a str],
    &'a [&'a str],
);

#[test]
fn the_issues_table() {
    let table: [Row; 6] = [
        (
            "30 2 * * *",
            "Europe/Berlin",
            "2027-03-27T12:00:00Z",
            "2027-03-28T12:00:00Z",
            &["2027-03-28T01:00:00+00:00"],
            &[],
        ),
        (
            "0 2 * * *",
            "America/New_York",
            "2027-03-13T12:00:00Z",
            "2027-03-14T12:00:00Z",
            &["2027-03-14T07:00:00+00:00"],
            &[],
        ),
        (
            "30 2 * * *",
            "Europe/Berlin",
            "2027-10-30T12:00:00Z",
            "2027-10-31T12:00:00Z",
            &["2027-10-31T00:30:00+00:00"],
            &["2027-10-31T01:30:00+00:00"],
        ),
        (
            "30 1 * * *",
            "America/New_York",
            "2027-11-06T12:00:00Z",
            "2027-11-07T12:00:00Z",
            &["2027-11-07T05:30:00+00:00"],
            &["2027-11-07T05:30:00+00:00", "2027-11-07T06:30:00+00:00"],
        ),
        (
            "15 2 * * *",
            "Australia/Lord_Howe",
            "2027-10-02T00:00:00Z",
            "2027-10-03T00:00:00Z",
            &["2027-10-02T15:30:00+00:00"],
            &["2027-10-02T15:45:00+00:00"],
        ),
        (
            "0 0 13 * FRI",
            "UTC",
            "2027-08-01T00:00:00Z",
            "2027-08-14T00:00:00Z",
            &["2027-08-06T00:00:00+00:00", "2027-08-13T00:00:00+00:00"],
            &["2027-08-06T00:00:00+00:00", "2027-08-13T00:00:00+00:00"],
        ),
    ];
    for (expr, zone, from, to, want_policy, want_engine) in table {
        let c = cron(expr, zone, DEFAULT);
        assert_eq!(policy_in(&c, from, to), want_policy, "policy {expr} {zone}");
        assert_eq!(engine_in(&c, from, to), want_engine, "engine {expr} {zone}");
    }
}

#[test]
fn the_engines_other_observed_repeats() {
    // Hourly Berlin fires the first 02:00 only; Lord Howe `45 1` the second.
    let hourly = cron("0 * * * *", "Europe/Berlin", DEFAULT);
    assert_eq!(
        engine_in(&hourly, "2027-10-30T22:30:00Z", "2027-10-31T02:00:00Z"),
        [
            "2027-10-30T23:00:00+00:00",
            "2027-10-31T00:00:00+00:00",
            "2027-10-31T02:00:00+00:00"
        ]
    );
    let lord_howe = cron("45 1 * * *", "Australia/Lord_Howe", DEFAULT);
    assert_eq!(
        engine_in(&lord_howe, "2027-04-03T00:00:00Z", "2027-04-04T00:00:00Z"),
        ["2027-04-03T15:15:00+00:00"]
    );
}

#[test]
fn the_engine_at_lord_howes_half_hour_repeat() {
    // 01:30-02:00 happens twice. The engine's "one hour later" device is
    // made for one-hour changes: from the second 01:30 it re-walks 01:45
    // "plus an hour" and lands on 02:45, so it never fires the first 01:30,
    // either 01:45, nor the ordinary 02:00, 02:15 and 02:30 (the dev server
    // agrees: the conformance test covers this window). The service runs
    // those itself.
    let c = cron("*/15 * * * *", "Australia/Lord_Howe", DEFAULT);
    assert_eq!(
        engine_in(&c, "2027-04-03T14:00:00Z", "2027-04-03T16:15:00Z"),
        [
            "2027-04-03T14:15:00+00:00",
            "2027-04-03T15:00:00+00:00",
            "2027-04-03T16:15:00+00:00"
        ]
    );
    let x = dst_exceptions(&c, utc("2027-04-03T14:00:00Z"), utc("2027-04-03T16:15:00Z"));
    let extra: Vec<(String, TimeNote)> = x
        .extra
        .iter()
        .map(|t| (t.at.to_rfc3339(), t.note))
        .collect();
    assert_eq!(
        extra,
        [
            ("2027-04-03T14:30:00+00:00".to_owned(), TimeNote::DstRepeat),
            ("2027-04-03T14:45:00+00:00".to_owned(), TimeNote::DstRepeat),
            ("2027-04-03T15:30:00+00:00".to_owned(), TimeNote::Normal),
            ("2027-04-03T15:45:00+00:00".to_owned(), TimeNote::Normal),
            ("2027-04-03T16:00:00+00:00".to_owned(), TimeNote::Normal),
        ]
    );
    // The second 01:30 is not wanted under `repeated: first`.
    assert_eq!(x.excluded, [utc("2027-04-03T15:00:00Z")]);
}

#[test]
fn exceptions_make_the_engine_the_policy() {
    let cases = [
        ("30 2 * * *", "Europe/Berlin"),
        ("0 2 * * *", "America/New_York"),
        ("30 1 * * *", "America/New_York"),
        ("15 2 * * *", "Australia/Lord_Howe"),
        ("*/15 * * * *", "Australia/Lord_Howe"),
        ("0 * * * *", "Europe/Berlin"),
        ("0 0 * * *", "America/Santiago"),
        ("0 0 * * SUN", "America/Santiago"),
    ];
    let (from, to) = (utc("2026-01-01T00:00:00Z"), utc("2029-01-01T00:00:00Z"));
    for (expr, zone) in cases {
        for repeated in [Repeated::First, Repeated::Last, Repeated::Both] {
            for skipped in [Skipped::Shift, Skipped::Skip] {
                let c = cron(expr, zone, policy(repeated, skipped));
                let want: Vec<DateTime<Utc>> = times_after(&c, from)
                    .map(|t| t.at)
                    .take_while(|t| *t <= to)
                    .collect();
                let x = dst_exceptions(&c, from, to);
                let mut got: Vec<DateTime<Utc>> = engine_times(&c, from)
                    .take_while(|t| *t <= to)
                    .filter(|t| !x.excluded.contains(t))
                    .chain(x.extra.iter().map(|t| t.at))
                    .collect();
                got.sort();
                assert_eq!(got, want, "{expr} {zone} {repeated:?} {skipped:?}");
                for t in &x.extra {
                    assert!(!engine_fires(&c, t.at) && policy_time(&c, t.at) == Some(*t));
                }
                for t in &x.excluded {
                    assert!(engine_fires(&c, *t) && policy_time(&c, *t).is_none());
                }
            }
        }
    }
}

#[test]
fn engine_fires_is_the_engines_chain() {
    for (expr, zone) in [
        ("*/30 * * * *", "Europe/Berlin"),
        ("*/15 0-3 * * *", "Australia/Lord_Howe"),
    ] {
        let c = cron(expr, zone, DEFAULT);
        let from = utc(if zone == "Europe/Berlin" {
            "2027-10-29T00:00:00Z"
        } else {
            "2027-04-01T00:00:00Z"
        });
        let chain: Vec<DateTime<Utc>> = engine_times(&c, from)
            .take_while(|t| *t <= from + Duration::days(5))
            .collect();
        let mut t = from + Duration::minutes(15);
        while t <= from + Duration::days(5) {
            assert_eq!(
                engine_fires(&c, t),
                chain.binary_search(&t).is_ok(),
                "{expr} {zone} {t}"
            );
            t += Duration::minutes(15);
        }
    }
}

#[test]
fn declined_times_are_the_ones_no_policy_run_takes() {
    let declined = |expr, zone, p, from, to| -> Vec<(String, TimeNote)> {
        dst_declined(&cron(expr, zone, p), utc(from), utc(to))
            .into_iter()
            .map(|t| (t.at.to_rfc3339(), t.note))
            .collect()
    };
    let (first, last, both) = (Repeated::First, Repeated::Last, Repeated::Both);
    let (shift, skip) = (Skipped::Shift, Skipped::Skip);
    let autumn = ("2026-10-24T00:00:00Z", "2026-10-26T00:00:00Z");
    let spring = ("2026-03-28T00:00:00Z", "2026-03-30T00:00:00Z");
    // Berlin 02:30 twice: the occurrence the policy does not run.
    assert_eq!(
        declined(
            "30 2 * * *",
            "Europe/Berlin",
            policy(first, shift),
            autumn.0,
            autumn.1
        ),
        [("2026-10-25T01:30:00+00:00".into(), TimeNote::DstRepeat)]
    );
    assert_eq!(
        declined(
            "30 2 * * *",
            "Europe/Berlin",
            policy(last, shift),
            autumn.0,
            autumn.1
        ),
        [("2026-10-25T00:30:00+00:00".into(), TimeNote::DstRepeat)]
    );
    assert!(
        declined(
            "30 2 * * *",
            "Europe/Berlin",
            policy(both, skip),
            autumn.0,
            autumn.1
        )
        .is_empty()
    );
    // Berlin 02:30 missing: under `skip`, the instant it would shift to.
    assert_eq!(
        declined(
            "30 2 * * *",
            "Europe/Berlin",
            policy(first, skip),
            spring.0,
            spring.1
        ),
        [("2026-03-29T01:00:00+00:00".into(), TimeNote::DstGap)]
    );
    assert!(
        declined(
            "30 2 * * *",
            "Europe/Berlin",
            policy(first, shift),
            spring.0,
            spring.1
        )
        .is_empty()
    );
    // Lord Howe's 30-minute gap: the engine fires 02:45 (15:45Z), the
    // policy shifts to 02:30 (15:30Z) or skips; 02:45 is declined either way.
    let lh = ("2027-10-02T00:00:00Z", "2027-10-04T00:00:00Z");
    assert_eq!(
        declined(
            "15 2 * * *",
            "Australia/Lord_Howe",
            policy(first, shift),
            lh.0,
            lh.1
        ),
        [("2027-10-02T15:45:00+00:00".into(), TimeNote::DstGap)]
    );
    assert_eq!(
        declined(
            "15 2 * * *",
            "Australia/Lord_Howe",
            policy(first, skip),
            lh.0,
            lh.1
        ),
        [
            ("2027-10-02T15:30:00+00:00".into(), TimeNote::DstGap),
            ("2027-10-02T15:45:00+00:00".into(), TimeNote::DstGap)
        ]
    );
    // Ordinary days decline nothing.
    assert!(
        declined(
            "30 2 * * *",
            "Europe/Berlin",
            DEFAULT,
            "2026-06-01T00:00:00Z",
            "2026-07-01T00:00:00Z"
        )
        .is_empty()
    );
}

#[test]
fn excluded_fires_and_backfillable_times() {
    let berlin = cron("30 2 * * *", "Europe/Berlin", DEFAULT);
    // The engine fires the second 02:30; the default policy wants the first.
    assert!(dst_excludes(&berlin, utc("2026-10-25T01:30:00Z")));
    assert!(!dst_excludes(&berlin, utc("2026-10-25T00:30:00Z")));
    // Away from a change, an unknown time is not the policy's to refuse.
    assert!(!dst_excludes(&berlin, utc("2026-06-01T01:23:00Z")));
    assert!(!dst_excludes(&berlin, utc("2026-06-01T00:30:00Z")));
    // A backfill of [t, t] fires t where the engine's walk from just
    // before it finds t: not the first 02:30 (the engine resolves 02:30 to
    // the second), not the second either (a walk that starts inside the
    // second copy of the hour adds an hour: it finds 02:30Z), not the
    // shifted 03:00 of the spring day. The running chain reaches the second
    // 02:30 from before the repeat, and fires it.
    assert!(engine_backfills(&berlin, utc("2026-06-01T00:30:00Z")));
    assert!(!engine_backfills(&berlin, utc("2026-10-25T01:30:00Z")));
    assert!(engine_fires(&berlin, utc("2026-10-25T01:30:00Z")));
    assert!(!engine_backfills(&berlin, utc("2026-10-25T00:30:00Z")));
    assert!(!engine_backfills(&berlin, utc("2026-03-29T01:00:00Z")));
    let new_york = cron("30 1 * * *", "America/New_York", DEFAULT);
    assert!(engine_backfills(&new_york, utc("2026-11-01T05:30:00Z")));
    assert!(engine_backfills(&new_york, utc("2026-11-01T06:30:00Z")));
}
