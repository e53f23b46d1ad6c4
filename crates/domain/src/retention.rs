//! History kept in time partitions: which partitions a retention pass
//! makes ahead and which it drops, given the time, the policy and the
//! partitions that exist. Forgetting history is dropping whole partitions,
//! never deleting rows from a table writers use.

use chrono::{DateTime, Duration, DurationRound, Utc};

named_enum! {
    /// A table kept in time partitions.
    pub enum HistoryTable ("history table") {
        /// The change log behind `GET /v1/stream`.
        ChangeLog = "change_log",
    }
}

named_enum! {
    /// How much time one partition covers (UTC days or hours).
    pub enum Period ("partition period") {
        Day = "day",
        Hour = "hour",
    }
}

impl Period {
    pub fn length(self) -> Duration {
        match self {
            Period::Day => Duration::days(1),
            Period::Hour => Duration::hours(1),
        }
    }

    /// The start of the period holding `at`.
    pub fn start_of(self, at: DateTime<Utc>) -> DateTime<Utc> {
        // Truncating to a whole day or hour of the epoch cannot overflow
        // for any instant chrono represents.
        at.duration_trunc(self.length()).unwrap_or(at)
    }

    /// The partition name's time part: `YYYYMMDD` or `YYYYMMDDHH`.
    fn stamp(self) -> &'static str {
        match self {
            Period::Day => "%Y%m%d",
            Period::Hour => "%Y%m%d%H",
        }
    }
}

impl HistoryTable {
    /// How much time one of its partitions covers. The change log's day:
    /// with a day's retention it keeps between one and two days, and a
    /// read by `seq` merges a handful of partitions; hourly partitions
    /// would keep the retention to the hour but make each read merge 24
    /// or more.
    pub fn period(self) -> Period {
        match self {
            HistoryTable::ChangeLog => Period::Day,
        }
    }

    /// The partition holding the period that starts at `from`:
    /// `change_log_p20261207`.
    pub fn partition_name(self, from: DateTime<Utc>) -> String {
        format!("{}_p{}", self.as_str(), from.format(self.period().stamp()))
    }

    /// The start of the period a partition of this table covers, if
    /// `name` is one this module makes.
    pub fn partition_start(self, name: &str) -> Option<DateTime<Utc>> {
        let stamp = name.strip_prefix(self.as_str())?.strip_prefix("_p")?;
        let digits = match self.period() {
            Period::Day => 8,
            Period::Hour => 10,
        };
        if stamp.len() != digits || !stamp.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let date = chrono::NaiveDate::parse_from_str(&stamp[..8], "%Y%m%d").ok()?;
        let hour = match &stamp[8..] {
            "" => 0,
            hh => hh.parse::<u32>().ok()?,
        };
        Some(date.and_hms_opt(hour, 0, 0)?.and_utc())
    }
}

/// One partition: the times `from` (inclusive) to `to` (exclusive).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partition {
    pub name: String,
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
}

/// How one table is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    /// How long a row is kept at least; `None` keeps it for ever. A
    /// partition goes once all of it is older than this.
    pub retention: Option<Duration>,
    /// How many periods after the current one have a partition ready.
    pub ahead: u32,
}

/// What one pass does to one table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// Partitions to make, oldest first.
    pub create: Vec<Partition>,
    /// Partitions to drop, oldest first.
    pub drop: Vec<Partition>,
}

/// The pass at `now`: makes the current period's partition and `ahead`
/// more unless a partition already covers part of them (an operator's, or
/// one of another period), and drops every partition that ends at or
/// before `now - retention`. The current partition is never dropped.
pub fn plan(
    table: HistoryTable,
    policy: Policy,
    now: DateTime<Utc>,
    existing: &[Partition],
) -> Plan {
    let period = table.period();
    let current = period.start_of(now);
    let create = (0..=i64::from(policy.ahead))
        .filter_map(|i| {
            let from = current + period.length() * i32::try_from(i).ok()?;
            let to = from + period.length();
            let taken = existing.iter().any(|p| p.from < to && from < p.to);
            (!taken).then(|| Partition {
                name: table.partition_name(from),
                from,
                to,
            })
        })
        .collect();
    let mut drop: Vec<Partition> = match policy.retention {
        None => Vec::new(),
        Some(retention) => {
            let horizon = now - retention.max(Duration::zero());
            existing
                .iter()
                .filter(|p| p.to <= horizon)
                .cloned()
                .collect()
        }
    };
    drop.sort_by_key(|p| p.from);
    Plan { create, drop }
}

