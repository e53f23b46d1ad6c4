//! The execution activities as the worker runs them: each takes its input
//! from Temporal, hands it to `service::execution` in the attempt's span,
//! and gives Temporal the answer (or the failure, final or not).
//! Their names, inputs and outputs are `temporal::activities`' contract.

use std::sync::Arc;

use temporalio_macros::activities;
use temporalio_sdk::activities::{ActivityContext, ActivityError};

use super::attempt::{activity_span, traced};
use acp_service::execution::Execution;
use acp_temporal::activities::definitions;
use acp_temporal::messages::*;

/// The implementations of `temporal::activities::ExecutionActivities`.
pub struct ExecutionHandlers {
    pub execution: Execution,
}

#[activities]
impl ExecutionHandlers {
    #[activity(definition = definitions::PrepareScheduledRun)]
    pub async fn prepare_scheduled_run(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: PrepareScheduledRun,
    ) -> Result<Prepared, ActivityError> {
        let attempt = activity_span(&ctx, None);
        attempt
            .span
            .record("activity_id", tracing::field::display(input.activity_id));
        traced(attempt, self.execution.prepare_scheduled_run(input)).await
    }

    #[activity(definition = definitions::LogRun)]
    pub async fn log_run(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: LogRunInput,
    ) -> Result<LoggedRun, ActivityError> {
        let attempt = activity_span(&ctx, Some(input.run_id));
        traced(attempt, self.execution.log_run(input)).await
    }

    #[activity(definition = definitions::AcquireSlot)]
    pub async fn acquire_slot(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: AcquireSlotInput,
    ) -> Result<SlotGrant, ActivityError> {
        let attempt = activity_span(&ctx, Some(input.run_id));
        traced(attempt, self.execution.acquire_slot(input)).await
    }

    #[activity(definition = definitions::StartTask)]
    pub async fn start_task(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: StartTaskInput,
    ) -> Result<(), ActivityError> {
        let attempt = activity_span(&ctx, Some(input.run_id));
        traced(attempt, self.execution.start_task(input)).await
    }

    #[activity(definition = definitions::Webhook)]
    pub async fn webhook(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: WebhookInput,
    ) -> Result<WebhookResponse, ActivityError> {
        let attempt = activity_span(&ctx, Some(input.run_id));
        let number = ctx.info().attempt;
        traced(attempt, self.execution.call_webhook(input, number)).await
    }

    #[activity(definition = definitions::TaskState)]
    pub async fn task_state(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: TaskStateInput,
    ) -> Result<TaskState, ActivityError> {
        let attempt = activity_span(&ctx, Some(input.run_id));
        traced(attempt, self.execution.task_state(input)).await
    }

    #[activity(definition = definitions::FinishTask)]
    pub async fn finish_task(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: FinishTaskInput,
    ) -> Result<(), ActivityError> {
        let attempt = activity_span(&ctx, Some(input.run_id));
        traced(attempt, self.execution.finish_task(input)).await
    }

    #[activity(definition = definitions::FinishRun)]
    pub async fn finish_run(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: FinishRunInput,
    ) -> Result<(), ActivityError> {
        let attempt = activity_span(&ctx, Some(input.run_id));
        traced(attempt, self.execution.finish_run(input)).await
    }
}
