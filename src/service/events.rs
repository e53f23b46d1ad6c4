//! The event router: stable event IDs in, exactly one run per (activity,
//! event) out, for as long as PostgreSQL remembers (not Temporal's retention).
//! Also the event history: events and their dispatches.
//!
//! Each dispatch is written before its start and completed after it. A start
//! is idempotent by workflow ID (RejectDuplicate), so finishing a dispatch
//! left pending by a crash or an outage is just starting it again: the
//! sweeper does that.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{Result, found};
use crate::domain::event::{DispatchOutcome, DispatchState, EventId, EventIdOrigin};
use crate::domain::ids;
use crate::domain::run::RunInput;
use crate::store::StoreError;
use crate::store::events::{Dispatch, EventFilter, EventRecord, EventStore};
use crate::temporal::{GatewayError, TemporalGateway};

/// An event as it arrives, already validated.
#[derive(Debug, Clone)]
pub struct NewEvent {
    pub event_id: EventId,
    pub origin: EventIdOrigin,
    pub event_type: String,
    pub source: String,
    pub occurred_at: Option<DateTime<Utc>>,
    pub payload: serde_json::Value,
}

#[derive(Debug, Clone)]
pub struct DispatchResult {
    pub activity_id: Uuid,
    pub workflow_id: String,
    pub run_id: Uuid,
    pub outcome: DispatchOutcome,
}

#[derive(Debug, Clone)]
pub struct IngestResult {
    pub event: EventRecord,
    pub dispatches: Vec<DispatchResult>,
}

impl IngestResult {
    /// Whether some dispatch waits for Temporal.
    pub fn pending(&self) -> bool {
        self.dispatches
            .iter()
            .any(|d| d.outcome == DispatchOutcome::Pending)
    }
}

#[derive(Clone)]
pub struct EventRouter {
    events: EventStore,
    gateway: Arc<TemporalGateway>,
    task_queue: Arc<str>,
    #[cfg(feature = "fault-injection")]
    pub faults: Arc<crate::faults::Faults>,
}

fn event_json(event: &EventRecord) -> serde_json::Value {
    serde_json::json!({
        "event_id": event.event_id,
        "event_type": event.event_type,
        "source": event.source,
        "occurred_at": event.occurred_at,
        "payload": event.payload.0,
    })
}

/// A re-delivery must carry the content first recorded under its ID; if it
/// does not, that is a producer bug to report, never a second event.
fn check_same_content(record: &EventRecord, event: &NewEvent) -> Result<()> {
    use crate::domain::event::Content;
    let first = Content {
        event_type: &record.event_type,
        source: &record.source,
        occurred_at: record.occurred_at,
        payload: &record.payload.0,
    };
    let again = Content {
        event_type: &event.event_type,
        source: &event.source,
        occurred_at: event.occurred_at,
        payload: &event.payload,
    };
    let differs = first.differences(&again);
    if differs.is_empty() {
        return Ok(());
    }
    crate::metrics::EVENT_CONFLICTS.inc();
    Err(super::Error::EventConflict(super::EventConflict {
        event_id: record.event_id.clone(),
        first_seen: record.received_at,
        differs,
    }))
}

impl EventRouter {
    pub fn new(events: EventStore, gateway: Arc<TemporalGateway>, task_queue: Arc<str>) -> Self {
        Self {
            events,
            gateway,
            task_queue,
            #[cfg(feature = "fault-injection")]
            faults: Default::default(),
        }
    }

    /// Whether an injected crash hits this dispatch (tests only).
    fn crashes_after_claim(&self) -> bool {
        #[cfg(feature = "fault-injection")]
        if crate::faults::fire(&self.faults.crash_after_claim) {
            return true;
        }
        false
    }

