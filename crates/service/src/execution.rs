//! Execution: the launcher's and the run's use cases, as the worker's
//! activities ask for them. The misfire rule applied to a fire, the run and
//! task rows written as a run goes, flow-controlled admission, a task's
//! webhook, and the runs counted as they end.
//!
//! Inputs and outputs are the activities' own message types
//! (`temporal::messages`): plain serde structs, the contract recorded in
//! workflow histories, so the activities only hand them through. Temporal
//! itself is not spoken here beyond the gateway's signals and cancels.

use std::sync::Arc;

use acp_domain::run::{RunStatus, TaskStatus};
use acp_store::runs::{NewRun, NewTask};
use acp_store::{ActivityStore, CalendarStore, FlowStore, RunStore, StoreError};
use acp_temporal::TemporalGateway;
use acp_temporal::messages::*;

mod flow;
mod launch;
mod webhook;

/// Why an execution step failed: `Final` ones are not worth another
/// attempt (Temporal must not retry them); the others may pass next time.
#[derive(Debug, thiserror::Error)]
pub enum ExecutionError {
    #[error("{0}")]
    Final(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Failed(#[from] anyhow::Error),
}

pub type ExecutionResult<T> = Result<T, ExecutionError>;

/// The execution use cases over the stores a run touches, the gateway (to
/// wake queued runs and cancel the oldest) and the webhook client.
pub struct Execution {
    activities: ActivityStore,
    calendars: CalendarStore,
    runs: RunStore,
    flow: FlowStore,
    gateway: Arc<TemporalGateway>,
    http: reqwest::Client,
    allow_internal_webhooks: bool,
    #[cfg(feature = "fault-injection")]
    faults: Arc<crate::faults::Faults>,
}

impl Execution {
    pub fn new(
        pool: sqlx::PgPool,
        gateway: Arc<TemporalGateway>,
        http: reqwest::Client,
        allow_internal_webhooks: bool,
    ) -> Self {
        Self {
            activities: ActivityStore::new(pool.clone()),
            calendars: CalendarStore::new(pool.clone()),
            runs: RunStore::new(pool.clone()),
            flow: FlowStore::new(pool),
            gateway,
            http,
            allow_internal_webhooks,
            #[cfg(feature = "fault-injection")]
            faults: Default::default(),
        }
    }

    /// Test-only fault hooks (the `fault-injection` feature).
    #[cfg(feature = "fault-injection")]
    pub fn with_faults(mut self, faults: Arc<crate::faults::Faults>) -> Self {
        self.faults = faults;
        self
    }

    /// Whether an injected failure hits this `log_run` (tests only).
    fn log_run_fails_after_insert(&self) -> bool {
        #[cfg(feature = "fault-injection")]
        if crate::faults::fire(&self.faults.fail_log_run_after_insert) {
            return true;
        }
        false
    }

    /// Upserts the run row and loads the definition version the run executes.
    pub async fn log_run(&self, input: LogRunInput) -> ExecutionResult<LoggedRun> {
        let run = &input.run;
        let definition = self
            .runs
            .definition_at(run.activity_id, run.definition_version)
            .await
            .map_err(|e| match e {
                StoreError::NotFound => ExecutionError::Final(format!(
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
            return Err(anyhow::anyhow!("injected fault: log_run failed after its insert").into());
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
    }

    /// Records a task's start on its row.
    pub async fn start_task(&self, input: StartTaskInput) -> ExecutionResult<()> {
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
    }

    /// What an earlier attempt of the run made of a task (a retry asks,
    /// for a task whose workflow ID Temporal will not run again).
    pub async fn task_state(&self, input: TaskStateInput) -> ExecutionResult<TaskState> {
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
    }

    /// Records how a task ended.
    pub async fn finish_task(&self, input: FinishTaskInput) -> ExecutionResult<()> {
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
    }

    /// Ends the run's row (a run still `running` by the workflow's account
    /// ends `failed`), wakes the runs queued behind it and counts it.
    pub async fn finish_run(&self, input: FinishRunInput) -> ExecutionResult<()> {
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
            crate::metrics::count_run(self.activities.pool(), activity_id, status).await;
        }
        Ok(())
    }
}
