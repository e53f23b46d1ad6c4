//! The event router: stable event IDs in, exactly one run per (activity,
//! event) out, for as long as PostgreSQL remembers (not Temporal's retention).
//!
//! Each dispatch is written before its start and completed after it. A start
//! is idempotent by workflow ID (RejectDuplicate), so finishing a dispatch
//! left pending by a crash or an outage is just starting it again: the
//! sweeper does that.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::domain::event::{EventId, EventIdOrigin};
use crate::domain::ids;
use crate::domain::run::RunTrigger;
use crate::store::StoreError;
use crate::store::events::{Dispatch, EventRecord, EventStore};
use crate::temporal::messages::RunInput;
use crate::temporal::{GatewayError, StartOutcome, TemporalGateway};

/// Test-only fault injection for the router.
#[derive(Debug, Default)]
pub struct RouterFaults {
    /// This many dispatches "crash" right after their row is written.
    pub crash_after_claim: AtomicU32,
}

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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DispatchOutcome {
    Started,
    Duplicate,
    /// Recorded, not yet started (Temporal unreachable); the sweeper will.
    Pending,
}

impl DispatchOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Started => "started",
            Self::Duplicate => "duplicate",
            Self::Pending => "pending",
        }
    }
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

#[derive(Clone)]
pub struct EventRouter {
    pub events: EventStore,
    pub gateway: Arc<TemporalGateway>,
    pub task_queue: String,
    pub faults: Arc<RouterFaults>,
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

impl EventRouter {
    #[tracing::instrument(skip_all, fields(event_id = %event.event_id.as_str(), event_type = %event.event_type))]
    pub async fn ingest(&self, event: NewEvent) -> Result<IngestResult, StoreError> {
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
        // Route by the recorded event: a re-delivery with other content under
        // the same ID is the same event.
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
            let outcome = if dispatch.state == "completed" {
                DispatchOutcome::Duplicate
            } else if self
                .faults
                .crash_after_claim
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok()
            {
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
    ) -> Result<DispatchOutcome, StoreError> {
        let input = RunInput {
            activity_id: dispatch.activity_id,
            trigger: RunTrigger::Event,
            scheduled_for: None,
            event_id: Some(event.event_id.clone()),
            event: Some(event_json(event)),
            window_start: None,
            window_end: None,
            definition_version: dispatch.definition_version,
        };
        match self
            .gateway
            .start_run(&dispatch.workflow_id, &self.task_queue, &input)
            .await
        {
            Ok(outcome) => {
                self.events
                    .complete(&dispatch.event_id, dispatch.activity_id)
                    .await?;
                Ok(match outcome {
                    StartOutcome::Started => DispatchOutcome::Started,
                    StartOutcome::Duplicate => DispatchOutcome::Duplicate,
                })
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
    pub async fn sweep(&self, older_than: chrono::Duration) -> Result<usize, StoreError> {
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
}
