//! Quartz's day forms, with this service's day-of-week numbering (0 or 7 =
//! Sunday): `L`, `L-n`, `nW` and `LW` in day-of-month, `d#n` and `dL` in
//! day-of-week. Each stands alone in its field and names at most one day
//! per month, found from the month's length and weekdays. `engine_days`
//! turns them into calendars the engine honours exactly.

use chrono::{Datelike, NaiveDate, Weekday};

/// A day-of-month form that picks one day of each month (or none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MonthDay {
    /// `L` (0) and `L-n`: n days before the month's last day; none when
    /// the month is too short for it.
    FromLast(u8),
    /// `nW`: the weekday (Monday to Friday) nearest day n, never across the
    /// month's edge; none in a month without day n (Quartz's reading).
    NearestWeekday(u8),
    /// `LW`: the month's last weekday (Monday to Friday).
    LastWeekday,
}

/// A day-of-week form that picks one day of each month (or none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WeekDay {
    /// `d#n`: the nth such weekday of the month (0 = Sunday), n in 1..=5;
    /// `#5` only in months that have five.
    Nth { weekday: u8, n: u8 },
    /// `dL`: the month's last such weekday.
    Last { weekday: u8 },
}

pub(super) fn is_leap(year: i32) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

pub(super) fn days_in_month(year: i32, month: u32) -> u32 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

impl MonthDay {
    /// The day this form picks in a month, if any.
    pub fn day(self, year: i32, month: u32) -> Option<u32> {
        let len = days_in_month(year, month);
        match self {
            Self::FromLast(n) => len.checked_sub(u32::from(n)).filter(|d| *d >= 1),
            Self::NearestWeekday(n) => nearest_weekday(year, month, u32::from(n), len),
            Self::LastWeekday => nearest_weekday(year, month, len, len),
        }
    }
}

/// The weekday nearest day `n` of a month of `len` days, within the month:
/// a Saturday moves to Friday, a Sunday to Monday, except that Saturday the
/// 1st moves to Monday the 3rd and a Sunday on the last day to the Friday
/// before.
fn nearest_weekday(year: i32, month: u32, n: u32, len: u32) -> Option<u32> {
    if n > len {
        return None;
    }
    Some(match NaiveDate::from_ymd_opt(year, month, n)?.weekday() {
        Weekday::Sat if n == 1 => 3,
        Weekday::Sat => n - 1,
        Weekday::Sun if n == len => n - 2,
        Weekday::Sun => n + 1,
        _ => n,
    })
}

impl WeekDay {
    pub fn matches(self, date: NaiveDate) -> bool {
        let weekday = date.weekday().num_days_from_sunday();
        match self {
            Self::Nth { weekday: w, n } => {
                u32::from(w) == weekday && (date.day() - 1) / 7 + 1 == u32::from(n)
            }
            Self::Last { weekday: w } => {
                u32::from(w) == weekday && date.day() + 7 > days_in_month(date.year(), date.month())
            }
        }
    }
}

const DAYS: [&str; 7] = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

const QUARTZ_QUESTION: &str = "`?` is Quartz's \"no specific value\": write `*`. Mind the \
    numbering too: here 0 or 7 is Sunday and 1 is Monday, not Quartz's 1 = Sunday";

const ALONE: &str = "`L`, `W` and `#` stand alone in their field, not in a list, range or step";

/// Day-of-month text that uses `L`, `W`, `#` or `?`, parsed (the error says
/// why, without the field's name); `None` for an ordinary field.
pub(super) fn parse_month_day(text: &str) -> Option<Result<MonthDay, String>> {
    let upper = text.to_ascii_uppercase();
    if !upper.contains(['L', 'W', '#', '?']) {
        return None;
    }
    Some(month_day(&upper))
}

