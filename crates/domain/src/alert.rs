//! Expectations on an activity and the pure decisions of whether they hold.
//! The evaluator gathers facts from PostgreSQL only (so it decides while
//! Temporal is down); these functions say which expectations are broken.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::duration::IsoDuration;
use super::run::RunStatus;
use super::timeline::{History, TimelineReason, reason_without_run};

named_enum! {
    /// What an alert is about: which expectation broke.
    pub enum AlertKind ("alert kind") {
        /// `start_within`: a nominal time or an accepted event has no running
        /// or finished run within the expected delay (a stopped worker, a
        /// Temporal outage, a queue that never drains).
        LateStart = "late_start",
        /// `max_duration`: a run is still running after it.
        Stuck = "stuck",
        /// `failure_streak`: the last N ended runs all failed.
        FailureStreak = "failure_streak",
        /// `missed_fires`: a nominal time ended without a run for a reason
        /// other than a pause or the misfire/overlap policy.
        MissedFire = "missed_fire",
        /// `calendar_coverage`: the business calendar the trigger names is
        /// known right only until its `covered_until`, and that ends within
        /// the expected notice (or has ended).
        CalendarCoverage = "calendar_coverage",
    }
}

/// The largest `failure_streak` accepted.
pub const MAX_FAILURE_STREAK: u32 = 1000;

/// What a user expects of an activity; every part optional.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Expectations {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_within: Option<IsoDuration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_duration: Option<IsoDuration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_streak: Option<u32>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub missed_fires: bool,
    /// How long before the trigger's calendar's coverage ends to warn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calendar_coverage: Option<IsoDuration>,
}

impl Expectations {
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// One broken expectation: what to open (or keep open) an alert for.
#[derive(Debug, Clone, PartialEq)]
pub struct Breach {
    pub kind: AlertKind,
    /// One line for humans.
    pub summary: String,
    /// The facts that broke it, for clients.
    pub detail: serde_json::Value,
}

/// One incident of one broken expectation.
#[derive(Debug, Clone, Serialize)]
pub struct Alert {
    pub id: Uuid,
    pub activity_id: Uuid,
    pub kind: AlertKind,
    pub summary: String,
    pub detail: serde_json::Value,
    pub opened_at: DateTime<Utc>,
    /// The last evaluation that found it still broken.
    pub last_seen_at: DateTime<Utc>,
    pub resolved_at: Option<DateTime<Utc>>,
}

/// How far back the evaluator looks at nominal times and events.
pub const LOOKBACK: chrono::Duration = chrono::Duration::hours(24);
/// At most this many of the most recent nominal times are looked at.
pub const MAX_TIMES: usize = 500;

/// What is known about a scheduled activity's recent nominal times.
#[derive(Debug, Clone, Copy)]
pub struct Schedule<'a> {
    /// Nominal times in the lookback window, oldest first, up to now.
    pub times: &'a [DateTime<Utc>],
    /// Status of the run recorded for a nominal time, by that time.
    pub runs: &'a HashMap<DateTime<Utc>, RunStatus>,
    /// The newest nominal time with an executed (not skipped) run, if any,
    /// even before the window.
    pub last_executed: Option<DateTime<Utc>>,
    /// Spans in which a run of the activity executed, `[started, finished)`;
    /// a fire Temporal dropped then was dropped by the overlap policy.
    pub busy: &'a [(DateTime<Utc>, Option<DateTime<Utc>>)],
    pub history: History<'a>,
}

/// Whether anything was expected to run at `t` at all.
fn expected(t: DateTime<Utc>, history: &History) -> bool {
    !matches!(
        reason_without_run(t, history),
        TimelineReason::BeforeStart | TimelineReason::Paused
    )
}

/// `start_within` for a schedule: the newest nominal time due by now (its
/// delay has passed) must have an executed run at or after it.
pub fn late_start_scheduled(within: IsoDuration, s: &Schedule) -> Option<Breach> {
    let now = s.history.now;
    let due = s
        .times
        .iter()
        .rev()
        .copied()
        .find(|t| *t + within.as_chrono() <= now)?;
    if !expected(due, &s.history) || s.last_executed.is_some_and(|t| t >= due) {
        return None;
    }
    Some(Breach {
        kind: AlertKind::LateStart,
        summary: format!("nominal time {due} has no started run within {within}"),
        detail: serde_json::json!({"scheduled_for": due, "start_within": within}),
    })
}

/// `start_within` for events: every accepted event older than the delay
/// has a started run. `waiting` holds (event ID, accepted at) of the events
/// in the lookback window without one.
pub fn late_start_events(
    within: IsoDuration,
    now: DateTime<Utc>,
    waiting: &[(String, DateTime<Utc>)],
) -> Option<Breach> {
    let late: Vec<&(String, DateTime<Utc>)> = waiting
        .iter()
        .filter(|(_, at)| *at + within.as_chrono() <= now)
        .collect();
    let oldest = late.iter().min_by_key(|(_, at)| *at)?;
    Some(Breach {
        kind: AlertKind::LateStart,
        summary: format!(
            "{} accepted event(s) without a started run within {within}, oldest {}",
            late.len(),
            oldest.0
        ),
        detail: serde_json::json!({
            "events": late.iter().take(20).map(|(id, _)| id).collect::<Vec<_>>(),
            "oldest_accepted_at": oldest.1,
            "start_within": within,
        }),
    })
}

