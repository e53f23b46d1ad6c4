//! Notification delivery: one workflow per delivery (one notification to
//! one destination), POSTing a signed CloudEvent with Temporal's retries and
//! backoff, recording every attempt. Runs never wait on it: the dispatcher
//! starts these workflows from the outbox in PostgreSQL.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use temporalio_common::RetryPolicy;
use temporalio_common::error::ApplicationFailure;
use temporalio_macros::{activities, workflow, workflow_methods};
use temporalio_sdk::activities::{ActivityContext, ActivityError};
use temporalio_sdk::{ActivityOptions, WorkflowContext, WorkflowResult};
use uuid::Uuid;

use super::activities::root_message;
use super::webhook;
use crate::domain::notify::cloud_event;
use crate::store::NotificationStore;

pub const DELIVERY_WORKFLOW_TYPE: &str = "DeliverNotificationWorkflow";

/// Attempts per delivery before it is recorded as failed.
pub const MAX_ATTEMPTS: u32 = 8;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DeliveryInput {
    pub delivery_id: Uuid,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FinishDeliveryInput {
    pub delivery_id: Uuid,
    pub delivered: bool,
    pub error: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DeliveryOutcome {
    pub delivered: bool,
    pub error: Option<String>,
}

pub struct NotifyActivities {
    pub store: NotificationStore,
    pub http: reqwest::Client,
    pub allow_internal: bool,
}

fn non_retryable(message: impl Into<String>) -> ActivityError {
    let message: String = message.into();
    ActivityError::application(ApplicationFailure::non_retryable(anyhow::anyhow!(message)))
}

#[activities]
impl NotifyActivities {
    /// One attempt: POST the CloudEvent, signed when a secret is named, and
    /// record how it went. A refused target or a 4xx (other than 408/429)
    /// will not get better and is not retried.
    #[activity(name = "deliver_notification")]
    pub async fn deliver_notification(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: DeliveryInput,
    ) -> Result<u16, ActivityError> {
        let attempt = ctx.info().attempt as i32;
        let (delivery, notification) = self.store.load(input.delivery_id).await?;
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
            Err((status, message, _)) => (status.map(i32::from), Some(message.as_str())),
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
            Err((_, message, false)) => Err(non_retryable(message)),
            Err((_, message, true)) => {
                tracing::info!(delivery_id = %delivery.id, attempt, error = %message, "notification attempt failed");
                Err(anyhow::anyhow!(message).into())
            }
        }
    }

    #[activity(name = "finish_delivery")]
    pub async fn finish_delivery(
        self: Arc<Self>,
        _ctx: ActivityContext,
        input: FinishDeliveryInput,
    ) -> Result<(), ActivityError> {
        self.store
            .finish(input.delivery_id, input.delivered, input.error.as_deref())
            .await?;
        Ok(())
    }
}

impl NotifyActivities {
    /// The POST itself: `Err((status, message, retryable))` on failure.
    async fn post(
        &self,
        url: &str,
        secret_ref: Option<&str>,
        notification: &crate::domain::notify::Notification,
        delivery_id: Uuid,
    ) -> Result<u16, (Option<u16>, String, bool)> {
        let url = url::Url::parse(url).map_err(|e| (None, format!("bad URL: {e}"), false))?;
        webhook::check_target(&url, self.allow_internal)
            .await
            .map_err(|e| (None, e, false))?;
        let body = serde_json::to_vec(&cloud_event(notification))
            .map_err(|e| (None, e.to_string(), false))?;
        let mut request = self
            .http
            .post(url)
            .timeout(Duration::from_secs(10))
            .header("content-type", "application/cloudevents+json")
            .header("x-acp-delivery-id", delivery_id.to_string());
        if let Some(name) = secret_ref {
            let secret = std::env::var(name).map_err(|_| {
                (
                    None,
                    format!("secret_ref {name} is not set in the worker's environment"),
                    false,
                )
            })?;
            request = request.header(
                webhook::SIGNATURE_HEADER,
                webhook::sign(secret.as_bytes(), &body),
            );
        }
        let response = request
            .body(body)
            .send()
            .await
            .map_err(|e| (None, format!("request failed: {e}"), true))?;
        let status = response.status();
        if status.is_success() {
            return Ok(status.as_u16());
        }
        let retryable =
            !status.is_client_error() || status.as_u16() == 408 || status.as_u16() == 429;
        Err((
            Some(status.as_u16()),
            format!("receiver answered {status}"),
            retryable,
        ))
    }
}

/// Delivers one notification to one destination: attempts with backoff
/// (1 s, doubling, at most 60 s apart, `MAX_ATTEMPTS` in all), then records
/// the outcome, which lets the next notification of the same subject go.
#[workflow]
#[derive(Default)]
pub struct DeliverNotificationWorkflow;

#[workflow_methods]
impl DeliverNotificationWorkflow {
    #[run(name = "DeliverNotificationWorkflow")]
    pub async fn run(
        ctx: &mut WorkflowContext<Self>,
        input: DeliveryInput,
    ) -> WorkflowResult<DeliveryOutcome> {
        let attempts = ActivityOptions::with_start_to_close_timeout(Duration::from_secs(30))
            .retry_policy(
                RetryPolicy::builder()
                    .initial_interval(Duration::from_secs(1))
                    .backoff_coefficient(2.0)
                    .maximum_interval(Duration::from_secs(60))
                    .maximum_attempts(MAX_ATTEMPTS)
                    .build(),
            )
            .build();
        let result = ctx
            .execute_activity(
                NotifyActivities::deliver_notification,
                input.clone(),
                attempts,
            )
            .await;
        let (delivered, error) = match result {
            Ok(_) => (true, None),
            Err(err) => (
                false,
                Some(
                    err.failure()
                        .map(root_message)
                        .unwrap_or_else(|| err.to_string()),
                ),
            ),
        };
        let bookkeeping = ActivityOptions::with_start_to_close_timeout(Duration::from_secs(30))
            .retry_policy(
                RetryPolicy::builder()
                    .initial_interval(Duration::from_millis(500))
                    .maximum_interval(Duration::from_secs(10))
                    .build(),
            )
            .build();
        ctx.execute_activity(
            NotifyActivities::finish_delivery,
            FinishDeliveryInput {
                delivery_id: input.delivery_id,
                delivered,
                error: error.clone(),
            },
            bookkeeping,
        )
        .await?;
        Ok(DeliveryOutcome { delivered, error })
    }
}
