//! Notification delivery: one workflow per delivery (one notification to
//! one destination), POSTing a signed CloudEvent with Temporal's retries and
//! backoff, recording every attempt. Runs never wait on it: the dispatcher
//! starts these workflows from the outbox in PostgreSQL. Here: the workflow
//! and its activities' contract; the attempt itself is
//! `service::deliveries`, run by `worker::notify`.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use temporalio_common::RetryPolicy;
use temporalio_macros::{activity_definitions, workflow, workflow_methods};
use temporalio_sdk::activities::ActivityError;
use temporalio_sdk::{ActivityOptions, WorkflowContext, WorkflowResult};
use uuid::Uuid;

use super::activities::root_message;

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

/// The delivery workflow's activities.
pub struct NotifyActivities;

// The bodies are never called: the macro renames them, and a worker runs
// the implementations registered for these names (`worker::notify`, which
// hands them to `service::deliveries`).
#[activity_definitions]
impl NotifyActivities {
    /// One attempt: POST the CloudEvent, signed when a secret is named, and
    /// record how it went. A refused target or a 4xx (other than 408/429)
    /// will not get better and is not retried.
    #[activity(name = "deliver_notification")]
    pub fn deliver_notification(input: DeliveryInput) -> Result<u16, ActivityError> {
        unimplemented!()
    }

    /// Records the delivery's outcome.
    #[activity(name = "finish_delivery")]
    pub fn finish_delivery(input: FinishDeliveryInput) -> Result<(), ActivityError> {
        unimplemented!()
    }
}

/// The activities' definition types, for the worker's implementations.
pub mod definitions {
    pub use super::notify_activities::{DeliverNotification, FinishDelivery};
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
