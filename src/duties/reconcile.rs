//! The reconciler's loop: a reconciliation pass (`service::reconcile`) at
//! start-up and every interval, by the process holding the reconcile duty's
//! lease; the others stand by and take the duty over when its holder goes.

use std::time::Duration;

use acp_service::Services;
use acp_service::StoreError;
use acp_service::duties::{Duty, DutyBoard, DutyLease};
use acp_service::reconcile::Reconciliation;

pub use acp_service::reconcile::{Clock, DRIFT_CHECKS_PER_PASS, PassReport, RECONCILE_LOCK_KEY};

pub struct Reconciler {
    reconciliation: Reconciliation,
    duties: DutyBoard,
    lease: DutyLease,
}

impl Reconciler {
    pub fn new(services: &Services) -> Self {
        Self {
            reconciliation: Reconciliation::new(services),
            duties: services.duties.clone(),
            lease: services.duty_lease(Duty::Reconcile),
        }
    }

    /// Passes read "now" from `clock` (tests drive a DST night with it).
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.reconciliation = self.reconciliation.with_clock(clock);
        self
    }

    /// One pass now, whether or not this process holds the duty (tests,
    /// and the loop below).
    pub async fn pass(&self) -> Result<PassReport, StoreError> {
        self.reconciliation.pass().await
    }

    /// Runs passes at start-up and every `interval` until `shutdown`
    /// resolves, while this process holds the reconcile duty; otherwise it
    /// stands by and takes the duty over when its holder goes.
    pub async fn run(self, interval: Duration, shutdown: impl Future<Output = ()>) {
        let Self {
            reconciliation,
            duties,
            mut lease,
        } = self;
        tokio::pin!(shutdown);
        loop {
            if duties.turn(Duty::Reconcile, &mut lease).await {
                // A pass stops where it is at shutdown: each step is an
                // upsert the next pass repeats, and its lock is its
                // transaction's, freed by the rollback.
                let passed = tokio::select! {
                    _ = &mut shutdown => break,
                    passed = reconciliation.pass() => passed,
                };
                if let Err(err) = &passed {
                    tracing::warn!(error = %err, "reconcile pass failed");
                }
                acp_service::metrics::duty_pass(Duty::Reconcile.as_str(), passed.is_ok());
            }
            tokio::select! {
                _ = &mut shutdown => break,
                _ = tokio::time::sleep(interval) => {}
            }
        }
        duties.leave(Duty::Reconcile, &mut lease).await;
    }
}
