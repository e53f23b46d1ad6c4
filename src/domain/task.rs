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

/// A task, parsed: what it runs and how its attempts are bounded.
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    pub config: TaskConfig,
    /// `None` for `noop`, which makes no attempt.
    pub policy: Option<TaskPolicy>,
}

/// What a task runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskConfig {
    /// Succeeds at once. Its `config`, if any, is ignored.
    Noop,
    Webhook(WebhookConfig),
    External(ExternalConfig),
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
    /// Parses one task's `config`, `timeout` and `retry`. Errors name their
    /// field relative to the task: `config.url`, `timeout`,
    /// `retry.max_attempts` (prefix them with `tasks[i].`).
    pub fn parse(
        task_type: &TaskType,
        config: &Map<String, Value>,
        timeout: Option<&str>,
        retry: Option<&Value>,
    ) -> Result<Self, Vec<FieldError>> {
        let config = TaskConfig::parse(task_type, config);
        // The policies' own errors are reported alongside the config's.
        let policy = match &config {
            Ok(config) => TaskPolicy::parse(config, timeout, retry),
            Err(_) => parse_policy(task_type.kind(), None, timeout, retry),
        };
        match (config, policy) {
            (Ok(config), Ok(policy)) => Ok(Self { config, policy }),
            (config, policy) => {
                let mut errors = config.err().unwrap_or_default();
                errors.extend(policy.err().unwrap_or_default());
                Err(errors)
            }
        }
    }
}

fn is_env_var_name(text: &str) -> bool {
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

impl TaskConfig {
    /// Parses `config` for a task of `task_type`. Errors are at `config.*`.
    pub fn parse(
        task_type: &TaskType,
        config: &Map<String, Value>,
    ) -> Result<Self, Vec<FieldError>> {
        let mut errors = Errors(Vec::new());
        let parsed = match task_type.kind() {
            TaskKind::Noop => Some(Self::Noop),
            TaskKind::Webhook => parse_webhook(&mut errors, config).map(Self::Webhook),
            TaskKind::External => match config.get("task_queue") {
                Some(Value::String(q)) if !q.trim().is_empty() && q.len() <= 200 => {
                    let mut settings = config.clone();
                    settings.remove("task_queue");
                    Some(Self::External(ExternalConfig {
                        activity_type: task_type.as_str().to_owned(),
                        task_queue: q.clone(),
                        settings,
                    }))
                }
                Some(_) => {
                    errors.push(
                        "config.task_queue",
                        "must be a task queue name, 1 to 200 characters",
                    );
                    None
                }
                None => {
                    errors.push(
                        "config.task_queue",
                        "is required: the task queue whose worker implements this task type",
                    );
                    None
                }
            },
        };
        match parsed {
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
            webhook.policy,
            Some(TaskPolicy {
                timeout: Duration::from_secs(10),
                retry: Retry {
                    max_attempts: 5,
                    initial_interval: Duration::from_secs(1),
                    backoff: 2.0,
                    max_interval: Some(Duration::from_secs(30)),
                    non_retryable: NonRetryable::ClientErrors,
                },
            })
        );
        let external = parse(
            "charge-card",
            json!({"task_queue": "billing", "amount": 5}),
            None,
            None,
        )
        .unwrap();
        assert_eq!(
            external.policy,
            Some(TaskPolicy {
                timeout: Duration::from_secs(300),
                retry: Retry {
                    max_attempts: 3,
                    initial_interval: Duration::from_secs(1),
                    backoff: 2.0,
                    max_interval: None,
                    non_retryable: NonRetryable::ClientErrors,
                },
            })
        );
        assert_eq!(
            external.config,
            TaskConfig::External(ExternalConfig {
                activity_type: "charge-card".into(),
                task_queue: "billing".into(),
                settings: json!({"amount": 5}).as_object().cloned().unwrap(),
            })
        );
        let noop = parse("noop", json!({"note": "ignored"}), None, None).unwrap();
        assert_eq!(
            noop,
            Task {
                config: TaskConfig::Noop,
                policy: None
            }
        );
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
        assert_eq!(
            task.config,
            TaskConfig::Webhook(WebhookConfig {
                url: url::Url::parse(HOOK).unwrap(),
                secret_ref: Some("HOOK_SECRET".into()),
                timeout: Some(Duration::from_secs(3)),
            })
        );
        // `config.timeout` is the attempt timeout when the task sets none.
        assert_eq!(task.policy.unwrap().timeout, Duration::from_secs(3));
        let null_secret = parse(
            "webhook",
            json!({"url": HOOK, "secret_ref": null}),
            None,
            None,
        )
        .unwrap();
        assert!(matches!(
            null_secret.config,
            TaskConfig::Webhook(WebhookConfig {
                secret_ref: None,
                ..
            })
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
        let policy = task.policy.unwrap();
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
        .policy
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
        .policy
        .unwrap();
        assert_eq!(slow.retry.max_interval, Some(Duration::from_secs(60)));
        // External tasks may run for up to a day per attempt.
        let long = parse("report", json!({"task_queue": "q"}), Some("PT2H"), None).unwrap();
        assert_eq!(long.policy.unwrap().timeout, Duration::from_secs(7_200));
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
