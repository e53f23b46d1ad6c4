use super::*;
use chrono::TimeZone;

fn t(second: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 9, 0, 0).unwrap() + chrono::Duration::seconds(second.into())
}

fn secs(n: u64) -> IsoDuration {
    IsoDuration::from_secs(n)
}

fn history<'a>(
    now: DateTime<Utc>,
    pauses: &'a [(DateTime<Utc>, Option<DateTime<Utc>>)],
    outages: &'a [(DateTime<Utc>, DateTime<Utc>)],
) -> History<'a> {
    History {
        created_at: t(0),
        start_at: None,
        pauses,
        temporal_outages: outages,
        enabled: true,
        updated_at: t(0),
        now,
    }
}

fn kinds(b: Option<Breach>) -> Option<AlertKind> {
    b.map(|b| b.kind)
}

/// Every 2 s from t(2); `start_within` 5 s; facts → broken or not.
#[test]
fn late_start_of_a_schedule() {
    let times: Vec<_> = (1..=20).map(|i| t(2 * i)).collect();
    let pause = [(t(20), None)];
    type Case<'a> = (
        &'a str,
        u32,
        Vec<(u32, RunStatus)>,
        &'a [(DateTime<Utc>, Option<DateTime<Utc>>)],
        bool,
    );
    let cases: Vec<Case> = vec![
        (
            "every time ran",
            30,
            (1..=15).map(|i| (2 * i, RunStatus::Succeeded)).collect(),
            &[],
            false,
        ),
        (
            "worker stopped at 20: due 24 has none",
            30,
            (1..=10).map(|i| (2 * i, RunStatus::Succeeded)).collect(),
            &[],
            true,
        ),
        (
            "the first gap (22) not yet 5 s old",
            26,
            (1..=10).map(|i| (2 * i, RunStatus::Succeeded)).collect(),
            &[],
            false,
        ),
        (
            "the first gap (22) exactly 5 s old",
            27,
            (1..=10).map(|i| (2 * i, RunStatus::Succeeded)).collect(),
            &[],
            true,
        ),
        (
            "a later run covers the due time",
            30,
            vec![(2, RunStatus::Succeeded), (26, RunStatus::Running)],
            &[],
            false,
        ),
        (
            "a skipped run is no start",
            30,
            vec![(20, RunStatus::Succeeded), (24, RunStatus::Skipped)],
            &[],
            true,
        ),
        (
            "paused since 20",
            30,
            (1..=9).map(|i| (2 * i, RunStatus::Succeeded)).collect(),
            &pause,
            false,
        ),
        (
            "failed runs still started",
            30,
            vec![(24, RunStatus::Failed)],
            &[],
            false,
        ),
    ];
    for (name, now, ran, pauses, broken) in cases {
        let runs: HashMap<_, _> = ran.iter().map(|(s, st)| (t(*s), *st)).collect();
        let last_executed = ran
            .iter()
            .filter(|(_, st)| *st != RunStatus::Skipped)
            .map(|(s, _)| t(*s))
            .max();
        let in_window: Vec<_> = times.iter().copied().filter(|x| *x <= t(now)).collect();
        let s = Schedule {
            times: &in_window,
            runs: &runs,
            last_executed,
            busy: &[],
            history: history(t(now), pauses, &[]),
        };
        assert_eq!(
            late_start_scheduled(secs(5), &s).is_some(),
            broken,
            "{name}"
        );
    }
}

#[test]
fn missed_fires_open_and_end_with_the_next_run() {
    let times: Vec<_> = (1..=10).map(|i| t(10 * i)).collect();
    let outage = [(t(35), t(55))];
    let busy = [(t(60), Some(t(75)))];
    type Case<'a> = (&'a str, Vec<(u32, RunStatus)>, bool);
    let cases: Vec<Case> = vec![
        // 40 and 50 fall in the outage; 70 is overlap (busy); nothing after 50 ran.
        (
            "outage, nothing ran since",
            vec![
                (10, RunStatus::Succeeded),
                (20, RunStatus::Succeeded),
                (30, RunStatus::Succeeded),
                (60, RunStatus::Running),
            ],
            true,
        ),
        (
            "a later run ends the incident",
            vec![
                (30, RunStatus::Succeeded),
                (60, RunStatus::Succeeded),
                (80, RunStatus::Succeeded),
                (90, RunStatus::Succeeded),
                (100, RunStatus::Succeeded),
            ],
            false,
        ),
        (
            "policy skips are not missed",
            (1..=10)
                .map(|i| {
                    (
                        10 * i,
                        if i % 2 == 0 {
                            RunStatus::Skipped
                        } else {
                            RunStatus::Succeeded
                        },
                    )
                })
                .collect(),
            false,
        ),
    ];
    for (name, ran, broken) in cases {
        let runs: HashMap<_, _> = ran.iter().map(|(s, st)| (t(*s), *st)).collect();
        let last_executed = ran
            .iter()
            .filter(|(_, st)| *st != RunStatus::Skipped)
            .map(|(s, _)| t(*s))
            .max();
        let s = Schedule {
            times: &times,
            runs: &runs,
            last_executed,
            busy: &busy,
            history: history(t(105), &[], &outage),
        };
        assert_eq!(
            kinds(missed_fires(&s)),
            broken.then_some(AlertKind::MissedFire),
            "{name}"
        );
    }
    // Paused times and overlap drops are not missed.
    let runs = HashMap::from([(t(10), RunStatus::Succeeded)]);
    let pause = [(t(15), Some(t(65)))];
    let s = Schedule {
        times: &times[..7],
        runs: &runs,
        last_executed: Some(t(10)),
        busy: &[(t(60), Some(t(75)))],
        history: history(t(75), &pause, &[]),
    };
    assert_eq!(missed_fires(&s), None);
}

