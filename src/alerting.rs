//! The alert evaluator: expectations (PostgreSQL) -> alerts, in a loop.
//!
//! It reads only the database, so it keeps deciding while Temporal or the
//! workers are down, which is when it matters most; it runs in the API
//! processes (`acp serve`, `acp api`), never only in the worker, so a
//! deployment whose workers stopped still notices. One evaluator at a time
//! across replicas: the holder of the duty's lease evaluates, each pass under
//! an advisory lock of its own; its state is the `alerts` table,
//! so a restart or a change of holder picks up where the last pass left.

use std::time::{Duration, Instant};

use sqlx::Connection;

use crate::service::Services;
use crate::service::alerts::{Alerts, Changes};
use crate::service::duties::{Duty, DutyBoard};
use crate::store::StoreError;
use crate::store::lease::DutyLease;

/// `pg_try_advisory_xact_lock` key: "acp-alert".
pub const ALERT_LOCK_KEY: i64 = 0x0061_6370_616c_6572;

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

    /// One pass under the cluster-wide lock; `None` when another instance
    /// holds it. Every instance refreshes its `acp_alerts_open` gauge.
    #[tracing::instrument(skip(self))]
    pub async fn pass(&self) -> Result<Option<Changes>, StoreError> {
        let started = Instant::now();
        let changes = {
            let mut lock_conn = self.alerts.store().pool().acquire().await?;
            let mut lock_tx = lock_conn.begin().await?;
            let (locked,): (bool,) = sqlx::query_as("SELECT pg_try_advisory_xact_lock($1)")
                .bind(ALERT_LOCK_KEY)
                .fetch_one(&mut *lock_tx)
                .await?;
            if locked {
                let changes = self.alerts.evaluate_all(chrono::Utc::now()).await?;
                lock_tx.commit().await?;
                Some(changes)
            } else {
                None
            }
        };
        self.alerts.refresh_gauge().await?;
        tracing::debug!(
            ran = changes.is_some(),
            elapsed_ms = started.elapsed().as_millis() as u64,
            "alert evaluation pass"
        );
        Ok(changes)
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
                if let Err(err) = self.pass().await {
                    tracing::warn!(error = %err, "alert evaluation failed");
                }
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
