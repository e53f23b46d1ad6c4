//! Inbound events and their stable IDs (PRODUCT.md section 2).

use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};
use uuid::Uuid;

use super::run::{RunStatus, StartOutcome};

named_enum! {
    /// What routing one event to one subscribed activity did.
    pub enum DispatchOutcome ("dispatch outcome") {
        /// The run was started now.
        Started = "started",
        /// This event already ran (or is running) for this activity.
        Duplicate = "duplicate",
        /// Recorded, not yet started (Temporal unreachable): it will be
        /// started, exactly once, when Temporal answers again.
        Pending = "pending",
        /// Absorbed by `flow.debounce`: a later event of its key arrived
        /// within the period, and the run of the burst's last event took it
        /// (`absorbed_by_run_id`).
        Debounced = "debounced",
    }
}

named_enum! {
    /// Where a dispatch is: written before its run is started, completed after.
    pub enum DispatchState ("dispatch state") {
        /// Recorded; its run is not known to have started yet.
        Pending = "pending",
        /// Its run was started (or found already started).
        Completed = "completed",
    }
}

named_enum! {
    /// Where an event's ID came from.
    pub enum EventIdOrigin ("event ID origin") {
        /// The body's `event_id`.
        Client = "client",
        /// The `Idempotency-Key` header.
        IdempotencyKey = "idempotency_key",
        /// `sha256:` + hex of the canonical JSON of (source, event_type, occurred_at, payload).
        ContentDigest = "content_digest",
        /// A CloudEvent's (`source`, `id`): see `domain::cloudevent::event_id`.
        Cloudevent = "cloudevent",
    }
}

impl From<StartOutcome> for DispatchOutcome {
    fn from(outcome: StartOutcome) -> Self {
        match outcome {
            StartOutcome::Started => Self::Started,
            StartOutcome::Duplicate => Self::Duplicate,
        }
    }
}

/// A stable event ID. It becomes part of a workflow ID
/// (`activity-{activity_id}:{event_id}`), so it is limited to characters that
/// read unambiguously there.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EventId(String);

impl EventId {
    pub const MAX_LEN: usize = 200;

    pub fn parse(text: &str) -> Result<Self, String> {
        if text.is_empty() || text.len() > Self::MAX_LEN {
            return Err(format!("must be 1 to {} characters", Self::MAX_LEN));
        }
        if !text.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':' | '@' | '+' | '=')
        }) {
            return Err("may contain only letters, digits and _ - . : @ + =".into());
        }
        Ok(Self(text.to_owned()))
    }

    /// `sha256:` + hex of the canonical JSON of the content.
    pub fn digest(
        source: &str,
        event_type: &str,
        occurred_at: Option<DateTime<Utc>>,
        payload: &serde_json::Value,
    ) -> Self {
        let content = serde_json::json!({
            "event_type": event_type,
            "occurred_at": occurred_at.map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)),
            "payload": payload,
            "source": source,
        });
        let mut text = String::new();
        canonical_json(&content, &mut text);
        Self(format!(
            "sha256:{}",
            hex::encode(Sha256::digest(text.as_bytes()))
        ))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// An event's `source`: 1 to 200 characters, no control characters;
/// surrounding whitespace is dropped.
pub fn parse_source(text: &str) -> Result<String, String> {
    let source = text.trim();
    if source.is_empty() || source.chars().count() > 200 || source.chars().any(char::is_control) {
        return Err("must be 1 to 200 characters, no control characters".into());
    }
    Ok(source.to_owned())
}

/// Whether a JSON value holds a NUL character anywhere (in a key or a
/// string): PostgreSQL's `jsonb` cannot store one.
pub fn contains_nul(value: &serde_json::Value) -> bool {
    match value {
        serde_json::Value::String(s) => s.contains('\0'),
        serde_json::Value::Array(items) => items.iter().any(contains_nul),
        serde_json::Value::Object(map) => {
            map.iter().any(|(k, v)| k.contains('\0') || contains_nul(v))
        }
        _ => false,
    }
}

/// What an event is, apart from its ID: two deliveries under one ID must
/// agree on all of it, or the second is a conflicting re-delivery.
#[derive(Debug, Clone, Copy)]
pub struct Content<'a> {
    pub event_type: &'a str,
    pub source: &'a str,
    pub occurred_at: Option<DateTime<Utc>>,
    pub payload: &'a serde_json::Value,
}

impl Content<'_> {
    /// The fields in which `other` differs from `self` (empty: the same
    /// event). Payloads are compared as JSON values (key order and number
    /// spelling do not matter, as in PostgreSQL's `jsonb`).
    pub fn differences(&self, other: &Content<'_>) -> Vec<&'static str> {
        let mut fields = Vec::new();
        if self.event_type != other.event_type {
            fields.push("event_type");
        }
        if self.source != other.source {
            fields.push("source");
        }
        // PostgreSQL keeps microseconds: what it rounded away is no difference.
        let same_time = match (self.occurred_at, other.occurred_at) {
            (Some(a), Some(b)) => (a - b).num_nanoseconds().is_some_and(|n| n.abs() < 1000),
            (a, b) => a == b,
        };
        if !same_time {
            fields.push("occurred_at");
        }
        if !same_json(self.payload, other.payload) {
            fields.push("payload");
        }
        fields
    }
}

