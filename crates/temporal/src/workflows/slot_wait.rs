//! How a flow-controlled run waits for its concurrency slot or its rate
//! limit's room: timers and the `flow_slot_free` signal, no polling activity.

use std::time::Duration;

use temporalio_sdk::workflows::select;
use temporalio_sdk::{WorkflowContext, WorkflowResult};
use uuid::Uuid;

use super::bookkeeping::bookkeeping;
use super::run::RunActivityWorkflow;
use crate::activities::ExecutionActivities;
use crate::messages::*;

/// How long a queued run waits before it asks for a slot again, unless a
/// `flow_slot_free` signal wakes it first: from the first wait, doubling, at
/// most the last. Timers and signals, not a polling activity, so queued runs
/// hold no worker slot; the timer only covers slots freed without a signal
/// (a cancel or terminate through the API, a recovered slot).
const SLOT_WAITS: (Duration, Duration) = (Duration::from_secs(1), Duration::from_secs(30));

/// The shortest and longest wait, in milliseconds, of a run queued for its
/// rate limit before it asks again (the longest bounds a wait told by a
/// long `period`, so that a limit raised meanwhile is seen).
const RATE_WAITS: (u64, u64) = (10, 60_000);

/// Asks for the run's concurrency slot until it has one, or the run is not
/// to run. A cancellation while queued returns `Waiting`: the caller's task
/// loop then sees the cancellation before its first task and records it.
pub(super) async fn wait_for_slot(
    ctx: &mut WorkflowContext<RunActivityWorkflow>,
    run_id: Uuid,
    activity_id: Uuid,
    (gate, rate): (Option<FlowGate>, Option<RateGate>),
) -> WorkflowResult<SlotGrant> {
    let mut wait = SLOT_WAITS.0;
    loop {
        let grant = match ctx
            .execute_activity(
                ExecutionActivities::acquire_slot,
                AcquireSlotInput {
                    run_id,
                    activity_id,
                    gate: gate.clone(),
                    rate: rate.clone(),
                },
                bookkeeping(),
            )
            .await
        {
            Ok(grant) => grant,
            // Cancelled while asking: whatever the request did, the run
            // ends `cancelled` (which frees a slot it may have got).
            Err(_) if ctx.cancellation_token().is_cancelled() => return Ok(SlotGrant::Waiting),
            Err(err) => return Err(err.into()),
        };
        match grant {
            SlotGrant::Waiting => {
                let seen = ctx.state(|s| s.slot_wakes);
                select! {
                    _ = ctx.timer(wait) => {}
                    _ = ctx.wait_condition(|s| s.slot_wakes > seen) => {}
                };
                wait = (wait * 2).min(SLOT_WAITS.1);
            }
            // The rate limit said when the window has room for this run: no
            // signal announces that, the timer does. (Only activity results
            // recorded since rate limits carry it, so older histories never
            // reach this arm.)
            SlotGrant::WaitFor { millis } => {
                // A cancel ends the wait at once (no run ending signals it).
                let token = ctx.cancellation_token();
                let wait = Duration::from_millis(millis.clamp(RATE_WAITS.0, RATE_WAITS.1));
                select! {
                    _ = ctx.timer(wait) => {}
                    _ = token.cancelled() => {}
                };
            }
            other => return Ok(other),
        }
        if ctx.cancellation_token().is_cancelled() {
            return Ok(SlotGrant::Waiting);
        }
    }
}
