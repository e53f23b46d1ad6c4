//! Run statistics: which buckets a window of time is cut into.
//! Pure: the window is checked and cut here, counted by the store from its
//! rollups (runs counted per minute, hour and day as they are written).

use chrono::{DateTime, Duration, Utc};
use uuid::Uuid;

use super::FieldError;

/// The most buckets one answer holds (e.g. 41 days of hours).
pub const MAX_BUCKETS: i64 = 1000;

/// How long one bucket is. Buckets are aligned to UTC: minutes on the
/// minute, hours on the hour, days at midnight UTC. The store keeps a
/// rollup of each, so a bucket is read, not counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Bucket {
    Minute,
    Hour,
    Day,
}

impl Bucket {
    pub const ALL: [Bucket; 3] = [Bucket::Minute, Bucket::Hour, Bucket::Day];

    pub fn parse(text: &str) -> Result<Self, String> {
        match text {
            "PT1M" => Ok(Self::Minute),
            "PT1H" => Ok(Self::Hour),
            "P1D" => Ok(Self::Day),
            other => Err(format!("`{other}` is not a bucket: use PT1M, PT1H or P1D")),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Minute => "PT1M",
            Self::Hour => "PT1H",
            Self::Day => "P1D",
        }
    }

    pub fn seconds(self) -> i64 {
        match self {
            Self::Minute => 60,
            Self::Hour => 3600,
            Self::Day => 86_400,
        }
    }

    /// The start of the bucket holding `t`.
    pub fn floor(self, t: DateTime<Utc>) -> DateTime<Utc> {
        let s = self.seconds();
        let secs = t.timestamp().div_euclid(s) * s;
        DateTime::from_timestamp(secs, 0).unwrap_or(t)
    }

    /// The start of the first bucket at or after `t`.
    pub fn ceil(self, t: DateTime<Utc>) -> DateTime<Utc> {
        let start = self.floor(t);
        if start < t {
            start + Duration::seconds(self.seconds())
        } else {
            start
        }
    }

    /// `[from, to)` widened to whole buckets.
    fn widen(self, from: DateTime<Utc>, to: DateTime<Utc>) -> (DateTime<Utc>, DateTime<Utc>) {
        (self.floor(from), self.ceil(to))
    }
}

/// A checked window: `[from, to)` widened to whole buckets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatsWindow {
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    pub bucket: Bucket,
}

impl StatsWindow {
    /// `from` defaults to 24 hours before `to`, `to` to `now`; the window is
    /// widened to whole buckets and holds at most [`MAX_BUCKETS`].
    pub fn new(
        from: Option<DateTime<Utc>>,
        to: Option<DateTime<Utc>>,
        bucket: Bucket,
        now: DateTime<Utc>,
    ) -> Result<Self, FieldError> {
        let to = to.unwrap_or(now);
        let from = from.unwrap_or(to - Duration::hours(24));
        if from >= to {
            return Err(FieldError::new("from", "must be before `to`"));
        }
        let (start, end) = bucket.widen(from, to);
        let count = (end - start).num_seconds() / bucket.seconds();
        if count > MAX_BUCKETS {
            let message = format!(
                "the window holds {count} buckets of {}; at most {MAX_BUCKETS}",
                bucket.as_str()
            );
            // The bucket is to blame when a coarser one fits the window.
            let coarser = Bucket::ALL.into_iter().filter(|b| *b > bucket).find(|b| {
                let (s, e) = b.widen(from, to);
                (e - s).num_seconds() / b.seconds() <= MAX_BUCKETS
            });
            return Err(match coarser {
                Some(b) => FieldError::new(
                    "bucket",
                    format!("{message}: use {} or a shorter window", b.as_str()),
                ),
                None => FieldError::new("from", message),
            });
        }
        Ok(Self {
            from: start,
            to: end,
            bucket,
        })
    }

