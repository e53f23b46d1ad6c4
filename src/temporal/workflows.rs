//! Deterministic workflow code: no I/O, clocks, randomness or tokio here.
//! Everything with a side effect is an activity (activities.rs).

use std::time::Duration;

use chrono::{DateTime, Utc};
use temporalio_common::data_converters::RawValue;
use temporalio_common::data_converters::TemporalDeserializable;
use temporalio_common::error::ActivityExecutionError;
use temporalio_common::error::ApplicationFailure;
use temporalio_common::search_attributes::{SearchAttributeKey, Timestamp};
use temporalio_common::{ActivityDefinition, RetryPolicy, UntypedActivity};
use temporalio_macros::{workflow, workflow_methods};
use temporalio_sdk::workflows::select;
use temporalio_sdk::{
    ActivityOptions, ChildWorkflowOptions, ChildWorkflowStartError, LocalActivityOptions,
    ParentClosePolicy, StartChildWorkflowExecutionFailedCause, SyncWorkflowContext,
    WorkflowCancellationToken, WorkflowContext, WorkflowIdReusePolicy, WorkflowResult,
    WorkflowTermination,
};
use uuid::Uuid;

use super::activities::{ExecutionActivities, root_message};
use super::messages::*;
use super::translate::{LauncherInput, json_payload, launcher_workflow_id_prefix};
use crate::domain::FieldError;
use crate::domain::activity::TaskType;
use crate::domain::ids;
use crate::domain::run::{RunStatus, TaskStatus};
use crate::domain::task::{Retry, Task};

/// Temporal sets this on every scheduled start: the nominal, pre-jitter time.
const SCHEDULED_START: SearchAttributeKey<Timestamp> =
    SearchAttributeKey::datetime("TemporalScheduledStartTime");

pub const RUN_WORKFLOW_TYPE: &str = "RunActivityWorkflow";
pub const TASK_WORKFLOW_TYPE: &str = "TaskInstanceWorkflow";

/// How our own bookkeeping is retried: until the database answers (an
/// outage delays runs, it does not fail them).
fn bookkeeping_retry() -> RetryPolicy {
    RetryPolicy::builder()
        .initial_interval(Duration::from_millis(500))
        .maximum_interval(Duration::from_secs(10))
        .build()
}

/// How long one bookkeeping attempt may take.
const BOOKKEEPING_ATTEMPT: Duration = Duration::from_secs(30);

/// Options for our own bookkeeping activities: short, retried until the
/// database answers.
fn bookkeeping() -> ActivityOptions {
    ActivityOptions::with_start_to_close_timeout(BOOKKEEPING_ATTEMPT)
        .retry_policy(bookkeeping_retry())
        .build()
}

/// Bookkeeping after the workflow was cancelled: on a token of its own, or
/// it would inherit the cancellation and never run. Only a cancelled
/// execution schedules it, so histories without a cancel replay unchanged.
fn bookkeeping_after_cancel() -> ActivityOptions {
    let mut options = bookkeeping();
    options.cancellation_token = Some(WorkflowCancellationToken::new());
    options
}

/// Executions that reached this patch write their rows (the launcher's
/// `prepare_scheduled_run`, the run's `log_run` and `finish_run`, the task's
/// `start_task` and `finish_task`, a retry's `task_state`) as local
/// activities: the worker runs them inside the workflow task that asked,
/// and history keeps one marker instead of an activity task's three events,
/// its dispatch through the server and the workflow task that follows
/// (issue 15). They are the same idempotent upserts, retried the same way.
/// Histories from before the patch keep their activity tasks on replay.
const LOCAL_BOOKKEEPING: &str = "bookkeeping-as-local-activities";

/// A run's log is written even when a cancel came first (see
/// `RunActivityWorkflow::run`).
const LOG_SURVIVES_CANCEL: &str = "log-run-survives-cancel";

