//! Wall times that happen twice or not at all, and what a cron trigger does
//! about them.

use chrono::{DateTime, NaiveDateTime, Offset, TimeZone, Utc};
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};

/// What runs when a wall time happens twice (the clocks go back).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, utoipa::ToSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Repeated {
    /// The earlier occurrence only.
    #[default]
    First,
    /// The later occurrence only.
    Last,
    /// Both occurrences.
    Both,
}

/// What runs when a wall time does not exist (the clocks go forward).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, utoipa::ToSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Skipped {
    /// Run at the first instant after the gap (once, however many of the
    /// expression's times fell into it).
    #[default]
    Shift,
    /// Do not run.
    Skip,
}

impl Repeated {
    pub const ALL: [Repeated; 3] = [Self::First, Self::Last, Self::Both];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::First => "first",
            Self::Last => "last",
            Self::Both => "both",
        }
    }
}

impl std::str::FromStr for Repeated {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| format!("`{s}` is not a choice; expected one of first, last, both"))
    }
}

impl Skipped {
    pub const ALL: [Skipped; 2] = [Self::Shift, Self::Skip];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Shift => "shift",
            Self::Skip => "skip",
        }
    }
}

impl std::str::FromStr for Skipped {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| format!("`{s}` is not a choice; expected one of shift, skip"))
    }
}

/// A cron trigger's answer to daylight-saving changes.
///
/// The default, `repeated: first` + `skipped: shift`, makes a daily job run
/// exactly once on every calendar day, which is what people mean by "every
/// day at 02:30": not twice in autumn, not never in spring. (Temporal alone
/// would fire Berlin's `30 2 * * *` never on the spring day, and New York's
/// `30 1 * * *` twice on the autumn one.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DstPolicy {
    pub repeated: Repeated,
    pub skipped: Skipped,
}

/// Where a wall time falls on the time line of a zone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WallTime {
    Unique(DateTime<Utc>),
    /// Happens twice: the earlier and the later instant.
    Repeated(DateTime<Utc>, DateTime<Utc>),
    /// Falls in a gap; the first instant after the gap.
    Skipped(DateTime<Utc>),
}

/// Offset from UTC, in seconds, at an instant.
pub fn offset_at(tz: Tz, unix: i64) -> i64 {
    match DateTime::from_timestamp(unix, 0) {
        Some(t) => i64::from(
            tz.offset_from_utc_datetime(&t.naive_utc())
                .fix()
                .local_minus_utc(),
        ),
        None => 0,
    }
}

/// The wall clock of a zone at an instant, in seconds since 1970-01-01T00:00 wall time.
fn wall_at(tz: Tz, unix: i64) -> i64 {
    unix + offset_at(tz, unix)
}

/// Resolves a wall time in a zone.
pub fn resolve(tz: Tz, wall: NaiveDateTime) -> WallTime {
    match tz.from_local_datetime(&wall) {
        chrono::LocalResult::Single(t) => WallTime::Unique(t.with_timezone(&Utc)),
        chrono::LocalResult::Ambiguous(a, b) => {
            let (a, b) = (a.with_timezone(&Utc), b.with_timezone(&Utc));
            WallTime::Repeated(a.min(b), a.max(b))
        }
        chrono::LocalResult::None => {
            // The first instant whose wall clock is past `wall`. No zone is
            // more than 26 hours off UTC, so it lies within 26 hours of `wall`
            // read as UTC, and the wall clock only moves forward around a gap.
            let target = wall.and_utc().timestamp();
            let (mut lo, mut hi) = (target - 26 * 3600, target + 26 * 3600);
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                if wall_at(tz, mid) > target {
                    hi = mid;
                } else {
                    lo = mid + 1;
                }
            }
            WallTime::Skipped(DateTime::from_timestamp(lo, 0).unwrap_or_default())
        }
    }
}

/// A change of a zone's offset from UTC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transition {
    /// The first instant with the new offset.
    pub at: DateTime<Utc>,
    /// Offsets before and after, in seconds east of UTC.
    pub before: i64,
    pub after: i64,
}

