//! A task's policies: how long one attempt may take and how failed attempts
//! are retried, over defaults that are what the service did before tasks had
//! policies.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::{Map, Value};

use super::{Errors, within};
use crate::FieldError;
use crate::duration::IsoDuration;

/// Webhook attempts before policies: the HTTP request's timeout…
pub const WEBHOOK_TIMEOUT: Duration = Duration::from_secs(10);
/// …and its retries.
pub const WEBHOOK_MAX_ATTEMPTS: u32 = 5;
pub const WEBHOOK_INITIAL_INTERVAL: Duration = Duration::from_secs(1);
pub const WEBHOOK_MAX_INTERVAL: Duration = Duration::from_secs(30);
/// Other task types before policies.
pub const EXTERNAL_TIMEOUT: Duration = Duration::from_secs(300);
pub const EXTERNAL_MAX_ATTEMPTS: u32 = 3;
/// Temporal's defaults, which both kinds used for what they did not set.
pub const DEFAULT_INITIAL_INTERVAL: Duration = Duration::from_secs(1);
pub const DEFAULT_BACKOFF: f64 = 2.0;

/// Bounds of the policies (the OpenAPI schema states the same).
pub const MAX_ATTEMPTS: u32 = 100;
pub const MIN_TIMEOUT: Duration = Duration::from_secs(1);
pub const MAX_WEBHOOK_TIMEOUT: Duration = Duration::from_secs(300);
pub const MAX_EXTERNAL_TIMEOUT: Duration = Duration::from_secs(86_400);
pub const MIN_INTERVAL: Duration = Duration::from_millis(100);
pub const MAX_INITIAL_INTERVAL: Duration = Duration::from_secs(3_600);
pub const MAX_MAX_INTERVAL: Duration = Duration::from_secs(86_400);
pub const MAX_BACKOFF: f64 = 10.0;
pub const MAX_NON_RETRYABLE: usize = 50;

/// The keys of `retry`.
pub const RETRY_FIELDS: [&str; 5] = [
    "max_attempts",
    "initial_interval",
    "backoff",
    "max_interval",
    "non_retryable",
];

/// How long one attempt may take and how failed attempts are retried.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskPolicy {
    /// One attempt's limit. For a webhook it is the HTTP request's timeout
    /// (Temporal gives the attempt 5 s more for the bookkeeping around the
    /// request); for other types, the activity's start-to-close timeout.
    pub timeout: Duration,
    pub retry: Retry,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Retry {
    /// Attempts in all, the first included: 1 means no retry.
    pub max_attempts: u32,
    /// The wait before the first retry.
    pub initial_interval: Duration,
    /// Each wait is the previous one times this, at least 1.
    pub backoff: f64,
    /// The longest wait; `None` leaves Temporal's default (100 × the initial
    /// interval), which is what external tasks always had.
    pub max_interval: Option<Duration>,
    /// Webhook answers that end the task at once.
    pub non_retryable: NonRetryable,
}

/// Which HTTP statuses of a webhook are not retried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NonRetryable {
    /// The default: every 4xx except 408 (timeout) and 429 (rate limit),
    /// which will not get better by retrying.
    ClientErrors,
    /// Exactly these (`retry.non_retryable`), instead of the default.
    Statuses(BTreeSet<u16>),
}

impl NonRetryable {
    pub fn contains(&self, status: u16) -> bool {
        match self {
            Self::ClientErrors => (400..500).contains(&status) && status != 408 && status != 429,
            Self::Statuses(codes) => codes.contains(&status),
        }
    }

    /// The list a webhook attempt carries: `None` for the default.
    pub fn to_list(&self) -> Option<Vec<u16>> {
        match self {
            Self::ClientErrors => None,
            Self::Statuses(codes) => Some(codes.iter().copied().collect()),
        }
    }

    pub fn from_list(list: Option<Vec<u16>>) -> Self {
        match list {
            None => Self::ClientErrors,
            Some(codes) => Self::Statuses(codes.into_iter().collect()),
        }
    }
}

/// What makes the attempts a policy bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attempts {
    /// `config_timeout` is the webhook's `config.timeout`.
    Webhook {
        config_timeout: Option<Duration>,
    },
    External,
}

