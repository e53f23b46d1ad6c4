//! The event intake: stable event IDs in, exactly one run per (activity,
//! event) out, for as long as PostgreSQL remembers (not Temporal's retention).
//! Also the event history: events and their dispatches.
//!
//! Ingest commits the event and one dispatch row per subscribed activity and
//! answers; a dispatcher (in every process that ingests) then starts the runs,
//! concurrently and oldest first, and completes the rows. The rows are an
//! outbox: a start is idempotent by workflow ID (RejectDuplicate), so a row
//! left pending by a crash or an outage is simply started again once its
//! lease lapses. A client that asks to wait (`Prefer: wait`) gets its starts
//! made within its request instead.

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use tokio::sync::Notify;
use uuid::Uuid;

mod types;

pub use types::{DispatchResult, IngestResult, NewEvent};

use super::admission::Admission;
use super::group_commit::GroupCommit;
use super::subscribers::KnownSubscribers;
use super::{Result, found};
use acp_domain::auth::UnconfirmedKey;
use acp_domain::event::{DispatchOutcome, DispatchState, EventId};
use acp_domain::project::ProjectId;
use acp_domain::run::RunInput;
use acp_domain::{event::Dispatch, event::EventRecord, ids, query::EventFilter};
use acp_store::StoreError;
use acp_store::events::{EventStore, Settled};
use acp_store::ingest::RoutedEvent;
use acp_temporal::{GatewayError, TemporalGateway};

/// How long a request that waits for its own starts holds its rows.
const WAIT_LEASE: Duration = Duration::from_secs(10);
/// After Temporal refused a start or could not be reached, the row waits
/// this long before the next attempt.
const RETRY_AFTER: Duration = Duration::from_secs(2);

/// Accepts events: records each with one dispatch per subscribed activity,
/// starts the dispatches' runs (here when a client waits, else through the
/// dispatcher), and reads the event history back.
#[derive(Clone)]
pub struct EventIntake {
    pub(super) events: EventStore,
    gateway: Arc<TemporalGateway>,
    task_queue: Arc<str>,
    /// Wakes this process's dispatcher when ingest leaves work for it.
    pub(super) wake: Arc<Notify>,
    /// How many event runs may start now (fairness, `service::admission`).
    pub(super) admission: Admission,
    /// Each event type's subscribers as last read, for one-statement ingest.
    subscribers: KnownSubscribers,
    /// Writes one-statement events together with those arriving alongside.
    batch: GroupCommit,
    #[cfg(feature = "fault-injection")]
    pub faults: Arc<crate::faults::Faults>,
}

/// What starting one dispatch's run needs.
pub(super) struct StartTarget {
    pub(super) event_id: String,
    pub(super) activity_id: Uuid,
    pub(super) workflow_id: String,
    pub(super) definition_version: i64,
    pub(super) event: serde_json::Value,
    /// A `flow.debounce` dispatch: settled before it may run.
    pub(super) debounced: bool,
}

/// The event as its run carries it.
pub(super) fn event_json(
    event_id: &str,
    event_type: &str,
    source: &str,
    occurred_at: Option<DateTime<Utc>>,
    payload: &serde_json::Value,
) -> serde_json::Value {
    serde_json::json!({
        "event_id": event_id,
        "event_type": event_type,
        "source": source,
        "occurred_at": occurred_at,
        "payload": payload,
    })
}

