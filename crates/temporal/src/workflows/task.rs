//! `TaskInstanceWorkflow`: one task of one run, as a webhook call or an
//! activity on another service's task queue, under the task's own timeout
//! and retry policy.

use std::time::Duration;

use temporalio_common::RetryPolicy;
use temporalio_common::UntypedActivity;
use temporalio_common::data_converters::RawValue;
use temporalio_macros::{workflow, workflow_methods};
use temporalio_sdk::{ActivityOptions, WorkflowContext, WorkflowResult, WorkflowTermination};

use super::bookkeeping::bookkeep;
use super::failure;
use super::patches::FAILURES_FAIL;
use crate::activities::{ExecutionActivities, root_message};
use crate::messages::*;
use crate::translate::json_payload;
use acp_domain::FieldError;
use acp_domain::activity::TaskType;
use acp_domain::ids;
use acp_domain::task::{Retry, Task};

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
}