    #[tracing::instrument(skip_all, fields(event_id = %event.event_id.as_str(), event_type = %event.event_type))]
    pub async fn ingest(&self, event: NewEvent) -> Result<IngestResult> {
        let record = self
            .events
            .record(
                event.event_id.as_str(),
                event.origin.as_str(),
                &event.event_type,
                &event.source,
                event.occurred_at,
                &event.payload,
            )
            .await?;
        // Conflicting re-delivery (issue 16): the same ID with other content.
        check_same_content(&record, &event)?;
        let subscribers = self.events.subscribers(&record.event_type).await?;
        let mut dispatches = Vec::with_capacity(subscribers.len());
        for subscriber in subscribers {
            let workflow_id = ids::event_run_workflow_id(subscriber.id, &record.event_id);
            let run_id = ids::run_id(&workflow_id);
            let dispatch = self
                .events
                .claim(
                    &record.event_id,
                    subscriber.id,
                    &workflow_id,
                    run_id,
                    subscriber.version,
                )
                .await?;
            let outcome = if dispatch.state == DispatchState::Completed {
                DispatchOutcome::Duplicate
            } else if self.crashes_after_claim() {
                DispatchOutcome::Pending
            } else {
                self.start(&record, &dispatch).await?
            };
            crate::metrics::DISPATCHES
                .with_label_values(&[outcome.as_str()])
                .inc();
            dispatches.push(DispatchResult {
                activity_id: subscriber.id,
                workflow_id,
                run_id,
                outcome,
            });
        }
        Ok(IngestResult {
            event: record,
            dispatches,
        })
    }

    /// Starts a pending dispatch's run and completes the dispatch.
    async fn start(
        &self,
        event: &EventRecord,
        dispatch: &Dispatch,
    ) -> std::result::Result<DispatchOutcome, StoreError> {
        let input = RunInput::event(
            dispatch.activity_id,
            &event.event_id,
            event_json(event),
            dispatch.definition_version,
        );
        match self
            .gateway
            .start_run(&dispatch.workflow_id, &self.task_queue, &input)
            .await
        {
            Ok(outcome) => {
                self.events
                    .complete(&dispatch.event_id, dispatch.activity_id)
                    .await?;
                Ok(outcome.into())
            }
            Err(err) => {
                if let GatewayError::Rejected(message) = &err {
                    tracing::warn!(%message, workflow_id = %dispatch.workflow_id, "Temporal refused the start");
                }
                self.events
                    .record_failure(&dispatch.event_id, dispatch.activity_id, &err.to_string())
                    .await?;
                Ok(DispatchOutcome::Pending)
            }
        }
    }

    /// Finishes dispatches left pending for longer than `older_than`.
    /// Returns how many it started (or found already started).
    #[tracing::instrument(skip(self))]
    pub async fn sweep(&self, older_than: chrono::Duration) -> Result<usize> {
        let mut finished = 0;
        for dispatch in self.events.pending(older_than, 500).await? {
            let event = self.events.get(&dispatch.event_id).await?;
            match self.start(&event, &dispatch).await? {
                DispatchOutcome::Pending => break, // Temporal still away: next sweep.
                _ => finished += 1,
            }
        }
        if finished > 0 {
            tracing::info!(finished, "swept pending dispatches");
        }
        Ok(finished)
    }

    /// Sweeps every `interval` until `shutdown`.
    pub async fn run_sweeper(
        self,
        interval: std::time::Duration,
        shutdown: impl Future<Output = ()>,
    ) {
        tokio::pin!(shutdown);
        loop {
            tokio::select! {
                _ = &mut shutdown => return,
                _ = tokio::time::sleep(interval) => {}
            }
            if let Err(err) = self.sweep(chrono::Duration::seconds(10)).await {
                tracing::warn!(error = %err, "sweep failed");
            }
        }
    }

    /// Events matching `filter`, newest first, after the keyset `after`.
    pub async fn list(
        &self,
        filter: &EventFilter,
        after: Option<(DateTime<Utc>, String)>,
        limit: i64,
    ) -> Result<Vec<EventRecord>> {
        Ok(self.events.list(filter, after, limit).await?)
    }

    /// One event with its dispatches and their runs' status.
    pub async fn get(&self, event_id: &EventId) -> Result<(EventRecord, Vec<Dispatch>)> {
        let event = found(self.events.get(event_id.as_str()).await, "event")?;
        let dispatches = self.events.dispatches_of(event_id.as_str()).await?;
        Ok((event, dispatches))
    }
}
