//! The notification delivery activities as the worker runs them: each hands
//! its input to `service::deliveries` in the attempt's span. Their names,
//! inputs and outputs are `temporal::notify`'s contract.

use std::sync::Arc;

use temporalio_macros::activities;
use temporalio_sdk::activities::{ActivityContext, ActivityError};

use super::attempt::{activity_span, traced};
use acp_service::deliveries::Deliveries;
use acp_temporal::notify::definitions;
use acp_temporal::notify::{DeliveryInput, FinishDeliveryInput};

/// The implementations of `temporal::notify::NotifyActivities`.
pub struct NotifyHandlers {
    pub deliveries: Deliveries,
}

#[activities]
impl NotifyHandlers {
    #[activity(definition = definitions::DeliverNotification)]
    pub async fn deliver_notification(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: DeliveryInput,
    ) -> Result<u16, ActivityError> {
        let number = ctx.info().attempt as i32;
        let attempt = activity_span(&ctx, None);
        attempt
            .span
            .record("delivery_id", tracing::field::display(input.delivery_id));
        traced(attempt, self.deliveries.attempt(input.delivery_id, number)).await
    }

    #[activity(definition = definitions::FinishDelivery)]
    pub async fn finish_delivery(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: FinishDeliveryInput,
    ) -> Result<(), ActivityError> {
        let attempt = activity_span(&ctx, None);
        attempt
            .span
            .record("delivery_id", tracing::field::display(input.delivery_id));
        traced(
            attempt,
            self.deliveries
                .finish(input.delivery_id, input.delivered, input.error.as_deref()),
        )
        .await
    }
}
