//! The statements the store builds at run time: every other statement is
//! checked against the migrated schema when the crate builds (`sqlx::query!`
//! and its offline data in `.sqlx/`, see `scripts/sqlx-check`), but a
//! `QueryBuilder` list with optional filters cannot be. So each of them runs
//! here, in every combination of its optional clauses, against a fresh
//! migrated database: a column a clause names that the schema does not have
//! fails here. One row of each is written first, so that the unfiltered
//! variant also decodes a row.
//!
//! The statements: `ActivityStore::list`, `AlertStore::list`,
//! `EventStore::list` and `RunStore::list_runs` (`list_runs_query`).

use acp_domain::activity::ActivityDefinition;
use acp_domain::alert::{AlertKind, Breach};
use acp_domain::audit::Actor;
use acp_domain::auth::{Scope, UnconfirmedKey};
use acp_domain::project::ProjectId;
use acp_domain::query::{ActivityFilter, AlertFilter, EventFilter, RunFilter};
use acp_domain::run::{RunStatus, RunTrigger};
use acp_domain::trigger::TriggerType;
use acp_store::runs::NewRun;
use acp_store::{ActivityStore, AlertStore, EventStore, KeyStore, RunStore};
use chrono::{DateTime, Duration, Utc};
use serde_json::json;
use sqlx::PgPool;
use uuid::Uuid;

/// Whether bit `i` of `mask` is set: the combinations of `n` optional
/// clauses are the masks `0..1 << n`.
fn on(mask: u32, i: u32) -> bool {
    mask & (1 << i) != 0
}

fn now() -> DateTime<Utc> {
    Utc::now()
}

/// One live activity; returns its ID.
async fn an_activity(pool: &PgPool) -> Uuid {
    let def: ActivityDefinition = serde_json::from_value(json!({
        "name": "dynamic-sql",
        "description": "one of each",
        "enabled": true,
        "labels": {"team": "core"},
        "trigger": {"type": "event", "event_types": ["order.created"]},
        "tasks": [{"task_type": "noop", "config": {}}]
    }))
    .expect("a valid definition");
    let id = Uuid::new_v4();
    ActivityStore::new(pool.clone())
        .create(id, &def, None, &Actor::command_line("create_activity"))
        .await
        .expect("create the activity");
    id
}

#[sqlx::test(migrations = "./migrations")]
async fn activity_list_every_variant(pool: PgPool) {
    an_activity(&pool).await;
    let store = ActivityStore::new(pool);
    for mask in 0..1u32 << 6 {
        let filter = ActivityFilter {
            trigger_type: on(mask, 0).then_some(TriggerType::Event),
            enabled: on(mask, 1).then_some(true),
            label: on(mask, 2).then(|| ("team".to_owned(), "core".to_owned())),
            q: on(mask, 3).then(|| "dyn%_\\".to_owned()),
            project: on(mask, 5).then(ProjectId::default_project),
        };
        let after = on(mask, 4).then(|| (now() + Duration::days(1), Uuid::max()));
        let rows = store
            .list(&filter, after, 50)
            .await
            .unwrap_or_else(|e| panic!("activities, variant {mask:#08b}: {e}"));
        if mask == 0 {
            assert_eq!(rows.len(), 1, "the unfiltered list reads the activity");
        }
    }
}

#[sqlx::test(migrations = "./migrations")]
async fn alert_list_every_variant(pool: PgPool) {
    let activity = an_activity(&pool).await;
    let store = AlertStore::new(pool);
    let breach = Breach {
        kind: AlertKind::Stuck,
        summary: "stuck".to_owned(),
        detail: json!({"run": 1}),
    };
    store
        .open(activity, &breach)
        .await
        .expect("open an alert")
        .expect("the alert is new");
    for mask in 0..1u32 << 5 {
        for open in [None, Some(true), Some(false)] {
            let filter = AlertFilter {
                activity_id: on(mask, 0).then_some(activity),
                kind: on(mask, 1).then_some(AlertKind::Stuck),
                open,
                opened_from: on(mask, 2).then(|| now() - Duration::days(1)),
                opened_to: on(mask, 3).then(|| now() + Duration::days(1)),
            };
            let after = on(mask, 4).then(|| (now() + Duration::days(1), Uuid::max()));
            let rows = store
                .list(&ProjectId::default_project(), &filter, after, 50)
                .await
                .unwrap_or_else(|e| panic!("alerts, variant {mask:#07b} open {open:?}: {e}"));
            if mask == 0 && open.is_none() {
                assert_eq!(rows.len(), 1, "the unfiltered list reads the alert");
            }
        }
    }
}

