//! A broker message → an event, or the reason it is poison. Pure: the
//! consumers hand over headers and bytes and act on the answer.
//!
//! Accepted, in this order of detection:
//! - CloudEvents binary mode: a `specversion` header under one of the
//!   prefixes `ce-`, `ce_`, `cloudEvents:`, `cloudEvents_` (any case); the
//!   body is the data, its media type the `content-type` header or property;
//! - CloudEvents structured mode: a JSON object with `specversion`;
//! - this service's own event JSON (`event_id`, `event_type`, `source`,
//!   `occurred_at`, `payload`, as `POST /v1/events` takes it).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::cloudevent::{self, MappedEvent};
use super::event::{EventId, EventIdOrigin, parse_source};
use super::trigger::EventType;

named_enum! {
    /// Why a broker message was acknowledged without becoming an event.
    pub enum RejectReason ("reject reason") {
        /// The body (or a structured event) is not JSON.
        NotJson = "not_json",
        /// No event type.
        MissingType = "missing_type",
        /// Larger than the configured message limit.
        TooLarge = "too_large",
        /// An event ID outside the allowed alphabet or length (or an empty
        /// CloudEvents `id`).
        BadEventId = "bad_event_id",
        /// Any other attribute missing or malformed.
        Invalid = "invalid",
    }
}

/// Why a message is poison, for the rejected list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    pub reason: RejectReason,
    pub detail: String,
}

impl Rejection {
    fn new(reason: RejectReason, detail: impl Into<String>) -> Self {
        Self {
            reason,
            detail: detail.into(),
        }
    }
}

/// An event decoded from a message.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded {
    pub event: MappedEvent,
    pub origin: EventIdOrigin,
}

const PREFIXES: [&str; 4] = ["ce-", "ce_", "cloudevents:", "cloudevents_"];

/// The CloudEvents attributes among `headers` (names lower-cased, prefix
/// removed, values percent-decoded).
pub fn ce_attributes<'a>(
    headers: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> BTreeMap<String, String> {
    let mut attributes = BTreeMap::new();
    for (name, value) in headers {
        let lower = name.to_ascii_lowercase();
        if let Some(attr) = PREFIXES.iter().find_map(|p| lower.strip_prefix(p)) {
            attributes.insert(attr.to_owned(), cloudevent::percent_decode(value));
        }
    }
    attributes
}

/// Decodes one message. `headers` are the message's headers (NATS headers,
/// AMQP header table entries that are strings), `content_type` its declared
/// media type, `limit` the largest body accepted.
pub fn decode(
    headers: &[(String, String)],
    content_type: Option<&str>,
    body: &[u8],
    limit: usize,
) -> Result<Decoded, Rejection> {
    if body.len() > limit {
        return Err(Rejection::new(
            RejectReason::TooLarge,
            format!("{} bytes; the limit is {limit}", body.len()),
        ));
    }
    let attributes = ce_attributes(headers.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    let content_type = content_type.or_else(|| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("content-type"))
            .map(|(_, v)| v.as_str())
    });
    if attributes.contains_key("specversion") {
        return cloudevent::from_binary(&attributes, content_type, body, &|f| format!("ce-{f}"))
            .map(|event| Decoded {
                event,
                origin: EventIdOrigin::Cloudevent,
            })
            .map_err(|errors| ce_rejection(&errors, "ce-"));
    }
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| Rejection::new(RejectReason::NotJson, e.to_string()))?;
    if value.get("specversion").is_some() {
        return cloudevent::from_structured(&value, "")
            .map(|event| Decoded {
                event,
                origin: EventIdOrigin::Cloudevent,
            })
            .map_err(|errors| ce_rejection(&errors, ""));
    }
    native(&value)
}

fn detail(errors: &[super::FieldError]) -> String {
    errors
        .iter()
        .map(|e| format!("{}: {}", e.field, e.message))
        .collect::<Vec<_>>()
        .join("; ")
}

fn ce_rejection(errors: &[super::FieldError], prefix: &str) -> Rejection {
    let is = |field: &str| errors.iter().any(|e| e.field == format!("{prefix}{field}"));
    let reason = if errors.iter().any(|e| e.field == "body") {
        RejectReason::NotJson
    } else if is("type") {
        RejectReason::MissingType
    } else if is("id") {
        RejectReason::BadEventId
    } else {
        RejectReason::Invalid
    };
    Rejection::new(reason, detail(errors))
}

