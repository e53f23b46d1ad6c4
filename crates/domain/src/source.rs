//! Broker sources: where events are consumed from, parsed once.

use serde::{Deserialize, Serialize};

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::FieldError;
use super::message::RejectReason;

named_enum! {
    /// The kind of broker a source reads.
    pub enum SourceKind ("source kind") {
        /// A NATS JetStream stream, through a durable pull consumer.
        Nats = "nats",
        /// A RabbitMQ queue (AMQP 0-9-1).
        Rabbitmq = "rabbitmq",
    }
}

/// A NATS JetStream source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NatsConfig {
    /// Server URL, e.g. `nats://127.0.0.1:4222`; no password in it (use `secret_ref`).
    #[schema(
        example = "nats://127.0.0.1:4222",
        pattern = r"^(?:nats|tls|wss?)://(?:[A-Za-z0-9._~%!$&'()*+,;=-]+@)?(?:[A-Za-z0-9._~-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?(?:[/?#][^\s]*)?$"
    )]
    pub url: String,
    /// The stream to read (it must exist).
    #[schema(example = "ORDERS", pattern = r"^[A-Za-z0-9_-]{1,200}$")]
    pub stream: String,
    /// Subject filter of the consumer; all of the stream when absent.
    #[schema(example = "orders.>", pattern = r"^[^\s\x00-\x1f\x7f]{1,255}$")]
    #[serde(default)]
    pub subject: Option<String>,
    /// Durable consumer name, shared by every replica (JetStream spreads the
    /// messages between them); created when missing.
    #[schema(example = "acp-orders", pattern = r"^[A-Za-z0-9_-]{1,200}$")]
    pub durable: String,
}

/// A RabbitMQ source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RabbitmqConfig {
    /// AMQP URL, e.g. `amqp://guest@127.0.0.1:5672/%2f`; no password in it (use `secret_ref`).
    #[schema(
        example = "amqp://guest@127.0.0.1:5672/%2f",
        pattern = r"^amqps?://(?:[A-Za-z0-9._~%!$&'()*+,;=-]+@)?(?:[A-Za-z0-9._~-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?(?:[/?#][^\s]*)?$"
    )]
    pub url: String,
    /// The queue to consume (it must exist).
    #[schema(example = "orders", pattern = r"^[^\x00-\x1f\x7f]{1,255}$")]
    pub queue: String,
    /// Unacknowledged messages in flight per consumer, 1 to 1000 (default 50).
    #[serde(default = "default_prefetch")]
    #[schema(minimum = 1, maximum = 1000, default = 50)]
    pub prefetch: u16,
}

fn default_prefetch() -> u16 {
    50
}

/// A source's kind-specific settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceConfig {
    Nats(NatsConfig),
    Rabbitmq(RabbitmqConfig),
}

impl SourceConfig {
    pub fn kind(&self) -> SourceKind {
        match self {
            Self::Nats(_) => SourceKind::Nats,
            Self::Rabbitmq(_) => SourceKind::Rabbitmq,
        }
    }

    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Self::Nats(c) => serde_json::to_value(c),
            Self::Rabbitmq(c) => serde_json::to_value(c),
        }
        .unwrap_or_default()
    }

    /// Parses `config` for `kind`; field errors are named `config.*`.
    pub fn parse(kind: SourceKind, config: serde_json::Value) -> Result<Self, Vec<FieldError>> {
        let read_error = |e: serde_json::Error| {
            let text = e.to_string();
            let field = ["missing field `", "unknown field `"]
                .iter()
                .find_map(|p| text.strip_prefix(p))
                .and_then(|rest| rest.split('`').next())
                .map(|f| format!("config.{f}"))
                .unwrap_or_else(|| "config".to_owned());
            vec![FieldError::new(field, text)]
        };
        let mut errors = Vec::new();
        let parsed = match kind {
            SourceKind::Nats => {
                let c: NatsConfig = serde_json::from_value(config).map_err(read_error)?;
                check_url(&c.url, &["nats", "tls", "ws", "wss"], &mut errors);
                check_name("config.stream", &c.stream, &mut errors);
                check_name("config.durable", &c.durable, &mut errors);
                if let Some(subject) = &c.subject
                    && (subject.is_empty()
                        || subject.len() > 255
                        || subject
                            .chars()
                            .any(|ch| ch.is_whitespace() || ch.is_control()))
                {
                    errors.push(FieldError::new(
                        "config.subject",
                        "must be 1 to 255 characters without spaces",
                    ));
                }
                Self::Nats(c)
            }
            SourceKind::Rabbitmq => {
                let c: RabbitmqConfig = serde_json::from_value(config).map_err(read_error)?;
                check_url(&c.url, &["amqp", "amqps"], &mut errors);
                if c.queue.is_empty()
                    || c.queue.len() > 255
                    || c.queue.chars().any(char::is_control)
                {
                    errors.push(FieldError::new(
                        "config.queue",
                        "must be 1 to 255 characters, no control characters",
                    ));
                }
                if !(1..=1000).contains(&c.prefetch) {
                    errors.push(FieldError::new("config.prefetch", "must be 1 to 1000"));
                }
                Self::Rabbitmq(c)
            }
        };
        if errors.is_empty() {
            Ok(parsed)
        } else {
            Err(errors)
        }
    }
}