/// `max_duration`: runs still running (run ID, started at) past the limit.
pub fn stuck(
    max: IsoDuration,
    now: DateTime<Utc>,
    running: &[(Uuid, DateTime<Utc>)],
) -> Option<Breach> {
    let stuck: Vec<&(Uuid, DateTime<Utc>)> = running
        .iter()
        .filter(|(_, started)| *started + max.as_chrono() <= now)
        .collect();
    if stuck.is_empty() {
        return None;
    }
    Some(Breach {
        kind: AlertKind::Stuck,
        summary: format!("{} run(s) running for longer than {max}", stuck.len()),
        detail: serde_json::json!({
            "runs": stuck.iter().take(20).map(|(id, _)| id).collect::<Vec<_>>(),
            "max_duration": max,
        }),
    })
}

/// `failure_streak`: the `n` most recent ended runs (`recent`, newest first,
/// succeeded or failed only) all failed.
pub fn failure_streak(n: u32, recent: &[(Uuid, RunStatus)]) -> Option<Breach> {
    let n = n as usize;
    if n == 0 || recent.len() < n || recent[..n].iter().any(|(_, s)| *s != RunStatus::Failed) {
        return None;
    }
    Some(Breach {
        kind: AlertKind::FailureStreak,
        summary: format!("the last {n} runs failed"),
        detail: serde_json::json!({
            "runs": recent[..n].iter().map(|(id, _)| id).collect::<Vec<_>>(),
            "failure_streak": n,
        }),
    })
}

/// Why a nominal time without a run counts as missed: the engine never ran
/// it, and neither a pause nor a policy explains it.
fn missed(t: DateTime<Utc>, s: &Schedule) -> bool {
    if s.runs.contains_key(&t) {
        // Ran, or a recorded skip: the misfire policy decided it.
        return false;
    }
    let dropped_by_overlap = s
        .busy
        .iter()
        .any(|(from, to)| *from <= t && to.is_none_or(|to| t < to));
    matches!(
        reason_without_run(t, &s.history),
        TimelineReason::TemporalUnavailable | TimelineReason::OverlapSkipped
    ) && !dropped_by_overlap
}

/// `missed_fires`: broken while some missed nominal time has no executed
/// run after it; the next time that runs ends the incident.
pub fn missed_fires(s: &Schedule) -> Option<Breach> {
    let missed: Vec<DateTime<Utc>> = s
        .times
        .iter()
        .copied()
        .filter(|t| missed(*t, s))
        .filter(|t| s.last_executed.is_none_or(|ran| ran < *t))
        .collect();
    let (first, last) = (missed.first()?, missed.last()?);
    Some(Breach {
        kind: AlertKind::MissedFire,
        summary: format!("{} nominal time(s) missed since {first}", missed.len()),
        detail: serde_json::json!({"missed": missed.len(), "first": first, "last": last}),
    })
}

/// The calendar a trigger names, as the coverage expectation sees it.
#[derive(Debug, Clone, Copy)]
pub struct Coverage<'a> {
    pub calendar_id: Uuid,
    pub calendar: &'a crate::business_calendar::BusinessCalendar,
}

/// `calendar_coverage`: broken from `notice` before the calendar's coverage
/// ends (the start of the day after `covered_until`, in the calendar's
/// zone) and for as long as it is not extended past `now + notice`. A
/// calendar without `covered_until` never ends.
pub fn coverage_ending(
    notice: IsoDuration,
    now: DateTime<Utc>,
    coverage: Coverage<'_>,
) -> Option<Breach> {
    let calendar = coverage.calendar;
    let last = calendar.covered_until()?;
    let zone = calendar.timezone();
    let day_after = last.succ_opt()?;
    let ends_at =
        match crate::calendar::resolve(zone.tz(), day_after.and_time(chrono::NaiveTime::MIN)) {
            crate::calendar::WallTime::Unique(t)
            | crate::calendar::WallTime::Repeated(t, _)
            | crate::calendar::WallTime::Skipped(t) => t,
        };
    if now + notice.as_chrono() < ends_at {
        return None;
    }
    let name = calendar.name();
    let summary = if now >= ends_at {
        format!("calendar {name:?} is not known past {last}: its coverage has ended")
    } else {
        format!("calendar {name:?} is known only until {last}: extend its coverage")
    };
    Some(Breach {
        kind: AlertKind::CalendarCoverage,
        summary,
        detail: serde_json::json!({
            "calendar_id": coverage.calendar_id,
            "calendar_name": name,
            "covered_until": last,
            "coverage_ends_at": ends_at,
            "notice": notice,
        }),
    })
}

#[cfg(test)]
mod tests;