/// Runs one bookkeeping write: a local activity in executions under
/// [`LOCAL_BOOKKEEPING`], an activity task in those from before it.
/// `after_cancel` puts it on a cancellation token of its own (see
/// [`bookkeeping_after_cancel`]).
async fn bookkeep<W, AD>(
    ctx: &WorkflowContext<W>,
    activity: AD,
    input: AD::Input,
    after_cancel: bool,
) -> Result<AD::Output, ActivityExecutionError>
where
    AD: ActivityDefinition,
    AD::Output: TemporalDeserializable,
{
    if ctx.patched(LOCAL_BOOKKEEPING) {
        let options = LocalActivityOptions::builder()
            .start_to_close_timeout(BOOKKEEPING_ATTEMPT)
            .retry_policy(bookkeeping_retry())
            .maybe_cancellation_token(after_cancel.then(WorkflowCancellationToken::new))
            .build();
        ctx.execute_local_activity(activity, input, options).await
    } else {
        let options = if after_cancel {
            bookkeeping_after_cancel()
        } else {
            bookkeeping()
        };
        ctx.execute_activity(activity, input, options).await
    }
}

/// What Temporal allows a webhook attempt beyond its HTTP timeout, for the
/// bookkeeping around the request; the request's own timeout ends it first.
const WEBHOOK_ATTEMPT_GRACE: Duration = Duration::from_secs(5);

/// A task's retry settings as Temporal's activity retry policy.
fn retry_policy(retry: &Retry) -> RetryPolicy {
    RetryPolicy::builder()
        .initial_interval(retry.initial_interval)
        .backoff_coefficient(retry.backoff)
        .maybe_maximum_interval(retry.max_interval)
        .maximum_attempts(retry.max_attempts)
        .build()
}

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

/// Marks executions whose failures end their workflow as failed in
/// Temporal (a failed task's workflow, a failed run's workflow), so that a
/// retry may run their IDs again. Histories without it completed instead,
/// and keep replaying that way.
const FAILURES_FAIL: &str = "failures-fail-the-workflow";

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

