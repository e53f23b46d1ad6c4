//! What one task is, parsed: what it runs (nothing, a webhook, an activity on
//! another service's task queue) and its policies (how long one attempt may
//! take, how failed attempts are retried).
//!
//! A definition is stored, and carried in workflow histories, as the JSON the
//! user wrote (`config`, `timeout`, `retry`). Each boundary parses it with
//! [`Task::parse`]: the API when a definition is written (its errors become
//! the 422 problem), the task workflow when it runs (parsing is pure, so the
//! workflow stays deterministic). What is left out takes the defaults in
//! [`policy`], which are exactly what the service did before policies existed, so
//! histories recorded before them replay into the same commands.

use std::time::Duration;

use serde_json::{Map, Value};

mod policy;

pub use policy::*;

use super::FieldError;
use super::activity::{TaskKind, TaskType};
use super::duration::IsoDuration;

/// A task, parsed: what it runs and, when it makes attempts, how they are
/// bounded.
#[derive(Debug, Clone, PartialEq)]
pub enum Task {
    /// Succeeds at once, making no attempt. Its `config`, if any, is ignored.
    Noop,
    Webhook {
        config: WebhookConfig,
        policy: TaskPolicy,
    },
    External {
        config: ExternalConfig,
        policy: TaskPolicy,
    },
}

/// `POST {run, task, context}` to `url`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookConfig {
    /// An absolute http(s) URL with a host.
    pub url: url::Url,
    /// The worker environment variable holding the HMAC secret.
    pub secret_ref: Option<String>,
    /// `config.timeout`: where the attempt timeout was set before tasks had a
    /// `timeout` of their own. Still accepted; the task's `timeout` is the
    /// same setting, and setting both is refused.
    pub timeout: Option<Duration>,
}

/// An activity of the task's type, run by another service's worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalConfig {
    /// The activity type: the task's `task_type`.
    pub activity_type: String,
    pub task_queue: String,
    /// The rest of `config`, handed to the activity.
    pub settings: Map<String, Value>,
}

/// Collects errors at paths relative to the task object.
struct Errors(Vec<FieldError>);

impl Errors {
    fn push(&mut self, field: impl Into<String>, message: impl Into<String>) {
        self.0.push(FieldError::new(field, message));
    }
}

impl Task {
    /// Parses one task's `config`, `timeout` and `retry`, reporting every
    /// problem at once. Errors name their field relative to the task:
    /// `config.url`, `timeout`, `retry.max_attempts` (the API prefixes them
    /// with `tasks[i].`).
    pub fn parse(
        task_type: &TaskType,
        config: &Map<String, Value>,
        timeout: Option<&str>,
        retry: Option<&Value>,
    ) -> Result<Self, Vec<FieldError>> {
        match task_type.kind() {
            TaskKind::Noop => no_policy(timeout, retry).map(|()| Self::Noop),
            TaskKind::Webhook => {
                let config = WebhookConfig::parse(config);
                let config_timeout = config.as_ref().ok().and_then(|c| c.timeout);
                let policy =
                    TaskPolicy::parse(Attempts::Webhook { config_timeout }, timeout, retry);
                both(config, policy).map(|(config, policy)| Self::Webhook { config, policy })
            }
            TaskKind::External => {
                let config = ExternalConfig::parse(task_type, config);
                let policy = TaskPolicy::parse(Attempts::External, timeout, retry);
                both(config, policy).map(|(config, policy)| Self::External { config, policy })
            }
        }
    }

    /// The bounds of its attempts; `None` for `noop`, which makes none.
    pub fn policy(&self) -> Option<&TaskPolicy> {
        match self {
            Self::Noop => None,
            Self::Webhook { policy, .. } | Self::External { policy, .. } => Some(policy),
        }
    }
}

/// Both values, or the errors of either and both.
fn both<A, B>(
    a: Result<A, Vec<FieldError>>,
    b: Result<B, Vec<FieldError>>,
) -> Result<(A, B), Vec<FieldError>> {
    match (a, b) {
        (Ok(a), Ok(b)) => Ok((a, b)),
        (a, b) => {
            let mut errors = a.err().unwrap_or_default();
            errors.extend(b.err().unwrap_or_default());
            Err(errors)
        }
    }
}