fn month_day(upper: &str) -> Result<MonthDay, String> {
    if upper.contains('?') {
        return Err(QUARTZ_QUESTION.into());
    }
    if upper.contains('#') {
        return Err("`#` belongs in day-of-week (`5#2` is the second Friday)".into());
    }
    if upper.contains([',', '/']) {
        return Err(ALONE.into());
    }
    if upper == "L" {
        return Ok(MonthDay::FromLast(0));
    }
    if upper == "LW" {
        return Ok(MonthDay::LastWeekday);
    }
    if let Some(n) = upper.strip_prefix("L-") {
        return match small(n) {
            Some(n @ 1..=30) => Ok(MonthDay::FromLast(n)),
            _ => Err("`L-n` counts back n days from the last, n from 1 to 30".into()),
        };
    }
    if let Some(n) = upper.strip_suffix('W') {
        if n.contains('-') {
            return Err(format!("{ALONE}: `W` takes one day, as in `15W`"));
        }
        return match small(n) {
            Some(n @ 1..=31) => Ok(MonthDay::NearestWeekday(n)),
            _ => Err("`nW` is the weekday nearest day n, n from 1 to 31".into()),
        };
    }
    if upper.starts_with('W') {
        return Err("write the day before `W`: `15W` is the weekday nearest the 15th".into());
    }
    if upper.contains('-') {
        return Err(format!(
            "{ALONE}; the forms are `L`, `L-n` (n days before the last), `nW` and `LW`"
        ));
    }
    Err("the forms are `L` (last day), `L-n`, `nW` (weekday nearest day n) and `LW`".into())
}

/// Day-of-week text that uses `#`, `L`, `W` or `?`, parsed (the error says
/// why, without the field's name); `None` for an ordinary field.
pub(super) fn parse_week_day(text: &str) -> Option<Result<WeekDay, String>> {
    let upper = text.to_ascii_uppercase();
    // WED is a name, not Quartz's `W`.
    if !upper.replace("WED", "").contains(['L', 'W', '#', '?']) {
        return None;
    }
    Some(week_day(&upper))
}

fn week_day(upper: &str) -> Result<WeekDay, String> {
    if upper.contains('?') {
        return Err(QUARTZ_QUESTION.into());
    }
    if upper.replace("WED", "").contains('W') {
        return Err(
            "`W` belongs in day-of-month, and `2W` there is the weekday nearest the 2nd, not \
             the second weekday; for the second Monday write `1#2`"
                .into(),
        );
    }
    if upper.contains([',', '/']) {
        return Err(ALONE.into());
    }
    if let Some((day, n)) = upper.split_once('#') {
        if day.contains('-') {
            return Err(format!(
                "{ALONE} (`1-5#2` is refused): `1#2` is the second Monday"
            ));
        }
        let weekday = weekday(day)?;
        return match small(n) {
            Some(n @ 1..=5) => Ok(WeekDay::Nth { weekday, n }),
            _ => Err("`d#n` is the nth such weekday of the month, n from 1 to 5".into()),
        };
    }
    if upper == "L" {
        return Err(
            "`L` alone is Quartz's Saturday; write `6` or `SAT`, or `5L` for the last \
                    Friday"
                .into(),
        );
    }
    if let Some(day) = upper.strip_suffix('L') {
        if day.contains('-') {
            return Err(format!(
                "{ALONE} (`1-5L` is refused): `5L` is the last Friday"
            ));
        }
        return Ok(WeekDay::Last {
            weekday: weekday(day)?,
        });
    }
    if let Some(day) = upper.strip_prefix('L') {
        return Err(format!(
            "write the day before `L`: `{day}L` is the last such weekday"
        ));
    }
    Err("the forms are `d#n` (the nth weekday d, `5#2`) and `dL` (the last, `5L`)".into())
}

/// A day of the week, 0 to 7 (7 is Sunday, as 0) or SUN..SAT.
fn weekday(text: &str) -> Result<u8, String> {
    if let Some(v) = small(text) {
        return match v {
            0..=6 => Ok(v),
            7 => Ok(0),
            _ => Err(format!(
                "`{text}` is not a day of the week: 0 or 7 is Sunday, 1 Monday .. 6 Saturday"
            )),
        };
    }
    DAYS.iter()
        .position(|d| *d == text)
        .map(|i| i as u8)
        .ok_or_else(|| {
            format!("`{text}` is not a day of the week: use 0 to 7 (0 or 7 = Sunday) or SUN-SAT")
        })
}

fn small(text: &str) -> Option<u8> {
    if text.is_empty() || text.len() > 2 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}
