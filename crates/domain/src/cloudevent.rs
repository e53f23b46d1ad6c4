//! CloudEvents 1.0 → events. One mapping for every way a CloudEvent arrives
//! (HTTP structured, binary and batch modes; broker messages in structured or
//! binary mode):
//!
//! | CloudEvents | event |
//! |---|---|
//! | `type` | `event_type` |
//! | `source` | `source` |
//! | `time` | `occurred_at` |
//! | `data` (or `data_base64`, or a binary-mode body) | `payload` |
//! | (`source`, `id`) | `event_id`, see [`event_id`] |
//!
//! The `event_id` decides the contract workflow ID
//! (`activity-{activity_id}:{event_id}`), so it must be the same for every
//! re-delivery of one (`source`, `id`) and differ between sources that reuse
//! an `id`. Extension attributes are accepted and not stored.

use std::collections::BTreeMap;

use base64::Engine;
use chrono::{DateTime, Utc};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::FieldError;
use super::event::{EventId, parse_source};
use super::trigger::EventType;

/// The only `specversion` understood.
pub const SPEC_VERSION: &str = "1.0";

/// A CloudEvent, mapped onto an event.
#[derive(Debug, Clone, PartialEq)]
pub struct MappedEvent {
    pub event_id: EventId,
    pub event_type: EventType,
    pub source: String,
    pub occurred_at: Option<DateTime<Utc>>,
    pub payload: Value,
}

/// The stable event ID of a CloudEvent.
///
/// Readable when it can be: `ce:{source}:{id}` when `source` uses only
/// letters, digits and `_ . @ + = -` (no `:`, so the split is unambiguous),
/// `id` only the event-ID alphabet, and the whole fits in 200 characters.
/// Otherwise `ce-sha256:` + hex SHA-256 of the length-prefixed pair, which
/// cannot be mistaken for a readable one (`ce-` is not `ce:`).
pub fn event_id(source: &str, id: &str) -> EventId {
    let plain =
        |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '@' | '+' | '=' | '-');
    let readable = format!("ce:{source}:{id}");
    if !source.is_empty() && source.chars().all(plain) {
        if let Ok(event_id) = EventId::parse(&readable) {
            return event_id;
        }
    }
    let mut hasher = Sha256::new();
    hasher.update((source.len() as u64).to_be_bytes());
    hasher.update(source.as_bytes());
    hasher.update(id.as_bytes());
    let digest = format!("ce-sha256:{}", hex::encode(hasher.finalize()));
    // Always within the alphabet and length.
    EventId::parse(&digest).unwrap_or_else(|_| unreachable!("{digest}"))
}

/// Whether a media type is JSON (`application/json` or any `+json`).
pub fn is_json_media_type(content_type: &str) -> bool {
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    essence == "application/json" || essence.ends_with("+json") || essence == "text/json"
}

/// The attributes every CloudEvent has, read from wherever they came from.
struct Attributes<'a> {
    specversion: Option<&'a str>,
    id: Option<&'a str>,
    source: Option<&'a str>,
    r#type: Option<&'a str>,
    time: Option<&'a str>,
}

/// Field names as the caller's format spells them (`type`, `ce-type`,
/// `[3].type`).
fn map(
    attrs: Attributes<'_>,
    payload: Result<Value, FieldError>,
    name: &dyn Fn(&str) -> String,
) -> Result<MappedEvent, Vec<FieldError>> {
    let mut errors = Vec::new();
    match attrs.specversion {
        Some(SPEC_VERSION) => {}
        Some(other) => errors.push(FieldError::new(
            name("specversion"),
            format!("`{other}` is not supported; expected 1.0"),
        )),
        None => errors.push(FieldError::new(name("specversion"), "is required")),
    }
    let id = match attrs.id {
        Some(id) if !id.is_empty() => Some(id),
        Some(_) => {
            errors.push(FieldError::new(name("id"), "must not be empty"));
            None
        }
        None => {
            errors.push(FieldError::new(name("id"), "is required"));
            None
        }
    };
    let source = match attrs.source.map(parse_source) {
        Some(Ok(source)) => Some(source),
        Some(Err(message)) => {
            errors.push(FieldError::new(name("source"), message));
            None
        }
        None => {
            errors.push(FieldError::new(name("source"), "is required"));
            None
        }
    };
    let event_type = match attrs.r#type.map(EventType::parse) {
        Some(Ok(t)) => Some(t),
        Some(Err(message)) => {
            errors.push(FieldError::new(name("type"), message));
            None
        }
        None => {
            errors.push(FieldError::new(name("type"), "is required"));
            None
        }
    };
    let occurred_at = match attrs.time {
        None => None,
        Some(text) => match DateTime::parse_from_rfc3339(text) {
            Ok(t) => Some(t.with_timezone(&Utc)),
            Err(_) => {
                errors.push(FieldError::new(
                    name("time"),
                    format!("`{text}` is not an RFC 3339 timestamp"),
                ));
                None
            }
        },
    };
    let payload = payload
        .and_then(|p| {
            if super::event::contains_nul(&p) {
                Err(FieldError::new(
                    name("data"),
                    "must not contain the NUL character",
                ))
            } else {
                Ok(p)
            }
        })
        .map_err(|e| errors.push(e))
        .ok();
    match (id, source, event_type, payload) {
        (Some(id), Some(source), Some(event_type), Some(payload)) if errors.is_empty() => {
            Ok(MappedEvent {
                event_id: event_id(&source, id),
                event_type,
                source,
                occurred_at,
                payload,
            })
        }
        _ => Err(errors),
    }
}

