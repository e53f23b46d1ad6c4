//! The issue's table and the properties of the two clocks.

use chrono::{DateTime, Duration, Utc};

use super::*;
use crate::domain::duration::IsoDuration;
use crate::domain::trigger::{Cadence, CronExpr, TimeZoneName};

fn utc(s: &str) -> DateTime<Utc> {
    s.parse().unwrap()
}

fn cron(text: &str, zone: &str, dst: DstPolicy) -> Cadence {
    Cadence::Cron {
        cron: CronExpr::parse(text).unwrap(),
        timezone: TimeZoneName::parse(zone).unwrap(),
        dst,
    }
}

fn policy(repeated: Repeated, skipped: Skipped) -> DstPolicy {
    DstPolicy { repeated, skipped }
}

/// Policy times in `(from, to]` as RFC 3339 strings.
fn policy_in(cadence: &Cadence, from: &str, to: &str) -> Vec<String> {
    times_after(cadence, utc(from))
        .take_while(|t| t.at <= utc(to))
        .map(|t| t.at.to_rfc3339())
        .collect()
}

fn engine_in(cadence: &Cadence, from: &str, to: &str) -> Vec<String> {
    engine_times(cadence, utc(from))
        .take_while(|t| *t <= utc(to))
        .map(|t| t.to_rfc3339())
        .collect()
}

