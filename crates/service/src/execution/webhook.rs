//! A task's webhook: the POST of `{run, task, context}`, signed when the
//! task names a secret, and what its answer means for another attempt.

use std::time::Duration;

use super::{Execution, ExecutionError, ExecutionResult};
use acp_domain::duration::IsoDuration;
use acp_domain::task::NonRetryable;
use acp_temporal::messages::*;
use acp_temporal::webhook;

impl Execution {
    /// POSTs the task's body as attempt `attempt` (recorded on the task's
    /// row first). A status the task does not retry, a bad URL or target,
    /// or a missing secret fail for good; other failures may pass next time.
    pub async fn call_webhook(
        &self,
        input: WebhookInput,
        attempt: u32,
    ) -> ExecutionResult<WebhookResponse> {
        self.runs
            .record_attempt(input.task_id, attempt as i32)
            .await?;
        let url = url::Url::parse(&input.url)
            .map_err(|e| ExecutionError::Final(format!("bad webhook URL: {e}")))?;
        webhook::check_target(&url, self.allow_internal_webhooks)
            .await
            .map_err(ExecutionError::Final)?;
        let body = serde_json::to_vec(&input.body).map_err(anyhow::Error::from)?;
        let request = self
            .http
            .post(url)
            .timeout(Duration::from_millis(input.timeout_ms))
            .header("content-type", "application/json")
            .header("x-acp-task-id", input.task_id.to_string());
        let request = webhook::signed(request, input.secret_ref.as_deref(), &body)
            .map_err(ExecutionError::Final)?;
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
            Err(ExecutionError::Final(message))
        } else {
            Err(anyhow::anyhow!(message).into())
        }
    }
}
