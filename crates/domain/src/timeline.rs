//! What became of each nominal time: its run, or why there is none. Pure:
//! the caller gathers the facts (runs, pauses, Temporal outages, now).

use chrono::{DateTime, Utc};

use super::misfire::SkipReason;
use super::run::RunStatus;

named_enum! {
    /// Why a nominal time has no execution.
    pub enum TimelineReason ("timeline reason") {
        /// Recorded skip: later than `misfire_grace`.
        Misfire = "misfire",
        /// Recorded skip: older than the most recent `catchup_limit` missed times.
        CatchupLimit = "catchup_limit",
        /// Recorded skip: folded into the run of a later time.
        Compressed = "compressed",
        /// The schedule was paused (or the activity disabled) then.
        Paused = "paused",
        /// Before the activity existed or before its `start_at`.
        BeforeStart = "before_start",
        /// In the future, or fired a moment ago and not recorded yet.
        NotYetFired = "not_yet_fired",
        /// Temporal could not be reached then and never fired the time (it
        /// fell outside the catch-up window by the time Temporal came back).
        TemporalUnavailable = "temporal_unavailable",
        /// Temporal dropped the fire: a run was still going, or the worker
        /// was down past the catch-up window.
        OverlapSkipped = "overlap_skipped",
        /// Recorded skip: `flow.concurrency` was at its limit (`on_limit: skip`).
        ConcurrencyLimit = "concurrency_limit",
        /// Recorded skip: the launcher refused a fire that the `dst` policy
        /// excludes (the timeline says `dst_gap` or `dst_repeat` instead).
        DstPolicy = "dst_policy",
        /// Not run by the `dst` policy near a gap: the instant after the
        /// gap of a wall time that did not exist (`skipped: skip`), or a
        /// time the engine fired there that the policy does not want.
        DstGap = "dst_gap",
        /// Not run by the `dst` policy: the occurrence of a wall time that
        /// happened twice that the policy does not run (`repeated: first`
        /// or `last`).
        DstRepeat = "dst_repeat",
        /// Recorded skip: `flow.rate_limit` was at its limit (`on_limit: skip`).
        RateLimited = "rate_limited",
        /// Recorded skip: absorbed into a later event's run (`flow.debounce`).
        Debounced = "debounced",
        /// The trigger's calendar: a holiday (the entry's `calendar` names it).
        Holiday = "holiday",
        /// The trigger's calendar: a weekend day.
        Weekend = "weekend",
        /// The trigger's calendar: inside a blackout window.
        Blackout = "blackout",
        /// The trigger's calendar rolled the time to another business day
        /// (the entry's `calendar` says where).
        Rolled = "rolled",
        /// After the calendar's `covered_until`.
        BeyondCoverage = "beyond_coverage",
    }
}

impl From<SkipReason> for TimelineReason {
    fn from(reason: SkipReason) -> Self {
        match reason {
            SkipReason::Misfire => Self::Misfire,
            SkipReason::CatchupLimit => Self::CatchupLimit,
            SkipReason::Compressed => Self::Compressed,
            SkipReason::ConcurrencyLimit => Self::ConcurrencyLimit,
            SkipReason::DstPolicy => Self::DstPolicy,
            SkipReason::RateLimited => Self::RateLimited,
            SkipReason::Debounced => Self::Debounced,
            SkipReason::Holiday => Self::Holiday,
            SkipReason::Weekend => Self::Weekend,
            SkipReason::Blackout => Self::Blackout,
            SkipReason::Rolled => Self::Rolled,
            SkipReason::BeyondCoverage => Self::BeyondCoverage,
        }
    }
}

named_enum! {
    /// A nominal time's run status on the timeline, or `none` without a run.
    pub enum TimelineStatus ("timeline status") {
        None = "none",
        /// Waiting for a concurrency slot (`flow.concurrency`).
        Queued = "queued",
        Running = "running",
        Succeeded = "succeeded",
        Failed = "failed",
        Cancelled = "cancelled",
        TimedOut = "timed_out",
        Skipped = "skipped",
    }
}

impl From<RunStatus> for TimelineStatus {
    fn from(status: RunStatus) -> Self {
        match status {
            RunStatus::Queued => Self::Queued,
            RunStatus::Running => Self::Running,
            RunStatus::Succeeded => Self::Succeeded,
            RunStatus::Failed => Self::Failed,
            RunStatus::Cancelled => Self::Cancelled,
            RunStatus::TimedOut => Self::TimedOut,
            RunStatus::Skipped => Self::Skipped,
        }
    }
}

named_enum! {
    /// What a resume or a backfill did with one nominal time.
    pub enum TimeAction ("action") {
        /// Temporal accepted it: it will run.
        Backfilled = "backfilled",
        /// Recorded, but Temporal could not be reached: the reconciler hands
        /// it over when Temporal returns, and it runs then.
        Pending = "pending",
        /// It already ran.
        Duplicate = "duplicate",
        /// It will not run; the reason says why.
        Skipped = "skipped",
    }
}

/// A fire this recent may be running without a row yet.
pub const RECORDING_DELAY: chrono::Duration = chrono::Duration::seconds(5);

