//! The reconciler's loop: a reconciliation pass (`service::reconcile`) at
//! start-up and every interval, by the process holding the reconcile duty's
//! lease; the others stand by and take the duty over when its holder goes.

use std::time::Duration;

use crate::service::Services;
use crate::service::duties::{Duty, DutyBoard};
use crate::service::reconcile::Reconciliation;
use crate::store::StoreError;
use crate::store::lease::DutyLease;

pub use crate::service::reconcile::{Clock, DRIFT_CHECKS_PER_PASS, PassReport, RECONCILE_LOCK_KEY};

pub struct Reconciler {
    reconciliation: Reconciliation,
    duties: DutyBoard,
    pool: sqlx::PgPool,
}

impl Reconciler {
    pub fn new(services: &Services) -> Self {
        Self {
            reconciliation: Reconciliation::new(services),
            duties: services.duties.clone(),
            pool: services.activities.store().pool().clone(),
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
        let mut lease = DutyLease::new(&self.pool, Duty::Reconcile.lease_key());
        tokio::pin!(shutdown);
        loop {
            if self.duties.turn(Duty::Reconcile, &mut lease).await {
                // A pass stops where it is at shutdown: each step is an
                // upsert the next pass repeats, and its lock is its
                // transaction's, freed by the rollback.
                let passed = tokio::select! {
                    _ = &mut shutdown => break,
                    passed = self.pass() => passed,
                };
                if let Err(err) = &passed {
                    tracing::warn!(error = %err, "reconcile pass failed");
                }
                crate::metrics::duty_pass(Duty::Reconcile.as_str(), passed.is_ok());
            }
            tokio::select! {
                _ = &mut shutdown => break,
                _ = tokio::time::sleep(interval) => {}
            }
        }
        self.duties.leave(Duty::Reconcile, &mut lease).await;
    }
}