fn same_json(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value::{Array, Number, Object};
    match (a, b) {
        (Number(x), Number(y)) => {
            x == y || matches!((x.as_f64(), y.as_f64()), (Some(p), Some(q)) if p == q)
        }
        (Array(xs), Array(ys)) => {
            xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| same_json(x, y))
        }
        (Object(xs), Object(ys)) => {
            xs.len() == ys.len()
                && xs
                    .iter()
                    .all(|(k, x)| ys.get(k).is_some_and(|y| same_json(x, y)))
        }
        _ => a == b,
    }
}

/// JSON with object keys sorted and no insignificant whitespace.
pub fn canonical_json(value: &serde_json::Value, out: &mut String) {
    match value {
        serde_json::Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&serde_json::Value::String(key.clone()).to_string());
                out.push(':');
                canonical_json(&map[key], out);
            }
            out.push('}');
        }
        serde_json::Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical_json(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// An event as received and kept.
#[derive(Debug, Clone)]
pub struct EventRecord {
    pub event_id: String,
    pub event_id_origin: EventIdOrigin,
    pub event_type: String,
    pub source: String,
    pub occurred_at: Option<DateTime<Utc>>,
    pub payload: serde_json::Value,
    pub received_at: DateTime<Utc>,
}

/// One event's dispatch to one activity, with its run's status.
#[derive(Debug, Clone)]
pub struct Dispatch {
    pub event_id: String,
    pub activity_id: Uuid,
    pub workflow_id: String,
    pub run_id: Uuid,
    pub state: DispatchState,
    pub outcome: Option<DispatchOutcome>,
    pub attempts: i32,
    pub last_error: Option<String>,
    pub created_at: DateTime<Utc>,
    pub completed_at: Option<DateTime<Utc>>,
    /// The run's status, when its row exists.
    pub run_status: Option<RunStatus>,
    /// The definition version the dispatch runs.
    pub definition_version: i64,
    /// For a dispatch absorbed by `flow.debounce`: the run that took it.
    pub absorbed_by: Option<Uuid>,
}

/// A re-delivery of a known event ID with other content, as recorded.
#[derive(Debug, Clone)]
pub struct ConflictRecord {
    pub event_id: String,
    pub source_id: Option<Uuid>,
    pub seen_at: DateTime<Utc>,
    pub differs: Vec<String>,
    pub event_type: String,
    pub source: String,
    pub occurred_at: Option<DateTime<Utc>>,
    pub payload: serde_json::Value,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_form_sorts_keys_at_every_level() {
        let mut out = String::new();
        canonical_json(
            &json!({"b": 1, "a": {"d": [1, {"z": 0, "y": null}], "c": "x"}}),
            &mut out,
        );
        assert_eq!(out, r#"{"a":{"c":"x","d":[1,{"y":null,"z":0}]},"b":1}"#);
    }

    #[test]
    fn digest_is_stable_and_content_sensitive() {
        let a = EventId::digest("crm", "x.y", None, &json!({"k": 1, "j": 2}));
        let b = EventId::digest("crm", "x.y", None, &json!({"j": 2, "k": 1}));
        assert_eq!(a, b);
        assert!(a.as_str().starts_with("sha256:") && a.as_str().len() == 7 + 64);
        assert_ne!(
            a,
            EventId::digest("crm", "x.y", None, &json!({"k": 2, "j": 2}))
        );
        assert_ne!(
            a,
            EventId::digest("erp", "x.y", None, &json!({"k": 1, "j": 2}))
        );
        assert!(EventId::parse(a.as_str()).is_ok());
    }

    #[test]
    fn a_redelivery_differs_only_in_what_it_changes() {
        let at = |s: &str| Some(s.parse::<DateTime<Utc>>().unwrap_or_default());
        let payload = json!({"a": 1, "b": [1.5, {"c": null}]});
        let first = Content {
            event_type: "order.created",
            source: "crm",
            occurred_at: at("2026-03-01T09:00:00Z"),
            payload: &payload,
        };
        let reordered = json!({"b": [1.5, {"c": null}], "a": 1.0});
        let other = json!({"a": 2, "b": [1.5, {"c": null}]});
        let table: [(Content, &[&str]); 6] = [
            (first, &[]),
            (
                Content {
                    payload: &reordered,
                    ..first
                },
                &[],
            ),
            (
                Content {
                    event_type: "order.deleted",
                    ..first
                },
                &["event_type"],
            ),
            (
                Content {
                    source: "erp",
                    ..first
                },
                &["source"],
            ),
            (
                Content {
                    occurred_at: None,
                    ..first
                },
                &["occurred_at"],
            ),
            (
                Content {
                    payload: &other,
                    occurred_at: at("2026-03-01T09:00:01Z"),
                    ..first
                },
                &["occurred_at", "payload"],
            ),
        ];
        for (again, expected) in table {
            assert_eq!(first.differences(&again), expected, "{again:?}");
        }
    }

    #[test]
    fn sources_are_trimmed_and_bounded() {
        assert_eq!(parse_source(" crm ").as_deref(), Ok("crm"));
        for bad in ["", "  ", "a\nb", &"x".repeat(201)] {
            assert!(parse_source(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn ids_that_cannot_sit_in_a_workflow_id_are_refused() {
        assert!(EventId::parse("evt_abc123").is_ok());
        for bad in ["", "has space", "new\nline", "é", "a/b", &"x".repeat(201)] {
            assert!(EventId::parse(bad).is_err(), "{bad:?}");
        }
    }
}
