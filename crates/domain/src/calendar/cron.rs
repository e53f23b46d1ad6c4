//! Our own cron parser: five fields into sets of allowed values.
//!
//! We parse cron ourselves, rather than hand Temporal a string, because the
//! string is only half of the meaning: Temporal ANDs day-of-month with
//! day-of-week, while crontab, Kubernetes and every other cron users know
//! ORs them when both are restricted. Holding the sets lets the translation
//! send the engine exactly the POSIX set (see `engine::engine_calendars`), and
//! anything we cannot make the engine honour exactly is refused here.

use chrono::{Datelike, Days, NaiveDate};

use super::days::{self, MonthDay, WeekDay};

/// A set of small integers (cron field values), one bit each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct FieldSet(u64);

impl FieldSet {
    /// Every value in `min..=max`.
    pub fn full(min: u8, max: u8) -> Self {
        (min..=max).fold(Self::default(), |set, v| set.with(v))
    }

    pub fn single(value: u8) -> Self {
        Self::default().with(value)
    }

    pub fn with(self, value: u8) -> Self {
        Self(self.0 | (1u64 << (value & 63)))
    }

    pub fn contains(self, value: u32) -> bool {
        value < 64 && self.0 & (1u64 << value) != 0
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub fn and(self, other: Self) -> Self {
        Self(self.0 & other.0)
    }

    pub fn or(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    /// The values, ascending.
    pub fn values(self) -> impl DoubleEndedIterator<Item = u8> {
        (0u8..64).filter(move |v| self.contains(u32::from(*v)))
    }
}

/// How day-of-month and day-of-week combine (Vixie cron's rule).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DayRule {
    /// One of the two fields starts with `*`: a day must match both (the
    /// starred one matches by itself unless it has a step, like `*/2`).
    Both,
    /// Both fields are restricted: a day matches if EITHER matches, as in
    /// crontab(5), Vixie cron and Kubernetes CronJob.
    Either,
}

/// A parsed cron expression: what `0 9 * * MON-FRI` means, as sets.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CronSchedule {
    minutes: FieldSet,
    hours: FieldSet,
    days_of_month: FieldSet,
    months: FieldSet,
    /// 0 = Sunday .. 6 = Saturday (7 is folded onto 0 when parsed).
    days_of_week: FieldSet,
    /// `L`, `L-n`, `nW` or `LW` in day-of-month (then `days_of_month` is
    /// every day and plays no part).
    month_day: Option<MonthDay>,
    /// `d#n` or `dL` in day-of-week (then `days_of_week` is every day).
    week_day: Option<WeekDay>,
    day_rule: DayRule,
}

const MONTHS: [&str; 12] = [
    "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
];
const DAYS: [&str; 7] = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

struct Field {
    name: &'static str,
    min: u8,
    max: u8,
    names: &'static [&'static str],
    /// Where the first name sits (months count from 1, days from 0).
    names_from: u8,
}

const FIELDS: [Field; 5] = [
    Field {
        name: "minute",
        min: 0,
        max: 59,
        names: &[],
        names_from: 0,
    },
    Field {
        name: "hour",
        min: 0,
        max: 23,
        names: &[],
        names_from: 0,
    },
    Field {
        name: "day-of-month",
        min: 1,
        max: 31,
        names: &[],
        names_from: 0,
    },
    Field {
        name: "month",
        min: 1,
        max: 12,
        names: &MONTHS,
        names_from: 1,
    },
    Field {
        name: "day-of-week",
        min: 0,
        max: 7,
        names: &DAYS,
        names_from: 0,
    },
];