/// When the next pass runs: `interval` after the last one, or now if there
/// was none or it is overdue.
pub fn next_pass(
    last: Option<DateTime<Utc>>,
    interval: std::time::Duration,
    now: DateTime<Utc>,
) -> DateTime<Utc> {
    let interval = Duration::from_std(interval).unwrap_or(Duration::MAX);
    last.and_then(|l| l.checked_add_signed(interval))
        .map_or(now, |next| next.max(now))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(d: u32, h: u32, m: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 12, d, h, m, 0).unwrap()
    }

    fn day(d: u32) -> Partition {
        Partition {
            name: format!("change_log_p202612{d:02}"),
            from: at(d, 0, 0),
            to: at(d + 1, 0, 0),
        }
    }

    fn names(ps: &[Partition]) -> Vec<&str> {
        ps.iter().map(|p| p.name.as_str()).collect()
    }

    /// What, the policy, now, the partitions that exist, then the names
    /// made and dropped.
    type Case = (
        &'static str,
        Policy,
        DateTime<Utc>,
        Vec<Partition>,
        &'static [&'static str],
        &'static [&'static str],
    );

    const DAY: Policy = Policy {
        retention: Some(Duration::hours(24)),
        ahead: 3,
    };

    #[test]
    fn plans_the_change_log() {
        let cases: &[Case] = &[
            (
                "empty: today and three ahead",
                DAY,
                at(7, 10, 0),
                vec![],
                &[
                    "change_log_p20261207",
                    "change_log_p20261208",
                    "change_log_p20261209",
                    "change_log_p20261210",
                ],
                &[],
            ),
            (
                "kept up: only the day that came into reach",
                DAY,
                at(8, 0, 1),
                vec![day(7), day(8), day(9), day(10)],
                &["change_log_p20261211"],
                &[],
            ),
            (
                "yesterday ends exactly at the horizon: dropped",
                DAY,
                at(8, 0, 0),
                vec![day(6), day(7), day(8), day(9), day(10), day(11)],
                &[],
                &["change_log_p20261206"],
            ),
            (
                "a minute short of the horizon: kept",
                DAY,
                at(7, 23, 59),
                vec![day(6), day(7), day(8), day(9), day(10)],
                &[],
                &[],
            ),
            (
                "after days without a pass: every old day goes, oldest first",
                DAY,
                at(9, 12, 0),
                vec![day(7), day(3), day(5), day(4), day(9)],
                &[
                    "change_log_p20261210",
                    "change_log_p20261211",
                    "change_log_p20261212",
                ],
                &[
                    "change_log_p20261203",
                    "change_log_p20261204",
                    "change_log_p20261205",
                    "change_log_p20261207",
                ],
            ),
            (
                "kept for ever: nothing dropped",
                Policy {
                    retention: None,
                    ahead: 0,
                },
                at(9, 12, 0),
                vec![day(1), day(9)],
                &[],
                &[],
            ),
            (
                "zero retention still keeps the current partition",
                Policy {
                    retention: Some(Duration::zero()),
                    ahead: 1,
                },
                at(9, 12, 0),
                vec![day(8), day(9)],
                &["change_log_p20261210"],
                &["change_log_p20261208"],
            ),
            (
                "a partition someone made over two days: no overlap made",
                DAY,
                at(9, 12, 0),
                vec![Partition {
                    name: "change_log_manual".into(),
                    from: at(9, 0, 0),
                    to: at(11, 0, 0),
                }],
                &["change_log_p20261211", "change_log_p20261212"],
                &[],
            ),
        ];
        for (what, policy, now, existing, create, drop) in cases {
            let plan = plan(HistoryTable::ChangeLog, *policy, *now, existing);
            assert_eq!(names(&plan.create), *create, "{what}: create");
            assert_eq!(names(&plan.drop), *drop, "{what}: drop");
        }
    }

    #[test]
    fn made_partitions_cover_one_period_each() {
        let plan = plan(HistoryTable::ChangeLog, DAY, at(7, 10, 0), &[]);
        for p in &plan.create {
            assert_eq!(p.to - p.from, Duration::days(1), "{}", p.name);
            assert_eq!(
                HistoryTable::ChangeLog.partition_start(&p.name),
                Some(p.from)
            );
        }
    }

    #[test]
    fn reads_back_only_its_own_names() {
        let cases = [
            ("change_log_p20261207", Some(at(7, 0, 0))),
            ("change_log_p2026120", None),
            ("change_log_p2026120712", None),
            ("change_log_p20261332", None),
            ("change_log_pabcdefgh", None),
            ("change_log_unpartitioned", None),
            ("other_p20261207", None),
        ];
        for (name, start) in cases {
            assert_eq!(
                HistoryTable::ChangeLog.partition_start(name),
                start,
                "{name}"
            );
        }
    }

    #[test]
    fn periods_start_on_utc_boundaries() {
        assert_eq!(Period::Day.start_of(at(7, 23, 59)), at(7, 0, 0));
        assert_eq!(Period::Hour.start_of(at(7, 23, 59)), at(7, 23, 0));
        assert_eq!(Period::Day.start_of(at(7, 0, 0)), at(7, 0, 0));
    }

    #[test]
    fn next_pass_is_an_interval_after_the_last_or_now() {
        let minute = std::time::Duration::from_secs(60);
        let cases = [
            (None, at(7, 10, 0), at(7, 10, 0)),
            (Some(at(7, 10, 0)), at(7, 10, 0), at(7, 10, 1)),
            (Some(at(7, 9, 0)), at(7, 10, 0), at(7, 10, 0)),
        ];
        for (last, now, next) in cases {
            assert_eq!(next_pass(last, minute, now), next, "{last:?} {now}");
        }
    }
}
