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
mod tests {
    use super::*;
    use serde_json::json;

    fn task_type(name: &str) -> TaskType {
        TaskType::parse(name).unwrap()
    }

    fn parse(
        kind: &str,
        config: Value,
        timeout: Option<&str>,
        retry: Option<Value>,
    ) -> Result<Task, Vec<FieldError>> {
        let Value::Object(config) = config else {
            panic!("config must be an object");
        };
        Task::parse(&task_type(kind), &config, timeout, retry.as_ref())
    }

    fn fields(result: Result<Task, Vec<FieldError>>) -> Vec<String> {
        result.unwrap_err().into_iter().map(|e| e.field).collect()
    }

    const HOOK: &str = "https://hooks.example.com/x";

    #[test]
    fn defaults_are_the_behaviour_before_policies() {
        let webhook = parse("webhook", json!({"url": HOOK}), None, None).unwrap();
        assert_eq!(
            webhook,
            Task::Webhook {
                config: WebhookConfig {
                    url: url::Url::parse(HOOK).unwrap(),
                    secret_ref: None,
                    timeout: None,
                },
                policy: TaskPolicy {
                    timeout: Duration::from_secs(10),
                    retry: Retry {
                        max_attempts: 5,
                        initial_interval: Duration::from_secs(1),
                        backoff: 2.0,
                        max_interval: Some(Duration::from_secs(30)),
                        non_retryable: NonRetryable::ClientErrors,
                    },
                },
            }
        );
        let external = parse(
            "charge-card",
            json!({"task_queue": "billing", "amount": 5}),
            None,
            None,
        )
        .unwrap();
        assert_eq!(
            external,
            Task::External {
                config: ExternalConfig {
                    activity_type: "charge-card".into(),
                    task_queue: "billing".into(),
                    settings: json!({"amount": 5}).as_object().cloned().unwrap(),
                },
                policy: TaskPolicy {
                    timeout: Duration::from_secs(300),
                    retry: Retry {
                        max_attempts: 3,
                        initial_interval: Duration::from_secs(1),
                        backoff: 2.0,
                        max_interval: None,
                        non_retryable: NonRetryable::ClientErrors,
                    },
                },
            }
        );
        let noop = parse("noop", json!({"note": "ignored"}), None, None).unwrap();
        assert_eq!(noop, Task::Noop);
        assert_eq!(noop.policy(), None);
    }

    #[test]
    fn webhook_config() {
        let task = parse(
            "webhook",
            json!({"url": HOOK, "secret_ref": "HOOK_SECRET", "timeout": "PT3S"}),
            None,
            None,
        )
        .unwrap();
        let Task::Webhook { config, policy } = task else {
            panic!("not a webhook: {task:?}");
        };
        assert_eq!(
            config,
            WebhookConfig {
                url: url::Url::parse(HOOK).unwrap(),
                secret_ref: Some("HOOK_SECRET".into()),
                timeout: Some(Duration::from_secs(3)),
            }
        );
        // `config.timeout` is the attempt timeout when the task sets none.
        assert_eq!(policy.timeout, Duration::from_secs(3));
        let null_secret = parse(
            "webhook",
            json!({"url": HOOK, "secret_ref": null}),
            None,
            None,
        )
        .unwrap();
        assert!(matches!(
            null_secret,
            Task::Webhook {
                config: WebhookConfig {
                    secret_ref: None,
                    ..
                },
                ..
            }
        ));
    }

    #[test]
    fn policies_override_the_defaults() {
        let task = parse(
            "webhook",
            json!({"url": HOOK}),
            Some("PT2S"),
            Some(
                json!({"max_attempts": 2, "initial_interval": "PT0.5S", "backoff": 1.5,
                        "max_interval": "PT4S", "non_retryable": [503, 409, 503]}),
            ),
        )
        .unwrap();
        let policy = task.policy().cloned().unwrap();
        assert_eq!(policy.timeout, Duration::from_secs(2));
        assert_eq!(
            policy.retry,
            Retry {
                max_attempts: 2,
                initial_interval: Duration::from_millis(500),
                backoff: 1.5,
                max_interval: Some(Duration::from_secs(4)),
                non_retryable: NonRetryable::Statuses([409, 503].into()),
            }
        );
        // Left-out fields keep their defaults; null is left out.
        let partial = parse(
            "webhook",
            json!({"url": HOOK}),
            None,
            Some(json!({"max_attempts": 1, "backoff": null})),
        )
        .unwrap()
        .policy()
        .cloned()
        .unwrap();
        assert_eq!(partial.retry.max_attempts, 1);
        assert_eq!(partial.retry.backoff, 2.0);
        assert_eq!(partial.retry.max_interval, Some(Duration::from_secs(30)));
        // An initial interval beyond the default maximum raises the maximum.
        let slow = parse(
            "webhook",
            json!({"url": HOOK}),
            None,
            Some(json!({"initial_interval": "PT1M"})),
        )
        .unwrap()
        .policy()
        .cloned()
        .unwrap();
        assert_eq!(slow.retry.max_interval, Some(Duration::from_secs(60)));
        // External tasks may run for up to a day per attempt.
        let long = parse("report", json!({"task_queue": "q"}), Some("PT2H"), None).unwrap();
        assert_eq!(long.policy().unwrap().timeout, Duration::from_secs(7_200));
    }

