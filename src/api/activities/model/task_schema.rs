//! A task as the document describes it: one schema per kind of `task_type`
//! (`noop`, `webhook`, any other), a `oneOf` whose branches each say what
//! their `config` holds, so that a client generator pairs a type with its
//! settings and a fuzzer builds tasks this API takes. The wire type stays
//! [`TaskBody`], checked field by field with an error naming each field.
//!
//! [`TaskBody`]: super::TaskBody
#![allow(dead_code)]

use utoipa::ToSchema;

use super::task::RetryBody;

/// One task of each run: `noop`, `webhook`, or an activity type
/// implemented by a worker on `config.task_queue`.
#[derive(ToSchema, serde::Deserialize)]
#[serde(untagged)]
pub enum TaskBodyDoc {
    Noop(NoopTask),
    Webhook(WebhookTask),
    External(ExternalTask),
}

/// The type of a noop task.
#[derive(ToSchema, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NoopTaskType {
    Noop,
}

/// The type of a webhook task.
#[derive(ToSchema, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WebhookTaskType {
    Webhook,
}

/// A task that does nothing: it succeeds at once.
#[derive(ToSchema, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoopTask {
    #[schema(inline)]
    task_type: NoopTaskType,
    name: Option<String>,
    /// Ignored.
    #[serde(default)]
    #[schema(value_type = Object)]
    config: serde_json::Map<String, serde_json::Value>,
}

/// `POST {run, task, context}` to `config.url`, signed with the secret
/// `config.secret_ref` names.
#[derive(ToSchema, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebhookTask {
    #[schema(inline)]
    task_type: WebhookTaskType,
    name: Option<String>,
    config: WebhookTaskConfig,
    /// How long one attempt may take (the HTTP request's timeout),
    /// ISO-8601, `PT1S` to `PT5M`, default `PT10S`.
    #[schema(
        pattern = r"^P(?!$)(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+([.,]\d+)?S)?)?$",
        example = "PT10S"
    )]
    timeout: Option<String>,
    /// How failed attempts are retried; left-out fields keep the defaults.
    #[schema(value_type = Option<RetryBody>)]
    retry: Option<serde_json::Value>,
}

/// A webhook task's settings.
#[derive(ToSchema, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebhookTaskConfig {
    /// Absolute http(s) URL with a host.
    #[schema(
        format = "uri",
        pattern = r"^https?://[^/?#\s]+",
        example = "https://hooks.example.com/acp"
    )]
    url: String,
    /// Name of a worker environment variable holding the HMAC secret.
    #[schema(pattern = r"^[A-Z_][A-Z0-9_]{0,127}$", example = "ACP_WEBHOOK_SECRET")]
    secret_ref: Option<String>,
    /// The older place for the task's `timeout`; set one of the two. (No
    /// example: an example request holding both would be refused.)
    #[schema(pattern = r"^P(?!$)(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+([.,]\d+)?S)?)?$")]
    timeout: Option<String>,
}

/// An activity of type `task_type`, run by another service's worker on
/// `config.task_queue`.
#[derive(ToSchema, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExternalTask {
    /// The activity type: 1 to 100 of letters, digits and `_ - .`, other
    /// than `noop` and `webhook`.
    #[schema(
        pattern = r"^(?!(?:noop|webhook)$)[A-Za-z0-9_.-]{1,100}$",
        example = "send_report"
    )]
    task_type: String,
    name: Option<String>,
    config: ExternalTaskConfig,
    /// How long one attempt may take (the activity's start-to-close
    /// timeout), ISO-8601, `PT1S` to `PT24H` (`P1D`), default `PT5M`.
    #[schema(
        pattern = r"^P(?!$)(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+([.,]\d+)?S)?)?$",
        example = "PT5M"
    )]
    timeout: Option<String>,
    /// How failed attempts are retried; left-out fields keep the defaults.
    #[schema(value_type = Option<RetryBody>)]
    retry: Option<serde_json::Value>,
}

/// The task queue; every other setting is handed to the activity.
#[derive(ToSchema, serde::Deserialize)]
pub struct ExternalTaskConfig {
    /// The task queue whose worker implements this task type, 1 to 200
    /// characters, not blank.
    #[schema(min_length = 1, max_length = 200, pattern = r"\S", example = "reports")]
    task_queue: String,
    #[serde(flatten)]
    settings: std::collections::HashMap<String, serde_json::Value>,
}
