//! Instants in responses, written as chrono writes them (RFC 3339, `Z`,
//! fractional seconds in 0, 3, 6 or 9 digits as needed) without going
//! through `fmt`: a page of runs holds hundreds of them. Years outside
//! 0000–9999 and leap seconds are left to chrono.

use chrono::{DateTime, Datelike, Timelike, Utc};
use serde::Serializer;

/// For `#[serde(serialize_with = …)]` on a `DateTime<Utc>`.
pub fn serialize<S: Serializer>(t: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
    let mut buf = [0u8; 32];
    match write(t, &mut buf) {
        Some(text) => s.serialize_str(text),
        None => serde::Serialize::serialize(t, s),
    }
}

/// For `#[serde(serialize_with = …)]` on an `Option<DateTime<Utc>>`.
pub fn serialize_option<S: Serializer>(t: &Option<DateTime<Utc>>, s: S) -> Result<S::Ok, S::Error> {
    match t {
        Some(t) => serialize(t, s),
        None => s.serialize_none(),
    }
}

/// `t` as chrono's serializer writes it, when that is four-digit years
/// and no leap second.
fn write<'b>(t: &DateTime<Utc>, buf: &'b mut [u8; 32]) -> Option<&'b str> {
    let year = t.year();
    let nanos = t.nanosecond();
    if !(0..=9999).contains(&year) || nanos >= 1_000_000_000 {
        return None;
    }
    put(buf, 0, year as u32, 4);
    buf[4] = b'-';
    put(buf, 5, t.month(), 2);
    buf[7] = b'-';
    put(buf, 8, t.day(), 2);
    buf[10] = b'T';
    put(buf, 11, t.hour(), 2);
    buf[13] = b':';
    put(buf, 14, t.minute(), 2);
    buf[16] = b':';
    put(buf, 17, t.second(), 2);
    let mut end = 19;
    let fraction = if nanos == 0 {
        None
    } else if nanos % 1_000_000 == 0 {
        Some((nanos / 1_000_000, 3))
    } else if nanos % 1_000 == 0 {
        Some((nanos / 1_000, 6))
    } else {
        Some((nanos, 9))
    };
    if let Some((value, width)) = fraction {
        buf[19] = b'.';
        put(buf, 20, value, width);
        end = 20 + width;
    }
    buf[end] = b'Z';
    std::str::from_utf8(&buf[..=end]).ok()
}

/// `value` in `width` decimal digits at `at`, zero-padded.
fn put(buf: &mut [u8; 32], at: usize, value: u32, width: usize) {
    let mut v = value;
    for i in (0..width).rev() {
        buf[at + i] = b'0' + (v % 10) as u8;
        v /= 10;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[derive(serde::Serialize)]
    struct Both {
        #[serde(serialize_with = "serialize")]
        ours: DateTime<Utc>,
        chrono: DateTime<Utc>,
        #[serde(serialize_with = "serialize_option")]
        ours_option: Option<DateTime<Utc>>,
        chrono_option: Option<DateTime<Utc>>,
    }

    #[test]
    fn instants_are_written_as_chrono_writes_them() {
        let at = |y, mo, d, h, mi, s, nanos| {
            Utc.with_ymd_and_hms(y, mo, d, h, mi, s)
                .single()
                .and_then(|t| t.with_nanosecond(nanos))
                .unwrap_or_else(|| panic!("{y}-{mo}-{d} {h}:{mi}:{s}.{nanos}"))
        };
        let cases = [
            at(2026, 12, 5, 3, 14, 37, 0),
            at(2026, 1, 1, 0, 0, 0, 1_000_000),
            at(2026, 2, 28, 23, 59, 59, 123_000_000),
            at(2024, 2, 29, 12, 0, 9, 123_456_000),
            at(2024, 2, 29, 12, 0, 9, 100_000),
            at(2024, 2, 29, 12, 0, 9, 1_000),
            at(2024, 2, 29, 12, 0, 9, 123_456_789),
            at(2024, 2, 29, 12, 0, 9, 1),
            at(0, 1, 1, 0, 0, 0, 0),
            at(9999, 12, 31, 23, 59, 59, 999_999_999),
            // Left to chrono: a year of five digits, one before year 0, a
            // leap second.
            at(10000, 1, 1, 0, 0, 0, 0),
            at(-1, 1, 1, 0, 0, 0, 0),
            at(2016, 12, 31, 23, 59, 59, 1_500_000_000),
        ];
        for t in cases {
            for option in [Some(t), None] {
                let both = serde_json::to_value(Both {
                    ours: t,
                    chrono: t,
                    ours_option: option,
                    chrono_option: option,
                })
                .unwrap_or_default();
                assert_eq!(both["ours"], both["chrono"], "{t:?}");
                assert_eq!(both["ours_option"], both["chrono_option"], "{t:?}");
                assert!(both["ours"].is_string(), "{both}");
            }
        }
    }
}