/// The nominal time from a launcher's workflow ID, `launcher-{id}-{RFC3339}`,
/// for servers that do not set `TemporalScheduledStartTime`.
pub fn nominal_from_workflow_id(activity_id: Uuid, workflow_id: &str) -> Option<DateTime<Utc>> {
    let prefix = format!("{}-", launcher_workflow_id_prefix(activity_id));
    let suffix = workflow_id.strip_prefix(&prefix)?;
    DateTime::parse_from_rfc3339(suffix)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// Started by the schedule. Learns its nominal time, then runs
/// `RunActivityWorkflow` under the contract ID and waits for it, so the
/// schedule's overlap policy governs real runs.
#[workflow]
#[derive(Default)]
pub struct LaunchScheduledRunWorkflow;

#[workflow_methods]
impl LaunchScheduledRunWorkflow {
    #[run(name = "LaunchScheduledRunWorkflow")]
    pub async fn run(
        ctx: &mut WorkflowContext<Self>,
        input: LauncherInput,
    ) -> WorkflowResult<LaunchResult> {
        let from_attribute = ctx
            .search_attributes()
            .get(&SCHEDULED_START)
            .and_then(|ts| DateTime::from_timestamp(ts.seconds(), ts.nanos().max(0) as u32));
        let Some(scheduled_for) = from_attribute
            .or_else(|| nominal_from_workflow_id(input.activity_id, ctx.workflow_id()))
        else {
            return Ok(LaunchResult {
                workflow_id: None,
                outcome: "skipped".into(),
                detail: Some("not started by a schedule: no nominal time".into()),
            });
        };
        let prepared = bookkeep(
            ctx,
            ExecutionActivities::prepare_scheduled_run,
            PrepareScheduledRun {
                activity_id: input.activity_id,
                scheduled_for,
            },
            false,
        )
        .await?;
        let (Some(run), Some(workflow_id)) = (prepared.run, prepared.workflow_id) else {
            return Ok(LaunchResult {
                workflow_id: None,
                outcome: "skipped".into(),
                detail: prepared.reason,
            });
        };
        match ctx
            .start_child_workflow(
                RunActivityWorkflow::run,
                run,
                child_options(workflow_id.clone()),
            )
            .await
        {
            Ok(started) => {
                let detail = match started.result().await {
                    Ok(summary) => Some(summary.status.as_str().to_owned()),
                    Err(err) => Some(err.to_string()),
                };
                Ok(LaunchResult {
                    workflow_id: Some(workflow_id),
                    outcome: "started".into(),
                    detail,
                })
            }
            // Another fire (a retry, a backfill, a duplicate delivery) already
            // started this nominal time: at most one execution, by contract.
            Err(err) if is_already_started(&err) => Ok(LaunchResult {
                workflow_id: Some(workflow_id),
                outcome: "duplicate".into(),
                detail: None,
            }),
            Err(err) => Err(err.into()),
        }
    }
}

/// One execution of an activity for one trigger occurrence.
#[workflow]
#[derive(Default)]
pub struct RunActivityWorkflow {
    /// `flow_slot_free` signals received: a queued run asks for its slot
    /// again at once instead of at the end of its wait.
    slot_wakes: u32,
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

/// How long a queued run waits before it asks for a slot again, unless a
/// `flow_slot_free` signal wakes it first: from the first wait, doubling, at
/// most the last. Timers and signals, not a polling activity, so queued runs
/// hold no worker slot; the timer only covers slots freed without a signal
/// (a cancel or terminate through the API, a recovered slot).
const SLOT_WAITS: (Duration, Duration) = (Duration::from_secs(1), Duration::from_secs(30));

/// The shortest and longest wait, in milliseconds, of a run queued for its
/// rate limit before it asks again (the longest bounds a wait told by a
/// long `period`, so that a limit raised meanwhile is seen).
const RATE_WAITS: (u64, u64) = (10, 60_000);

/// Asks for the run's concurrency slot until it has one, or the run is not
/// to run. A cancellation while queued returns `Waiting`: the caller's task
/// loop then sees the cancellation before its first task and records it.
async fn wait_for_slot(
    ctx: &mut WorkflowContext<RunActivityWorkflow>,
    run_id: Uuid,
    activity_id: Uuid,
    (gate, rate): (Option<FlowGate>, Option<RateGate>),
) -> WorkflowResult<SlotGrant> {
    let mut wait = SLOT_WAITS.0;
    loop {
        let grant = match ctx
            .execute_activity(
                ExecutionActivities::acquire_slot,
                AcquireSlotInput {
                    run_id,
                    activity_id,
                    gate: gate.clone(),
                    rate: rate.clone(),
                },
                bookkeeping(),
            )
            .await
        {
            Ok(grant) => grant,
            // Cancelled while asking: whatever the request did, the run
            // ends `cancelled` (which frees a slot it may have got).
            Err(_) if ctx.cancellation_token().is_cancelled() => return Ok(SlotGrant::Waiting),
            Err(err) => return Err(err.into()),
        };
        match grant {
            SlotGrant::Waiting => {
                let seen = ctx.state(|s| s.slot_wakes);
                select! {
                    _ = ctx.timer(wait) => {}
                    _ = ctx.wait_condition(|s| s.slot_wakes > seen) => {}
                };
                wait = (wait * 2).min(SLOT_WAITS.1);
            }
            // The rate limit said when the window has room for this run: no
            // signal announces that, the timer does. (Only activity results
            // recorded since rate limits carry it, so older histories never
            // reach this arm.)
            SlotGrant::WaitFor { millis } => {
                // A cancel ends the wait at once (no run ending signals it).
                let token = ctx.cancellation_token();
                let wait = Duration::from_millis(millis.clamp(RATE_WAITS.0, RATE_WAITS.1));
                select! {
                    _ = ctx.timer(wait) => {}
                    _ = token.cancelled() => {}
                };
            }
            other => return Ok(other),
        }
        if ctx.cancellation_token().is_cancelled() {
            return Ok(SlotGrant::Waiting);
        }
    }
}

fn not_run(run_id: Uuid, status: RunStatus) -> RunSummary {
    RunSummary {
        run_id,
        status,
        error: None,
    }
}

/// One task of one run.
#[workflow]
#[derive(Default)]
pub struct TaskInstanceWorkflow;

#[workflow_methods]
impl TaskInstanceWorkflow {
    #[run(name = "TaskInstanceWorkflow")]
    pub async fn run(
        ctx: &mut WorkflowContext<Self>,
        input: TaskInput,
    ) -> WorkflowResult<TaskOutcome> {
        let workflow_id = ctx.workflow_id().to_owned();
        let task_id = ids::task_instance_id(&workflow_id);
        bookkeep(
            ctx,
            ExecutionActivities::start_task,
            StartTaskInput {
                task_id,
                run_id: input.run_id,
                workflow_id: workflow_id.clone(),
                task_type: input.task.task_type.clone(),
                index: input.index,
                name: input.task.name.clone(),
            },
            false,
        )
        .await?;
        let task_json = serde_json::json!({
            "id": task_id,
            "workflow_id": workflow_id,
            "task_type": input.task.task_type,
            "index": input.index,
            "name": input.task.name,
        });
        let spec = &input.task;
        let task = TaskType::parse(&spec.task_type)
            .map_err(|m| vec![FieldError::new("task_type", m)])
            .and_then(|task_type| {
                Task::parse(
                    &task_type,
                    &spec.config,
                    spec.timeout.as_deref(),
                    spec.retry.as_ref(),
                )
            });
        let result: Result<(serde_json::Value, u32), String> = match task {
            // Every stored definition parsed when it was written; this is a
            // definition that a later version of the rules refuses.
            Err(errors) => Err(format!(
                "the task's definition does not parse: {}",
                errors
                    .iter()
                    .map(|e| format!("{}: {}", e.field, e.message))
                    .collect::<Vec<_>>()
                    .join("; ")
            )),
            Ok(Task::Noop) => Ok((serde_json::json!({}), 1)),
            Ok(Task::Webhook {
                config: webhook,
                policy,
            }) => {
                let input = WebhookInput {
                    task_id,
                    run_id: input.run_id,
                    url: webhook.url.to_string(),
                    secret_ref: webhook.secret_ref,
                    timeout_ms: policy.timeout.as_millis() as u64,
                    non_retryable: policy.retry.non_retryable.to_list(),
                    body: serde_json::json!({"run": input.run, "task": task_json, "context": input.context}),
                };
                let options = ActivityOptions::with_start_to_close_timeout(
                    policy.timeout + WEBHOOK_ATTEMPT_GRACE,
                )
                .retry_policy(retry_policy(&policy.retry))
                .build();
                match ctx
                    .execute_activity(ExecutionActivities::webhook, input, options)
                    .await
                {
                    Ok(response) => Ok((
                        serde_json::json!({"status": response.status, "body": response.body}),
                        response.attempt,
                    )),
                    Err(err) => Err(err
                        .failure()
                        .map(root_message)
                        .unwrap_or_else(|| err.to_string())),
                }
            }
            Ok(Task::External {
                config: external,
                policy,
            }) => {
                let body = serde_json::json!({
                    "run": input.run, "task": task_json, "context": input.context, "config": external.settings,
                });
                let options = ActivityOptions::with_start_to_close_timeout(policy.timeout)
                    .task_queue(external.task_queue)
                    .retry_policy(retry_policy(&policy.retry))
                    .build();
                match ctx
                    .execute_activity(
                        UntypedActivity::new(&external.activity_type),
                        RawValue::new(vec![json_payload(&body)]),
                        options,
                    )
                    .await
                {
                    Ok(raw) => {
                        let output = raw
                            .payloads
                            .first()
                            .and_then(|p| serde_json::from_slice(&p.data).ok())
                            .unwrap_or(serde_json::Value::Null);
                        Ok((output, 1))
                    }
                    Err(err) => Err(err
                        .failure()
                        .map(root_message)
                        .unwrap_or_else(|| err.to_string())),
                }
            }
        };
        let outcome = match result {
            Ok((output, attempts)) => (
                TaskOutcome {
                    succeeded: true,
                    output,
                    error: None,
                },
                attempts,
            ),
            Err(error) => (
                TaskOutcome {
                    succeeded: false,
                    output: serde_json::Value::Null,
                    error: Some(error),
                },
                1,
            ),
        };
        // A task that finished before the cancellation reached it keeps its
        // result; one that was interrupted ends `cancelled`.
        let cancelled = !outcome.0.succeeded && ctx.cancellation_token().is_cancelled();
        bookkeep(
            ctx,
            ExecutionActivities::finish_task,
            FinishTaskInput {
                task_id,
                run_id: input.run_id,
                succeeded: outcome.0.succeeded,
                attempts: outcome.1,
                output: outcome.0.succeeded.then(|| outcome.0.output.clone()),
                error: outcome.0.error.clone(),
                cancelled,
            },
            cancelled,
        )
        .await?;
        if cancelled {
            return Err(WorkflowTermination::cancelled());
        }
        if !outcome.0.succeeded && ctx.patched(FAILURES_FAIL) {
            return Err(failure(
                outcome.0.error.as_deref().unwrap_or("the task failed"),
            ));
        }
        Ok(outcome.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Histories recorded before task policies replay into the same
    /// commands: the defaults give exactly the options the code gave then.
    #[test]
    fn default_policies_give_the_options_of_before() {
        let parse = |task_type: &str, config: serde_json::Value| {
            let config = config.as_object().cloned().unwrap_or_default();
            Task::parse(&TaskType::parse(task_type).unwrap(), &config, None, None)
                .unwrap()
                .policy()
                .cloned()
                .unwrap()
        };
        let webhook = parse("webhook", serde_json::json!({"url": "https://x.example/"}));
        assert_eq!(
            retry_policy(&webhook.retry),
            RetryPolicy::builder()
                .initial_interval(Duration::from_secs(1))
                .maximum_interval(Duration::from_secs(30))
                .maximum_attempts(5)
                .build()
        );
        assert_eq!(
            webhook.timeout + WEBHOOK_ATTEMPT_GRACE,
            Duration::from_millis(10_000 + 5_000)
        );
        let hook_with_timeout = parse(
            "webhook",
            serde_json::json!({"url": "https://x.example/", "timeout": "PT3S"}),
        );
        assert_eq!(hook_with_timeout.timeout, Duration::from_secs(3));
        let external = parse("charge", serde_json::json!({"task_queue": "q"}));
        assert_eq!(
            retry_policy(&external.retry),
            RetryPolicy::builder().maximum_attempts(3).build()
        );
        assert_eq!(external.timeout, Duration::from_secs(300));
    }

    #[test]
    fn nominal_time_from_the_appended_suffix() {
        let id = Uuid::from_u128(7);
        let wf = format!("launcher-{id}-2026-03-01T09:00:00Z");
        assert_eq!(
            nominal_from_workflow_id(id, &wf).map(|t| t.to_rfc3339()),
            Some("2026-03-01T09:00:00+00:00".into())
        );
        assert_eq!(nominal_from_workflow_id(id, "launcher-other"), None);
        // The ID the service gives a launcher it starts itself is the
        // schedule's, and the launcher reads the same time back from it.
        let at = DateTime::parse_from_rfc3339("2026-03-29T01:00:00Z")
            .map(|t| t.with_timezone(&Utc))
            .ok();
        let own = at.map(|t| super::super::translate::launcher_workflow_id(id, t));
        assert_eq!(
            own.as_deref(),
            Some(format!("launcher-{id}-2026-03-29T01:00:00Z").as_str())
        );
        assert_eq!(own.and_then(|wf| nominal_from_workflow_id(id, &wf)), at);
    }
}
