//! How many runs started by events or by hand may run at once (fairness).
//! A burst of events left alone fills Temporal's task queue and the worker
//! with its runs' workflow tasks, and every scheduled run then waits behind
//! them: a schedule that fires every second loses most of its fires while
//! the burst drains. The dispatchers therefore start event runs only while the
//! runs of that kind still running stay under an *allowance*, which follows
//! how long the event runs started lately waited for the engine (the start,
//! then their first workflow task, in the queue every run shares): halved
//! while that wait is over a target, raised while it is under, never below
//! one (a backlog always drains) nor above the configured maximum. The
//! engine's pace sets the allowance, not a number tuned for one machine.

use std::time::Duration;

/// How long the event runs started lately may wait, on average, for the
/// engine (Temporal accepting the start, then their first workflow task)
/// before the allowance is halved. Every workflow task of a scheduled run
/// waits in the same queue about as long, and a run takes several, so the
/// target is a small part of a one-second schedule's period: at 50 ms such
/// a schedule keeps nearly all its fires while a burst drains; at 100 ms it
/// loses about one in ten.
pub const TARGET_WAIT: Duration = Duration::from_millis(50);

/// Where the allowance starts: low, so that a burst finds out the engine's
/// pace before it fills the queue (it doubles while the wait stays short).
pub const FIRST_ALLOWANCE: usize = 4;

/// The allowance changes at most this often, so that the runs started under
/// one allowance have shown their effect before the next change.
pub const STEP_EVERY: Duration = Duration::from_secs(1);

/// The allowance after one look: `current` as it was `since_change` ago,
/// `max` as configured, `wait` how long the event runs started lately
/// waited for the engine (none when none started lately), `used` whether
/// the runs running fill the allowance. Halved while the wait is over the
/// target; while it is under, and only while the allowance is used (an
/// allowance nobody uses proves nothing), doubled below half the target,
/// raised by one above; never below one nor above `max`.
pub fn next_allowance(
    current: usize,
    max: usize,
    wait: Option<Duration>,
    used: bool,
    since_change: Duration,
) -> usize {
    let max = max.max(1);
    let current = current.clamp(1, max);
    if since_change < STEP_EVERY {
        return current;
    }
    match wait {
        Some(wait) if wait > TARGET_WAIT => (current / 2).max(1),
        Some(_) if !used => current,
        Some(wait) if wait * 2 > TARGET_WAIT => (current + 1).min(max),
        Some(_) => (current * 2).min(max),
        None => current,
    }
}

/// The highest the allowance goes without a configured maximum.
pub const ALLOWANCE_CEILING: usize = 1024;

/// The allowance's ceiling: the configured maximum (`None`: no limit).
pub fn ceiling(max: Option<usize>) -> usize {
    max.unwrap_or(ALLOWANCE_CEILING).max(1)
}

/// The limit that holds now on runs started by events or by hand (`None`:
/// none). While some schedule fires often (`schedule_active`: a scheduled
/// run in the last minute), the allowance; otherwise the configured maximum,
/// if any. A schedule that fires hourly meets at most a few seconds' wait in
/// a busy queue; one that fires every second loses its fires to overlap.
pub fn limit(allowance: usize, max: Option<usize>, schedule_active: bool) -> Option<usize> {
    if schedule_active {
        Some(allowance)
    } else {
        max
    }
}

/// How many more runs a dispatcher may start now: `limit` less the runs of
/// that kind running, at most `batch`.
pub fn room(limit: Option<usize>, running: i64, batch: i64) -> i64 {
    match limit {
        Some(limit) => (limit as i64 - running).clamp(0, batch),
        None => batch,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn the_allowance_follows_how_long_runs_wait_for_their_first_task() {
        // (current, max, wait ms, used, ms since the last change) -> next,
        // with the target at 50 ms
        assert_eq!(TARGET_WAIT, MS(50));
        type Case = (usize, usize, Option<u64>, bool, u64, usize);
        let cases: &[Case] = &[
            // Used, and a short wait: doubled, to the maximum.
            (4, 32, Some(10), true, 1_000, 8),
            (4, 32, Some(25), true, 1_000, 8),
            (20, 32, Some(10), true, 5_000, 32),
            // Under the target: up by one.
            (4, 32, Some(26), true, 1_000, 5),
            (4, 32, Some(50), true, 1_000, 5),
            (32, 32, Some(50), true, 1_000, 32),
            // Not used, or nothing started lately: nothing learnt, unchanged.
            (4, 32, Some(20), false, 1_000, 4),
            (4, 32, None, true, 5_000, 4),
            (4, 32, None, false, 5_000, 4),
            // Over the target: halved, used or not, never below one.
            (16, 32, Some(51), true, 1_000, 8),
            (16, 32, Some(51), false, 1_000, 8),
            (3, 32, Some(2_000), true, 1_000, 1),
            (1, 32, Some(9_000), true, 1_000, 1),
            // Too soon after the last change: unchanged either way.
            (16, 32, Some(9_000), true, 999, 16),
            (4, 32, Some(10), true, 10, 4),
            // A maximum lowered (or zero) since: within bounds at once.
            (16, 4, None, true, 10, 4),
            (0, 0, None, true, 10, 1),
        ];
        for &(current, max, wait, used, since, next) in cases {
            assert_eq!(
                next_allowance(current, max, wait.map(MS), used, MS(since)),
                next,
                "current {current}, max {max}, wait {wait:?} ms, used {used}, \
                 {since} ms since the last change"
            );
        }
    }

    #[test]
    fn room_is_what_the_allowance_leaves_at_most_a_batch() {
        // (allowance, max, schedule active, running, batch) -> room
        for (allowance, max, active, running, batch, room) in [
            (16, Some(32), true, 0, 64, 16),
            (16, None, true, 10, 64, 6),
            (16, Some(32), true, 16, 64, 0),
            (4, None, true, 9, 64, 0),
            (100, Some(100), true, 0, 64, 64),
            // No schedule fires often: the maximum holds, or nothing.
            (4, Some(32), false, 0, 64, 32),
            (4, Some(32), false, 30, 64, 2),
            (4, Some(32), false, 40, 64, 0),
            (4, None, false, 5000, 64, 64),
        ] {
            assert_eq!(
                super::room(limit(allowance, max, active), running, batch),
                room
            );
        }
    }
}
