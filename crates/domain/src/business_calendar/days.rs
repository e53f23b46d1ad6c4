//! The questions asked of a calendar: is a date a business day and why not,
//! which business day of a month is `BDn`, where a date rolls to, whether an
//! instant is in a blackout.

use chrono::{DateTime, Datelike, Days, NaiveDate, Utc};

use super::{Blackout, BusinessCalendar, BusinessDayRule};

named_enum! {
    /// What a date is in a calendar.
    pub enum DayKind ("day kind") {
        /// A business day: not a weekend day, not a holiday.
        Business = "business",
        /// A weekend day that is worked (a make-up Saturday): a business day.
        WorkingDay = "working_day",
        /// A weekend day.
        Weekend = "weekend",
        /// A holiday (whatever day of the week it falls on).
        Holiday = "holiday",
    }
}

named_enum! {
    /// What happens to a date that is not a business day.
    pub enum Roll ("roll") {
        /// Nothing: the date is dropped.
        Skip = "skip",
        /// The next business day.
        Next = "next",
        /// The previous business day.
        Previous = "previous",
    }
}

/// One date's status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DayStatus {
    pub date: NaiveDate,
    pub kind: DayKind,
    /// The holiday's or the added working day's name.
    pub name: Option<String>,
    /// After `covered_until`: only the weekend days are known there.
    pub beyond_coverage: bool,
}

impl DayStatus {
    pub fn is_business_day(&self) -> bool {
        matches!(self.kind, DayKind::Business | DayKind::WorkingDay)
    }
}

/// A date a question found (or `None`: there is none), and whether finding
/// it looked at a date after `covered_until`, where the answer rests on the
/// weekend days alone and may be wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dated {
    pub date: Option<NaiveDate>,
    pub beyond_coverage: bool,
}

/// Why a date is not a business day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotBusiness<'a> {
    Weekend,
    Holiday { name: &'a str },
}

/// How far [`BusinessCalendar::roll`] looks for a business day: past any
/// run of holidays a calendar can hold between weekends.
const ROLL_REACH: u64 = 3 * 366;

impl BusinessCalendar {
    /// Why `date` is not a business day; `None` when it is one. A holiday
    /// on a weekend day is a holiday.
    pub fn reason_not_business(&self, date: NaiveDate) -> Option<NotBusiness<'_>> {
        if let Some(name) = self.holidays.get(&date) {
            return Some(NotBusiness::Holiday { name });
        }
        (self.weekend_days.contains(date.weekday()) && !self.working_days.contains_key(&date))
            .then_some(NotBusiness::Weekend)
    }

    pub fn is_business_day(&self, date: NaiveDate) -> bool {
        self.reason_not_business(date).is_none()
    }

    /// `date`'s kind, name and coverage.
    pub fn day(&self, date: NaiveDate) -> DayStatus {
        let (kind, name) = match self.reason_not_business(date) {
            Some(NotBusiness::Holiday { name }) => (DayKind::Holiday, Some(name.to_owned())),
            Some(NotBusiness::Weekend) => (DayKind::Weekend, None),
            None => match self.working_days.get(&date) {
                Some(name) => (DayKind::WorkingDay, name.clone()),
                None => (DayKind::Business, None),
            },
        };
        DayStatus {
            date,
            kind,
            name,
            beyond_coverage: !self.covers(date),
        }
    }

    /// Every date of `[from, to]`, in order.
    pub fn days(&self, from: NaiveDate, to: NaiveDate) -> Vec<DayStatus> {
        from.iter_days()
            .take_while(|d| *d <= to)
            .map(|d| self.day(d))
            .collect()
    }

    /// The blackout `at` falls in (the first by start, if several).
    pub fn in_blackout(&self, at: DateTime<Utc>) -> Option<&Blackout> {
        self.blackouts
            .iter()
            .find(|(_, span)| span.from <= at && at < span.to)
            .map(|(b, _)| b)
    }

    /// Where `date` goes under `roll`: itself when it is a business day;
    /// otherwise nowhere (`skip`), or the nearest business day after
    /// (`next`) or before (`previous`) it.
    pub fn roll(&self, date: NaiveDate, roll: Roll) -> Dated {
        let step = |d: NaiveDate| match roll {
            Roll::Skip => None,
            Roll::Next => d.checked_add_days(Days::new(1)),
            Roll::Previous => d.checked_sub_days(Days::new(1)),
        };
        let mut current = Some(date);
        let mut latest = date;
        for _ in 0..=ROLL_REACH {
            let Some(d) = current else { break };
            latest = latest.max(d);
            if self.is_business_day(d) {
                return Dated {
                    date: Some(d),
                    beyond_coverage: !self.covers(latest),
                };
            }
            current = step(d);
        }
        Dated {
            date: None,
            beyond_coverage: !self.covers(latest),
        }
    }

    /// The business day of `year`-`month` that `rule` names; `None` when
    /// the month has fewer business days (or is not a month).
    pub fn business_day_of_month(&self, year: i32, month: u32, rule: BusinessDayRule) -> Dated {
        let none = Dated {
            date: None,
            beyond_coverage: false,
        };
        let Some(first) = NaiveDate::from_ymd_opt(year, month, 1) else {
            return none;
        };
        let month_days: Vec<NaiveDate> = first
            .iter_days()
            .take_while(|d| d.month() == month)
            .collect();
        let Some(&last) = month_days.last() else {
            return none;
        };
        let business = month_days
            .iter()
            .copied()
            .filter(|d| self.is_business_day(*d));
        let (date, latest_seen) = match rule {
            BusinessDayRule::Nth(n) => {
                let found = usize::from(n)
                    .checked_sub(1)
                    .and_then(|i| business.clone().nth(i));
                // Finding the n-th looks at the month up to it; not finding
                // it looks at the whole month.
                (found, found.unwrap_or(last))
            }
            BusinessDayRule::FromLast(n) => (business.rev().nth(usize::from(n)), last),
        };
        Dated {
            date,
            beyond_coverage: !self.covers(latest_seen),
        }
    }
}
