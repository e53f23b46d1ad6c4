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
        let [kind, config, timeout, retry, expected] = case.as_array().unwrap().as_slice() else {
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
