//! Business-day offsets within a month: `BD3` (the third business day),
//! `BDL` (the last), `BDL-1` (the one before the last).

use std::fmt;

/// The most business days a month can have: 31, when every day of a
/// 31-day month is one (a weekend of one day whose dates are all added
/// working days). `BD1` to `BD31`, `BDL` and `BDL-1` to `BDL-30` are
/// accepted; a month with fewer business days has no such day.
pub const MAX_BUSINESS_DAY: u8 = 31;

/// Which business day of a month.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BusinessDayRule {
    /// `BDn`: the n-th business day, from 1.
    Nth(u8),
    /// `BDL` (0) or `BDL-n`: the n-th business day before the last.
    FromLast(u8),
}

impl BusinessDayRule {
    pub fn parse(text: &str) -> Result<Self, String> {
        let bad = |why: &str| {
            format!(
                "`{text}` is not a business day of the month: {why} (BD1 to BD{MAX_BUSINESS_DAY}, BDL, or BDL-1 to BDL-{})",
                MAX_BUSINESS_DAY - 1
            )
        };
        let rest = text
            .strip_prefix("BD")
            .ok_or_else(|| bad("it starts with BD"))?;
        let number = |digits: &str| -> Option<u8> {
            (!digits.is_empty() && digits.len() <= 2 && digits.bytes().all(|b| b.is_ascii_digit()))
                .then(|| digits.parse().ok())
                .flatten()
        };
        if let Some(last) = rest.strip_prefix('L') {
            if last.is_empty() {
                return Ok(Self::FromLast(0));
            }
            let n = last
                .strip_prefix('-')
                .and_then(number)
                .ok_or_else(|| bad("after BDL comes nothing or -n"))?;
            if n == 0 || n >= MAX_BUSINESS_DAY {
                return Err(bad("out of range"));
            }
            return Ok(Self::FromLast(n));
        }
        let n = number(rest).ok_or_else(|| bad("after BD comes a number or L"))?;
        if n == 0 || n > MAX_BUSINESS_DAY {
            return Err(bad("out of range"));
        }
        Ok(Self::Nth(n))
    }
}

impl fmt::Display for BusinessDayRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Nth(n) => write!(f, "BD{n}"),
            Self::FromLast(0) => f.write_str("BDL"),
            Self::FromLast(n) => write!(f, "BDL-{n}"),
        }
    }
}

impl serde::Serialize for BusinessDayRule {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for BusinessDayRule {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// A cron whose day-of-month is a business-day offset (`0 9 BD3 * *`),
/// split into the plain cron the engine fires (the same with `*` there: a
/// superset of the offset's days) and the offset. `Ok(None)`: the
/// day-of-month is no offset, and the cron is parsed as it is.
pub fn split_cron(text: &str) -> Result<Option<(String, BusinessDayRule)>, String> {
    let fields: Vec<&str> = text.split_whitespace().collect();
    let [minute, hour, day, month, weekday] = fields[..] else {
        return Ok(None);
    };
    let upper = day.to_ascii_uppercase();
    if !upper.contains("BD") {
        return Ok(None);
    }
    let bad = |why: &str| format!("`{day}` is not a valid day-of-month field: {why}");
    if upper.contains(',') {
        return Err(bad(
            "a business-day offset stands alone in its field; it does not mix with other \
             days in a list (one activity per offset)",
        ));
    }
    let rule = BusinessDayRule::parse(&upper).map_err(|m| bad(&m))?;
    if weekday != "*" {
        return Err(format!(
            "`{weekday}` is not a valid day-of-week field: next to the business-day offset \
             `{rule}` it must be `*` (the offset names the day; use the calendar's weekend \
             days for the days of the week)"
        ));
    }
    Ok(Some((format!("{minute} {hour} * {month} *"), rule)))
}