/// A re-delivery must carry the content first recorded under its ID; if it
/// does not, that is a producer bug to report, never a second event.
fn check_same_content(record: &EventRecord, event: &NewEvent) -> Result<()> {
    use acp_domain::event::Content;
    let first = Content {
        event_type: &record.event_type,
        source: &record.source,
        occurred_at: record.occurred_at,
        payload: &record.payload,
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

impl EventIntake {
    pub fn new(events: EventStore, gateway: Arc<TemporalGateway>, task_queue: Arc<str>) -> Self {
        Self {
            batch: GroupCommit::new(events.clone()),
            events,
            gateway,
            task_queue,
            wake: Default::default(),
            admission: Admission::new(None),
            subscribers: KnownSubscribers::default(),
            #[cfg(feature = "fault-injection")]
            faults: Default::default(),
        }
    }

    /// At most `max_running` runs started by events or by hand run at once
    /// (`None`: no limit), and fewer while a schedule fires often; see
    /// [`Admission`]. A client that asks to wait is not held back.
    pub fn with_max_running(mut self, max_running: Option<usize>) -> Self {
        self.admission = Admission::new(max_running);
        self
    }

    /// Whether an injected crash hits this dispatch (tests only).
    fn crashes_after_claim(&self) -> bool {
        #[cfg(feature = "fault-injection")]
        if crate::faults::fire(&self.faults.crash_after_claim) {
            return true;
        }
        false
    }

    /// Records an event for `project` and a dispatch for every enabled event
    /// activity of the project subscribed to its type, at most once per
    /// (activity, event) however often it is delivered. Its ID is unique in
    /// the project: another project's event of the same ID is another event. Without `wait` it answers once the rows are
    /// committed (new dispatches `pending`, for the dispatcher); with `wait`
    /// it starts them itself and answers with what Temporal said. `key`, the
    /// caller's when it is still to be confirmed live, is confirmed before
    /// anything is written, or in the same statement.
    #[tracing::instrument(skip_all, fields(event_id = %event.event_id.as_str(), event_type = %event.event_type))]
    pub async fn ingest(
        &self,
        project: &ProjectId,
        event: NewEvent,
        wait: bool,
        key: Option<&UnconfirmedKey>,
    ) -> Result<IngestResult> {
        if !wait && let Some(result) = self.ingest_at_once(project, &event, key).await? {
            crate::metrics::EVENT_INGEST
                .with_label_values(&["one_statement"])
                .inc();
            return Ok(result);
        }
        self.events.confirm_key(key).await?;
        crate::metrics::EVENT_INGEST
            .with_label_values(&["general"])
            .inc();
        let record = self
            .events
            .record(
                project,
                event.event_id.as_str(),
                event.origin.as_str(),
                &event.event_type,
                &event.source,
                event.occurred_at,
                &event.payload,
            )
            .await?;
        // Conflicting re-delivery: the same ID with other content.
        check_same_content(&record, &event)?;
        let subscribers = self.events.subscribers(project, &record.event_type).await?;
        self.subscribers
            .remember(project, &record.event_type, &subscribers);
        let mut dispatches = Vec::with_capacity(subscribers.len());
        let mut left_for_dispatcher = false;
        for subscriber in subscribers {
            let workflow_id = ids::event_run_workflow_id(subscriber.id, &record.event_id);
            let run_id = ids::run_id(&workflow_id);
            let event_value = event_json(
                &record.event_id,
                &record.event_type,
                &record.source,
                record.occurred_at,
                &record.payload,
            );
            let debounce = subscriber.debounce.as_ref().map(|d| &d.0);
            let dispatch = match debounce {
                // Left for the dispatcher once its period has passed, even
                // for a client that asked to wait.
                Some(debounce) => {
                    self.events
                        .claim_debounced(
                            project,
                            &record.event_id,
                            subscriber.id,
                            &workflow_id,
                            run_id,
                            subscriber.version,
                            &debounce.key_of(&event_value),
                            debounce.period.as_std(),
                        )
                        .await?
                }
                None => {
                    self.events
                        .claim(
                            project,
                            &record.event_id,
                            subscriber.id,
                            &workflow_id,
                            run_id,
                            subscriber.version,
                            wait.then_some(WAIT_LEASE),
                        )
                        .await?
                }
            };
            let outcome = if dispatch.state == DispatchState::Completed {
                // A re-delivery: of an event that ran, or one a later event's run took.
                let outcome = match dispatch.outcome {
                    Some(DispatchOutcome::Debounced) => DispatchOutcome::Debounced,
                    _ => DispatchOutcome::Duplicate,
                };
                count(outcome);
                outcome
            } else if !wait || debounce.is_some() {
                left_for_dispatcher = true;
                DispatchOutcome::Pending
            } else if self.crashes_after_claim() {
                DispatchOutcome::Pending
            } else {
                self.start(StartTarget {
                    event_id: record.event_id.clone(),
                    activity_id: dispatch.activity_id,
                    workflow_id: dispatch.workflow_id.clone(),
                    definition_version: dispatch.definition_version,
                    event: event_value,
                    debounced: false,
                })
                .await?
            };
            dispatches.push(DispatchResult {
                activity_id: subscriber.id,
                workflow_id,
                run_id,
                outcome,
            });
        }
        if left_for_dispatcher {
            self.wake.notify_one();
        }
        Ok(IngestResult {
            event: record,
            dispatches,
        })
    }

    /// The common case in one statement: a new event whose subscribers are
    /// those last read, none debounced. `None` when that is not so (nothing
    /// was written; see `EventStore::record_routed`), written together with
    /// the events that arrive alongside it (`GroupCommit`).
    async fn ingest_at_once(
        &self,
        project: &ProjectId,
        event: &NewEvent,
        key: Option<&UnconfirmedKey>,
    ) -> Result<Option<IngestResult>> {
        let event_id = event.event_id.as_str();
        let Some(expected) = self
            .subscribers
            .expected(project, &event.event_type, event_id)
        else {
            return Ok(None);
        };
        let routed = RoutedEvent {
            project: project.clone(),
            event_id: event_id.to_owned(),
            origin: event.origin,
            event_type: event.event_type.clone(),
            source: event.source.clone(),
            occurred_at: event.occurred_at,
            payload: match serde_json::value::to_raw_value(&event.payload) {
                Ok(payload) => payload,
                Err(_) => return Ok(None),
            },
            key: UnconfirmedKey::pending(key),
            expected: expected.clone(),
        };
        let Some(received_at) = self.batch.record(routed).await else {
            return Ok(None);
        };
        // Written: the key was live in the statement's snapshot.
        if let Some(key) = key {
            key.confirm();
        }
        let record = EventRecord {
            event_id: event_id.to_owned(),
            event_id_origin: event.origin,
            event_type: event.event_type.clone(),
            source: event.source.clone(),
            occurred_at: event.occurred_at,
            payload: event.payload.clone(),
            received_at,
        };
        let dispatches: Vec<DispatchResult> = expected
            .into_iter()
            .map(|d| DispatchResult {
                activity_id: d.activity_id,
                workflow_id: d.workflow_id,
                run_id: d.run_id,
                outcome: DispatchOutcome::Pending,
            })
            .collect();
        if !dispatches.is_empty() {
            self.wake.notify_one();
        }
        Ok(Some(IngestResult {
            event: record,
            dispatches,
        }))
    }

    /// Starts a dispatch's run and completes the dispatch; when Temporal
    /// cannot take it, the row stays pending and is retried after a pause.
    pub(super) async fn start(
        &self,
        mut target: StartTarget,
    ) -> std::result::Result<DispatchOutcome, StoreError> {
        if target.debounced {
            match self
                .events
                .settle_debounced(&target.event_id, target.activity_id)
                .await?
            {
                Settled::Done(outcome) => return Ok(outcome.unwrap_or(DispatchOutcome::Duplicate)),
                Settled::Absorbed => {
                    count(DispatchOutcome::Debounced);
                    return Ok(DispatchOutcome::Debounced);
                }
                // The last event of its burst runs, carrying what it absorbed.
                Settled::Run { absorbed } => {
                    if let Some(event) = target.event.as_object_mut() {
                        event.insert(
                            "debounce".into(),
                            serde_json::json!({
                                "absorbed_count": absorbed.len(),
                                "absorbed_event_ids": absorbed,
                            }),
                        );
                    }
                }
            }
        }
        let input = RunInput::event(
            target.activity_id,
            &target.event_id,
            target.event,
            target.definition_version,
        );
        let asked = Instant::now();
        let outcome = match self
            .gateway
            .start_run(&target.workflow_id, &self.task_queue, &input)
            .await
        {
            Ok(outcome) => {
                self.admission
                    .remember_started(&target.workflow_id, asked.elapsed());
                self.events
                    .complete(&target.event_id, target.activity_id)
                    .await?;
                outcome.into()
            }
            Err(err) => {
                if let GatewayError::Rejected(message) = &err {
                    tracing::warn!(%message, workflow_id = %target.workflow_id, "Temporal refused the start");
                }
                self.events
                    .record_failure(&target.event_id, target.activity_id, &err.to_string())
                    .await?;
                self.events
                    .release(&target.event_id, target.activity_id, RETRY_AFTER)
                    .await?;
                DispatchOutcome::Pending
            }
        };
        count(outcome);
        Ok(outcome)
    }

    /// The project's events matching `filter`, newest first, after the
    /// keyset `after`.
    pub async fn list(
        &self,
        project: &ProjectId,
        filter: &EventFilter,
        after: Option<(DateTime<Utc>, String)>,
        limit: i64,
    ) -> Result<Vec<EventRecord>> {
        Ok(self.events.list(project, filter, after, limit).await?)
    }

    /// The project's event of this ID with its dispatches and their runs'
    /// status; another project's is not found.
    pub async fn get(
        &self,
        project: &ProjectId,
        event_id: &EventId,
    ) -> Result<(EventRecord, Vec<Dispatch>)> {
        let event = found(self.events.get(project, event_id.as_str()).await, "event")?;
        let dispatches = self
            .events
            .dispatches_of(project, event_id.as_str())
            .await?;
        Ok((event, dispatches))
    }
}

fn count(outcome: DispatchOutcome) {
    crate::metrics::DISPATCHES
        .with_label_values(&[outcome.as_str()])
        .inc();
}