/// A structured-mode event (`application/cloudevents+json`, or one item of
/// a batch). `prefix` goes before field names (`[3].` in a batch).
pub fn from_structured(value: &Value, prefix: &str) -> Result<MappedEvent, Vec<FieldError>> {
    let name = |field: &str| format!("{prefix}{field}");
    let Some(object) = value.as_object() else {
        let field = if prefix.is_empty() {
            "body".to_owned()
        } else {
            prefix.trim_end_matches('.').to_owned()
        };
        return Err(vec![FieldError::new(field, "must be a JSON object")]);
    };
    let mut errors = Vec::new();
    let mut text = |field: &str| match object.get(field) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.as_str()),
        Some(_) => {
            errors.push(FieldError::new(name(field), "must be a string"));
            None
        }
    };
    let attrs = Attributes {
        specversion: text("specversion"),
        id: text("id"),
        source: text("source"),
        r#type: text("type"),
        time: text("time"),
    };
    let payload = match (object.get("data"), object.get("data_base64")) {
        (Some(_), Some(_)) => Err(FieldError::new(
            name("data_base64"),
            "must not be given together with data",
        )),
        (Some(data), None) => Ok(data.clone()),
        (None, Some(Value::String(b64))) => base64::engine::general_purpose::STANDARD
            .decode(b64)
            .map(|_| serde_json::json!({ "data_base64": b64 }))
            .map_err(|_| FieldError::new(name("data_base64"), "is not base64")),
        (None, Some(_)) => Err(FieldError::new(name("data_base64"), "must be a string")),
        (None, None) => Ok(Value::Object(Default::default())),
    };
    let mapped = map(attrs, payload, &name);
    match mapped {
        Ok(event) if errors.is_empty() => Ok(event),
        Ok(_) => Err(errors),
        Err(mut more) => {
            errors.append(&mut more);
            Err(errors)
        }
    }
}

/// A binary-mode event: attributes from headers (names without their
/// prefix, lower case, values already decoded), data as the body.
/// `name` spells a field as the caller's format does (`ce-type`).
pub fn from_binary(
    attributes: &BTreeMap<String, String>,
    content_type: Option<&str>,
    body: &[u8],
    name: &dyn Fn(&str) -> String,
) -> Result<MappedEvent, Vec<FieldError>> {
    let get = |key: &str| attributes.get(key).map(String::as_str);
    let attrs = Attributes {
        specversion: get("specversion"),
        id: get("id"),
        source: get("source"),
        r#type: get("type"),
        time: get("time"),
    };
    map(attrs, binary_payload(content_type, body), name)
}

/// The data of a binary-mode event: JSON media types are parsed (as is a
/// body without a media type that reads as JSON), other text becomes a JSON
/// string, other bytes `{"data_base64": …}`.
fn binary_payload(content_type: Option<&str>, body: &[u8]) -> Result<Value, FieldError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Object(Default::default()));
    }
    match content_type {
        Some(media_type) if is_json_media_type(media_type) => {
            return serde_json::from_slice(body).map_err(|e| {
                FieldError::new("body", format!("the data is declared JSON but is not: {e}"))
            });
        }
        // No media type: JSON if it reads as JSON, else text or bytes.
        None => {
            if let Ok(value) = serde_json::from_slice(body) {
                return Ok(value);
            }
        }
        Some(_) => {}
    }
    Ok(match std::str::from_utf8(body) {
        Ok(text) => Value::String(text.to_owned()),
        Err(_) => serde_json::json!({
            "data_base64": base64::engine::general_purpose::STANDARD.encode(body)
        }),
    })
}

/// Percent-decodes a binary-mode header value (CloudEvents HTTP binding
/// 3.1.3.2); a malformed escape is kept as it is.
pub fn percent_decode(value: &str) -> String {
    url::form_urlencoded::parse(format!("v={}", value.replace('+', "%2B")).as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_else(|| value.to_owned())
}

#[cfg(test)]
mod tests;