#[sqlx::test(migrations = "./migrations")]
async fn event_list_every_variant(pool: PgPool) {
    let store = EventStore::new(pool);
    let project = acp_domain::project::ProjectId::default_project();
    store
        .record(
            &project,
            "evt-1",
            "client",
            "order.created",
            "shop",
            Some(now()),
            &json!({"n": 1}),
        )
        .await
        .expect("record an event");
    for mask in 0..1u32 << 5 {
        let filter = EventFilter {
            event_type: on(mask, 0).then(|| "order.created".to_owned()),
            source: on(mask, 1).then(|| "shop".to_owned()),
            received_from: on(mask, 2).then(|| now() - Duration::days(1)),
            received_to: on(mask, 3).then(|| now() + Duration::days(1)),
        };
        let after = on(mask, 4).then(|| (now() + Duration::days(1), "~".to_owned()));
        let rows = store
            .list(&project, &filter, after, 50)
            .await
            .unwrap_or_else(|e| panic!("events, variant {mask:#07b}: {e}"));
        if mask == 0 {
            assert_eq!(rows.len(), 1, "the unfiltered list reads the event");
        }
    }
}

#[sqlx::test(migrations = "./migrations")]
async fn run_list_every_variant(pool: PgPool) {
    let activity = an_activity(&pool).await;
    let (key, _token) = KeyStore::new(pool.clone())
        .create(
            "dynamic-sql",
            Scope::Read,
            Some(&acp_domain::project::ProjectId::default_project()),
            &Actor::command_line("create_key"),
        )
        .await
        .expect("create a key");
    let store = RunStore::new(pool);
    let run_id = Uuid::new_v4();
    let context = json!({});
    let run = NewRun {
        run_id,
        activity_id: activity,
        workflow_id: "dynamic-sql-run",
        trigger: RunTrigger::Interval,
        scheduled_for: Some(now()),
        event_id: None,
        window_start: None,
        window_end: None,
        definition_version: 1,
        context: &context,
        tasks_total: 1,
        queued: false,
    };
    assert!(store.insert_run(&run).await.expect("insert a run"));
    for mask in 0..1u32 << 10 {
        let filter = RunFilter {
            activity_id: on(mask, 0).then_some(activity),
            status: on(mask, 1).then_some(RunStatus::Running),
            trigger_type: on(mask, 2).then_some(RunTrigger::Interval),
            scheduled_from: on(mask, 3).then(|| now() - Duration::days(1)),
            scheduled_to: on(mask, 4).then(|| now() + Duration::days(1)),
            started_from: on(mask, 5).then(|| now() - Duration::days(1)),
            started_to: on(mask, 6).then(|| now() + Duration::days(1)),
            project: on(mask, 9).then(ProjectId::default_project),
        };
        let after = on(mask, 7).then(|| (now() + Duration::days(1), Uuid::max()));
        // The key confirmed live in the statement itself, or not asked for.
        let unconfirmed = UnconfirmedKey::new(key.id);
        let key = on(mask, 8).then_some(&unconfirmed);
        let rows = store
            .list_runs(&filter, after, 50, key)
            .await
            .unwrap_or_else(|e| panic!("runs, variant {mask:#012b}: {e}"));
        // Every filter above matches the run, and the cursor lies after it.
        assert_eq!(rows.len(), 1, "runs, variant {mask:#012b} reads the run");
        assert_eq!(rows[0].run_id, run_id);
    }
}
