//! Faults that tests inject to show idempotency against the real engine.
//! Compiled only with the `fault-injection` feature, which the test targets
//! turn on through their dev-dependency on this crate: a release build has
//! none of it.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

#[derive(Debug, Default)]
pub struct Faults {
    /// This many event dispatches "crash" right after their row is written.
    pub crash_after_claim: AtomicU32,
    /// `log_run` fails this many times right after its insert.
    pub fail_log_run_after_insert: AtomicU32,
    /// A resume waits this many milliseconds before it unpauses the
    /// Temporal schedule (once its row says unpaused), as a loaded machine
    /// or a slow network might: nominal times fall while the engine is
    /// still paused.
    pub delay_before_unpause_ms: AtomicU64,
    /// And this many after the unpause, before it decides: the engine fires
    /// times the resume has not decided on yet.
    pub delay_after_unpause_ms: AtomicU64,
}

/// Waits as long as `millis` says (no wait when 0).
pub async fn delay(millis: &AtomicU64) {
    let ms = millis.load(Ordering::SeqCst);
    if ms > 0 {
        tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
    }
}

/// Takes one from `counter` if any is left: whether the fault fires now.
pub fn fire(counter: &AtomicU32) -> bool {
    counter
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_ok()
}
