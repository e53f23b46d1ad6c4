//! ISO-8601 durations as the API speaks them (`PT30S`, `PT1H30M`, `P1D`).
//!
//! Only the unambiguous designators are accepted: days, hours, minutes and
//! seconds (with a fractional part on seconds). Years, months and weeks have
//! no fixed length, so a schedule built from them would drift; they are
//! refused with a message that says so.

use std::fmt;
use std::time::Duration;

/// A non-negative, fixed-length duration parsed from ISO-8601 text.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(try_from = "String", into = "String")]
pub struct IsoDuration(Duration);

impl TryFrom<String> for IsoDuration {
    type Error = String;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

impl From<IsoDuration> for String {
    fn from(value: IsoDuration) -> Self {
        value.to_string()
    }
}

impl IsoDuration {
    pub fn parse(text: &str) -> Result<Self, String> {
        let upper = text.trim();
        let rest = upper
            .strip_prefix('P')
            .ok_or_else(|| format!("`{text}` is not an ISO-8601 duration (expected e.g. PT30S)"))?;
        if rest.is_empty() {
            return Err(format!("`{text}` has no components (expected e.g. PT30S)"));
        }
        let (date_part, time_part) = match rest.split_once('T') {
            Some((d, t)) => {
                if t.is_empty() {
                    return Err(format!("`{text}` has a `T` with nothing after it"));
                }
                (d, Some(t))
            }
            None => (rest, None),
        };

        let mut nanos: u128 = 0;
        for (value, unit) in components(date_part, text)? {
            let secs_per_unit: u128 = match unit {
                'D' => 86_400,
                'Y' | 'M' | 'W' => {
                    return Err(format!(
                        "`{text}` uses years, months or weeks, which have no fixed length; use days (D) or smaller"
                    ));
                }
                other => return Err(format!("`{text}` has an unknown date designator `{other}`")),
            };
            nanos += whole(value, text)? * secs_per_unit * 1_000_000_000;
        }
        if let Some(time_part) = time_part {
            for (value, unit) in components(time_part, text)? {
                nanos += match unit {
                    'H' => whole(value, text)? * 3_600 * 1_000_000_000,
                    'M' => whole(value, text)? * 60 * 1_000_000_000,
                    'S' => seconds_nanos(value, text)?,
                    other => {
                        return Err(format!("`{text}` has an unknown time designator `{other}`"));
                    }
                };
            }
        }
        // Ten years is far beyond any sensible interval and keeps every value
        // representable as a protobuf Duration and a chrono Duration.
        if nanos > 10 * 366 * 86_400 * 1_000_000_000 {
            return Err(format!("`{text}` is longer than ten years"));
        }
        let secs = (nanos / 1_000_000_000) as u64;
        let sub = (nanos % 1_000_000_000) as u32;
        Ok(Self(Duration::new(secs, sub)))
    }

    /// For durations the code itself names (bounds, defaults), which are
    /// well within `parse`'s ten years.
    pub fn from_std(duration: Duration) -> Self {
        Self(duration)
    }

    pub fn from_secs(secs: u64) -> Self {
        Self(Duration::from_secs(secs))
    }

    pub fn as_std(self) -> Duration {
        self.0
    }

    pub fn as_chrono(self) -> chrono::Duration {
        // Bounded to ten years by `parse`, so this cannot overflow.
        chrono::Duration::from_std(self.0).unwrap_or(chrono::Duration::MAX)
    }
}

/// Splits `12H30M` into `[("12", 'H'), ("30", 'M')]`.
fn components<'a>(part: &'a str, original: &str) -> Result<Vec<(&'a str, char)>, String> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, c) in part.char_indices() {
        if c.is_ascii_digit() || c == '.' || c == ',' {
            continue;
        }
        let value = &part[start..i];
        if value.is_empty() {
            return Err(format!(
                "`{original}` has a designator `{c}` without a number"
            ));
        }
        out.push((value, c));
        start = i + c.len_utf8();
    }
    if start != part.len() {
        return Err(format!("`{original}` ends with a number but no designator"));
    }
    Ok(out)
}

fn whole(value: &str, original: &str) -> Result<u128, String> {
    value
        .parse::<u64>()
        .map(u128::from)
        .map_err(|_| format!("`{original}`: only seconds may have a fractional part"))
}

fn seconds_nanos(value: &str, original: &str) -> Result<u128, String> {
    let value = value.replace(',', ".");
    let (int, frac) = value.split_once('.').unwrap_or((&value, ""));
    if int.is_empty() || frac.len() > 9 || !frac.chars().all(|c| c.is_ascii_digit()) {
        return Err(format!("`{original}` has a malformed seconds value"));
    }
    let int: u128 = int
        .parse::<u64>()
        .map(u128::from)
        .map_err(|_| format!("`{original}` has a malformed seconds value"))?;
    let frac_nanos: u128 = if frac.is_empty() {
        0
    } else {
        format!("{frac:0<9}")
            .parse::<u128>()
            .map_err(|_| format!("`{original}` has a malformed seconds value"))?
    };
    Ok(int * 1_000_000_000 + frac_nanos)
}

impl fmt::Display for IsoDuration {
    /// Canonical rendering: `PT0S`, `PT30S`, `PT1H30M`, `P1DT2H`, `PT0.5S`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let total = self.0.as_secs();
        let nanos = self.0.subsec_nanos();
        if total == 0 && nanos == 0 {
            return f.write_str("PT0S");
        }
        let (days, rem) = (total / 86_400, total % 86_400);
        let (hours, rem) = (rem / 3_600, rem % 3_600);
        let (minutes, seconds) = (rem / 60, rem % 60);
        f.write_str("P")?;
        if days > 0 {
            write!(f, "{days}D")?;
        }
        if hours > 0 || minutes > 0 || seconds > 0 || nanos > 0 {
            f.write_str("T")?;
            if hours > 0 {
                write!(f, "{hours}H")?;
            }
            if minutes > 0 {
                write!(f, "{minutes}M")?;
            }
            if seconds > 0 || nanos > 0 {
                if nanos > 0 {
                    let frac = format!("{nanos:09}");
                    write!(f, "{seconds}.{}S", frac.trim_end_matches('0'))?;
                } else {
                    write!(f, "{seconds}S")?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_common_forms() {
        let cases = [
            ("PT30S", 30_000),
            ("PT1S", 1_000),
            ("PT1H30M", 5_400_000),
            ("P1D", 86_400_000),
            ("P1DT1S", 86_401_000),
            ("PT0.5S", 500),
            ("PT1,25S", 1_250),
            ("PT0S", 0),
        ];
        for (text, millis) in cases {
            let d = IsoDuration::parse(text).unwrap();
            assert_eq!(d.as_std().as_millis(), millis, "{text}");
        }
    }

    #[test]
    fn refuses_bad_forms() {
        for text in [
            "", "30S", "P", "PT", "P1M", "P1Y", "P1W", "PT1.5H", "PTS", "PT30", "PT-1S", "1H",
            "PT1X", "P1H",
        ] {
            assert!(IsoDuration::parse(text).is_err(), "{text} should fail");
        }
    }

    #[test]
    fn renders_canonically() {
        for (text, canon) in [
            ("PT90S", "PT1M30S"),
            ("PT0.500S", "PT0.5S"),
            ("P1DT0S", "P1D"),
            ("PT0S", "PT0S"),
            ("PT3600S", "PT1H"),
        ] {
            assert_eq!(IsoDuration::parse(text).unwrap().to_string(), canon);
        }
    }
}
