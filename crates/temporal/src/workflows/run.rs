//! `RunActivityWorkflow`: one execution of an activity for one trigger
//! occurrence. It logs the run, waits for its flow-control slot, runs each
//! task as a child workflow in order, and records how the run ended.

use temporalio_macros::{workflow, workflow_methods};
use temporalio_sdk::{SyncWorkflowContext, WorkflowContext, WorkflowResult, WorkflowTermination};
use uuid::Uuid;

use super::bookkeeping::bookkeep;
use super::patches::{FAILURES_FAIL, LOG_SURVIVES_CANCEL};
use super::slot_wait::wait_for_slot;
use super::task::TaskInstanceWorkflow;
use super::{failure, is_already_started, task_options};
use crate::activities::{ExecutionActivities, root_message};
use crate::messages::*;
use acp_domain::ids;
use acp_domain::run::{RunStatus, TaskStatus};

/// One execution of an activity for one trigger occurrence.
#[workflow]
#[derive(Default)]
pub struct RunActivityWorkflow {
    /// `flow_slot_free` signals received: a queued run asks for its slot
    /// again at once instead of at the end of its wait.
    pub(super) slot_wakes: u32,
}

/// The signal a run that frees a concurrency slot sends the head of its queue.
pub const SLOT_FREE_SIGNAL: &str = "flow_slot_free";

#[workflow_methods]
impl RunActivityWorkflow {
    #[signal(name = "flow_slot_free")]
    fn slot_free(&mut self, _ctx: &mut SyncWorkflowContext<Self>) {
        self.slot_wakes += 1;
    }

