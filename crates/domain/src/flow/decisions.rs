//! The flow-control decisions: whether a run takes a concurrency slot, when
//! a rate-limited run may start, and which debounced event of a burst runs.
//! Pure: `store::flow` (slots and starts) and `store::events` (debounced
//! dispatches) read the facts under the key's lock and act on the answer.

use chrono::{DateTime, Utc};

use super::{OnLimit, RateOnLimit};

/// What the slot table held for one (activity, key) when a run asked, read
/// under the key's lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotFacts {
    pub limit: u32,
    /// Slots held by runs that have not ended.
    pub held: u32,
    /// Runs queued before this one for the same key.
    pub ahead: u32,
}

/// What a run asking for a slot does now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// Take a slot and run.
    Acquire,
    /// Stay queued and ask again later.
    Wait,
    /// Do not run (`on_limit: skip`).
    Skip,
    /// Cancel the oldest running run of the key, stay first in the queue and
    /// ask again: its slot is this run's once it has ended.
    CancelOldest,
}

/// The decision: a run starts only when a slot is free for it after every
/// run queued ahead of it took one (FIFO), so the slots held never exceed
/// `limit`.
pub fn admit(facts: SlotFacts, on_limit: OnLimit) -> Admission {
    let free = facts.limit.saturating_sub(facts.held);
    if facts.ahead < free {
        return Admission::Acquire;
    }
    match on_limit {
        OnLimit::Queue => Admission::Wait,
        // Nothing waits under `skip`; a run that finds no free slot is not run.
        OnLimit::Skip => Admission::Skip,
        // Only the first in line cancels: later ones wait for their turn, so
        // one burst cancels one run per arrival that finds the key full, not more.
        OnLimit::CancelOldest if facts.ahead == 0 && facts.held >= facts.limit => {
            Admission::CancelOldest
        }
        OnLimit::CancelOldest => Admission::Wait,
    }
}

/// What the start log held for one (activity, key) when a run asked for a
/// start under a rate limit, read under the key's lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateFacts<'a> {
    pub limit: u32,
    pub period: chrono::Duration,
    /// The database's clock when it asked.
    pub now: DateTime<Utc>,
    /// The starts within `(now - period, now]`, oldest first.
    pub window: &'a [DateTime<Utc>],
    /// Runs waiting for a start before this one for the same key.
    pub ahead: u32,
}

/// What a run asking for a start under a rate limit does now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateAdmission {
    /// Start now (and so do the runs ahead of it, in order).
    Start,
    /// Do not run (`on_limit: skip`).
    Skip,
    /// Stay queued and ask again at this time: the earliest at which the
    /// window can have room for this run after the runs ahead of it started.
    WaitUntil(DateTime<Utc>),
}

/// The decision: a run starts only when the window `(now - period, now]`
/// has room for it after every run queued ahead of it started (FIFO). As
/// every start is checked this way against all starts before it, no window
/// of length `period` ever holds more than `limit` starts: were there
/// `limit + 1` within less than `period`, the last one would have counted
/// the other `limit` in its window.
pub fn admit_rate(facts: RateFacts<'_>, on_limit: RateOnLimit) -> RateAdmission {
    let started = facts.window.len().min(u32::MAX as usize) as u32;
    let free = facts.limit.saturating_sub(started);
    if facts.ahead < free {
        return RateAdmission::Start;
    }
    if on_limit == RateOnLimit::Skip {
        return RateAdmission::Skip;
    }
    // The earliest time of each of the next `limit` starts: the free places
    // now, then as each of the newest `limit` starts leaves the window. The
    // start `limit` places later reuses the same place a period later. This
    // run's is the start `ahead` places on (every run ahead starts first).
    let limit = facts.limit.max(1) as usize;
    let kept = facts.window.len().min(limit);
    let next = |place: usize| -> DateTime<Utc> {
        let free = limit - kept;
        if place < free {
            facts.now
        } else {
            facts.window[facts.window.len() - kept + (place - free)] + facts.period
        }
    };
    let ahead = facts.ahead as usize;
    // Bounded so the sum stays far from chrono's range (a run this far back
    // asks again long before: the workflow waits at most a minute at a time).
    let rounds = (ahead / limit).min(1000) as i32;
    RateAdmission::WaitUntil(next(ahead % limit) + facts.period * rounds)
}

/// One debounced event of a key, as the dispatcher reads them: when it
/// arrived, and until when a later arrival absorbs it (`at + period`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arrival {
    pub at: DateTime<Utc>,
    pub until: DateTime<Utc>,
}

/// What becomes of one debounced event once its `period` has passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settle {
    /// A later event of its key arrived within its period: that one (or the
    /// last of the burst) runs instead.
    Absorbed,
    /// It is the last of its burst: it runs, and absorbs the events from
    /// index `from` up to (not including) itself.
    Run { from: usize },
}

