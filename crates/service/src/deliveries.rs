//! Notification delivery, the use case the delivery workflow's activities
//! run: one attempt POSTs the notification's CloudEvent to one destination,
//! signed when the subscription names a secret, and records how it went;
//! the last step records the delivery's outcome, which lets the next
//! notification of the same subject go. `worker::notify` hands Temporal's
//! inputs here; `temporal::notify` holds the workflow and the activities'
//! contract.

use std::time::{Duration, Instant};

use uuid::Uuid;

use super::execution::{ExecutionError, ExecutionResult};
use acp_domain::notify::{Notification, cloud_event};
use acp_store::NotificationStore;
use acp_temporal::webhook;

pub struct Deliveries {
    store: NotificationStore,
    http: reqwest::Client,
    allow_internal: bool,
}

/// Why one POST failed: `retryable` unless the target is refused or the
/// receiver answered a 4xx other than 408/429, which will not get better.
struct PostFailure {
    status: Option<u16>,
    message: String,
    retryable: bool,
}

impl PostFailure {
    fn final_(message: impl Into<String>) -> Self {
        Self {
            status: None,
            message: message.into(),
            retryable: false,
        }
    }
}

impl Deliveries {
    pub fn new(pool: sqlx::PgPool, http: reqwest::Client, allow_internal: bool) -> Self {
        Self {
            store: NotificationStore::new(pool),
            http,
            allow_internal,
        }
    }

    /// Attempt number `attempt` of a delivery: the receiver's status when it
    /// took the notification. Every attempt is recorded and counted.
    pub async fn attempt(&self, delivery_id: Uuid, attempt: i32) -> ExecutionResult<u16> {
        let (delivery, notification) = self.store.load(delivery_id).await?;
        let started = Instant::now();
        let result = self
            .post(
                &delivery.url,
                delivery.secret_ref.as_deref(),
                &notification,
                delivery.id,
            )
            .await;
        let elapsed = started.elapsed().as_millis().min(i32::MAX as u128) as i32;
        let (status, error) = match &result {
            Ok(status) => (Some(i32::from(*status)), None),
            Err(failure) => (
                failure.status.map(i32::from),
                Some(failure.message.as_str()),
            ),
        };
        self.store
            .record_attempt(delivery.id, attempt, status, error, elapsed)
            .await?;
        let outcome = if result.is_ok() {
            "delivered"
        } else {
            "failed"
        };
        crate::metrics::NOTIFICATION_DELIVERIES
            .with_label_values(&[outcome])
            .inc();
        match result {
            Ok(status) => Ok(status),
            Err(PostFailure {
                message,
                retryable: false,
                ..
            }) => Err(ExecutionError::Final(message)),
            Err(PostFailure { message, .. }) => {
                Err(ExecutionError::Failed(anyhow::anyhow!(message)))
            }
        }
    }

    /// Records the delivery's outcome after its last attempt.
    pub async fn finish(
        &self,
        delivery_id: Uuid,
        delivered: bool,
        error: Option<&str>,
    ) -> ExecutionResult<()> {
        self.store.finish(delivery_id, delivered, error).await?;
        Ok(())
    }

    /// The POST itself.
    async fn post(
        &self,
        url: &str,
        secret_ref: Option<&str>,
        notification: &Notification,
        delivery_id: Uuid,
    ) -> Result<u16, PostFailure> {
        let url = url::Url::parse(url).map_err(|e| PostFailure::final_(format!("bad URL: {e}")))?;
        webhook::check_target(&url, self.allow_internal)
            .await
            .map_err(PostFailure::final_)?;
        let body = serde_json::to_vec(&cloud_event(notification))
            .map_err(|e| PostFailure::final_(e.to_string()))?;
        let request = self
            .http
            .post(url)
            .timeout(Duration::from_secs(10))
            .header("content-type", "application/cloudevents+json")
            .header("x-acp-delivery-id", delivery_id.to_string());
        let request = webhook::signed(request, secret_ref, &body).map_err(PostFailure::final_)?;
        let response = request.body(body).send().await.map_err(|e| PostFailure {
            status: None,
            message: format!("request failed: {e}"),
            retryable: true,
        })?;
        let status = response.status();
        if status.is_success() {
            return Ok(status.as_u16());
        }
        Err(PostFailure {
            status: Some(status.as_u16()),
            message: format!("receiver answered {status}"),
            retryable: !status.is_client_error()
                || status.as_u16() == 408
                || status.as_u16() == 429,
        })
    }
}
