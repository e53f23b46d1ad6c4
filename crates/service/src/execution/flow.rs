//! Flow-controlled admission: a run asking for its concurrency
//! slot and its rate limit's start, and an ended run waking the runs queued
//! behind it.

use super::{Execution, ExecutionResult};
use acp_domain::run::RunStatus;
use acp_store::flow::Grant;
use acp_temporal::messages::*;

/// How many queued runs an ended run wakes: the head, and a few behind it
/// in case the head was granted already or the limit has room for more.
const WAKE_HEADS: i64 = 3;

impl Execution {
    /// Asks for the run's concurrency slot, then its rate limit's start
    /// (`store::flow` says why the limit is exact). Idempotent: a retry
    /// after a grant finds the slot.
    pub async fn acquire_slot(&self, input: AcquireSlotInput) -> ExecutionResult<SlotGrant> {
        let mut grant = Grant::Acquired;
        if let Some(gate) = &input.gate {
            grant = self
                .flow
                .acquire(
                    input.run_id,
                    input.activity_id,
                    &gate.key,
                    gate.limit,
                    gate.on_limit,
                    input.rate.is_none(),
                )
                .await?;
        }
        // Once it holds its slot (or has none to hold), the run's start
        // must fit its rate limit.
        if let (Grant::Acquired, Some(rate)) = (&grant, &input.rate) {
            grant = self
                .flow
                .acquire_rate(
                    input.run_id,
                    input.activity_id,
                    &rate.key,
                    rate.limit,
                    chrono::Duration::milliseconds(rate.period_ms.min(i64::MAX as u64) as i64),
                    rate.on_limit,
                    input.gate.is_none(),
                )
                .await?;
        }
        Ok(match grant {
            Grant::Acquired => SlotGrant::Acquired,
            Grant::WaitFor { millis } => SlotGrant::WaitFor { millis },
            Grant::Waiting => SlotGrant::Waiting,
            Grant::Ended => SlotGrant::Ended,
            Grant::Skipped => {
                crate::metrics::count_run(
                    self.activities.pool(),
                    input.activity_id,
                    RunStatus::Skipped,
                )
                .await;
                SlotGrant::Skipped
            }
            // The oldest run of the key is asked to cancel, as
            // `POST /v1/runs/{id}/cancel` asks (recorded on its row, then
            // Temporal); its ending frees the slot and wakes this run,
            // first in the queue. Asking again on a later poll is a no-op.
            Grant::CancelOldest { run_id: oldest } => {
                let key = input.gate.as_ref().map_or("", |g| g.key.as_str());
                let reason = format!(
                    "cancel_oldest: run {} of key `{}` takes its slot",
                    input.run_id, key
                );
                if self
                    .runs
                    .request_cancel(oldest, Some(&reason), None, false, None)
                    .await?
                    .is_some()
                {
                    let (run, _) = self.runs.get_run(oldest).await?;
                    self.gateway
                        .cancel_workflow(&run.workflow_id, &reason)
                        .await
                        .map_err(|e| anyhow::anyhow!("cancel the oldest run: {e}"))?;
                }
                SlotGrant::Waiting
            }
        })
    }

    /// After a flow-controlled run ended (its slot freed in the same
    /// commit), signals the first runs queued for its key to ask for it now.
    /// Best effort: a queued run also asks again when its wait ends.
    pub(super) async fn wake_queue(&self, run_id: uuid::Uuid) {
        let heads = match self.flow.heads_after(run_id, WAKE_HEADS).await {
            Ok(heads) => heads,
            Err(err) => {
                tracing::debug!(error = %err, "could not read the queue to wake");
                return;
            }
        };
        for workflow_id in heads {
            if let Err(err) = self
                .gateway
                .signal_workflow(&workflow_id, acp_temporal::workflows::SLOT_FREE_SIGNAL)
                .await
            {
                tracing::debug!(error = %err, %workflow_id, "could not wake a queued run");
            }
        }
    }
}