    #[test]
    fn bad_input_names_its_field() {
        let hook = || json!({"url": HOOK});
        // [task_type, config, timeout, retry, the fields named]; null is left out.
        let table = json!([
            ["webhook", {}, null, null, ["config.url"]],
            ["webhook", {"url": 5}, null, null, ["config.url"]],
            ["webhook", {"url": "ftp://x"}, null, null, ["config.url"]],
            ["webhook", {"url": "/relative"}, null, null, ["config.url"]],
            ["webhook", {"url": HOOK, "secret": "s"}, null, null, ["config.secret"]],
            ["webhook", {"url": HOOK, "method": "PUT"}, null, null, ["config.method"]],
            ["webhook", {"url": HOOK, "secret_ref": "lower"}, null, null, ["config.secret_ref"]],
            ["webhook", {"url": HOOK, "timeout": "PT0.5S"}, null, null, ["config.timeout"]],
            ["webhook", {"url": HOOK, "timeout": "PT6M"}, null, null, ["config.timeout"]],
            ["webhook", {"url": HOOK, "timeout": 10}, null, null, ["config.timeout"]],
            ["charge", {}, null, null, ["config.task_queue"]],
            ["charge", {"task_queue": " "}, null, null, ["config.task_queue"]],
            ["charge", {"task_queue": 7}, null, null, ["config.task_queue"]],
            ["webhook", hook(), "soon", null, ["timeout"]],
            ["webhook", hook(), "-PT1S", null, ["timeout"]],
            ["webhook", hook(), "PT0S", null, ["timeout"]],
            ["webhook", hook(), "PT10M", null, ["timeout"]],
            ["charge", {"task_queue": "q"}, "P2D", null, ["timeout"]],
            ["webhook", {"url": HOOK, "timeout": "PT5S"}, "PT5S", null, ["timeout"]],
            ["noop", {}, "PT5S", null, ["timeout"]],
            ["noop", {}, null, {"max_attempts": 2}, ["retry"]],
            ["webhook", hook(), null, 3, ["retry"]],
            ["webhook", hook(), null, {"max_attempts": 0}, ["retry.max_attempts"]],
            ["webhook", hook(), null, {"max_attempts": -1}, ["retry.max_attempts"]],
            ["webhook", hook(), null, {"max_attempts": 101}, ["retry.max_attempts"]],
            ["webhook", hook(), null, {"max_attempts": 2.5}, ["retry.max_attempts"]],
            ["webhook", hook(), null, {"max_attempts": "2"}, ["retry.max_attempts"]],
            ["webhook", hook(), null, {"initial_interval": "-PT1S"}, ["retry.initial_interval"]],
            ["webhook", hook(), null, {"initial_interval": "PT0S"}, ["retry.initial_interval"]],
            ["webhook", hook(), null, {"initial_interval": 1}, ["retry.initial_interval"]],
            ["webhook", hook(), null, {"initial_interval": "PT2H"}, ["retry.initial_interval"]],
            ["webhook", hook(), null, {"max_interval": "-PT5S"}, ["retry.max_interval"]],
            ["webhook", hook(), null, {"max_interval": "P2D"}, ["retry.max_interval"]],
            ["webhook", hook(), null, {"initial_interval": "PT10S", "max_interval": "PT5S"}, ["retry.max_interval"]],
            ["webhook", hook(), null, {"backoff": 0.5}, ["retry.backoff"]],
            ["webhook", hook(), null, {"backoff": 11}, ["retry.backoff"]],
            ["webhook", hook(), null, {"backoff": "2"}, ["retry.backoff"]],
            ["webhook", hook(), null, {"non_retryable": [200]}, ["retry.non_retryable"]],
            ["webhook", hook(), null, {"non_retryable": [600]}, ["retry.non_retryable"]],
            ["webhook", hook(), null, {"non_retryable": 503}, ["retry.non_retryable"]],
            ["webhook", hook(), null, {"non_retryable": ["503"]}, ["retry.non_retryable"]],
            ["webhook", hook(), null, {"non_retryable": (400..451).collect::<Vec<u16>>()}, ["retry.non_retryable"]],
            ["charge", {"task_queue": "q"}, null, {"non_retryable": [503]}, ["retry.non_retryable"]],
            ["webhook", hook(), null, {"attempts": 2}, ["retry.attempts"]],
            // Every problem at once, the config's and the policies'.
            ["webhook", {}, "x", {"max_attempts": 0, "backoff": 0},
             ["config.url", "timeout", "retry.max_attempts", "retry.backoff"]]
        ]);
        for case in table.as_array().unwrap() {
            let [kind, config, timeout, retry, expected] = case.as_array().unwrap().as_slice()
            else {
                panic!("bad row {case}");
            };
            let got = fields(parse(
                kind.as_str().unwrap(),
                config.clone(),
                timeout.as_str(),
                (!retry.is_null()).then(|| retry.clone()),
            ));
            assert_eq!(json!(got), *expected, "{case}");
        }
    }
}
