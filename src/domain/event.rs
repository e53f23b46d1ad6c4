//! Inbound events and their stable IDs (PRODUCT.md section 2).

use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};

use super::run::StartOutcome;

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
    fn ids_that_cannot_sit_in_a_workflow_id_are_refused() {
        assert!(EventId::parse("evt_abc123").is_ok());
        for bad in ["", "has space", "new\nline", "é", "a/b", &"x".repeat(201)] {
            assert!(EventId::parse(bad).is_err(), "{bad:?}");
        }
    }
}
