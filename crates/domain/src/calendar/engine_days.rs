//! The days of a cron expression as patterns the engine can hold: a
//! structured calendar has years, months, days of month and days of week,
//! ANDed, and no `L`, `W` or `#`. Each Quartz form is written exactly with
//! those: per month length (31, 30, February in leap and in other years)
//! the days it can be, and where the weekday decides, the weekday. `5#2` is
//! "days 8-14 and Friday", `5L` in 31-day months "days 25-31 and Friday",
//! `15W` "the 15th if Monday to Friday, the 14th if Friday, the 16th if
//! Monday". Only February needs years (leap or not), and leap years are
//! known to 2100, the engine's last year: so the spec never runs out, and
//! nothing has to extend it as time passes.

use super::cron::{CronSchedule, DayRule, FieldSet};
use super::days::{MonthDay, WeekDay, is_leap};

/// The engine's first and last year (`minCalendarYear`, `maxCalendarYear`).
const ENGINE_FIRST_YEAR: i32 = 2000;
const ENGINE_LAST_YEAR: i32 = 2100;

/// A set of the engine's years, 2000..=2100, one bit each. All of them
/// means every year: the spec sends no list then.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct YearSet(u128);

impl YearSet {
    pub const ALL: Self = Self((1u128 << (ENGINE_LAST_YEAR - ENGINE_FIRST_YEAR + 1)) - 1);

    fn from_fn(f: impl Fn(i32) -> bool) -> Self {
        (ENGINE_FIRST_YEAR..=ENGINE_LAST_YEAR)
            .filter(|y| f(*y))
            .fold(Self(0), |set, y| {
                Self(set.0 | 1u128 << (y - ENGINE_FIRST_YEAR))
            })
    }

    pub fn is_all(self) -> bool {
        self == Self::ALL
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub fn contains(self, year: i32) -> bool {
        self.is_all()
            || (ENGINE_FIRST_YEAR..=ENGINE_LAST_YEAR).contains(&year)
                && self.0 & 1u128 << (year - ENGINE_FIRST_YEAR) != 0
    }

    /// The years, ascending (every engine year for `ALL`).
    pub fn values(self) -> impl Iterator<Item = i32> {
        (ENGINE_FIRST_YEAR..=ENGINE_LAST_YEAR).filter(move |y| self.contains(*y))
    }

    fn has_leap_year(self) -> bool {
        self.values().any(is_leap)
    }
}

/// Days as one engine calendar holds them: every field must match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct DayPattern {
    pub years: YearSet,
    pub months: FieldSet,
    pub days_of_month: FieldSet,
    pub days_of_week: FieldSet,
}

fn every_day() -> DayPattern {
    DayPattern {
        years: YearSet::ALL,
        months: FieldSet::full(1, 12),
        days_of_month: FieldSet::full(1, 31),
        days_of_week: FieldSet::full(0, 6),
    }
}

/// Months by length: (length, months, years).
fn month_lengths() -> [(u8, FieldSet, YearSet); 4] {
    let set = |months: &[u8]| months.iter().fold(FieldSet::default(), |s, m| s.with(*m));
    [
        (31, set(&[1, 3, 5, 7, 8, 10, 12]), YearSet::ALL),
        (30, set(&[4, 6, 9, 11]), YearSet::ALL),
        (29, set(&[2]), YearSet::from_fn(is_leap)),
        (28, set(&[2]), YearSet::from_fn(|y| !is_leap(y))),
    ]
}

fn days(from: u8, to: u8) -> FieldSet {
    FieldSet::full(from.max(1), to.min(31))
}

const MONDAY: u8 = 1;
const FRIDAY: u8 = 5;