impl TaskPolicy {
    /// The policy of a task whose `timeout` and `retry` were left out.
    pub fn default_for(attempts: Attempts) -> Self {
        match attempts {
            Attempts::Webhook { config_timeout } => Self {
                timeout: config_timeout.unwrap_or(WEBHOOK_TIMEOUT),
                retry: Retry {
                    max_attempts: WEBHOOK_MAX_ATTEMPTS,
                    initial_interval: WEBHOOK_INITIAL_INTERVAL,
                    backoff: DEFAULT_BACKOFF,
                    max_interval: Some(WEBHOOK_MAX_INTERVAL),
                    non_retryable: NonRetryable::ClientErrors,
                },
            },
            Attempts::External => Self {
                timeout: EXTERNAL_TIMEOUT,
                retry: Retry {
                    max_attempts: EXTERNAL_MAX_ATTEMPTS,
                    initial_interval: DEFAULT_INITIAL_INTERVAL,
                    backoff: DEFAULT_BACKOFF,
                    max_interval: None,
                    non_retryable: NonRetryable::ClientErrors,
                },
            },
        }
    }

    /// Parses a task's `timeout` and `retry` over the defaults. Errors are
    /// at `timeout` and `retry.*`.
    pub fn parse(
        attempts: Attempts,
        timeout: Option<&str>,
        retry: Option<&Value>,
    ) -> Result<Self, Vec<FieldError>> {
        let mut errors = Errors(Vec::new());
        let mut policy = Self::default_for(attempts);
        let (webhook, max_timeout, config_timeout) = match attempts {
            Attempts::Webhook { config_timeout } => (true, MAX_WEBHOOK_TIMEOUT, config_timeout),
            Attempts::External => (false, MAX_EXTERNAL_TIMEOUT, None),
        };
        if let Some(text) = timeout {
            match strict_duration(text).and_then(|d| within(d, MIN_TIMEOUT, max_timeout)) {
                Ok(_) if config_timeout.is_some() => errors.push(
                    "timeout",
                    "is also set as config.timeout, its older spelling: keep one",
                ),
                Ok(d) => policy.timeout = d,
                Err(m) => errors.push("timeout", m),
            }
        }
        match retry {
            None | Some(Value::Null) => {}
            Some(Value::Object(fields)) => {
                parse_retry(&mut errors, &mut policy.retry, fields, webhook);
            }
            Some(_) => errors.push("retry", "must be an object"),
        }
        if errors.0.is_empty() {
            Ok(policy)
        } else {
            Err(errors.0)
        }
    }
}

/// A duration in the form the OpenAPI schema's pattern states,
/// `P[nD][T[nH][nM][n[.n]S]]`: what `IsoDuration` reads, without its
/// leniencies (surrounding blanks, designators repeated or out of order,
/// `PT5.S`) that a client checking the pattern refuses.
fn strict_duration(text: &str) -> Result<Duration, String> {
    if !is_strict_form(text) {
        return Err(format!(
            "`{text}` is not an ISO-8601 duration of the form P[nD][T[nH][nM][n[.n]S]] (e.g. PT10S)"
        ));
    }
    IsoDuration::parse(text).map(IsoDuration::as_std)
}

fn is_strict_form(text: &str) -> bool {
    let number = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let Some(rest) = text.strip_prefix('P').filter(|r| !r.is_empty()) else {
        return false;
    };
    let (date, time) = match rest.split_once('T') {
        Some((date, time)) => (date, Some(time)),
        None => (rest, None),
    };
    if !(date.is_empty() || date.strip_suffix('D').is_some_and(number)) {
        return false;
    }
    let Some(mut time) = time else {
        return true;
    };
    let mut components = 0;
    for (designator, fractional) in [('H', false), ('M', false), ('S', true)] {
        if let Some(at) = time.find(designator) {
            let value = &time[..at];
            let ok = match value.split_once(['.', ',']) {
                Some((whole, fraction)) => fractional && number(whole) && number(fraction),
                None => number(value),
            };
            if !ok {
                return false;
            }
            time = &time[at + 1..];
            components += 1;
        }
    }
    components > 0 && time.is_empty()
}

/// `noop` makes no attempt, so it takes neither `timeout` nor `retry`.
pub(super) fn no_policy(
    timeout: Option<&str>,
    retry: Option<&Value>,
) -> Result<(), Vec<FieldError>> {
    let mut errors = Errors(Vec::new());
    if timeout.is_some() {
        errors.push("timeout", "noop tasks make no attempt to time out");
    }
    if retry.is_some_and(|r| !r.is_null()) {
        errors.push("retry", "noop tasks make no attempt to retry");
    }
    if errors.0.is_empty() {
        Ok(())
    } else {
        Err(errors.0)
    }
}

