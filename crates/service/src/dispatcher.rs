//! The event dispatcher: the loop (in every process that ingests) that
//! starts the runs of pending dispatch rows, as many at once as the
//! admission leaves room for (see `service::admission`), in fair order:
//! projects by weight, each project's activities taking turns, each
//! activity's oldest first (see `domain::fair_share`). The rows are
//! the outbox; a start is idempotent by workflow ID, so a row a crash left
//! pending is started again once its lease lapses.

use std::time::Duration;

use futures::StreamExt;

use super::Result;
use super::events::{EventIntake, StartTarget, event_json};
use acp_domain::event::DispatchOutcome;
use acp_store::StoreError;
use acp_store::outbox::LeasedDispatch;

/// How many pending dispatches one dispatcher round leases.
const BATCH: i64 = 64;
/// How soon a dispatcher held back by its admission looks again.
const THROTTLED_POLL: Duration = Duration::from_millis(100);
/// How many starts one dispatcher has in flight at once.
const CONCURRENCY: usize = 16;
/// How long a dispatcher holds the rows it is starting; the rows of a
/// dispatcher that died return to the others after it.
const DISPATCH_LEASE: Duration = Duration::from_secs(30);

/// What one dispatcher round could and did take.
struct Round {
    /// How many dispatches the admission left room for.
    room: i64,
    leased: usize,
}

impl EventIntake {
    /// One dispatcher round: leases the due dispatches (those no other
    /// dispatcher or waiting request holds) that the admission leaves room
    /// for, and those within their project's guarantee, in fair order
    /// across projects; starts them with bounded concurrency, and returns
    /// how many it leased.
    pub async fn dispatch_due(&self) -> Result<usize> {
        Ok(self.dispatch_round().await?.leased)
    }

    #[tracing::instrument(skip(self))]
    async fn dispatch_round(&self) -> Result<Round> {
        // With no room left the lease still takes runs within their
        // project's guarantee: another project's burst never holds them.
        let room = self.admission.room(&self.events, BATCH).await?;
        let due = self.events.lease_due(room, DISPATCH_LEASE).await?;
        let leased = due.len();
        let outcomes: Vec<std::result::Result<DispatchOutcome, StoreError>> =
            futures::stream::iter(due.into_iter().map(|d| {
                let router = self.clone();
                async move { router.start(leased_target(d)).await }
            }))
            .buffer_unordered(CONCURRENCY)
            .collect()
            .await;
        let mut started = 0;
        for outcome in outcomes {
            match outcome {
                Ok(DispatchOutcome::Pending) => {}
                Ok(_) => started += 1,
                Err(err) => tracing::warn!(error = %err, "a dispatch could not be recorded"),
            }
        }
        if leased > 0 {
            tracing::debug!(leased, started, "dispatched pending events");
        }
        Ok(Round { room, leased })
    }

    /// Runs dispatcher rounds until `shutdown`: at once when ingest leaves
    /// work, again while full rounds come back, soon while the admission
    /// holds dispatches back, and every `poll` for rows other processes
    /// left (a crash, a lapsed lease, Temporal back).
    pub async fn run_dispatcher(self, poll: Duration, shutdown: impl Future<Output = ()>) {
        tokio::pin!(shutdown);
        loop {
            let wait = match self.dispatch_round().await {
                Ok(Round { room: 0, .. }) => THROTTLED_POLL.min(poll),
                Ok(Round { room, leased }) if leased as i64 >= room => continue,
                Ok(_) => poll,
                Err(err) => {
                    tracing::warn!(error = %err, "dispatcher round failed");
                    poll
                }
            };
            tokio::select! {
                _ = &mut shutdown => return,
                _ = self.wake.notified() => {}
                _ = tokio::time::sleep(wait) => {}
            }
        }
    }
}

fn leased_target(d: LeasedDispatch) -> StartTarget {
    StartTarget {
        event: event_json(
            &d.event_id,
            &d.event_type,
            &d.source,
            d.occurred_at,
            &d.payload.0,
        ),
        event_id: d.event_id,
        activity_id: d.activity_id,
        workflow_id: d.workflow_id,
        definition_version: d.definition_version,
        debounced: d.debounce_key.is_some(),
    }
}
