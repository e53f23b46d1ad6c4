//! Workflow activities: every side effect of execution lives here.

use std::sync::Arc;
use std::time::Duration;

use temporalio_macros::activities;
use temporalio_sdk::activities::{ActivityContext, ActivityError};

use super::messages::*;
use super::webhook;
use crate::domain::duration::IsoDuration;
use crate::domain::run::{RunStatus, TaskStatus};
use crate::domain::task::NonRetryable;
use crate::store::runs::{NewRun, NewTask};
use crate::store::{ActivityStore, FlowStore, RunStore};

mod attempt;
mod flow;
mod launch;

pub use attempt::root_message;
use attempt::{activity_span, non_retryable, traced};

pub struct ExecutionActivities {
    pub activities: ActivityStore,
    pub runs: RunStore,
    pub flow: FlowStore,
    /// To wake queued runs when a slot frees.
    pub gateway: Arc<super::TemporalGateway>,
    pub http: reqwest::Client,
    pub allow_internal_webhooks: bool,
    #[cfg(feature = "fault-injection")]
    pub faults: Arc<crate::faults::Faults>,
}

impl ExecutionActivities {
    /// Whether an injected failure hits this `log_run` (tests only).
    fn log_run_fails_after_insert(&self) -> bool {
        #[cfg(feature = "fault-injection")]
        if crate::faults::fire(&self.faults.fail_log_run_after_insert) {
            return true;
        }
        false
    }
}

#[activities]
impl ExecutionActivities {
    /// What to run for one nominal time of a schedule: applies the misfire
    /// rule, and records the fires that do not run as `skipped` runs.
    #[activity(name = "prepare_scheduled_run")]
    pub async fn prepare_scheduled_run(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: PrepareScheduledRun,
    ) -> Result<Prepared, ActivityError> {
        let attempt = activity_span(&ctx, None);
        attempt
            .span
            .record("activity_id", tracing::field::display(input.activity_id));
        traced(attempt, self.decide_scheduled_run(input)).await
    }

    /// Upserts the run row and loads the definition version the run executes.
    #[activity(name = "log_run")]
    pub async fn log_run(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: LogRunInput,
    ) -> Result<LoggedRun, ActivityError> {
        let attempt = activity_span(&ctx, Some(input.run_id));
        traced(attempt, async move {
            let run = &input.run;
            let definition = self
                .runs
                .definition_at(run.activity_id, run.definition_version)
                .await
                .map_err(|e| match e {
                    crate::store::StoreError::NotFound => non_retryable(format!(
                        "activity {} has no version {}",
                        run.activity_id, run.definition_version
                    )),
                    other => other.into(),
                })?;
            let run_json = serde_json::json!({
                "run_id": input.run_id,
                "workflow_id": input.workflow_id,
                "activity_id": run.activity_id,
                "activity_name": definition.name,
                "trigger_type": run.trigger.as_str(),
                "scheduled_for": run.scheduled_for,
                "definition_version": run.definition_version,
            });
            let context = serde_json::json!({
                "window": {"start": run.window_start, "end": run.window_end},
                "event": run.event,
            });
            let gate = definition
                .flow
                .as_ref()
                .and_then(|f| f.concurrency.as_ref())
                .map(|c| FlowGate {
                    key: c.key_of(run.event.as_ref()),
                    limit: c.limit,
                    on_limit: c.on_limit,
                });
            let rate = definition
                .flow
                .as_ref()
                .and_then(|f| f.rate_limit.as_ref())
                .map(|r| RateGate {
                    key: r.key_of(run.event.as_ref()),
                    limit: r.limit,
                    period_ms: r.period.as_std().as_millis().min(u128::from(u64::MAX)) as u64,
                    on_limit: r.on_limit,
                });
            self.runs
                .insert_run(&NewRun {
                    run_id: input.run_id,
                    activity_id: run.activity_id,
                    workflow_id: &input.workflow_id,
                    trigger: run.trigger,
                    scheduled_for: run.scheduled_for,
                    event_id: run.event_id.as_deref(),
                    window_start: run.window_start,
                    window_end: run.window_end,
                    definition_version: run.definition_version,
                    context: &context,
                    tasks_total: definition.tasks.len() as i32,
                    queued: gate.is_some() || rate.is_some(),
                })
                .await?;
            let attempt = self.runs.current_attempt(input.run_id).await?;
            if self.log_run_fails_after_insert() {
                return Err(
                    anyhow::anyhow!("injected fault: log_run failed after its insert").into(),
                );
            }
            Ok(LoggedRun {
                tasks: definition
                    .tasks
                    .into_iter()
                    .map(|t| TaskSpecMessage {
                        task_type: t.task_type.as_str().to_owned(),
                        name: t.name,
                        config: t.config,
                        timeout: t.timeout,
                        retry: t.retry,
                    })
                    .collect(),
                run: run_json,
                context,
                attempt: attempt.max(1) as u32,
                gate,
                rate,
            })
        })
        .await
    }

    /// Asks for the run's concurrency slot (`store::flow` says why the
    /// limit is exact). Idempotent: a retry after a grant finds the slot.
    #[activity(name = "acquire_slot")]
    pub async fn acquire_slot(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: AcquireSlotInput,
    ) -> Result<SlotGrant, ActivityError> {
        let attempt = activity_span(&ctx, Some(input.run_id));
        traced(attempt, self.grant_slot(input)).await
    }

