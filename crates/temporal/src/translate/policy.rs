//! The schedule policies a misfire policy asks of Temporal: how fires that
//! overlap a running launcher are buffered, and how far back Temporal
//! catches up missed fires (the launcher's misfire rule decides the rest).

use std::time::Duration;

use chrono::{DateTime, Utc};
use temporalio_common::protos::temporal::api::enums::v1::ScheduleOverlapPolicy;

use acp_domain::calendar::times_after;
use acp_domain::trigger::{Cadence, MisfirePolicy, ScheduledTrigger};

/// Temporal's smallest catch-up window.
pub const MIN_CATCHUP_WINDOW: Duration = Duration::from_secs(10);

const MAX_CATCHUP_WINDOW: Duration = Duration::from_secs(365 * 86_400);

/// Overlap policy per misfire policy.
pub fn overlap_policy(policy: MisfirePolicy) -> ScheduleOverlapPolicy {
    match policy {
        MisfirePolicy::Skip => ScheduleOverlapPolicy::Skip,
        MisfirePolicy::Catchup => ScheduleOverlapPolicy::BufferAll,
        MisfirePolicy::Compress => ScheduleOverlapPolicy::BufferOne,
    }
}

/// The longest gap between consecutive nominal times, sampled from a fixed
/// reference so the result (and the spec hash) is deterministic.
fn longest_gap(cadence: &Cadence, samples: usize) -> Duration {
    let reference = DateTime::from_timestamp(1_767_225_600, 0).unwrap_or_default(); // 2026-01-01T00:00:00Z
    let times: Vec<DateTime<Utc>> = times_after(cadence, reference)
        .take(samples + 1)
        .map(|t| t.at)
        .collect();
    let longest = times
        .windows(2)
        .filter_map(|w| (w[1] - w[0]).to_std().ok())
        .max()
        .unwrap_or(MAX_CATCHUP_WINDOW);
    if longest.is_zero() {
        MAX_CATCHUP_WINDOW
    } else {
        longest
    }
}

/// Catch-up window per misfire policy: wide enough for `catchup_limit`
/// intervals under `catchup`, Temporal's minimum otherwise (the launcher's
/// misfire rule decides the rest).
pub fn catchup_window(trigger: &ScheduledTrigger) -> Duration {
    match trigger.misfire_policy {
        MisfirePolicy::Skip | MisfirePolicy::Compress => MIN_CATCHUP_WINDOW,
        MisfirePolicy::Catchup => {
            let gap = longest_gap(&trigger.cadence, 48);
            let limit = trigger.catchup_limit.get();
            gap.checked_mul(limit)
                .unwrap_or(MAX_CATCHUP_WINDOW)
                .clamp(MIN_CATCHUP_WINDOW, MAX_CATCHUP_WINDOW)
        }
    }
}
