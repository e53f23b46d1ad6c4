//! The alert evaluator: expectations (PostgreSQL) -> alerts, in a loop.
//!
//! It reads only the database, so it keeps deciding while Temporal or the
//! workers are down, which is when it matters most; it runs in the API
//! processes (`acp serve`, `acp api`), never only in the worker, so a
//! deployment whose workers stopped still notices. One evaluator at a time
//! across replicas, by an advisory lock; its state is the `alerts` table,
//! so a restart or a change of holder picks up where the last pass left.

use std::time::{Duration, Instant};

use sqlx::Connection;

use crate::service::Services;
use crate::service::alerts::{Alerts, Changes};
use crate::store::StoreError;

/// `pg_try_advisory_xact_lock` key: "acp-alert".
pub const ALERT_LOCK_KEY: i64 = 0x0061_6370_616c_6572;

pub struct Evaluator {
    alerts: Alerts,
}

impl Evaluator {
    pub fn new(services: &Services) -> Self {
        Self {
            alerts: services.alerts.clone(),
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

    /// Evaluates at start-up and every `interval` until `shutdown` resolves.
    pub async fn run(self, interval: Duration, shutdown: impl Future<Output = ()>) {
        tokio::pin!(shutdown);
        loop {
            if let Err(err) = self.pass().await {
                tracing::warn!(error = %err, "alert evaluation failed");
            }
            tokio::select! {
                _ = &mut shutdown => return,
                _ = tokio::time::sleep(interval) => {}
            }
        }
    }
}