/// What is known about an activity's history, for times without a run.
#[derive(Debug, Clone, Copy)]
pub struct History<'a> {
    pub created_at: DateTime<Utc>,
    pub start_at: Option<DateTime<Utc>>,
    /// Pauses as `[paused_at, resumed_at)`; an open pause has no end.
    pub pauses: &'a [(DateTime<Utc>, Option<DateTime<Utc>>)],
    /// Periods in which Temporal could not be reached, `[start, end)`.
    pub temporal_outages: &'a [(DateTime<Utc>, DateTime<Utc>)],
    pub enabled: bool,
    /// The activity's last change: a disabled activity is paused since.
    pub updated_at: DateTime<Utc>,
    pub now: DateTime<Utc>,
}

/// Why nominal time `t` has no run, first reason that holds wins: it was
/// not due yet (before the start, paused), then it may still come (recent),
/// then what kept the engine from firing it.
pub fn reason_without_run(t: DateTime<Utc>, history: &History) -> TimelineReason {
    if t < history.created_at || history.start_at.is_some_and(|s| t < s) {
        TimelineReason::BeforeStart
    } else if history
        .pauses
        .iter()
        .any(|(from, to)| *from <= t && to.is_none_or(|to| t < to))
    {
        TimelineReason::Paused
    } else if t > history.now - RECORDING_DELAY {
        TimelineReason::NotYetFired
    } else if history
        .temporal_outages
        .iter()
        .any(|(start, end)| *start <= t && t < *end)
    {
        TimelineReason::TemporalUnavailable
    } else if !history.enabled && t >= history.updated_at {
        // Disabled since its last change: the schedule is paused.
        TimelineReason::Paused
    } else {
        TimelineReason::OverlapSkipped
    }
}

/// Why a recorded span of skipped times (`[first, last]`, from a resume)
/// did not run `t`, if one covers it. A run row of `t` wins over a span.
pub fn skipped_by_span(
    t: DateTime<Utc>,
    spans: &[(DateTime<Utc>, DateTime<Utc>, SkipReason)],
) -> Option<SkipReason> {
    spans
        .iter()
        .find(|(first, last, _)| *first <= t && t <= *last)
        .map(|(_, _, reason)| *reason)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn t(minute: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 3, 1, 9, minute, 0).unwrap()
    }

    #[test]
    fn every_reason_and_which_wins() {
        // Created at :10, start_at :15, paused [:20, :25) and from :50 on,
        // Temporal away [:30, :40), disabled at :45, now :58.
        let pauses = [(t(20), Some(t(25))), (t(50), None)];
        let outages = [(t(30), t(40)), (t(5), t(12))];
        let history = History {
            created_at: t(10),
            start_at: Some(t(15)),
            pauses: &pauses,
            temporal_outages: &outages,
            enabled: false,
            updated_at: t(45),
            now: t(58),
        };
        let table = [
            // Before creation, even inside an outage.
            (t(5), TimelineReason::BeforeStart),
            // After creation, before start_at.
            (t(12), TimelineReason::BeforeStart),
            // Inside a closed pause; its end is exclusive.
            (t(20), TimelineReason::Paused),
            (t(24), TimelineReason::Paused),
            (t(25), TimelineReason::OverlapSkipped),
            // Inside an outage; its end is exclusive.
            (t(30), TimelineReason::TemporalUnavailable),
            (t(39), TimelineReason::TemporalUnavailable),
            (t(40), TimelineReason::OverlapSkipped),
            // Disabled since :45.
            (t(45), TimelineReason::Paused),
            // An open pause beats recency.
            (t(57), TimelineReason::Paused),
        ];
        for (at, expected) in table {
            assert_eq!(reason_without_run(at, &history), expected, "{at}");
        }
    }

    #[test]
    fn recent_and_future_times_are_not_yet_fired() {
        let history = History {
            created_at: t(0),
            start_at: None,
            pauses: &[],
            temporal_outages: &[(t(50), t(59))],
            enabled: true,
            updated_at: t(0),
            now: t(55),
        };
        let table = [
            (t(49), TimelineReason::OverlapSkipped),
            // Within the recording delay: not yet, even inside an outage.
            (t(55), TimelineReason::NotYetFired),
            (t(59), TimelineReason::NotYetFired),
            // Older than the delay, inside the outage.
            (t(50), TimelineReason::TemporalUnavailable),
        ];
        for (at, expected) in table {
            assert_eq!(reason_without_run(at, &history), expected, "{at}");
        }
        // Exactly the delay ago is already decided.
        let edge = history.now - RECORDING_DELAY;
        assert_eq!(
            reason_without_run(edge, &history),
            TimelineReason::TemporalUnavailable
        );
    }

    #[test]
    fn recorded_skips_and_run_statuses_name_themselves() {
        for reason in SkipReason::ALL {
            assert_eq!(TimelineReason::from(*reason).as_str(), reason.as_str());
        }
        for status in RunStatus::ALL {
            assert_eq!(TimelineStatus::from(*status).as_str(), status.as_str());
        }
    }

    #[test]
    fn spans_cover_their_ends() {
        let spans = [
            (t(10), t(20), SkipReason::CatchupLimit),
            (t(30), t(30), SkipReason::Compressed),
        ];
        let cases = [
            (9, None),
            (10, Some(SkipReason::CatchupLimit)),
            (20, Some(SkipReason::CatchupLimit)),
            (21, None),
            (30, Some(SkipReason::Compressed)),
        ];
        for (minute, want) in cases {
            assert_eq!(skipped_by_span(t(minute), &spans), want, "{minute}");
        }
    }
}