    #[activity(name = "start_task")]
    pub async fn start_task(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: StartTaskInput,
    ) -> Result<(), ActivityError> {
        let attempt = activity_span(&ctx, Some(input.run_id));
        traced(attempt, async move {
            self.runs
                .start_task(
                    input.task_id,
                    input.run_id,
                    &input.workflow_id,
                    &input.task_type,
                    input.index as i32,
                    input.name.as_deref(),
                )
                .await?;
            Ok(())
        })
        .await
    }

    /// POSTs `{run, task, context}`; Temporal retries it on failure.
    #[activity(name = "webhook")]
    pub async fn webhook(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: WebhookInput,
    ) -> Result<WebhookResponse, ActivityError> {
        let attempt = activity_span(&ctx, Some(input.run_id));
        traced(attempt, async move {
            let attempt = ctx.info().attempt;
            self.runs
                .record_attempt(input.task_id, attempt as i32)
                .await?;
            let url = url::Url::parse(&input.url)
                .map_err(|e| non_retryable(format!("bad webhook URL: {e}")))?;
            webhook::check_target(&url, self.allow_internal_webhooks)
                .await
                .map_err(non_retryable)?;
            let body = serde_json::to_vec(&input.body)?;
            let mut request = self
                .http
                .post(url)
                .timeout(Duration::from_millis(input.timeout_ms))
                .header("content-type", "application/json")
                .header("x-acp-task-id", input.task_id.to_string());
            if let Some(name) = &input.secret_ref {
                let secret = std::env::var(name).map_err(|_| {
                    non_retryable(format!(
                        "secret_ref {name} is not set in the worker's environment"
                    ))
                })?;
                request = request.header(
                    webhook::SIGNATURE_HEADER,
                    webhook::sign(secret.as_bytes(), &body),
                );
            }
            let response = request.body(body).send().await.map_err(|e| {
                if e.is_timeout() {
                    let timeout = IsoDuration::from_std(Duration::from_millis(input.timeout_ms));
                    anyhow::anyhow!("webhook did not answer within {timeout}, the task's timeout")
                } else {
                    anyhow::anyhow!("webhook request failed: {e}")
                }
            })?;
            let status = response.status();
            let text = response.text().await.unwrap_or_default();
            let body = serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text));
            if status.is_success() {
                return Ok(WebhookResponse {
                    status: status.as_u16(),
                    body,
                    attempt,
                });
            }
            let message = format!("webhook answered {status}");
            if NonRetryable::from_list(input.non_retryable).contains(status.as_u16()) {
                Err(non_retryable(message))
            } else {
                Err(anyhow::anyhow!(message).into())
            }
        })
        .await
    }

    /// What an earlier attempt of the run made of a task (a retry asks,
    /// for a task whose workflow ID Temporal will not run again).
    #[activity(name = "task_state")]
    pub async fn task_state(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: TaskStateInput,
    ) -> Result<TaskState, ActivityError> {
        let attempt = activity_span(&ctx, Some(input.run_id));
        traced(attempt, async move {
            let state = self.runs.task_state(input.task_id).await?;
            Ok(match state {
                Some((status, output)) => TaskState {
                    status: Some(status),
                    output,
                },
                None => TaskState {
                    status: None,
                    output: None,
                },
            })
        })
        .await
    }

    #[activity(name = "finish_task")]
    pub async fn finish_task(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: FinishTaskInput,
    ) -> Result<(), ActivityError> {
        let attempt = activity_span(&ctx, Some(input.run_id));
        traced(attempt, async move {
            let status = if input.succeeded {
                TaskStatus::Succeeded
            } else if input.cancelled {
                TaskStatus::Cancelled
            } else {
                TaskStatus::Failed
            };
            self.runs
                .finish_task(
                    input.task_id,
                    status,
                    input.attempts as i32,
                    input.output.as_ref(),
                    input.error.as_deref(),
                )
                .await?;
            Ok(())
        })
        .await
    }

    #[activity(name = "finish_run")]
    pub async fn finish_run(
        self: Arc<Self>,
        ctx: ActivityContext,
        input: FinishRunInput,
    ) -> Result<(), ActivityError> {
        let attempt = activity_span(&ctx, Some(input.run_id));
        traced(attempt, async move {
            let status = match input.status {
                RunStatus::Running => RunStatus::Failed,
                other => other,
            };
            if !input.cancelled_tasks.is_empty() {
                let tasks: Vec<NewTask> = input
                    .cancelled_tasks
                    .iter()
                    .map(|t| NewTask::of_run(input.run_id, t.index, &t.task_type, t.name.clone()))
                    .collect();
                self.runs.cancel_tasks(input.run_id, &tasks).await?;
            }
            let ended = self
                .runs
                .finish_run(
                    input.run_id,
                    status,
                    input.error.as_deref(),
                    input.succeeded as i32,
                    input.failed as i32,
                )
                .await?;
            if ended.is_some() {
                self.wake_queue(input.run_id).await;
            }
            if let Some((activity_id, status)) = ended {
                tracing::info!(%activity_id, status = status.as_str(), "run finished");
                crate::metrics::RUNS
                    .with_label_values(&[
                        &crate::metrics::activity_label(&activity_id),
                        status.as_str(),
                    ])
                    .inc();
            }
            Ok(())
        })
        .await
    }
}
