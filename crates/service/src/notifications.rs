//! Notifications: subscriptions, their delivery history, and the dispatcher
//! that hands recorded notifications to Temporal for delivery.
//!
//! Runs and alerts record notifications in PostgreSQL (an outbox) in the
//! same transaction as their own change; nothing on a run's path waits for
//! a receiver. The dispatcher fans each notification out to its
//! destinations and starts one delivery workflow per delivery, in order per
//! (destination, subject). Any number of dispatchers may run: fan-out takes
//! row locks, delivery IDs and workflow IDs are derived, starts are
//! RejectDuplicate.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{Error, Result, found};
use acp_domain::audit::Actor;
use acp_domain::notify::delivery_workflow_id;
use acp_domain::notify::{Attempt, Delivery, Subscription};
use acp_domain::project::ProjectId;
use acp_store::{NotificationStore, StoreResult};
use acp_temporal::{GatewayError, StartOutcome, TemporalGateway};

#[derive(Clone)]
pub struct Notifications {
    store: NotificationStore,
    gateway: Arc<TemporalGateway>,
    task_queue: Arc<str>,
}

/// What one dispatch pass did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct DispatchReport {
    pub fanned_out: usize,
    pub started: usize,
}

impl Notifications {
    pub fn new(
        store: NotificationStore,
        gateway: Arc<TemporalGateway>,
        task_queue: Arc<str>,
    ) -> Self {
        Self {
            store,
            gateway,
            task_queue,
        }
    }

    pub async fn create_subscription(
        &self,
        subscription: &Subscription,
        actor: &Actor,
    ) -> Result<Subscription> {
        Ok(self.store.create_subscription(subscription, actor).await?)
    }

    /// The project's subscription; another project's is `NotFound`.
    pub async fn get_subscription(&self, id: Uuid, project: &ProjectId) -> Result<Subscription> {
        found(
            self.store.get_subscription(id, project).await,
            "subscription",
        )
    }

    pub async fn list_subscriptions(
        &self,
        project: &ProjectId,
        after: Option<(DateTime<Utc>, Uuid)>,
        limit: i64,
    ) -> Result<Vec<Subscription>> {
        Ok(self.store.list_subscriptions(project, after, limit).await?)
    }

    pub async fn delete_subscription(&self, id: Uuid, actor: &Actor) -> Result<()> {
        if self.store.delete_subscription(id, actor).await? {
            Ok(())
        } else {
            Err(Error::NotFound("subscription"))
        }
    }

    /// A subscription's deliveries with every attempt, newest first, when
    /// `project` owns it. The history outlives a deleted subscription.
    pub async fn deliveries(
        &self,
        subscription_id: Uuid,
        project: &ProjectId,
        after: Option<(DateTime<Utc>, Uuid)>,
        limit: i64,
    ) -> Result<Vec<(Delivery, Vec<Attempt>)>> {
        if !self
            .store
            .subscription_exists(subscription_id, project)
            .await?
        {
            return Err(Error::NotFound("subscription"));
        }
        let deliveries = self
            .store
            .deliveries_of(subscription_id, after, limit)
            .await?;
        let ids: Vec<Uuid> = deliveries.iter().map(|d| d.id).collect();
        let mut attempts = self.store.attempts_of(&ids).await?;
        Ok(deliveries
            .into_iter()
            .map(|d| {
                let (mine, rest): (Vec<Attempt>, Vec<Attempt>) =
                    attempts.drain(..).partition(|a| a.delivery_id == d.id);
                attempts = rest;
                (d, mine)
            })
            .collect())
    }

    /// Fans out what was recorded and starts the deliveries that may go.
    /// Stops early (and leaves the rest pending) when Temporal is away.
    pub async fn dispatch(&self) -> StoreResult<DispatchReport> {
        let mut report = DispatchReport::default();
        loop {
            let n = self.store.fan_out(500).await?;
            report.fanned_out += n;
            if n < 500 {
                break;
            }
        }
        for id in self.store.deliverable(500).await? {
            match self
                .gateway
                .start_delivery(&delivery_workflow_id(id), &self.task_queue, id)
                .await
            {
                Ok(StartOutcome::Started | StartOutcome::Duplicate) => {
                    self.store.mark_dispatched(id).await?;
                    report.started += 1;
                }
                Err(GatewayError::Rejected(message)) => {
                    tracing::warn!(delivery_id = %id, %message, "Temporal refused a delivery");
                    self.store.finish(id, false, Some(&message)).await?;
                }
                Err(err) => {
                    tracing::debug!(error = %err, "deliveries wait for Temporal");
                    break;
                }
            }
        }
        Ok(report)
    }

    /// Dispatches every `interval` until `shutdown`.
    pub async fn run_dispatcher(
        self,
        interval: std::time::Duration,
        shutdown: impl Future<Output = ()>,
    ) {
        tokio::pin!(shutdown);
        loop {
            if let Err(err) = self.dispatch().await {
                tracing::warn!(error = %err, "notification dispatch failed");
            }
            tokio::select! {
                _ = &mut shutdown => return,
                _ = tokio::time::sleep(interval) => {}
            }
        }
    }
}
