//! The alert evaluator's loop: expectations (PostgreSQL) -> alerts, every
//! interval, by the process holding the alert duty.
//!
//! It reads only the database, so it keeps deciding while Temporal or the
//! workers are down, which is when it matters most; it runs in the API
//! processes (`acp serve`, `acp api`), never only in the worker, so a
//! deployment whose workers stopped still notices. One evaluator at a time
//! across replicas: the holder of the duty's lease evaluates, each pass
//! (`service::alerts`, `Alerts::pass`) under an advisory lock of its own;
//! its state is the `alerts` table, so a restart or a change of holder picks
//! up where the last pass left.

use std::time::Duration;

use crate::service::Services;
use crate::service::alerts::Alerts;
use crate::service::duties::{Duty, DutyBoard};
use crate::store::lease::DutyLease;

pub use crate::service::alerts::ALERT_LOCK_KEY;

pub struct Evaluator {
    alerts: Alerts,
    duties: DutyBoard,
}

impl Evaluator {
    pub fn new(services: &Services) -> Self {
        Self {
            alerts: services.alerts.clone(),
            duties: services.duties.clone(),
        }
    }

    /// Evaluates at start-up and every `interval` until `shutdown`
    /// resolves, while this process holds the alert duty; otherwise it
    /// stands by (refreshing its `acp_alerts_open` gauge) and takes the duty
    /// over when its holder goes.
    pub async fn run(self, interval: Duration, shutdown: impl Future<Output = ()>) {
        let duty = Duty::AlertEvaluation;
        let mut lease = DutyLease::new(self.alerts.store().pool(), duty.lease_key());
        tokio::pin!(shutdown);
        loop {
            if self.duties.turn(duty, &mut lease).await {
                // A pass stops where it is at shutdown: each alert it opens
                // or resolves is one statement, its lock is its transaction's
                // (freed by the rollback), and the next pass evaluates
                // everything again.
                let passed = tokio::select! {
                    _ = &mut shutdown => break,
                    passed = self.alerts.pass() => passed,
                };
                if let Err(err) = &passed {
                    tracing::warn!(error = %err, "alert evaluation failed");
                }
                crate::metrics::duty_pass(duty.as_str(), passed.is_ok());
            } else if let Err(err) = self.alerts.refresh_gauge().await {
                tracing::debug!(error = %err, "could not refresh the alert gauge");
            }
            tokio::select! {
                _ = &mut shutdown => break,
                _ = tokio::time::sleep(interval) => {}
            }
        }
        self.duties.leave(duty, &mut lease).await;
    }
}
