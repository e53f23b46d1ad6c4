//! Broker sources: their definitions and status, and the one use case the
//! consumers call for each message, [`Sources::deliver`]. A consumer
//! acknowledges a message only after `deliver` returned `Ok`: by then the
//! event and its dispatch rows (or the rejection, or the conflict) are
//! committed in PostgreSQL.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::events::{EventIntake, NewEvent};
use super::{Error, Result, found};
use acp_domain::audit::Actor;
use acp_domain::event::ConflictRecord;
use acp_domain::message::{self, RejectReason};
use acp_domain::project::ProjectId;
use acp_domain::query::Expect;
use acp_domain::source::SourceConfig;
use acp_domain::source::{RejectionRecord, SourceRecord, StatusRecord, StatusReport};
use acp_store::sources::{SourceStore, SourceWrite};

/// At most this much of a rejected message is kept.
pub const RAW_KEPT: usize = 4096;

/// A source as a client defines it, already parsed.
#[derive(Debug, Clone)]
pub struct SourceInput {
    pub name: String,
    pub config: SourceConfig,
    pub secret_ref: Option<String>,
    pub enabled: bool,
}

/// One message as a consumer received it.
#[derive(Debug, Clone, Default)]
pub struct Message {
    /// Header names and values that are text.
    pub headers: Vec<(String, String)>,
    pub content_type: Option<String>,
    pub body: Vec<u8>,
}

/// What became of a message; every one of these may be acknowledged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivered {
    /// Recorded and routed (or a duplicate of an event recorded before).
    Accepted { event_id: String },
    /// Poison: kept in the source's rejected list.
    Rejected(RejectReason),
    /// A known event ID with other content: recorded on the event.
    Conflict { event_id: String },
}

#[derive(Clone)]
pub struct Sources {
    store: SourceStore,
    events: EventIntake,
}

impl Sources {
    pub fn new(store: SourceStore, events: EventIntake) -> Self {
        Self { store, events }
    }

    /// The enabled sources, which the consumers of a process run.
    pub async fn enabled(&self) -> Result<Vec<SourceRecord>> {
        Ok(self.store.enabled().await?)
    }

    fn write<'a>(input: &'a SourceInput, config: &'a serde_json::Value) -> SourceWrite<'a> {
        SourceWrite {
            name: &input.name,
            kind: input.config.kind(),
            config,
            secret_ref: input.secret_ref.as_deref(),
            enabled: input.enabled,
        }
    }

    pub async fn create(&self, input: &SourceInput, actor: &Actor) -> Result<SourceRecord> {
        let config = input.config.to_json();
        Ok(self
            .store
            .create(Uuid::new_v4(), &Self::write(input, &config), actor)
            .await?)
    }

    /// The project's source of this ID; another project's is not found.
    pub async fn get(
        &self,
        project: &ProjectId,
        id: Uuid,
    ) -> Result<(SourceRecord, Option<StatusRecord>)> {
        let source = found(self.store.get(project, id).await, "source")?;
        let status = self.store.status(id).await?;
        Ok((source, status))
    }

    /// The project's sources, newest first.
    pub async fn list(
        &self,
        project: &ProjectId,
        after: Option<(DateTime<Utc>, Uuid)>,
        limit: i64,
    ) -> Result<Vec<SourceRecord>> {
        Ok(self.store.list(project, after, limit).await?)
    }

    pub async fn update(
        &self,
        id: Uuid,
        expect: Expect,
        input: &SourceInput,
        actor: &Actor,
    ) -> Result<SourceRecord> {
        let current = found(self.store.get(&actor.project, id).await, "source")?;
        if current.kind != input.config.kind() {
            return Err(Error::invalid(
                "kind",
                format!("a {} source stays one; create a new source", current.kind),
            ));
        }
        let config = input.config.to_json();
        found(
            self.store
                .update(id, expect, &Self::write(input, &config), actor)
                .await,
            "source",
        )
    }

    pub async fn delete(&self, id: Uuid, expect: Expect, actor: &Actor) -> Result<()> {
        found(self.store.delete(id, expect, actor).await, "source")
    }

    /// The rejected messages of the project's source of this ID.
    pub async fn rejections(
        &self,
        project: &ProjectId,
        id: Uuid,
        after: Option<i64>,
        limit: i64,
    ) -> Result<Vec<RejectionRecord>> {
        found(self.store.get(project, id).await, "source")?;
        Ok(self.store.rejections(id, after, limit).await?)
    }

    pub async fn conflicts_of(
        &self,
        project: &ProjectId,
        event_id: &str,
    ) -> Result<Vec<ConflictRecord>> {
        Ok(self.store.conflicts_of(project, event_id).await?)
    }

    pub async fn report(&self, id: Uuid, by: &str, report: &StatusReport) -> Result<()> {
        Ok(self.store.report(id, by, report).await?)
    }

    /// Decodes one message and commits what it is: an event of the
    /// source's project with its dispatch rows, a rejection, or a conflict. An `Err` means nothing
    /// conclusive was committed: leave the message unacknowledged so the
    /// broker delivers it again.
    #[tracing::instrument(skip_all, fields(%source_id))]
    pub async fn deliver(
        &self,
        source_id: Uuid,
        project: &ProjectId,
        message: &Message,
        limit: usize,
    ) -> Result<Delivered> {
        let decoded = match message::decode(
            &message.headers,
            message.content_type.as_deref(),
            &message.body,
            limit,
        ) {
            Ok(decoded) => decoded,
            Err(rejection) => {
                let headers: serde_json::Map<String, serde_json::Value> = message
                    .headers
                    .iter()
                    .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
                    .collect();
                let kept = &message.body[..message.body.len().min(RAW_KEPT)];
                self.store
                    .reject(
                        source_id,
                        rejection.reason,
                        &rejection.detail,
                        message.body.len(),
                        kept,
                        &serde_json::Value::Object(headers),
                    )
                    .await?;
                tracing::info!(reason = %rejection.reason, detail = %rejection.detail, "rejected a message");
                crate::metrics::SOURCE_REJECTIONS
                    .with_label_values(&[rejection.reason.as_str()])
                    .inc();
                return Ok(Delivered::Rejected(rejection.reason));
            }
        };
        let event = NewEvent {
            event_id: decoded.event.event_id,
            origin: decoded.origin,
            event_type: decoded.event.event_type.as_str().to_owned(),
            source: decoded.event.source,
            occurred_at: decoded.event.occurred_at,
            payload: decoded.event.payload,
        };
        // The one call that commits the event and its dispatch rows (and
        // returns then: a dispatcher starts the runs, so a broker's pace does
        // not wait on Temporal).
        match self
            .events
            .ingest(project, event.clone(), false, None)
            .await
        {
            Ok(result) => Ok(Delivered::Accepted {
                event_id: result.event.event_id,
            }),
            Err(Error::EventConflict(conflict)) => {
                self.store
                    .record_conflict(
                        project,
                        &conflict.event_id,
                        Some(source_id),
                        &conflict.differs,
                        &event.event_type,
                        &event.source,
                        event.occurred_at,
                        &event.payload,
                    )
                    .await?;
                tracing::warn!(event_id = %conflict.event_id, differs = ?conflict.differs, "conflicting re-delivery");
                Ok(Delivered::Conflict {
                    event_id: conflict.event_id,
                })
            }
            Err(err) => Err(err),
        }
    }
}
