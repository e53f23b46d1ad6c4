//! The policy's times: repeats, gaps, both directions, long ranges.

use chrono::Datelike;

use super::*;

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

#[test]
fn bounds_far_outside_the_years() {
    let far = utc("9999-01-01T00:00:00Z");
    let long_ago = utc("0001-01-01T00:00:00Z");
    let daily = cron("0 0 * * *", "Asia/Kolkata", DEFAULT);
    let every = Cadence::Interval {
        every: IsoDuration::from_secs(3600),
    };
    for c in [&daily, &every] {
        let last = times_before(c, far).next().map(|t| t.at);
        assert!(
            last.is_some_and(|t| t.year() == LAST_YEAR),
            "{c:?} {last:?}"
        );
        let first = times_after(c, long_ago).next().map(|t| t.at);
        assert!(
            first.is_some_and(|t| t.year() <= FIRST_YEAR),
            "{c:?} {first:?}"
        );
        assert!(times_after(c, far).next().is_none());
        assert!(times_before(c, long_ago).next().is_none());
        assert_eq!(dst_exceptions(c, long_ago, far), DstExceptions::default());
        assert!(!engine_fires(c, far) && policy_time(c, far).is_none());
    }
    let berlin = cron("30 2 * * *", "Europe/Berlin", DEFAULT);
    let x = dst_exceptions(&berlin, long_ago, far);
    // Germany has changed clocks since 1980, and chrono-tz's tables stop
    // after 2099: 120 years. Each spring the shifted 02:30 is extra; each
    // autumn the engine fires the second 02:30 (excluded) where the policy
    // wants the first (extra).
    assert_eq!(x.extra.len(), 2 * 120);
    assert_eq!(x.excluded.len(), 120);
}
