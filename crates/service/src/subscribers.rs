//! The subscribers of each project's event types as this process last read
//! them, so that ingest can write an event and its dispatch rows in one
//! statement.
//! Never trusted: the statement compares them with the table in its own
//! snapshot and writes nothing when they differ, and the general path that
//! follows reads them again (see `store::ingest`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use uuid::Uuid;

use acp_domain::ids;
use acp_domain::project::ProjectId;
use acp_store::events::Subscriber;
use acp_store::ingest::ExpectedDispatch;

/// (project, event type) pairs remembered at most; past it the memory starts again empty
/// (event types are the producers' strings: their number is not ours).
const CAPACITY: usize = 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Known {
    id: Uuid,
    version: i64,
}

/// Last-read subscribers by project and event type; only lists without a debounced
/// subscriber are kept (a debounced dispatch is written under its key's lock).
#[derive(Debug, Default, Clone)]
pub struct KnownSubscribers(Arc<Mutex<HashMap<ProjectType, Arc<[Known]>>>>);

/// A project and one of the event types its producers send.
type ProjectType = (ProjectId, String);

impl KnownSubscribers {
    /// Remembers what the general path just read for the project's
    /// `event_type`.
    pub fn remember(&self, project: &ProjectId, event_type: &str, subscribers: &[Subscriber]) {
        let Ok(mut known) = self.0.lock() else {
            return;
        };
        let key = (project.clone(), event_type.to_owned());
        if subscribers.iter().any(|s| s.debounce.is_some()) {
            known.remove(&key);
            return;
        }
        if known.len() >= CAPACITY && !known.contains_key(&key) {
            known.clear();
        }
        let list = subscribers
            .iter()
            .map(|s| Known {
                id: s.id,
                version: s.version,
            })
            .collect();
        known.insert(key, list);
    }

    /// The dispatches an event with this ID would get if the subscribers
    /// are still those last read; `None` when none were read yet.
    pub fn expected(
        &self,
        project: &ProjectId,
        event_type: &str,
        event_id: &str,
    ) -> Option<Vec<ExpectedDispatch>> {
        let key = (project.clone(), event_type.to_owned());
        let list = self.0.lock().ok()?.get(&key).cloned()?;
        Some(
            list.iter()
                .map(|s| {
                    let workflow_id = ids::event_run_workflow_id(s.id, event_id);
                    ExpectedDispatch {
                        activity_id: s.id,
                        version: s.version,
                        run_id: ids::run_id(&workflow_id),
                        workflow_id,
                    }
                })
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlx::types::Json;

    fn subscriber(n: u128, version: i64, debounced: bool) -> Subscriber {
        let debounce = debounced.then(|| {
            Json(serde_json::from_value(serde_json::json!({"period": "PT1S"})).expect("debounce"))
        });
        Subscriber {
            id: Uuid::from_u128(n),
            version,
            debounce,
        }
    }

    fn project(name: &str) -> ProjectId {
        ProjectId::parse(name).expect("project")
    }

    #[test]
    fn remembers_lists_without_debounce_and_derives_the_contract_ids() {
        let known = KnownSubscribers::default();
        let p = project("default");
        assert!(known.expected(&p, "a", "e1").is_none());
        known.remember(&p, "a", &[subscriber(1, 3, false), subscriber(2, 1, false)]);
        let expected = known.expected(&p, "a", "e1").expect("known");
        assert_eq!(expected.len(), 2);
        assert_eq!(expected[0].activity_id, Uuid::from_u128(1));
        assert_eq!(expected[0].version, 3);
        assert_eq!(
            expected[0].workflow_id,
            ids::event_run_workflow_id(Uuid::from_u128(1), "e1")
        );
        assert_eq!(expected[0].run_id, ids::run_id(&expected[0].workflow_id));
        known.remember(&p, "b", &[]);
        assert_eq!(known.expected(&p, "b", "e1").map(|e| e.len()), Some(0));
        known.remember(&p, "a", &[subscriber(1, 4, true)]);
        assert!(
            known.expected(&p, "a", "e1").is_none(),
            "debounced: forgotten"
        );
    }

    #[test]
    fn a_projects_subscribers_are_its_own() {
        let known = KnownSubscribers::default();
        let (a, b) = (project("team-a"), project("team-b"));
        known.remember(&a, "order.placed", &[subscriber(1, 1, false)]);
        assert!(known.expected(&b, "order.placed", "e1").is_none());
        known.remember(&b, "order.placed", &[subscriber(2, 1, false)]);
        let of = |p: &ProjectId| {
            known
                .expected(p, "order.placed", "e1")
                .expect("known")
                .iter()
                .map(|d| d.activity_id)
                .collect::<Vec<_>>()
        };
        assert_eq!(of(&a), vec![Uuid::from_u128(1)]);
        assert_eq!(of(&b), vec![Uuid::from_u128(2)]);
    }

    #[test]
    fn starts_again_empty_when_full() {
        let known = KnownSubscribers::default();
        let p = project("default");
        for i in 0..CAPACITY {
            known.remember(&p, &format!("t{i}"), &[]);
        }
        assert!(known.expected(&p, "t0", "e").is_some());
        known.remember(&p, "one more", &[]);
        assert!(known.expected(&p, "t0", "e").is_none());
        assert!(known.expected(&p, "one more", "e").is_some());
    }
}