#[test]
fn stuck_failure_streak_and_events() {
    let (a, b, c) = (Uuid::from_u128(1), Uuid::from_u128(2), Uuid::from_u128(3));
    assert!(stuck(secs(10), t(20), &[(a, t(11))]).is_none());
    assert_eq!(
        kinds(stuck(secs(10), t(20), &[(a, t(10)), (b, t(15))])),
        Some(AlertKind::Stuck)
    );
    use RunStatus::*;
    let table: Vec<(u32, Vec<RunStatus>, bool)> = vec![
        (3, vec![Failed, Failed, Failed], true),
        (3, vec![Failed, Failed, Failed, Succeeded], true),
        (3, vec![Failed, Failed], false),
        (3, vec![Succeeded, Failed, Failed, Failed], false),
        (3, vec![Failed, Succeeded, Failed], false),
        (1, vec![Failed], true),
    ];
    for (n, statuses, broken) in table {
        let recent: Vec<_> = statuses.iter().map(|s| (c, *s)).collect();
        assert_eq!(
            failure_streak(n, &recent).is_some(),
            broken,
            "{n} {statuses:?}"
        );
    }
    let waiting = [("e1".to_owned(), t(10)), ("e2".to_owned(), t(18))];
    assert!(late_start_events(secs(5), t(16), &waiting).is_some());
    assert!(late_start_events(secs(5), t(16), &waiting[1..]).is_none());
    assert!(late_start_events(secs(5), t(14), &[]).is_none());
}

/// A New York calendar known until 31 December 2026: its coverage ends at
/// midnight of 1 January in New York (05:00 UTC). Notice 30 days.
#[test]
fn calendar_coverage_opens_a_notice_before_the_end() {
    use crate::business_calendar::{BusinessCalendar, CalendarInput};
    let calendar = |covered_until: Option<&str>| {
        BusinessCalendar::parse(&CalendarInput {
            name: "us-nyse".into(),
            timezone: Some("America/New_York".into()),
            weekend_days: None,
            holidays: vec![],
            working_days: vec![],
            blackouts: vec![],
            covered_until: covered_until.map(Into::into),
        })
        .unwrap()
    };
    let at = |s: &str| s.parse::<DateTime<Utc>>().unwrap();
    let notice = IsoDuration::parse("P30D").unwrap();
    // (covered_until, now, open?)
    let table: &[(Option<&str>, &str, Option<&str>)] = &[
        (Some("2026-12-31"), "2026-12-02T04:59:59Z", None),
        (Some("2026-12-31"), "2026-12-02T05:00:00Z", Some("extend")),
        (Some("2026-12-31"), "2027-01-01T04:59:59Z", Some("extend")),
        (Some("2026-12-31"), "2027-01-01T05:00:00Z", Some("ended")),
        (Some("2026-12-31"), "2027-06-01T00:00:00Z", Some("ended")),
        // Extended: resolved.
        (Some("2027-12-31"), "2027-01-01T05:00:00Z", None),
        // No end known: nothing to warn about.
        (None, "2030-01-01T00:00:00Z", None),
    ];
    for (covered_until, now, want) in table {
        let calendar = calendar(*covered_until);
        let coverage = Coverage {
            calendar_id: Uuid::nil(),
            calendar: &calendar,
        };
        let got = coverage_ending(notice, at(now), coverage);
        let words = got.as_ref().map(|b| {
            if b.summary.contains("has ended") {
                "ended"
            } else {
                "extend"
            }
        });
        assert_eq!(words, *want, "{covered_until:?} at {now}: {got:?}");
        if let Some(b) = got {
            assert_eq!(b.kind, AlertKind::CalendarCoverage);
            assert_eq!(b.detail["coverage_ends_at"], "2027-01-01T05:00:00Z");
            assert_eq!(b.detail["covered_until"], "2026-12-31");
        }
    }
}