    #[run(name = "RunActivityWorkflow")]
    pub async fn run(
        ctx: &mut WorkflowContext<Self>,
        input: RunInput,
    ) -> WorkflowResult<RunSummary> {
        let workflow_id = ctx.workflow_id().to_owned();
        let run_id = ids::run_id(&workflow_id);
        let input_activity = input.activity_id;
        // Logged on a token of its own: a cancel that arrived before this
        // execution's first workflow task would otherwise cancel the log
        // itself, and the run would end with no one recording it (the task
        // loop below records the cancel). Executions from before the patch
        // keep their cancellable log on replay.
        let log_survives_cancel = ctx.patched(LOG_SURVIVES_CANCEL);
        let logged = bookkeep(
            ctx,
            ExecutionActivities::log_run,
            LogRunInput {
                run_id,
                workflow_id,
                run: input,
            },
            log_survives_cancel,
        )
        .await?;
        // Flow-controlled: a concurrency slot and/or a start under the rate
        // limit. Both absent (and `rate` always, in histories from before
        // rate limits): the run goes on as it always did.
        if logged.gate.is_some() || logged.rate.is_some() {
            let gate = (logged.gate.clone(), logged.rate.clone());
            match wait_for_slot(ctx, run_id, input_activity, gate).await? {
                SlotGrant::Acquired | SlotGrant::Waiting | SlotGrant::WaitFor { .. } => {}
                // Recorded `skipped`, or ended (cancelled) while queued: the
                // row says so already; no task ran.
                SlotGrant::Skipped => return Ok(not_run(run_id, RunStatus::Skipped)),
                SlotGrant::Ended => return Ok(not_run(run_id, RunStatus::Cancelled)),
            }
        }
        let (mut succeeded, mut failed, mut error) = (0u32, 0u32, None);
        // The index of the first task a cancellation left unfinished.
        let mut cancelled_from = None;
        for (index, task) in logged.tasks.iter().enumerate() {
            if ctx.cancellation_token().is_cancelled() {
                cancelled_from = Some(index);
                break;
            }
            let task_workflow_id = ids::task_workflow_id(run_id, &task.task_type, index);
            let input = TaskInput {
                run_id,
                index: index as u32,
                task: task.clone(),
                run: logged.run.clone(),
                context: logged.context.clone(),
            };
            let outcome = match ctx
                .start_child_workflow(
                    TaskInstanceWorkflow::run,
                    input,
                    task_options(task_workflow_id.clone(), logged.attempt),
                )
                .await
            {
                Ok(child) => match child.result().await {
                    Ok(outcome) => outcome,
                    Err(err) => TaskOutcome {
                        succeeded: false,
                        output: serde_json::Value::Null,
                        error: Some(
                            err.failure()
                                .map(root_message)
                                .unwrap_or_else(|| err.to_string()),
                        ),
                    },
                },
                // A retry: Temporal refuses the ID of a task that succeeded
                // (or still runs); an earlier attempt's result stands.
                Err(err) if is_already_started(&err) && logged.attempt > 1 => {
                    let earlier = bookkeep(
                        ctx,
                        ExecutionActivities::task_state,
                        TaskStateInput {
                            task_id: ids::task_instance_id(&task_workflow_id),
                            run_id,
                        },
                        false,
                    )
                    .await?;
                    if earlier.status == Some(TaskStatus::Succeeded) {
                        TaskOutcome {
                            succeeded: true,
                            output: earlier.output.unwrap_or(serde_json::Value::Null),
                            error: None,
                        }
                    } else {
                        TaskOutcome {
                            succeeded: false,
                            output: serde_json::Value::Null,
                            error: Some(format!(
                                "Temporal will not run {task_workflow_id} again: its last \
                                 execution is running or completed ({})",
                                earlier.status.map_or("no task row", |s| s.as_str())
                            )),
                        }
                    }
                }
                // Never re-spawn a task that an earlier execution started.
                Err(err) if is_already_started(&err) => TaskOutcome {
                    succeeded: false,
                    output: serde_json::Value::Null,
                    error: Some(
                        "task was already started by an earlier execution of this run".into(),
                    ),
                },
                Err(err) => return Err(err.into()),
            };
            if outcome.succeeded {
                succeeded += 1;
            } else if ctx.cancellation_token().is_cancelled() {
                // Cancelling the run cancelled the task's workflow too.
                cancelled_from = Some(index);
                break;
            } else {
                failed += 1;
                error = Some(format!(
                    "task {index} ({}) failed: {}",
                    task.task_type,
                    outcome.error.unwrap_or_default()
                ));
                // Tasks are ordered: later ones depend on earlier ones.
                break;
            }
        }
        if let Some(from) = cancelled_from {
            let reason = ctx.cancellation_token().reason();
            bookkeep(
                ctx,
                ExecutionActivities::finish_run,
                FinishRunInput {
                    run_id,
                    status: RunStatus::Cancelled,
                    error: Some(match reason {
                        Some(reason) if !reason.is_empty() => format!("cancelled: {reason}"),
                        _ => "cancelled".to_owned(),
                    }),
                    succeeded,
                    failed,
                    cancelled_tasks: logged.tasks[from..]
                        .iter()
                        .enumerate()
                        .map(|(i, task)| CancelledTask {
                            index: (from + i) as u32,
                            task_type: task.task_type.clone(),
                            name: task.name.clone(),
                        })
                        .collect(),
                },
                true,
            )
            .await?;
            return Err(WorkflowTermination::cancelled());
        }
        let status = if failed == 0 {
            RunStatus::Succeeded
        } else {
            RunStatus::Failed
        };
        bookkeep(
            ctx,
            ExecutionActivities::finish_run,
            FinishRunInput {
                run_id,
                status,
                error: error.clone(),
                succeeded,
                failed,
                cancelled_tasks: Vec::new(),
            },
            false,
        )
        .await?;
        if status == RunStatus::Failed && ctx.patched(FAILURES_FAIL) {
            return Err(failure(error.as_deref().unwrap_or("the run failed")));
        }
        Ok(RunSummary {
            run_id,
            status,
            error,
        })
    }
}

fn not_run(run_id: Uuid, status: RunStatus) -> RunSummary {
    RunSummary {
        run_id,
        status,
        error: None,
    }
}
