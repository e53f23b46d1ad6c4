//! The execution activities' contract: the names, inputs and outputs the
//! workflows call and Temporal records in their histories. Declarations
//! only: the worker (`src/worker`, a driver) implements each of them by
//! handing its input to `service::execution`, so that the workflows, here,
//! need not know the use cases above them.

use temporalio_common::protos::temporal::api::failure::v1::Failure;
use temporalio_macros::activity_definitions;
use temporalio_sdk::activities::ActivityError;

use super::messages::*;

/// The activities of the launcher, run and task workflows.
pub struct ExecutionActivities;

// The bodies are never called: the macro renames them, and a worker runs
// the implementations registered for these names (`src/worker`).
#[activity_definitions]
impl ExecutionActivities {
    /// What to run for one nominal time of a schedule: applies the misfire
    /// rule, and records the fires that do not run as `skipped` runs.
    #[activity(name = "prepare_scheduled_run")]
    pub fn prepare_scheduled_run(input: PrepareScheduledRun) -> Result<Prepared, ActivityError> {
        unimplemented!()
    }

    /// Upserts the run row and loads the definition version the run executes.
    #[activity(name = "log_run")]
    pub fn log_run(input: LogRunInput) -> Result<LoggedRun, ActivityError> {
        unimplemented!()
    }

    /// Asks for the run's concurrency slot (`store::flow` says why the
    /// limit is exact). Idempotent: a retry after a grant finds the slot.
    #[activity(name = "acquire_slot")]
    pub fn acquire_slot(input: AcquireSlotInput) -> Result<SlotGrant, ActivityError> {
        unimplemented!()
    }

    #[activity(name = "start_task")]
    pub fn start_task(input: StartTaskInput) -> Result<(), ActivityError> {
        unimplemented!()
    }

    /// POSTs `{run, task, context}`; Temporal retries it on failure.
    #[activity(name = "webhook")]
    pub fn webhook(input: WebhookInput) -> Result<WebhookResponse, ActivityError> {
        unimplemented!()
    }

    /// What an earlier attempt of the run made of a task (a retry asks,
    /// for a task whose workflow ID Temporal will not run again).
    #[activity(name = "task_state")]
    pub fn task_state(input: TaskStateInput) -> Result<TaskState, ActivityError> {
        unimplemented!()
    }

    #[activity(name = "finish_task")]
    pub fn finish_task(input: FinishTaskInput) -> Result<(), ActivityError> {
        unimplemented!()
    }

    #[activity(name = "finish_run")]
    pub fn finish_run(input: FinishRunInput) -> Result<(), ActivityError> {
        unimplemented!()
    }
}

/// The activities' definition types, for the worker's implementations to
/// name (`#[activity(definition = …)]`).
pub mod definitions {
    pub use super::execution_activities::{
        AcquireSlot, FinishRun, FinishTask, LogRun, PrepareScheduledRun, StartTask, TaskState,
        Webhook,
    };
}

/// The innermost message of a failure chain: the activity's own words.
pub fn root_message(failure: &Failure) -> String {
    let mut current = failure;
    while let Some(cause) = current.cause.as_deref() {
        current = cause;
    }
    current.message.clone()
}