fn check_url(text: &str, schemes: &[&str], errors: &mut Vec<FieldError>) {
    match url::Url::parse(text) {
        Err(e) => errors.push(FieldError::new("config.url", format!("not a URL: {e}"))),
        Ok(url) if !schemes.contains(&url.scheme()) => errors.push(FieldError::new(
            "config.url",
            format!("scheme must be one of {}", schemes.join(", ")),
        )),
        Ok(url) if url.password().is_some() => errors.push(FieldError::new(
            "config.url",
            "must not contain a password: name an environment variable in secret_ref",
        )),
        Ok(url) if url.host_str().is_none_or(str::is_empty) => {
            errors.push(FieldError::new("config.url", "has no host"))
        }
        Ok(_) => {}
    }
}

/// JetStream stream and consumer names: no spaces, dots, `*`, `>`, path separators.
fn check_name(field: &str, text: &str, errors: &mut Vec<FieldError>) {
    if text.is_empty()
        || text.len() > 200
        || !text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
    {
        errors.push(FieldError::new(
            field,
            "must be 1 to 200 letters, digits, _ or -",
        ));
    }
}

/// `secret_ref`: the name of an environment variable of the consuming
/// process (its value is never stored).
pub fn parse_secret_ref(text: &str) -> Result<String, String> {
    let ok = !text.is_empty()
        && text.len() <= 128
        && text.starts_with(|c: char| c.is_ascii_uppercase() || c == '_')
        && text
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
    if ok {
        Ok(text.to_owned())
    } else {
        Err("must name an environment variable: A-Z, 0-9 and _, not starting with a digit".into())
    }
}

/// A source's name: 1 to 200 characters, no control characters.
pub fn parse_name(text: &str) -> Result<String, String> {
    super::event::parse_source(text)
}

/// A source as kept: its config as written, checked by [`SourceConfig::parse`] when used.
#[derive(Debug, Clone)]
pub struct SourceRecord {
    pub id: Uuid,
    /// The project it belongs to, whose event its messages become.
    pub project: crate::project::ProjectId,
    pub name: String,
    pub kind: SourceKind,
    pub config: serde_json::Value,
    pub secret_ref: Option<String>,
    pub enabled: bool,
    pub version: i64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// What a source's consumer last reported.
#[derive(Debug, Clone, Default)]
pub struct StatusRecord {
    pub connected: bool,
    pub pending: Option<i64>,
    pub last_error: Option<String>,
    pub last_error_at: Option<DateTime<Utc>>,
    pub accepted: i64,
    pub rejected: i64,
    pub conflicts: i64,
    pub reported_by: Option<String>,
    pub reported_at: Option<DateTime<Utc>>,
}

/// A message a source's consumer could not take, as kept.
#[derive(Debug, Clone)]
pub struct RejectionRecord {
    pub id: i64,
    pub source_id: Uuid,
    pub received_at: DateTime<Utc>,
    pub reason: RejectReason,
    pub detail: String,
    pub size: i32,
    pub raw: Vec<u8>,
    pub headers: serde_json::Value,
}

/// A report from a consumer: the state now, and counts since the last one.
#[derive(Debug, Clone, Default)]
pub struct StatusReport {
    pub connected: bool,
    pub pending: Option<i64>,
    /// A new error, if one happened since the last report.
    pub error: Option<String>,
    pub accepted: i64,
    pub rejected: i64,
    pub conflicts: i64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fields(kind: SourceKind, config: serde_json::Value) -> Vec<String> {
        SourceConfig::parse(kind, config)
            .err()
            .unwrap_or_default()
            .into_iter()
            .map(|e| e.field)
            .collect()
    }

    #[test]
    fn configs_are_checked_field_by_field() {
        let nats = json!({"url": "nats://127.0.0.1:4222", "stream": "S", "subject": "a.>", "durable": "d"});
        assert!(fields(SourceKind::Nats, nats).is_empty());
        let table: [(SourceKind, serde_json::Value, &[&str]); 8] = [
            (
                SourceKind::Nats,
                json!({"url": "nats://h", "stream": "S"}),
                &["config.durable"],
            ),
            (
                SourceKind::Nats,
                json!({"url": "http://h", "stream": "a b", "durable": "d.e"}),
                &["config.url", "config.stream", "config.durable"],
            ),
            (
                SourceKind::Nats,
                json!({"url": "nats://u:p@h", "stream": "S", "durable": "d"}),
                &["config.url"],
            ),
            (
                SourceKind::Nats,
                json!({"url": "nats://h", "stream": "S", "durable": "d", "queue": "q"}),
                &["config.queue"],
            ),
            (
                SourceKind::Rabbitmq,
                json!({"url": "amqp://guest@h:5672/%2f", "queue": "q"}),
                &[],
            ),
            (
                SourceKind::Rabbitmq,
                json!({"url": "amqp://guest:guest@h/%2f", "queue": "", "prefetch": 0}),
                &["config.url", "config.queue", "config.prefetch"],
            ),
            (
                SourceKind::Rabbitmq,
                json!({"url": "amqp://h", "queue": "q", "prefetch": 70000}),
                &["config"],
            ),
            (SourceKind::Rabbitmq, json!([]), &["config"]),
        ];
        for (kind, config, expected) in table {
            assert_eq!(fields(kind, config.clone()), expected, "{config}");
        }
    }

    #[test]
    fn secret_refs_name_environment_variables() {
        assert!(parse_secret_ref("NATS_TOKEN").is_ok());
        for bad in ["", "nats", "1X", "A-B", &"A".repeat(129)] {
            assert!(parse_secret_ref(bad).is_err(), "{bad:?}");
        }
    }
}
