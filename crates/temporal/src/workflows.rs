//! Deterministic workflow code: no I/O, clocks, randomness or tokio here.
//! Everything with a side effect is an activity (activities.rs).

mod bookkeeping;
mod launcher;
mod patches;
mod run;
mod slot_wait;
mod task;

pub use launcher::{LaunchScheduledRunWorkflow, nominal_from_workflow_id};
pub use run::{RunActivityWorkflow, SLOT_FREE_SIGNAL};
pub use task::TaskInstanceWorkflow;

use temporalio_common::error::ApplicationFailure;
use temporalio_sdk::{
    ChildWorkflowOptions, ChildWorkflowStartError, ParentClosePolicy,
    StartChildWorkflowExecutionFailedCause, WorkflowIdReusePolicy, WorkflowTermination,
};

pub const RUN_WORKFLOW_TYPE: &str = "RunActivityWorkflow";
pub const TASK_WORKFLOW_TYPE: &str = "TaskInstanceWorkflow";

fn child_options(workflow_id: String) -> ChildWorkflowOptions {
    child_options_with(workflow_id, WorkflowIdReusePolicy::RejectDuplicate)
}

fn child_options_with(workflow_id: String, reuse: WorkflowIdReusePolicy) -> ChildWorkflowOptions {
    ChildWorkflowOptions::builder()
        .workflow_id(workflow_id)
        .id_reuse_policy(reuse)
        // A run is not killed because its launcher went away.
        .parent_close_policy(ParentClosePolicy::Abandon)
        .build()
}

/// The options of a task's child workflow in attempt `attempt` of its run.
/// A retry (attempt 2 or later) may start a task workflow ID again only
/// after a failed, cancelled or terminated execution: a task that
/// succeeded is refused, and the run takes its earlier result.
fn task_options(workflow_id: String, attempt: u32) -> ChildWorkflowOptions {
    if attempt > 1 {
        child_options_with(workflow_id, WorkflowIdReusePolicy::AllowDuplicateFailedOnly)
    } else {
        child_options(workflow_id)
    }
}

/// A failure of the workflow with the run's or task's own words.
fn failure(message: &str) -> WorkflowTermination {
    ApplicationFailure::new(anyhow::anyhow!(message.to_owned())).into()
}

fn is_already_started(err: &ChildWorkflowStartError) -> bool {
    matches!(
        err,
        ChildWorkflowStartError::StartFailed {
            cause: StartChildWorkflowExecutionFailedCause::WorkflowAlreadyExists,
            ..
        }
    )
}