/// The decision for `arrivals[me]`, given its key's arrivals in order
/// (arrival time, then event ID) from after the key's last started run up to
/// `arrivals[me].until`. Exact once `until` has passed and every arrival
/// before it is visible: an event is absorbed exactly when a later one came
/// within its period, so the last of a burst (nothing within its period
/// after it) runs, and its burst is the chain of events before it each
/// followed within its period by the next.
pub fn settle_debounce(arrivals: &[Arrival], me: usize) -> Settle {
    let Some(mine) = arrivals.get(me) else {
        return Settle::Run { from: me };
    };
    if arrivals
        .iter()
        .skip(me + 1)
        .any(|later| later.at <= mine.until)
    {
        return Settle::Absorbed;
    }
    let mut from = me;
    while from > 0 && arrivals[from].at <= arrivals[from - 1].until {
        from -= 1;
    }
    Settle::Run { from }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(limit: u32, held: u32, ahead: u32) -> SlotFacts {
        SlotFacts { limit, held, ahead }
    }

    #[test]
    fn admission_table() {
        use Admission::*;
        use OnLimit::{CancelOldest as Cancel, Queue, Skip as SkipIt};
        let cases = [
            // (limit, held, ahead, on_limit) => decision
            ((2, 0, 0, Queue), Acquire),
            ((2, 1, 0, Queue), Acquire),
            ((2, 1, 1, Queue), Wait), // one free slot, and the run ahead gets it
            ((2, 0, 1, Queue), Acquire), // two free: the second in line runs too
            ((2, 0, 2, Queue), Wait),
            ((2, 2, 0, Queue), Wait),
            ((1, 3, 0, Queue), Wait), // over the limit after a lowered limit
            ((1000, 999, 0, Queue), Acquire),
            ((2, 2, 0, SkipIt), Skip),
            ((2, 1, 0, SkipIt), Acquire),
            ((2, 2, 0, Cancel), CancelOldest),
            ((2, 2, 1, Cancel), Wait), // only the head of the queue cancels
            ((2, 1, 0, Cancel), Acquire),
        ];
        for ((limit, held, ahead, on_limit), want) in cases {
            assert_eq!(
                admit(facts(limit, held, ahead), on_limit),
                want,
                "limit {limit} held {held} ahead {ahead} {on_limit}"
            );
        }
    }

    #[test]
    fn rate_admission_table() {
        use RateAdmission::*;
        let t0 = DateTime::parse_from_rfc3339("2026-12-04T12:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let ms = chrono::Duration::milliseconds;
        let now = t0 + ms(1000);
        // Starts at t0+100ms, +200ms, ... +500ms: five within the last second.
        let window: Vec<_> = (1..=5).map(|i| t0 + ms(100 * i)).collect();
        let facts = |limit, n: usize, ahead| RateFacts {
            limit,
            period: ms(1000),
            now,
            window: &window[..n],
            ahead,
        };
        let q = RateOnLimit::Queue;
        let cases = [
            // (limit, starts in window, ahead, on_limit) => decision
            ((5, 0, 0, q), Start),
            ((5, 4, 0, q), Start),
            ((5, 3, 1, q), Start), // two free: the run ahead takes one, this one the other
            ((5, 4, 1, q), WaitUntil(t0 + ms(1100))), // the oldest leaves, then it is second
            ((5, 5, 0, q), WaitUntil(t0 + ms(1100))),
            ((5, 5, 2, q), WaitUntil(t0 + ms(1300))), // third in line: the third oldest
            // The nine ahead start at 1.1 .. 1.5 s, then 2.1 .. 2.4 s: this one at 2.5 s.
            ((5, 5, 9, q), WaitUntil(t0 + ms(2500))),
            // Three start now, two at 1.1 and 1.2 s, three at 2 s, then 2.1,
            // 2.2, and this one (the eleventh) at 3 s.
            ((5, 2, 10, q), WaitUntil(t0 + ms(3000))),
            ((3, 5, 0, q), WaitUntil(t0 + ms(1300))), // over a lowered limit
            ((5, 5, 0, RateOnLimit::Skip), Skip),
            ((5, 4, 0, RateOnLimit::Skip), Start),
        ];
        for ((limit, n, ahead, on_limit), want) in cases {
            assert_eq!(
                admit_rate(facts(limit, n, ahead), on_limit),
                want,
                "limit {limit} started {n} ahead {ahead} {on_limit}"
            );
        }
    }

    #[test]
    fn debounce_settle_table() {
        let t0 = DateTime::parse_from_rfc3339("2026-12-04T12:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let period = chrono::Duration::seconds(2);
        // Arrivals at these seconds after t0.
        let arrivals = |secs: &[i64]| -> Vec<Arrival> {
            secs.iter()
                .map(|s| {
                    let at = t0 + chrono::Duration::milliseconds(s * 1000);
                    Arrival {
                        at,
                        until: at + period,
                    }
                })
                .collect()
        };
        use Settle::*;
        let cases: &[(&[i64], usize, Settle)] = &[
            (&[0], 0, Run { from: 0 }),
            (&[0, 1], 0, Absorbed),
            (&[0, 1], 1, Run { from: 0 }),
            (&[0, 2], 0, Absorbed), // exactly `period` later is within it
            (&[0, 3], 0, Run { from: 0 }), // a gap: two bursts
            (&[0, 3], 1, Run { from: 1 }),
            (&[0, 1, 2, 3, 6, 7], 3, Run { from: 0 }),
            (&[0, 1, 2, 3, 6, 7], 4, Absorbed),
            (&[0, 1, 2, 3, 6, 7], 5, Run { from: 4 }),
            (&[0, 0], 0, Absorbed), // the same instant: the later in order runs
            (&[0, 0], 1, Run { from: 0 }),
        ];
        for (secs, me, want) in cases {
            assert_eq!(
                settle_debounce(&arrivals(secs), *me),
                *want,
                "{secs:?} #{me}"
            );
        }
    }
}
