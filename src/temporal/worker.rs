//! The Temporal worker: registration and run loop.
//!
//! The launcher, `RunActivityWorkflow` and the task workflows arrive with the
//! Execution issue; until then the worker holds its place in `serve` and
//! `worker` and exits cleanly on shutdown.

pub async fn run(shutdown: impl Future<Output = ()>) {
    tracing::warn!(
        "the worker has no workflows registered yet; scheduled fires will wait in the task queue"
    );
    shutdown.await;
}
