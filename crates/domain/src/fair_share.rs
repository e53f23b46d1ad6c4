//! Which pending dispatches a dispatcher leases first when projects compete
//! for the runs the admission lets start: weighted fair queuing across
//! projects, round-robin across activities within a project.
//!
//! Each project's next run is numbered after the runs it has in flight
//! (running, or leased and being started): its n-th has virtual time
//! n / weight, and the lowest virtual time goes first. A project whose
//! in-flight count is at a weight's share of everyone's therefore waits
//! for others to catch up, and one that has nothing in flight (it was idle)
//! goes first at once, without having saved up credit while idle. A project
//! with nothing pending takes no share, so one project alone gets
//! everything. Runs within a project's guaranteed count (`runs_guaranteed`)
//! go before every run beyond anyone's guarantee, and start even when the
//! admission has no room left (another project's burst holds it): that is
//! what makes them guaranteed. Runs beyond its cap (`quotas.runs_running`)
//! wait. Guarantee and cap count the runs running now; the weights count
//! the recent share too.

use std::cmp::Ordering;

/// A project competing for the runs a dispatcher round may start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Load {
    /// Its share against other projects' (at least 1).
    pub weight: i32,
    /// Runs it keeps under contention: those up to this count go first.
    pub guaranteed: i64,
    /// Runs it may have running at once; `None` is unlimited.
    pub cap: Option<i64>,
    /// Runs it has running or being started now, and those it started
    /// lately that have finished already (its recent share).
    pub in_flight: i64,
    /// Runs it has running or being started now (what its guarantee and
    /// its cap count).
    pub running: i64,
}

impl Load {
    /// How many more runs it may start now.
    pub fn room(&self) -> i64 {
        self.cap.map_or(i64::MAX, |cap| (cap - self.running).max(0))
    }
}

/// The candidates in the order to lease them, and how many at its front
/// are within their project's guarantee.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Order {
    /// Indexes into the candidates.
    pub indexes: Vec<usize>,
    /// The first `guaranteed` of them are within a guarantee.
    pub guaranteed: usize,
}

impl Order {
    /// What a round with `room` (what the admission allows) leases: the
    /// first `room`, or every guaranteed one if they are more.
    pub fn take(self, room: usize) -> Vec<usize> {
        let n = room.max(self.guaranteed);
        let mut indexes = self.indexes;
        indexes.truncate(n);
        indexes
    }
}

/// A pending dispatch of a project, in the order the project itself would
/// start them (its activities taking turns, oldest first within each).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Candidate<T> {
    /// Index into the loads.
    pub project: usize,
    /// Its place in the project's own order, from 1.
    pub place: i64,
    /// Breaks ties of equal virtual time: the older first.
    pub age_key: T,
}

/// The position of a candidate in the fair order: guaranteed runs first,
/// then by virtual time `number / weight`, then oldest first.
#[derive(Debug, Clone, Copy)]
struct Key<T> {
    beyond_guarantee: bool,
    number: i64,
    weight: i64,
    age_key: T,
}

impl<T: Ord> Key<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.beyond_guarantee
            .cmp(&other.beyond_guarantee)
            // a/b < c/d ⇔ a·d < c·b for positive b and d: exact, no floats.
            .then_with(|| {
                (i128::from(self.number) * i128::from(other.weight))
                    .cmp(&(i128::from(other.number) * i128::from(self.weight)))
            })
            .then_with(|| self.age_key.cmp(&other.age_key))
    }
}

/// The candidates a round may lease, in the order to lease them (indexes
/// into `candidates`); those beyond their project's cap are left out. The
/// caller leases from the front as many as it has room for, and the
/// guaranteed ones beyond that ([`Order::take`]), skipping any another
/// dispatcher holds.
pub fn order<T: Ord + Copy>(loads: &[Load], candidates: &[Candidate<T>]) -> Order {
    let mut keyed: Vec<(usize, Key<T>)> = candidates
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            let load = loads.get(c.project)?;
            if c.place < 1 || c.place > load.room() {
                return None;
            }
            let number = load.in_flight.max(0) + c.place;
            Some((
                i,
                Key {
                    beyond_guarantee: load.running.max(0) + c.place > load.guaranteed,
                    number,
                    weight: i64::from(load.weight.max(1)),
                    age_key: c.age_key,
                },
            ))
        })
        .collect();
    keyed.sort_by(|a, b| a.1.cmp(&b.1));
    let guaranteed = keyed.iter().filter(|(_, k)| !k.beyond_guarantee).count();
    Order {
        indexes: keyed.into_iter().map(|(i, _)| i).collect(),
        guaranteed,
    }
}

#[cfg(test)]
mod tests;
