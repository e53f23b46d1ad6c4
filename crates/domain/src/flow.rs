//! Flow control of an activity's runs: how many may run at once, per key, and
//! what a run that finds the limit reached does. Pure: the slot bookkeeping
//! itself lives in PostgreSQL (`store::flow`), which asks [`admit`] what to do
//! with the facts it read under its lock.

use serde::{Deserialize, Serialize};

use super::duration::IsoDuration;

mod decisions;

pub use decisions::*;

named_enum! {
    /// What a run does when its key already has `limit` runs running.
    pub enum OnLimit ("on_limit") {
        /// Wait, status `queued`, first in first out per key; start as soon
        /// as a slot frees.
        Queue = "queue",
        /// Do not run: recorded `skipped`, reason `concurrency_limit`.
        Skip = "skip",
        /// Cancel the oldest running run of the key, then start.
        CancelOldest = "cancel_oldest",
    }
}

/// The largest concurrency `limit` accepted.
pub const MAX_LIMIT: u32 = 1000;
/// The longest `key` accepted, in characters.
pub const MAX_KEY_LEN: usize = 200;

/// What groups runs for a limit: a JSON pointer into the run's event
/// (`/payload/customer`), or a constant (every run shares it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct FlowKey(String);

impl FlowKey {
    /// A key as written: a string starting with `/` is a JSON pointer
    /// (RFC 6901: `~` only as `~0` or `~1`), anything else a constant.
    pub fn parse(text: &str) -> Result<Self, String> {
        if text.chars().count() > MAX_KEY_LEN {
            return Err(format!("must be at most {MAX_KEY_LEN} characters"));
        }
        if text.chars().any(char::is_control) {
            return Err("must not contain control characters".into());
        }
        if text.starts_with('/') {
            let mut chars = text.chars();
            while let Some(c) = chars.next() {
                if c == '~' && !matches!(chars.next(), Some('0' | '1')) {
                    return Err(format!(
                        "`{text}` is not a JSON pointer: `~` must be followed by 0 or 1"
                    ));
                }
            }
        }
        Ok(Self(text.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The key of one run. A pointer is looked up in the run's event
    /// (`{event_id, event_type, source, occurred_at, payload}`): a string
    /// value is the key as is, any other value its JSON text; a pointer
    /// that finds nothing (or a run without an event: schedule, manual)
    /// gives the empty key, which such runs share.
    pub fn resolve(&self, event: Option<&serde_json::Value>) -> String {
        if !self.0.starts_with('/') {
            return self.0.clone();
        }
        match event.and_then(|e| e.pointer(&self.0)) {
            None | Some(serde_json::Value::Null) => String::new(),
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
        }
    }
}

/// `concurrency`: at most `limit` runs running at once per key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Concurrency {
    pub limit: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<FlowKey>,
    pub on_limit: OnLimit,
}

impl Concurrency {
    /// The key of one run; without `key`, every run of the activity shares one.
    pub fn key_of(&self, event: Option<&serde_json::Value>) -> String {
        self.key
            .as_ref()
            .map(|k| k.resolve(event))
            .unwrap_or_default()
    }
}

named_enum! {
    /// What a run does when its key already started `limit` runs within
    /// `period`.
    pub enum RateOnLimit ("on_limit") {
        /// Wait, status `queued`, first in first out per key; start as soon
        /// as the window has room.
        Queue = "queue",
        /// Do not run: recorded `skipped`, reason `rate_limited`.
        Skip = "skip",
    }
}

/// The longest rate-limit `period` accepted.
pub const MAX_RATE_PERIOD: std::time::Duration = std::time::Duration::from_secs(86_400);
/// The shortest rate-limit `period` accepted.
pub const MIN_RATE_PERIOD: std::time::Duration = std::time::Duration::from_millis(100);

/// `rate_limit`: at most `limit` run starts per `period` per key, in any
/// window of that length (sliding, not calendar-aligned).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RateLimit {
    pub limit: u32,
    pub period: IsoDuration,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<FlowKey>,
    pub on_limit: RateOnLimit,
}

impl RateLimit {
    /// The key of one run; without `key`, every run of the activity shares one.
    pub fn key_of(&self, event: Option<&serde_json::Value>) -> String {
        self.key
            .as_ref()
            .map(|k| k.resolve(event))
            .unwrap_or_default()
    }
}

/// The longest debounce `period` accepted.
pub const MAX_DEBOUNCE_PERIOD: std::time::Duration = std::time::Duration::from_secs(86_400);

/// `debounce` (event triggers only): a burst of events of one key, each
/// within `period` of the one before, becomes one run of the last event,
/// started `period` after it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Debounce {
    pub period: IsoDuration,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<FlowKey>,
}

impl Debounce {
    /// The key of one event; without `key`, every event of the activity shares one.
    pub fn key_of(&self, event: &serde_json::Value) -> String {
        self.key
            .as_ref()
            .map(|k| k.resolve(Some(event)))
            .unwrap_or_default()
    }
}

/// An activity's flow control; every part optional.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Flow {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<Concurrency>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_limit: Option<RateLimit>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub debounce: Option<Debounce>,
}

impl Flow {
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// Slots in use and runs queued for one key, as the slot table holds them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyUsage {
    pub key: String,
    pub in_use: i64,
    pub queued: i64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_resolve_from_the_event() {
        let event = json!({"event_id": "e1", "payload": {"customer": "c-7", "n": 3, "a/b": "x", "nil": null}});
        let key = |k: &str| FlowKey::parse(k).unwrap();
        assert_eq!(key("/payload/customer").resolve(Some(&event)), "c-7");
        assert_eq!(key("/payload/n").resolve(Some(&event)), "3");
        assert_eq!(key("/payload/a~1b").resolve(Some(&event)), "x");
        assert_eq!(key("/payload/nil").resolve(Some(&event)), "");
        assert_eq!(key("/payload/missing").resolve(Some(&event)), "");
        assert_eq!(key("/payload/customer").resolve(None), "");
        assert_eq!(key("nightly").resolve(Some(&event)), "nightly");
        assert_eq!(key("nightly").resolve(None), "nightly");
    }

    #[test]
    fn key_syntax() {
        assert!(FlowKey::parse("/payload/a~0b~1c").is_ok());
        assert!(FlowKey::parse("/payload/a~2").is_err());
        assert!(FlowKey::parse("/payload/a~").is_err());
        assert!(FlowKey::parse("const~").is_ok()); // a constant, not a pointer
        assert!(FlowKey::parse(&"k".repeat(MAX_KEY_LEN + 1)).is_err());
        assert!(FlowKey::parse("a\u{0}b").is_err());
    }
}