    /// Every bucket's start, in order.
    pub fn starts(&self) -> Vec<DateTime<Utc>> {
        let step = Duration::seconds(self.bucket.seconds());
        let mut out = Vec::new();
        let mut t = self.from;
        while t < self.to {
            out.push(t);
            t += step;
        }
        out
    }
}

/// One bucket's runs, by status.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BucketCounts {
    pub start: DateTime<Utc>,
    pub queued: i64,
    pub running: i64,
    pub succeeded: i64,
    pub failed: i64,
    pub cancelled: i64,
    pub timed_out: i64,
    pub skipped: i64,
    /// Over the bucket's runs that started and finished, in seconds.
    /// Read from the bucket's duration histogram: within 1 % of the exact
    /// percentile (see [`crate::sketch`]).
    pub duration_p50: Option<f64>,
    pub duration_p95: Option<f64>,
    pub duration_p99: Option<f64>,
}

impl BucketCounts {
    /// Every run of the bucket, whatever its status.
    pub fn total(&self) -> i64 {
        self.queued
            + self.running
            + self.succeeded
            + self.failed
            + self.cancelled
            + self.timed_out
            + self.skipped
    }
}

/// The runs a summary counts: those recorded since the start of the minute
/// 24 hours before `now`. The minutes up to the next whole hour are read
/// from the minute rollup, the rest from the hour rollup: some 60 + 24
/// rows per key, however many runs there were.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SummarySpan {
    /// The first minute counted.
    pub minutes_from: DateTime<Utc>,
    /// The first hour counted; minutes before it are read as minutes.
    pub hours_from: DateTime<Utc>,
}

impl SummarySpan {
    pub fn last_24_hours(now: DateTime<Utc>) -> Self {
        let since = Bucket::Minute.floor(now - Duration::hours(24));
        Self {
            minutes_from: since,
            hours_from: Bucket::Hour.ceil(since),
        }
    }
}

/// An activity at a glance: its newest run, its runs of the last 24 hours
/// by outcome, its open alerts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ActivitySummary {
    pub last_run: Option<LastRun>,
    pub runs: i64,
    pub succeeded: i64,
    pub failed: i64,
    pub timed_out: i64,
    pub cancelled: i64,
    pub open_alerts: i64,
}

