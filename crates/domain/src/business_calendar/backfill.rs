//! A backfill under the trigger's business calendar: of the range's times
//! the calendar keeps from running, none is started and each is recorded
//! skipped with its reason, as the launcher records a fire; a time rolled
//! to a business day in the range runs there once. The answer names what
//! the calendar did with each time, as the timeline does.

use std::collections::{BTreeMap, HashSet};

use chrono::{DateTime, Utc};

use super::plan::{CalendarRule, Named, Outcome, plan};
use crate::backfill::{BackfillPlan, Planned, PlannedTime, Route};
use crate::calendar::{NominalTime, TimeNote};
use crate::misfire::SkipReason;

/// One time of a backfill under a calendar, and what the calendar did with
/// it (`holiday: "Christmas Day" in US v3`, `rolled from … to …`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CalendarTime {
    pub time: PlannedTime,
    pub detail: Option<String>,
}

/// Applies the calendar to `backfill` (a plan of `[start, end)`): the
/// cadence's times it excludes or rolls away become
/// [`Planned::Excluded`], the times rolled to a day of the decided range
/// (from in it or from `near`, the cadence's times just before or after it
/// that may roll in) run under the launcher unless they ran (`ran`). A
/// time that already ran stays a duplicate whatever the calendar says now.
pub fn apply_to_backfill(
    named: Named<'_>,
    rule: &CalendarRule,
    backfill: &BackfillPlan,
    near: &[NominalTime],
    start: DateTime<Utc>,
    end: DateTime<Utc>,
    ran: &HashSet<DateTime<Utc>>,
) -> Vec<CalendarTime> {
    let decided_end = backfill.next_start.unwrap_or(end);
    let mut out: BTreeMap<(DateTime<Utc>, bool), CalendarTime> = BTreeMap::new();
    let mut cadence: BTreeMap<DateTime<Utc>, PlannedTime> = BTreeMap::new();
    for t in &backfill.times {
        match t.planned {
            // Not a time of a business-day offset's trigger: not part of
            // the answer, whatever the DST policy says of it.
            _ if rule.business_day.is_some()
                && super::fate(named.calendar, rule, t.at) == super::Fate::NotATime => {}
            // The DST policy's declines are not the calendar's to decide.
            Planned::Declined(_) => {
                out.insert(
                    (t.at, true),
                    CalendarTime {
                        time: *t,
                        detail: None,
                    },
                );
            }
            _ => {
                cadence.insert(t.at, *t);
            }
        }
    }
    let in_range: Vec<NominalTime> = cadence
        .values()
        .map(|t| NominalTime {
            at: t.at,
            note: t.note,
        })
        .collect();
    for p in plan(named, rule, &in_range, near, start, decided_end) {
        let own = cadence.get(&p.at).copied();
        let ran_already = ran.contains(&p.at);
        let planned = match (&p.outcome, own) {
            (Outcome::Run, Some(own)) => own.planned,
            (_, _) if ran_already => Planned::Duplicate,
            (Outcome::Excluded(reason), _) => Planned::Excluded(SkipReason::from(reason)),
            (Outcome::RolledAway(_), _) => Planned::Excluded(SkipReason::Rolled),
            // Only a roll makes this time: the engine does not fire it.
            (Outcome::RolledHere | Outcome::Run, _) => Planned::Run(Route::Launcher),
        };
        out.insert(
            (p.at, false),
            CalendarTime {
                time: PlannedTime {
                    at: p.at,
                    note: own.map_or(TimeNote::Normal, |t| t.note),
                    planned,
                },
                detail: p.detail,
            },
        );
    }
    out.into_values().collect()
}

/// What a resume's catch-up runs under the calendar.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CatchUp {
    /// The times that run, oldest first: the policy's times the calendar
    /// runs, and the business days in `(since, until]` its times roll to.
    pub run: Vec<DateTime<Utc>>,
    /// The policy's times the calendar keeps from running, recorded as
    /// skipped runs with these reasons.
    pub skipped: Vec<(DateTime<Utc>, SkipReason)>,
}

/// Applies the calendar to the times a resume's policy runs (`times`,
/// missed in `(since, until]`): a time it excludes is skipped with its
/// reason; one it rolls is skipped `rolled`, and the time it rolls to runs
/// if that falls in `(since, until]` and has not run (`ran`); a later one
/// is the engine's and the reconciler's when it comes due.
pub fn apply_to_catch_up(
    calendar: &super::BusinessCalendar,
    rule: &CalendarRule,
    times: &[DateTime<Utc>],
    since: DateTime<Utc>,
    until: DateTime<Utc>,
    ran: &HashSet<DateTime<Utc>>,
) -> CatchUp {
    let mut out = CatchUp::default();
    for t in times {
        match super::fate(calendar, rule, *t) {
            super::Fate::NotATime => {}
            super::Fate::Run => out.run.push(*t),
            super::Fate::Excluded(reason) => out.skipped.push((*t, SkipReason::from(&reason))),
            super::Fate::Rolled { .. } => {
                out.skipped.push((*t, SkipReason::Rolled));
                if let Some(to) = super::runs_at(calendar, rule, *t)
                    && since < to
                    && to <= until
                    && !ran.contains(&to)
                {
                    out.run.push(to);
                }
            }
        }
    }
    out.run.sort();
    out.run.dedup();
    out
}