fn parse_retry(errors: &mut Errors, retry: &mut Retry, fields: &Map<String, Value>, webhook: bool) {
    for key in fields.keys() {
        if !RETRY_FIELDS.contains(&key.as_str()) {
            errors.push(
                format!("retry.{key}"),
                format!("is not a retry setting ({})", RETRY_FIELDS.join(", ")),
            );
        }
    }
    let interval = |errors: &mut Errors, key: &str, max: Duration| -> Option<Duration> {
        let value = fields.get(key).filter(|v| !v.is_null())?;
        let parsed = match value {
            Value::String(text) => strict_duration(text),
            _ => Err("must be an ISO-8601 duration string (e.g. PT1S)".into()),
        };
        parsed
            .and_then(|d| within(d, MIN_INTERVAL, max))
            .map_err(|m| errors.push(format!("retry.{key}"), m))
            .ok()
    };
    if let Some(value) = fields.get("max_attempts").filter(|v| !v.is_null()) {
        match value.as_u64() {
            Some(n) if (1..=u64::from(MAX_ATTEMPTS)).contains(&n) => retry.max_attempts = n as u32,
            _ => errors.push(
                "retry.max_attempts",
                format!("must be a whole number from 1 to {MAX_ATTEMPTS} (attempts in all, the first included)"),
            ),
        }
    }
    let initial = interval(errors, "initial_interval", MAX_INITIAL_INTERVAL);
    if let Some(initial) = initial {
        retry.initial_interval = initial;
    }
    if let Some(value) = fields.get("backoff").filter(|v| !v.is_null()) {
        match value.as_f64() {
            Some(b) if (1.0..=MAX_BACKOFF).contains(&b) => retry.backoff = b,
            _ => errors.push(
                "retry.backoff",
                format!("must be a number from 1 to {MAX_BACKOFF} (the factor between waits)"),
            ),
        }
    }
    match interval(errors, "max_interval", MAX_MAX_INTERVAL) {
        Some(max) if max < retry.initial_interval => errors.push(
            "retry.max_interval",
            "must not be shorter than initial_interval",
        ),
        Some(max) => retry.max_interval = Some(max),
        // A longer initial interval than the default maximum raises the maximum with it.
        None => {
            if let Some(max) = retry.max_interval {
                retry.max_interval = Some(max.max(retry.initial_interval));
            }
        }
    }
    if let Some(value) = fields.get("non_retryable").filter(|v| !v.is_null()) {
        if !webhook {
            errors.push(
                "retry.non_retryable",
                "lists HTTP statuses: webhook tasks only",
            );
            return;
        }
        let codes: Option<BTreeSet<u16>> = value.as_array().and_then(|items| {
            items
                .iter()
                .map(|v| {
                    v.as_u64()
                        .filter(|c| (300..600).contains(c))
                        .map(|c| c as u16)
                })
                .collect()
        });
        match codes {
            Some(codes)
                if value
                    .as_array()
                    .is_some_and(|a| a.len() <= MAX_NON_RETRYABLE) =>
            {
                retry.non_retryable = NonRetryable::Statuses(codes);
            }
            _ => errors.push(
                "retry.non_retryable",
                format!(
                    "must be a list of at most {MAX_NON_RETRYABLE} HTTP statuses from 300 to 599"
                ),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_retryable_statuses() {
        let default = NonRetryable::ClientErrors;
        for (status, expected) in [
            (400, true),
            (404, true),
            (408, false),
            (429, false),
            (499, true),
            (500, false),
            (503, false),
            (302, false),
        ] {
            assert_eq!(default.contains(status), expected, "{status}");
        }
        assert_eq!(default.to_list(), None);
        assert_eq!(NonRetryable::from_list(None), default);
        let listed = NonRetryable::from_list(Some(vec![503]));
        assert!(listed.contains(503));
        assert!(!listed.contains(404), "a list replaces the default");
        assert_eq!(listed.to_list(), Some(vec![503]));
    }

    /// The schema's pattern, `^P(?!$)(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+([.,]\d+)?S)?)?$`.
    #[test]
    fn durations_in_the_form_of_the_schema() {
        for text in [
            "PT10S", "P1D", "P1DT2H", "PT1H30M", "PT0.5S", "PT1,5S", "PT2M3S", "P0D",
        ] {
            assert!(is_strict_form(text), "{text}");
        }
        for text in [
            "P", "PT", "P1DT", " PT5S", "PT5S ", "PT5.S", "PT.5S", "PT5S1M", "PT1S1S", "PT1.5M",
            "pt5s", "PT5", "-PT5S", "P1W", "PT+5S", "P1DT1H1D",
        ] {
            assert!(!is_strict_form(text), "{text}");
            assert!(strict_duration(text).is_err(), "{text}");
        }
    }
}
