//! The audit log: who (which API key, in which request) made which write to
//! what. Each write the API accepts appends one entry in the transaction
//! that makes it; nothing updates or deletes an entry.

use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::project::ProjectId;

/// Who asks for a write, and as which operation: built once per request by
/// the HTTP layer and passed down to the use case. Whatever else a write
/// must know about its caller is a field here, so the call sites do not
/// change again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    /// The API key; `None` when authentication is disabled.
    pub key_id: Option<Uuid>,
    /// The key's name when the request was made (a key keeps its name, but
    /// the entry should not depend on the key row surviving).
    pub key_name: Option<String>,
    /// The request's `x-request-id`, as the response and the logs carry it.
    pub request_id: String,
    /// The operation's ID in the OpenAPI document, e.g. `pause_activity`.
    pub operation: String,
    /// The project the write acts in: the key's; `default` for an
    /// `operator` key (it belongs to none), with authentication disabled,
    /// and for the command line and the service itself.
    pub project: ProjectId,
}

impl Actor {
    /// An operator's command (`acp keys …`): it holds the database, not a
    /// key, so no key is named; the request ID says where it came from.
    pub fn command_line(operation: &str) -> Self {
        Self {
            key_id: None,
            key_name: None,
            request_id: format!("cli-{}", Uuid::new_v4()),
            operation: operation.to_owned(),
            project: ProjectId::default_project(),
        }
    }

    /// A write the service decides itself (a trigger's `beyond_coverage:
    /// pause`): no key asked for it; the request ID says so.
    pub fn service(operation: &str) -> Self {
        Self {
            key_id: None,
            key_name: None,
            request_id: format!("service-{}", Uuid::new_v4()),
            operation: operation.to_owned(),
            project: ProjectId::default_project(),
        }
    }
}

/// What an entry is about: a kind of resource and its ID.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subject {
    pub kind: &'static str,
    pub id: String,
}

impl Subject {
    pub fn activity(id: Uuid) -> Self {
        Self::of("activity", id)
    }

    pub fn run(id: Uuid) -> Self {
        Self::of("run", id)
    }

    pub fn calendar(id: Uuid) -> Self {
        Self::of("calendar", id)
    }

    pub fn source(id: Uuid) -> Self {
        Self::of("source", id)
    }

    pub fn subscription(id: Uuid) -> Self {
        Self::of("subscription", id)
    }

    pub fn api_key(id: Uuid) -> Self {
        Self::of("api_key", id)
    }

    /// A project, named by its slug.
    pub fn project(id: &str) -> Self {
        Self {
            kind: "project",
            id: id.to_owned(),
        }
    }

    fn of(kind: &'static str, id: Uuid) -> Self {
        Self {
            kind,
            id: id.to_string(),
        }
    }
}

/// The subject kinds entries name, for the API's filter.
pub const SUBJECT_KINDS: [&str; 7] = [
    "activity",
    "run",
    "calendar",
    "source",
    "subscription",
    "api_key",
    "project",
];

/// One entry as it is appended: the subject and what changed. The actor and
/// the time are the write's own.
#[derive(Debug, Clone, PartialEq)]
pub struct Note {
    pub subject: Subject,
    pub change: Value,
}

impl Note {
    /// A definition's write: `before` is `None` for a create, `after` is
    /// `None` for a delete.
    pub fn definition(subject: Subject, before: Option<Value>, after: Option<Value>) -> Self {
        Self {
            subject,
            change: definition_change(before, after),
        }
    }

    /// An action with no definition to compare (a trigger, a cancel, a bulk
    /// action): what it was asked and what it did.
    pub fn action(subject: Subject, summary: Value) -> Self {
        Self {
            subject,
            change: json!({ "summary": summary }),
        }
    }
}

/// `{"before": …, "after": …}`, absent sides as `null`.
pub fn definition_change(before: Option<Value>, after: Option<Value>) -> Value {
    json!({
        "before": before.unwrap_or(Value::Null),
        "after": after.unwrap_or(Value::Null),
    })
}

/// One entry as the log keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditEntry {
    pub seq: i64,
    pub at: DateTime<Utc>,
    pub key_id: Option<Uuid>,
    pub key_name: Option<String>,
    pub operation: String,
    pub subject_type: String,
    pub subject_id: String,
    pub request_id: String,
    pub change: Value,
}

/// Filters for listing entries; all optional, combined with AND.
#[derive(Debug, Clone, Default)]
pub struct AuditFilter {
    pub key_id: Option<Uuid>,
    pub operation: Option<String>,
    pub subject_type: Option<String>,
    pub subject_id: Option<String>,
    /// Entries at or after this instant.
    pub since: Option<DateTime<Utc>>,
    /// Entries before this instant.
    pub until: Option<DateTime<Utc>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definition_changes_name_both_sides() {
        let cases = [
            (
                None,
                Some(json!({"a": 1})),
                json!({"before": null, "after": {"a": 1}}),
            ),
            (
                Some(json!({"a": 1})),
                None,
                json!({"before": {"a": 1}, "after": null}),
            ),
            (
                Some(json!(1)),
                Some(json!(2)),
                json!({"before": 1, "after": 2}),
            ),
        ];
        for (before, after, want) in cases {
            assert_eq!(definition_change(before, after), want);
        }
    }

    #[test]
    fn subjects_name_their_kind_and_id() {
        let id = Uuid::nil();
        for (subject, kind) in [
            (Subject::activity(id), "activity"),
            (Subject::run(id), "run"),
            (Subject::calendar(id), "calendar"),
            (Subject::source(id), "source"),
            (Subject::subscription(id), "subscription"),
            (Subject::api_key(id), "api_key"),
        ] {
            assert_eq!(subject.kind, kind);
            assert_eq!(subject.id, id.to_string());
            assert!(SUBJECT_KINDS.contains(&subject.kind));
        }
    }

    #[test]
    fn a_project_is_named_by_its_slug() {
        let subject = Subject::project("team-a");
        assert_eq!((subject.kind, subject.id.as_str()), ("project", "team-a"));
        assert!(SUBJECT_KINDS.contains(&subject.kind));
    }

    #[test]
    fn actions_keep_their_summary() {
        let note = Note::action(Subject::run(Uuid::nil()), json!({"force": true}));
        assert_eq!(note.change, json!({"summary": {"force": true}}));
    }
}