const DEFAULT: DstPolicy = DstPolicy {
    repeated: Repeated::First,
    skipped: Skipped::Shift,
};

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
fn policies_at_a_repeat_and_a_gap() {
    let first = policy(Repeated::First, Skipped::Shift);
    let last = policy(Repeated::Last, Skipped::Skip);
    let both = policy(Repeated::Both, Skipped::Shift);
    let (from, to) = ("2027-10-30T22:30:00Z", "2027-10-31T02:00:00Z");
    let hourly = |dst| cron("0 * * * *", "Europe/Berlin", dst);
    assert_eq!(policy_in(&hourly(first), from, to).len(), 3);
    assert_eq!(
        policy_in(&hourly(last), from, to),
        [
            "2027-10-30T23:00:00+00:00",
            "2027-10-31T01:00:00+00:00",
            "2027-10-31T02:00:00+00:00"
        ]
    );
    assert_eq!(policy_in(&hourly(both), from, to).len(), 4);
    // Spring: 02:00 and 02:30 do not exist; shifted, they collapse onto
    // 03:00 CEST once, which is also a real time; skipped, they vanish.
    let half_hourly = |dst| cron("0,30 1-3 * * *", "Europe/Berlin", dst);
    let (from, to) = ("2027-03-27T23:00:00Z", "2027-03-28T02:00:00Z");
    assert_eq!(
        policy_in(&half_hourly(first), from, to),
        [
            "2027-03-28T00:00:00+00:00",
            "2027-03-28T00:30:00+00:00",
            "2027-03-28T01:00:00+00:00",
            "2027-03-28T01:30:00+00:00"
        ]
    );
    let notes: Vec<TimeNote> = times_after(&half_hourly(first), utc(from))
        .take(4)
        .map(|t| t.note)
        .collect();
    assert_eq!(notes, [TimeNote::Normal; 4]);
    let at_two = cron("0,30 2 * * *", "Europe/Berlin", first);
    let t: Vec<NominalTime> = times_after(&at_two, utc(from)).take(2).collect();
    assert_eq!(
        t[0],
        NominalTime {
            at: utc("2027-03-28T01:00:00Z"),
            note: TimeNote::DstGap
        }
    );
    assert_eq!(t[1].at, utc("2027-03-29T00:00:00Z"));
    assert_eq!(
        policy_in(&cron("0,30 2 * * *", "Europe/Berlin", last), from, to),
        Vec::<String>::new()
    );
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
fn forward_and_backward_agree() {
    let cases = [
        cron(
            "*/7 1-3 * * *",
            "Europe/Berlin",
            policy(Repeated::Both, Skipped::Shift),
        ),
        cron("0,30 0-2 * * *", "America/Santiago", DEFAULT),
        cron("0 0 29 2 *", "UTC", DEFAULT),
        Cadence::Interval {
            every: IsoDuration::from_secs(7 * 3600 + 13),
        },
    ];
    let (from, to) = (utc("2026-01-01T00:00:00Z"), utc("2029-12-31T00:00:00Z"));
    for c in cases {
        let forward: Vec<NominalTime> = times_after(&c, from).take_while(|t| t.at < to).collect();
        let mut backward: Vec<NominalTime> =
            times_before(&c, to).take_while(|t| t.at > from).collect();
        backward.reverse();
        assert_eq!(forward, backward, "{c:?}");
        assert!(forward.windows(2).all(|w| w[0].at < w[1].at), "{c:?}");
        assert!(!forward.is_empty());
    }
}

#[test]
fn a_year_of_minutes_lazily() {
    let every_minute = cron("* * * * *", "Europe/Berlin", DEFAULT);
    let from = utc("2027-01-01T00:00:00Z");
    let to = from + Duration::days(365);
    // Spring loses no instant (02:xx shifts onto 03:00, a real time);
    // autumn's repeated hour runs once (first), so 60 instants do not run.
    let count = times_after(&every_minute, from)
        .take_while(|t| t.at <= to)
        .count();
    assert_eq!(count, 365 * 1440 - 60);
    let both = cron(
        "* * * * *",
        "Europe/Berlin",
        policy(Repeated::Both, Skipped::Shift),
    );
    let count = times_after(&both, from).take_while(|t| t.at <= to).count();
    // Under `both` every instant of the repeated hour runs; the gap's 60
    // missing minutes collapse onto 03:00, which runs anyway.
    assert_eq!(count, 365 * 1440);
    assert_eq!(
        times_before(&every_minute, to).nth(50_000).map(|t| t.at),
        Some(to - Duration::minutes(50_001))
    );
}

#[test]
fn bounded_years() {
    let yearly = cron("@yearly", "UTC", DEFAULT);
    assert_eq!(
        times_after(&yearly, utc("2100-06-01T00:00:00Z")).next(),
        None
    );
    assert_eq!(engine_next(&yearly, utc("2100-06-01T00:00:00Z")), None);
    assert_eq!(
        times_before(&yearly, utc("1970-06-01T00:00:00Z"))
            .next()
            .map(|t| t.at),
        Some(utc("1970-01-01T00:00:00Z"))
    );
    assert_eq!(
        times_before(&yearly, utc("1970-01-01T00:00:00Z")).next(),
        None
    );
}

#[test]
fn intervals_are_epoch_aligned_and_agree_with_the_engine() {
    let c = Cadence::Interval {
        every: IsoDuration::from_secs(90),
    };
    let t: Vec<DateTime<Utc>> = times_after(&c, utc("2027-01-01T00:00:00Z"))
        .take(2)
        .map(|t| t.at)
        .collect();
    assert_eq!(
        t,
        [utc("2027-01-01T00:01:30Z"), utc("2027-01-01T00:03:00Z")]
    );
    assert_eq!(engine_next(&c, utc("2027-01-01T00:00:00Z")), Some(t[0]));
    assert_eq!(
        dst_exceptions(&c, utc("2027-01-01T00:00:00Z"), utc("2028-01-01T00:00:00Z")),
        DstExceptions::default()
    );
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
fn a_day_that_never_was() {
    // Samoa skipped 2011-12-30 entirely: its midnight shifts onto the 31st's
    // midnight, which is a time of its own and stays normal, once.
    let c = cron("0 0 * * *", "Pacific/Apia", DEFAULT);
    let from = utc("2011-12-28T00:00:00Z");
    let got: Vec<NominalTime> = times_after(&c, from).take(4).collect();
    let mut back: Vec<NominalTime> = times_before(&c, got[3].at + Duration::seconds(1))
        .take(4)
        .collect();
    back.reverse();
    assert_eq!(got, back);
    let at: Vec<DateTime<Utc>> = got.iter().map(|t| t.at).collect();
    let want = [
        "2011-12-28T10:00:00Z",
        "2011-12-29T10:00:00Z",
        "2011-12-30T10:00:00Z",
        "2011-12-31T10:00:00Z",
    ];
    assert_eq!(at, want.map(utc));
    assert!(got.iter().all(|t| t.note == TimeNote::Normal), "{got:?}");
    // Under `skip` nothing changes: the 31st runs anyway.
    let skip = cron(
        "0 0 * * *",
        "Pacific/Apia",
        policy(Repeated::First, Skipped::Skip),
    );
    assert_eq!(times_after(&skip, from).nth(2).map(|t| t.at), Some(at[2]));
}