/// An activity's newest run, as its summary shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct LastRun {
    pub run_id: Uuid,
    pub status: String,
    pub scheduled_for: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(s: &str) -> DateTime<Utc> {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    /// `from`, `to`, the bucket, and the window with its bucket count, or
    /// the field refused.
    type Case = (
        Option<&'static str>,
        Option<&'static str>,
        Bucket,
        Result<(&'static str, &'static str, usize), &'static str>,
    );

    #[test]
    fn windows_are_whole_buckets_and_bounded() {
        let now = utc("2026-12-06T10:20:00Z");
        let cases: [Case; 11] = [
            // Defaults: the last 24 hours, widened to whole hours: 25 buckets.
            (
                None,
                None,
                Bucket::Hour,
                Ok(("2026-12-05T10:00:00Z", "2026-12-06T11:00:00Z", 25)),
            ),
            (
                Some("2026-12-01T00:00:00Z"),
                Some("2026-12-02T00:00:00Z"),
                Bucket::Hour,
                Ok(("2026-12-01T00:00:00Z", "2026-12-02T00:00:00Z", 24)),
            ),
            (
                Some("2026-12-01T05:00:00Z"),
                Some("2026-12-03T01:00:00Z"),
                Bucket::Day,
                Ok(("2026-12-01T00:00:00Z", "2026-12-04T00:00:00Z", 3)),
            ),
            (
                Some("2026-12-02T00:00:00Z"),
                Some("2026-12-01T00:00:00Z"),
                Bucket::Hour,
                Err("from"),
            ),
            (
                Some("2026-12-01T00:00:00Z"),
                Some("2026-12-01T00:00:00Z"),
                Bucket::Day,
                Err("from"),
            ),
            // 1000 hours fit, 1001 do not.
            (
                Some("2026-10-01T00:00:00Z"),
                Some("2026-11-11T16:00:00Z"),
                Bucket::Hour,
                Ok(("2026-10-01T00:00:00Z", "2026-11-11T16:00:00Z", 1000)),
            ),
            // 1001 hours would fit in days: the bucket is too fine.
            (
                Some("2026-10-01T00:00:00Z"),
                Some("2026-11-11T16:00:01Z"),
                Bucket::Hour,
                Err("bucket"),
            ),
            // Minutes: 1000 fit (16 h 40 min), the default day does not.
            (
                Some("2026-12-01T00:00:30Z"),
                Some("2026-12-01T16:39:10Z"),
                Bucket::Minute,
                Ok(("2026-12-01T00:00:00Z", "2026-12-01T16:40:00Z", 1000)),
            ),
            (None, None, Bucket::Minute, Err("bucket")),
            // Nothing coarser fits either: the window is too long.
            (
                Some("2020-01-01T00:00:00Z"),
                Some("2026-01-01T00:00:00Z"),
                Bucket::Hour,
                Err("from"),
            ),
            (
                Some("2020-01-01T00:00:00Z"),
                Some("2026-01-01T00:00:00Z"),
                Bucket::Day,
                Err("from"),
            ),
        ];
        for (from, to, bucket, expected) in cases {
            let got = StatsWindow::new(from.map(utc), to.map(utc), bucket, now);
            match (got, expected) {
                (Ok(w), Ok((f, t, n))) => {
                    assert_eq!(
                        (w.from, w.to, w.starts().len()),
                        (utc(f), utc(t), n),
                        "{from:?} {to:?}"
                    );
                }
                (Err(e), Err(field)) => assert_eq!(e.field, field),
                (got, expected) => panic!("{from:?} {to:?}: {got:?} vs {expected:?}"),
            }
        }
    }

    #[test]
    fn summaries_read_minutes_up_to_the_first_whole_hour() {
        // (now, first minute counted, first hour counted)
        let cases = [
            (
                "2026-12-06T10:20:30Z",
                "2026-12-05T10:20:00Z",
                "2026-12-05T11:00:00Z",
            ),
            (
                "2026-12-06T10:00:00Z",
                "2026-12-05T10:00:00Z",
                "2026-12-05T10:00:00Z",
            ),
            (
                "2026-12-06T10:00:00.5Z",
                "2026-12-05T10:00:00Z",
                "2026-12-05T10:00:00Z",
            ),
        ];
        for (now, minutes, hours) in cases {
            assert_eq!(
                SummarySpan::last_24_hours(utc(now)),
                SummarySpan {
                    minutes_from: utc(minutes),
                    hours_from: utc(hours)
                },
                "{now}"
            );
        }
    }

    #[test]
    fn buckets_parse_and_floor_in_utc() {
        assert_eq!(Bucket::parse("PT1M"), Ok(Bucket::Minute));
        assert_eq!(Bucket::parse("PT1H"), Ok(Bucket::Hour));
        assert_eq!(Bucket::parse("P1D"), Ok(Bucket::Day));
        assert!(Bucket::parse("PT5M").is_err());
        assert_eq!(
            Bucket::Day.floor(utc("2026-12-06T23:59:59Z")),
            utc("2026-12-06T00:00:00Z")
        );
        assert_eq!(
            Bucket::Hour.floor(utc("1969-12-31T23:30:00Z")),
            utc("1969-12-31T23:00:00Z")
        );
        assert_eq!(
            Bucket::Minute.ceil(utc("2026-12-06T23:59:00.001Z")),
            utc("2026-12-07T00:00:00Z")
        );
        assert_eq!(
            Bucket::Minute.ceil(utc("2026-12-06T23:59:00Z")),
            utc("2026-12-06T23:59:00Z")
        );
    }
}
