//! Faults that tests inject to show idempotency against the real engine.
//! Compiled only with the `fault-injection` feature, which the test targets
//! turn on through their dev-dependency on this crate: a release build has
//! none of it.

use std::sync::atomic::{AtomicU32, Ordering};

#[derive(Debug, Default)]
pub struct Faults {
    /// This many event dispatches "crash" right after their row is written.
    pub crash_after_claim: AtomicU32,
    /// `log_run` fails this many times right after its insert.
    pub fail_log_run_after_insert: AtomicU32,
}

/// Takes one from `counter` if any is left: whether the fault fires now.
pub fn fire(counter: &AtomicU32) -> bool {
    counter
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_ok()
}