/// The service's own event JSON, validated as `POST /v1/events` does;
/// without `event_id`, the content digest.
fn native(value: &Value) -> Result<Decoded, Rejection> {
    let Some(object) = value.as_object() else {
        return Err(Rejection::new(
            RejectReason::Invalid,
            "body: must be a JSON object",
        ));
    };
    let text = |field: &str| object.get(field).and_then(Value::as_str);
    let event_type = match text("event_type") {
        None => {
            return Err(Rejection::new(
                RejectReason::MissingType,
                "event_type: is required (or send a CloudEvent with `type`)",
            ));
        }
        Some(t) => EventType::parse(t)
            .map_err(|m| Rejection::new(RejectReason::Invalid, format!("event_type: {m}")))?,
    };
    let event_id = object
        .get("event_id")
        .filter(|v| !v.is_null())
        .map(|v| {
            v.as_str()
                .ok_or_else(|| "must be a string".to_owned())
                .and_then(EventId::parse)
                .map_err(|m| Rejection::new(RejectReason::BadEventId, format!("event_id: {m}")))
        })
        .transpose()?;
    let source = parse_source(text("source").unwrap_or(""))
        .map_err(|m| Rejection::new(RejectReason::Invalid, format!("source: {m}")))?;
    let occurred_at = match object.get("occurred_at").filter(|v| !v.is_null()) {
        None => None,
        Some(v) => Some(
            v.as_str()
                .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
                .map(|t| t.with_timezone(&Utc))
                .ok_or_else(|| {
                    Rejection::new(
                        RejectReason::Invalid,
                        "occurred_at: is not an RFC 3339 timestamp",
                    )
                })?,
        ),
    };
    let payload = object
        .get("payload")
        .cloned()
        .unwrap_or_else(|| Value::Object(Default::default()));
    if super::event::contains_nul(&payload) {
        return Err(Rejection::new(
            RejectReason::Invalid,
            "payload: must not contain the NUL character",
        ));
    }
    if !payload.is_object() {
        return Err(Rejection::new(
            RejectReason::Invalid,
            "payload: must be a JSON object",
        ));
    }
    let (event_id, origin) = match event_id {
        Some(id) => (id, EventIdOrigin::Client),
        None => (
            EventId::digest(&source, event_type.as_str(), occurred_at, &payload),
            EventIdOrigin::ContentDigest,
        ),
    };
    Ok(Decoded {
        event: MappedEvent {
            event_id,
            event_type,
            source,
            occurred_at,
            payload,
        },
        origin,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn reason(headers: &[(&str, &str)], body: &[u8]) -> Result<String, RejectReason> {
        let headers: Vec<(String, String)> = headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        decode(&headers, None, body, 1024)
            .map(|d| d.event.event_id.as_str().to_owned())
            .map_err(|r| r.reason)
    }

    #[test]
    fn every_accepted_shape_decodes() {
        let structured =
            json!({"specversion": "1.0", "id": "1", "source": "crm", "type": "a.b", "data": {}});
        assert_eq!(
            reason(&[], structured.to_string().as_bytes()),
            Ok("ce:crm:1".into())
        );
        let binary = [
            ("ce-specversion", "1.0"),
            ("ce-id", "2"),
            ("ce-source", "crm"),
            ("ce-type", "a.b"),
        ];
        assert_eq!(reason(&binary, b"{}"), Ok("ce:crm:2".into()));
        let amqp = [
            ("cloudEvents:specversion", "1.0"),
            ("cloudEvents:id", "3"),
            ("cloudEvents:source", "crm"),
            ("cloudEvents:type", "a.b"),
        ];
        assert_eq!(reason(&amqp, b""), Ok("ce:crm:3".into()));
        let native =
            json!({"event_id": "evt_1", "event_type": "a.b", "source": "crm", "payload": {"k": 1}});
        assert_eq!(
            reason(&[], native.to_string().as_bytes()),
            Ok("evt_1".into())
        );
        let digest = json!({"event_type": "a.b", "source": "crm"});
        assert!(
            reason(&[], digest.to_string().as_bytes()).is_ok_and(|id| id.starts_with("sha256:"))
        );
    }

    #[test]
    fn poison_is_named() {
        type Headers<'a> = &'a [(&'a str, &'a str)];
        let table: [(Headers, Vec<u8>, RejectReason); 9] = [
            (&[], b"not json".to_vec(), RejectReason::NotJson),
            (&[], vec![b'x'; 2000], RejectReason::TooLarge),
            (
                &[],
                br#"{"source": "crm", "payload": {}}"#.to_vec(),
                RejectReason::MissingType,
            ),
            (
                &[],
                br#"{"specversion": "1.0", "id": "1", "source": "crm"}"#.to_vec(),
                RejectReason::MissingType,
            ),
            (
                &[],
                br#"{"event_id": "a b", "event_type": "t", "source": "crm"}"#.to_vec(),
                RejectReason::BadEventId,
            ),
            (
                &[],
                br#"{"specversion": "1.0", "id": "", "source": "crm", "type": "t"}"#.to_vec(),
                RejectReason::BadEventId,
            ),
            (
                &[],
                br#"{"specversion": "2.0", "id": "1", "source": "crm", "type": "t"}"#.to_vec(),
                RejectReason::Invalid,
            ),
            (&[], b"[1]".to_vec(), RejectReason::Invalid),
            (
                &[
                    ("ce-specversion", "1.0"),
                    ("ce-id", "1"),
                    ("ce-source", "crm"),
                    ("ce-type", "t"),
                    ("content-type", "application/json"),
                ],
                b"{".to_vec(),
                RejectReason::NotJson,
            ),
        ];
        for (headers, body, expected) in table {
            assert_eq!(
                reason(headers, &body),
                Err(expected),
                "{}",
                String::from_utf8_lossy(&body)
            );
        }
    }
}