/// The offset changes of a zone in `[from, to)`, oldest first. Changes are
/// found by sampling every 6 hours (no zone has changed its offset and back
/// within that), then pinned to the second.
pub fn transitions(tz: Tz, from: DateTime<Utc>, to: DateTime<Utc>) -> Vec<Transition> {
    const STEP: i64 = 6 * 3600;
    let mut out = Vec::new();
    let end = to.timestamp();
    let mut t = from.timestamp();
    let mut offset = offset_at(tz, t);
    while t < end {
        let next = (t + STEP).min(end);
        let next_offset = offset_at(tz, next);
        if next_offset != offset {
            let (mut lo, mut hi) = (t + 1, next);
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                if offset_at(tz, mid) == offset {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            if let Some(at) = DateTime::from_timestamp(lo, 0) {
                out.push(Transition {
                    at,
                    before: offset,
                    after: next_offset,
                });
            }
        }
        t = next;
        offset = next_offset;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDate;

    fn wall(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> NaiveDateTime {
        NaiveDate::from_ymd_opt(y, mo, d)
            .unwrap()
            .and_hms_opt(h, mi, 0)
            .unwrap()
    }

    fn utc(s: &str) -> DateTime<Utc> {
        s.parse().unwrap()
    }

    #[test]
    fn resolves_gaps_repeats_and_ordinary_times() {
        let table = [
            (
                chrono_tz::Europe::Berlin,
                wall(2027, 3, 28, 2, 30),
                WallTime::Skipped(utc("2027-03-28T01:00:00Z")),
            ),
            (
                chrono_tz::Europe::Berlin,
                wall(2027, 3, 28, 2, 0),
                WallTime::Skipped(utc("2027-03-28T01:00:00Z")),
            ),
            (
                chrono_tz::Europe::Berlin,
                wall(2027, 3, 28, 3, 0),
                WallTime::Unique(utc("2027-03-28T01:00:00Z")),
            ),
            (
                chrono_tz::America::New_York,
                wall(2027, 3, 14, 2, 0),
                WallTime::Skipped(utc("2027-03-14T07:00:00Z")),
            ),
            (
                chrono_tz::Australia::Lord_Howe,
                wall(2027, 10, 3, 2, 15),
                WallTime::Skipped(utc("2027-10-02T15:30:00Z")),
            ),
            (
                chrono_tz::Europe::Berlin,
                wall(2027, 10, 31, 2, 30),
                WallTime::Repeated(utc("2027-10-31T00:30:00Z"), utc("2027-10-31T01:30:00Z")),
            ),
            (
                chrono_tz::America::New_York,
                wall(2027, 11, 7, 1, 30),
                WallTime::Repeated(utc("2027-11-07T05:30:00Z"), utc("2027-11-07T06:30:00Z")),
            ),
            (
                chrono_tz::Australia::Lord_Howe,
                wall(2027, 4, 4, 1, 45),
                WallTime::Repeated(utc("2027-04-03T14:45:00Z"), utc("2027-04-03T15:15:00Z")),
            ),
            (
                chrono_tz::UTC,
                wall(2027, 3, 28, 2, 30),
                WallTime::Unique(utc("2027-03-28T02:30:00Z")),
            ),
            // Santiago springs forward at midnight: Sunday 00:30 does not exist.
            (
                chrono_tz::America::Santiago,
                wall(2026, 9, 6, 0, 30),
                WallTime::Skipped(utc("2026-09-06T04:00:00Z")),
            ),
        ];
        for (tz, w, want) in table {
            assert_eq!(resolve(tz, w), want, "{tz} {w}");
        }
    }

    #[test]
    fn finds_transitions() {
        let found = transitions(
            chrono_tz::Europe::Berlin,
            utc("2027-01-01T00:00:00Z"),
            utc("2028-01-01T00:00:00Z"),
        );
        assert_eq!(
            found,
            vec![
                Transition {
                    at: utc("2027-03-28T01:00:00Z"),
                    before: 3600,
                    after: 7200
                },
                Transition {
                    at: utc("2027-10-31T01:00:00Z"),
                    before: 7200,
                    after: 3600
                },
            ]
        );
        let lord_howe = transitions(
            chrono_tz::Australia::Lord_Howe,
            utc("2027-01-01T00:00:00Z"),
            utc("2028-01-01T00:00:00Z"),
        );
        assert_eq!(lord_howe.len(), 2);
        assert_eq!(lord_howe[0].before - lord_howe[0].after, 1800);
        assert!(
            transitions(
                chrono_tz::UTC,
                utc("2027-01-01T00:00:00Z"),
                utc("2030-01-01T00:00:00Z")
            )
            .is_empty()
        );
        assert!(
            transitions(
                chrono_tz::Asia::Kolkata,
                utc("2026-01-01T00:00:00Z"),
                utc("2031-01-01T00:00:00Z")
            )
            .is_empty()
        );
    }

    #[test]
    fn policy_serde_and_default() {
        assert_eq!(
            serde_json::to_value(DstPolicy::default()).unwrap(),
            serde_json::json!({"repeated": "first", "skipped": "shift"})
        );
        let p: DstPolicy = serde_json::from_value(serde_json::json!({"repeated": "both"})).unwrap();
        assert_eq!(
            p,
            DstPolicy {
                repeated: Repeated::Both,
                skipped: Skipped::Shift
            }
        );
        assert!(
            serde_json::from_value::<DstPolicy>(serde_json::json!({"repeated": "First"})).is_err()
        );
    }
}
