//! Flow control use cases: what the slots of an activity look like, and the
//! recovery of slots whose runs are gone.

use std::sync::Arc;

use uuid::Uuid;

use super::Result;
use acp_domain::flow::KeyUsage;
use acp_store::FlowStore;
use acp_temporal::TemporalGateway;

/// A slot held this long is checked against Temporal by the recovery pass;
/// younger ones belong to runs that have just started.
const RECOVER_AFTER_SECS: i64 = 30;

#[derive(Clone)]
pub struct FlowControl {
    store: FlowStore,
    gateway: Arc<TemporalGateway>,
    /// Every label the queue gauge has had, so that it can read 0.
    gauge_labels: Arc<std::sync::Mutex<std::collections::HashSet<String>>>,
}

impl FlowControl {
    pub fn new(store: FlowStore, gateway: Arc<TemporalGateway>) -> Self {
        Self {
            store,
            gateway,
            gauge_labels: Default::default(),
        }
    }

    /// Slots in use and queue length per key of one activity.
    pub async fn usage(&self, activity_id: Uuid) -> Result<Vec<KeyUsage>> {
        Ok(self.store.usage(activity_id).await?)
    }

    /// Prunes rate-limit starts older than any window, then frees the slots
    /// of runs whose workflow Temporal reports closed or
    /// unknown (terminated outside this service, timed out, its namespace
    /// lost): nothing can release them otherwise. A run with a slot always
    /// has an open workflow until it ends, so this never frees a slot in
    /// use. Stops at the first Temporal error (the next pass retries).
    /// Returns how many slots it freed.
    pub async fn recover_slots(&self) -> Result<usize> {
        self.store.prune_starts().await?;
        let mut freed = 0;
        for (run_id, workflow_id) in self.store.long_held(RECOVER_AFTER_SECS).await? {
            if self.gateway.workflow_is_open(&workflow_id).await? {
                continue;
            }
            if self.store.release(run_id).await? {
                tracing::info!(%run_id, %workflow_id, "freed the concurrency slot of a closed workflow");
                crate::metrics::FLOW_SLOTS_RECOVERED.inc();
                freed += 1;
            }
        }
        Ok(freed)
    }

    /// Refreshes `acp_flow_queued_runs` and `acp_flow_oldest_wait_seconds`
    /// from PostgreSQL.
    pub async fn refresh_gauge(&self) -> Result<()> {
        let mut by_label: std::collections::HashMap<String, (i64, f64)> = Default::default();
        for (activity_id, count, waited) in self.store.queued_per_activity().await? {
            let entry = by_label
                .entry(crate::metrics::activity_label(&activity_id))
                .or_default();
            entry.0 += count;
            entry.1 = entry.1.max(waited);
        }
        // A drained queue reads 0 rather than vanishing.
        {
            let mut seen = self
                .gauge_labels
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            for label in seen.iter() {
                by_label.entry(label.clone()).or_default();
            }
            seen.extend(by_label.keys().cloned());
        }
        for (label, (count, waited)) in by_label {
            crate::metrics::FLOW_QUEUED
                .with_label_values(&[&label])
                .set(count);
            crate::metrics::FLOW_OLDEST_WAIT
                .with_label_values(&[&label])
                .set(waited);
        }
        Ok(())
    }

    /// The recovery pass every `interval` until `shutdown` (in `serve` and
    /// `api`; any number of replicas: freeing a slot twice is a no-op).
    pub async fn run_recovery(
        self,
        interval: std::time::Duration,
        shutdown: impl Future<Output = ()>,
    ) {
        tokio::pin!(shutdown);
        loop {
            if let Err(err) = self.recover_slots().await {
                tracing::debug!(error = %err, "concurrency slot recovery did not finish");
            }
            tokio::select! {
                _ = &mut shutdown => return,
                _ = tokio::time::sleep(interval) => {}
            }
        }
    }
}
