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

use acp_service::Services;
use acp_service::alerts::Alerts;
use acp_service::duties::{Duty, DutyBoard, DutyLease};

pub use acp_service::alerts::ALERT_LOCK_KEY;

pub struct Evaluator {
    alerts: Alerts,
    duties: DutyBoard,
    lease: DutyLease,
}

impl Evaluator {
    pub fn new(services: &Services) -> Self {
        Self {
            alerts: services.alerts.clone(),
            duties: services.duties.clone(),
            lease: services.duty_lease(Duty::AlertEvaluation),
        }
    }

    /// Evaluates at start-up and every `interval` until `shutdown`
    /// resolves, while this process holds the alert duty; otherwise it
    /// stands by (refreshing its `acp_alerts_open` gauge) and takes the duty
    /// over when its holder goes.
    pub async fn run(self, interval: Duration, shutdown: impl Future<Output = ()>) {
        let duty = Duty::AlertEvaluation;
        let Self {
            alerts,
            duties,
            mut lease,
        } = self;
        tokio::pin!(shutdown);
        loop {
            if duties.turn(duty, &mut lease).await {
                // A pass stops where it is at shutdown: each alert it opens
                // or resolves is one statement, its lock is its transaction's
                // (freed by the rollback), and the next pass evaluates
                // everything again.
                let passed = tokio::select! {
                    _ = &mut shutdown => break,
                    passed = alerts.pass() => passed,
                };
                if let Err(err) = &passed {
                    tracing::warn!(error = %err, "alert evaluation failed");
                }
                acp_service::metrics::duty_pass(duty.as_str(), passed.is_ok());
            } else if let Err(err) = alerts.refresh_gauge().await {
                tracing::debug!(error = %err, "could not refresh the alert gauge");
            }
            tokio::select! {
                _ = &mut shutdown => break,
                _ = tokio::time::sleep(interval) => {}
            }
        }
        duties.leave(duty, &mut lease).await;
    }
}