/// A `secret_ref`: the name of an environment variable of the worker
/// (upper case, digits and `_`, not starting with a digit, at most 128).
pub fn is_env_var_name(text: &str) -> bool {
    let mut chars = text.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_uppercase() || c == '_')
        && chars.all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        && text.len() <= 128
}

fn parse_duration(value: &Value) -> Result<Duration, String> {
    match value {
        Value::String(text) => IsoDuration::parse(text).map(IsoDuration::as_std),
        _ => Err("must be an ISO-8601 duration string (e.g. PT10S)".into()),
    }
}

fn within(value: Duration, min: Duration, max: Duration) -> Result<Duration, String> {
    if value < min || value > max {
        Err(format!(
            "must be from {} to {}",
            IsoDuration::from_std(min),
            IsoDuration::from_std(max)
        ))
    } else {
        Ok(value)
    }
}

impl ExternalConfig {
    /// Parses the `config` of a task of another type. Errors are at `config.*`.
    pub fn parse(
        task_type: &TaskType,
        config: &Map<String, Value>,
    ) -> Result<Self, Vec<FieldError>> {
        let message = match config.get("task_queue") {
            Some(Value::String(q)) if !q.trim().is_empty() && q.len() <= 200 => {
                let mut settings = config.clone();
                settings.remove("task_queue");
                return Ok(Self {
                    activity_type: task_type.as_str().to_owned(),
                    task_queue: q.clone(),
                    settings,
                });
            }
            Some(_) => "must be a task queue name, 1 to 200 characters",
            None => "is required: the task queue whose worker implements this task type",
        };
        Err(vec![FieldError::new("config.task_queue", message)])
    }
}

impl WebhookConfig {
    /// Parses a webhook task's `config`. Errors are at `config.*`.
    pub fn parse(config: &Map<String, Value>) -> Result<Self, Vec<FieldError>> {
        let mut errors = Errors(Vec::new());
        match parse_webhook(&mut errors, config) {
            Some(parsed) if errors.0.is_empty() => Ok(parsed),
            _ => Err(errors.0),
        }
    }
}

fn parse_webhook(errors: &mut Errors, config: &Map<String, Value>) -> Option<WebhookConfig> {
    for key in config.keys() {
        match key.as_str() {
            "url" | "secret_ref" | "timeout" => {}
            "secret" => errors.push(
                "config.secret",
                "secrets are never stored; put the secret in a worker environment variable and name it in `secret_ref`",
            ),
            other => errors.push(
                format!("config.{other}"),
                "is not a webhook setting (url, secret_ref, timeout)",
            ),
        }
    }
    let url = match config.get("url") {
        Some(Value::String(text)) => match url::Url::parse(text) {
            Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => Some(u),
            _ => {
                errors.push("config.url", "must be an absolute http(s) URL");
                None
            }
        },
        Some(_) => {
            errors.push("config.url", "must be a string");
            None
        }
        None => {
            errors.push("config.url", "is required for webhook tasks");
            None
        }
    };
    let secret_ref = match config.get("secret_ref") {
        None | Some(Value::Null) => None,
        Some(Value::String(name)) if is_env_var_name(name) => Some(name.clone()),
        Some(_) => {
            errors.push(
                "config.secret_ref",
                "must name an environment variable (A-Z, 0-9, _)",
            );
            None
        }
    };
    let timeout = match config.get("timeout") {
        None | Some(Value::Null) => None,
        Some(value) => {
            match parse_duration(value).and_then(|d| within(d, MIN_TIMEOUT, MAX_WEBHOOK_TIMEOUT)) {
                Ok(d) => Some(d),
                Err(m) => {
                    errors.push("config.timeout", m);
                    None
                }
            }
        }
    };
    Some(WebhookConfig {
        url: url?,
        secret_ref,
        timeout,
    })
}

#[cfg(test)]
mod tests;