impl CronSchedule {
    /// Parses five fields or an `@` shorthand. Errors name what is wrong and
    /// what would be accepted; callers report them on `trigger.cron`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let expanded = match text.to_ascii_lowercase().as_str() {
            "@yearly" | "@annually" => "0 0 1 1 *",
            "@monthly" => "0 0 1 * *",
            "@weekly" => "0 0 * * 0",
            "@daily" | "@midnight" => "0 0 * * *",
            "@hourly" => "0 * * * *",
            "@reboot" => return Err("`@reboot` names no time; a schedule needs one".into()),
            s if s.starts_with("@every") => {
                return Err("`@every` is not cron; use an `interval` trigger".into());
            }
            s if s.starts_with('@') => {
                return Err(format!(
                    "`{text}` is not a known shorthand; expected one of @yearly, @annually, \
                     @monthly, @weekly, @daily, @midnight, @hourly"
                ));
            }
            s if s.starts_with("tz=") || s.starts_with("cron_tz=") => {
                return Err("must not carry a time zone prefix; use `timezone`".into());
            }
            _ => text,
        };
        let parts: Vec<&str> = expanded.split_whitespace().collect();
        match parts.len() {
            5 => {}
            6 | 7 => {
                return Err(format!(
                    "`{text}` has {} fields; seconds and year fields are not supported: \
                     use five fields (minute hour day-of-month month day-of-week)",
                    parts.len()
                ));
            }
            _ => {
                return Err(format!(
                    "`{text}` must have exactly five fields: minute hour day-of-month month day-of-week"
                ));
            }
        }
        let month_day = special(parts[2], &FIELDS[2], days::parse_month_day(parts[2]))?;
        let week_day = special(parts[4], &FIELDS[4], days::parse_week_day(parts[4]))?;
        let mut sets = [FieldSet::default(); 5];
        for (i, ((set, part), field)) in sets.iter_mut().zip(&parts).zip(&FIELDS).enumerate() {
            *set = match (i, month_day, week_day) {
                (2, Some(_), _) => FieldSet::full(1, 31),
                (4, _, Some(_)) => FieldSet::full(0, 6),
                _ => parse_field(part, field)?,
            };
        }
        // 7 is Sunday too; the engine only knows 0..=6.
        let days_of_week = if sets[4].contains(7) {
            FieldSet(sets[4].0 & !(1 << 7)).with(0)
        } else {
            sets[4]
        };
        let day_rule = day_rule(parts[2], parts[4], month_day, week_day)?;
        let schedule = Self {
            minutes: sets[0],
            hours: sets[1],
            days_of_month: sets[2],
            months: sets[3],
            days_of_week,
            month_day,
            week_day,
            day_rule,
        };
        let fires = if month_day.is_some() || week_day.is_some() {
            schedule.fires_in_a_cycle()
        } else {
            schedule.day_of_month_possible() || day_rule == DayRule::Either
        };
        if !fires {
            return Err(format!(
                "`{text}` never fires: no month in it has those days"
            ));
        }
        Ok(schedule)
    }

    pub fn minutes(&self) -> FieldSet {
        self.minutes
    }
    pub fn hours(&self) -> FieldSet {
        self.hours
    }
    pub fn days_of_month(&self) -> FieldSet {
        self.days_of_month
    }
    pub fn months(&self) -> FieldSet {
        self.months
    }
    pub fn days_of_week(&self) -> FieldSet {
        self.days_of_week
    }
    pub fn day_rule(&self) -> DayRule {
        self.day_rule
    }
    pub fn month_day(&self) -> Option<MonthDay> {
        self.month_day
    }
    pub fn week_day(&self) -> Option<WeekDay> {
        self.week_day
    }

    /// Whether some day of 2000-2027 matches: the calendar repeats every 28
    /// years (to 2100), so those hold every month, length and weekday
    /// there is.
    fn fires_in_a_cycle(&self) -> bool {
        let first = NaiveDate::from_ymd_opt(2000, 1, 1).unwrap_or_default();
        (0..28 * 366)
            .filter_map(|n| first.checked_add_days(Days::new(n)))
            .take_while(|d| d.year() < 2028)
            .any(|d| self.matches_day(d))
    }

    /// Whether some allowed month has some allowed day of month (Feb 29 counts).
    pub fn day_of_month_possible(&self) -> bool {
        const LONGEST: [u32; 12] = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
        self.months.values().any(|m| {
            let longest = LONGEST[usize::from(m.saturating_sub(1)).min(11)];
            self.days_of_month.values().any(|d| u32::from(d) <= longest)
        })
    }

    /// Whether the expression fires on this calendar day (in its zone).
    pub fn matches_day(&self, date: NaiveDate) -> bool {
        let dom = match self.month_day {
            Some(form) => form.day(date.year(), date.month()) == Some(date.day()),
            None => self.days_of_month.contains(date.day()),
        };
        let dow = match self.week_day {
            Some(form) => form.matches(date),
            None => self
                .days_of_week
                .contains(date.weekday().num_days_from_sunday()),
        };
        self.months.contains(date.month())
            && match self.day_rule {
                DayRule::Both => dom && dow,
                DayRule::Either => dom || dow,
            }
    }
}