fn month_day_patterns(form: MonthDay) -> Vec<DayPattern> {
    let mut out = Vec::new();
    for (len, months, years) in month_lengths() {
        let mut push = |day: u8, weekdays: FieldSet| {
            out.push(DayPattern {
                years,
                months,
                days_of_month: FieldSet::single(day),
                days_of_week: weekdays,
            })
        };
        let any = FieldSet::full(0, 6);
        let nearest = |n: u8, push: &mut dyn FnMut(u8, FieldSet)| {
            // Day n if Monday to Friday; a Saturday moves to Friday (to
            // Monday the 3rd from the 1st), a Sunday to Monday (to Friday
            // from the last day).
            push(n, FieldSet::full(MONDAY, FRIDAY));
            if n > 1 {
                push(n - 1, FieldSet::single(FRIDAY));
            } else {
                push(3, FieldSet::single(MONDAY));
            }
            if n < len {
                push(n + 1, FieldSet::single(MONDAY));
            } else {
                push(n - 2, FieldSet::single(FRIDAY));
            }
        };
        match form {
            MonthDay::FromLast(n) if n < len => push(len - n, any),
            MonthDay::FromLast(_) => {}
            MonthDay::NearestWeekday(n) if n <= len => nearest(n, &mut push),
            MonthDay::NearestWeekday(_) => {}
            MonthDay::LastWeekday => nearest(len, &mut push),
        }
    }
    out
}

fn week_day_patterns(form: WeekDay) -> Vec<DayPattern> {
    match form {
        WeekDay::Nth { weekday, n } => vec![DayPattern {
            days_of_month: days(7 * (n - 1) + 1, 7 * n),
            days_of_week: FieldSet::single(weekday),
            ..every_day()
        }],
        WeekDay::Last { weekday } => month_lengths()
            .into_iter()
            .map(|(len, months, years)| DayPattern {
                years,
                months,
                days_of_month: days(len - 6, len),
                days_of_week: FieldSet::single(weekday),
            })
            .collect(),
    }
}

/// The day patterns of a cron expression, each a calendar of its own: the
/// day-of-month side and the day-of-week side, ANDed within a pattern or
/// ORed as separate ones (Vixie's rule). Patterns whose days never happen
/// are left out, and patterns that differ only in their months or only in
/// their years are merged, so that `L` is four calendars and `15W` three.
pub(super) fn day_patterns(cron: &CronSchedule) -> Vec<DayPattern> {
    let by_month = match cron.month_day() {
        Some(form) => month_day_patterns(form),
        None => vec![DayPattern {
            days_of_month: cron.days_of_month(),
            ..every_day()
        }],
    };
    let by_week = match cron.week_day() {
        Some(form) => week_day_patterns(form),
        None => vec![DayPattern {
            days_of_week: cron.days_of_week(),
            ..every_day()
        }],
    };
    let patterns: Vec<DayPattern> = match cron.day_rule() {
        DayRule::Both => by_month
            .iter()
            .flat_map(|a| by_week.iter().map(move |b| a.and(b)))
            .collect(),
        DayRule::Either => by_month.into_iter().chain(by_week).collect(),
    };
    let patterns = patterns
        .into_iter()
        .map(|p| DayPattern {
            months: p.months.and(cron.months()),
            ..p
        })
        .filter(DayPattern::possible);
    merge(patterns.collect())
}

impl DayPattern {
    fn and(&self, other: &Self) -> Self {
        Self {
            years: YearSet(self.years.0 & other.years.0),
            months: self.months.and(other.months),
            days_of_month: self.days_of_month.and(other.days_of_month),
            days_of_week: self.days_of_week.and(other.days_of_week),
        }
    }

    /// Whether some day matches: some month of it has one of its days (in
    /// one of its years), and some weekday is allowed. Every weekday falls
    /// on every date in the years of a pattern, leap or not.
    fn possible(&self) -> bool {
        let february = if self.years.has_leap_year() { 29 } else { 28 };
        let longest = |m: u8| match m {
            2 => february,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        };
        !self.years.is_empty()
            && !self.days_of_week.is_empty()
            && self.months.values().any(|m| {
                self.days_of_month
                    .values()
                    .any(|d| d >= 1 && d <= longest(m))
            })
    }
}

fn merge(mut patterns: Vec<DayPattern>) -> Vec<DayPattern> {
    let mut i = 0;
    while i < patterns.len() {
        let mut merged = false;
        for j in i + 1..patterns.len() {
            let (a, b) = (patterns[i], patterns[j]);
            if a.days_of_month != b.days_of_month || a.days_of_week != b.days_of_week {
                continue;
            }
            if a.years == b.years {
                patterns[i].months = a.months.or(b.months);
            } else if a.months == b.months {
                patterns[i].years = YearSet(a.years.0 | b.years.0);
            } else {
                continue;
            }
            patterns.remove(j);
            merged = true;
            break;
        }
        // A merge can make an earlier pattern mergeable: start over.
        i = if merged { 0 } else { i + 1 };
    }
    patterns
}