fn special<T>(
    item: &str,
    field: &Field,
    parsed: Option<Result<T, String>>,
) -> Result<Option<T>, String> {
    parsed.transpose().map_err(|why| bad(item, field, &why))
}

/// How the two day fields combine. Vixie's rule for ordinary fields; a
/// Quartz form wants `*` in the other field, except `L`, which ORs with an
/// ordinary day-of-week as croniter does. Every other pairing means
/// different things to Vixie, Quartz and croniter, so it is refused.
fn day_rule(
    dom: &str,
    dow: &str,
    month_day: Option<MonthDay>,
    week_day: Option<WeekDay>,
) -> Result<DayRule, String> {
    let pair = |field: &Field, item: &str, other: &str| {
        bad(
            item,
            field,
            &format!(
                "next to `{other}` it must be `*`: cron, Quartz and croniter read the \
                 pair differently"
            ),
        )
    };
    match (month_day, week_day) {
        _ if dom == "*" || dow == "*" => Ok(DayRule::Both),
        (Some(_), Some(_)) => Err(pair(&FIELDS[4], dow, dom)),
        (Some(MonthDay::FromLast(0)), None) if !dow.starts_with('*') => Ok(DayRule::Either),
        (Some(_), None) => Err(pair(&FIELDS[4], dow, dom)),
        (None, Some(_)) => Err(pair(&FIELDS[2], dom, dow)),
        // Vixie cron decides by the first character: `*/2` still counts as
        // unrestricted for this rule.
        (None, None) if dom.starts_with('*') || dow.starts_with('*') => Ok(DayRule::Both),
        (None, None) => Ok(DayRule::Either),
    }
}

fn parse_field(text: &str, field: &Field) -> Result<FieldSet, String> {
    let mut set = FieldSet::default();
    for item in text.split(',') {
        let (range, step) = match item.split_once('/') {
            Some((range, step)) => {
                let step = number(step).filter(|s| *s >= 1).ok_or_else(|| {
                    bad(item, field, "a step must be a whole number of at least 1")
                })?;
                (range, Some(step))
            }
            None => (item, None),
        };
        let (start, end) = if range == "*" {
            (field.min, field.max)
        } else if let Some((a, b)) = range.split_once('-') {
            let (a, b) = (value(a, field, item)?, value(b, field, item)?);
            if a > b {
                return Err(bad(item, field, "a range must not run backwards"));
            }
            (a, b)
        } else {
            let a = value(range, field, item)?;
            // `5/15` means 5, 20, 35, 50: from the value to the end, as
            // Temporal, croner and cronie read it.
            (a, if step.is_some() { field.max } else { a })
        };
        let step = usize::from(step.unwrap_or(1));
        for v in (start..=end).step_by(step) {
            set = set.with(v);
        }
    }
    Ok(set)
}

fn number(text: &str) -> Option<u8> {
    if text.is_empty() || text.len() > 2 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

fn value(text: &str, field: &Field, item: &str) -> Result<u8, String> {
    if let Some(v) = number(text) {
        if (field.min..=field.max).contains(&v) {
            return Ok(v);
        }
        return Err(bad(
            item,
            field,
            &format!("values run from {} to {}", field.min, field.max),
        ));
    }
    let upper = text.to_ascii_uppercase();
    if let Some(i) = field.names.iter().position(|n| *n == upper) {
        return Ok(i as u8 + field.names_from);
    }
    let special = upper.contains(['#', '?'])
        || (upper.contains(['L', 'W', 'H'])
            && upper
                .chars()
                .all(|c| c.is_ascii_digit() || matches!(c, 'L' | 'W' | 'H' | '-')));
    if special {
        return Err(bad(
            item,
            field,
            "`L`, `W` and `#` belong in the day fields, alone; `?` and `H` are not supported",
        ));
    }
    let hint = match field.names.len() {
        0 => format!("use numbers {} to {}", field.min, field.max),
        _ => format!(
            "use numbers {} to {} or names {}-{}",
            field.min,
            field.max,
            field.names[0],
            field.names[field.names.len() - 1]
        ),
    };
    Err(bad(item, field, &hint))
}

fn bad(item: &str, field: &Field, why: &str) -> String {
    format!("`{item}` is not a valid {} field: {why}", field.name)
}
