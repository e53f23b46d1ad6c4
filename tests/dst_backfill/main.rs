//! Backfill over past DST days runs exactly the times of the trigger's `dst`
//! policy, each under its contract workflow ID; `dry_run` answers the same
//! and runs nothing; the timeline agrees and names the times the policy
//! declines (`dst_gap`, `dst_repeat`). And a fire of the engine that the
//! policy excludes, delivered through the launcher, is recorded as a
//! skipped run with reason `dst_policy` (PRODUCT.md 5a).
//!
//! Expected times are written out here, not computed by the service's
//! calendar: Berlin is UTC+1/+2, New York UTC-5/-4.

mod backfills;
use crate::common;
mod extras;
mod launcher;

use std::collections::BTreeMap;
use std::time::Duration;

use chrono::{DateTime, Utc};
use common::*;
use serde_json::{Value, json};
use sqlx::PgPool;
use temporalio_client::grpc::WorkflowService;
use temporalio_common::protos::temporal::api::enums::v1::ScheduleOverlapPolicy;
use temporalio_common::protos::temporal::api::schedule::v1::{BackfillRequest, SchedulePatch};
use temporalio_common::protos::temporal::api::workflowservice::v1::PatchScheduleRequest;
use tonic::IntoRequest;

async fn app(pool: PgPool) -> TestApp {
    let server = shared_temporal();
    let namespace = new_namespace(&server.address()).await;
    TestApp::spawn(pool, &server.address(), &namespace).await
}

fn utc(s: &str) -> DateTime<Utc> {
    s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn contract_id(id: &str, t: &str) -> String {
    format!("activity-{id}:{}", utc(t).format("%Y-%m-%dT%H:%M:%S+00:00"))
}

async fn create(app: &TestApp, cron: &str, zone: &str, repeated: &str, skipped: &str) -> String {
    let created = app
        .create(&json!({
            "name": format!("dst-{repeated}-{skipped}"),
            "trigger": {
                "type": "cron", "cron": cron, "timezone": zone,
                "misfire_policy": "skip",
                "dst": {"repeated": repeated, "skipped": skipped}
            },
            "tasks": [{"task_type": "noop"}]
        }))
        .await;
    assert_eq!(created["schedule"]["sync_state"], "synced", "{created}");
    created["id"].as_str().unwrap_or_default().to_owned()
}

/// `(scheduled_for, action, reason)` of a backfill answer.
fn answer(body: &Value) -> Vec<(DateTime<Utc>, String, Option<String>)> {
    body["times"]
        .as_array()
        .unwrap_or_else(|| panic!("no times: {body}"))
        .iter()
        .map(|t| {
            (
                utc(t["scheduled_for"].as_str().unwrap_or_default()),
                t["action"].as_str().unwrap_or_default().to_owned(),
                t["reason"].as_str().map(str::to_owned),
            )
        })
        .collect()
}

async fn backfill(app: &TestApp, id: &str, range: (&str, &str), dry_run: bool) -> (u16, Value) {
    json(
        app.post(
            &format!("/v1/activities/{id}/backfill"),
            &json!({"start": range.0, "end": range.1, "dry_run": dry_run}),
        )
        .await,
    )
    .await
}

async fn timeline(app: &TestApp, id: &str, range: (&str, &str)) -> Vec<Value> {
    let (status, body) = json(
        app.get(&format!(
            "/v1/activities/{id}/timeline?from={}&to={}",
            range.0, range.1
        ))
        .await,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    body["items"].as_array().cloned().unwrap_or_default()
}

/// The contract workflow IDs of every `RunActivityWorkflow` execution of
/// this test's namespace that belongs to `id`.
async fn run_executions(app: &TestApp, id: &str) -> Vec<String> {
    let mut ids: Vec<String> = executions_matching(app, "WorkflowType = 'RunActivityWorkflow'")
        .await
        .into_iter()
        .map(|e| e.workflow_id)
        .filter(|w| w.starts_with(&format!("activity-{id}:")))
        .collect();
    ids.sort();
    ids
}

/// One case: a trigger, a past range around an offset change, the times
/// its policy runs and the times it declines (with the reason).
struct Case {
    cron: &'static str,
    zone: &'static str,
    repeated: &'static str,
    skipped: &'static str,
    range: (&'static str, &'static str),
    runs: &'static [&'static str],
    declined: &'static [(&'static str, &'static str)],
}

async fn check(app: &TestApp, case: &Case) {
    let what = format!(
        "{} {} {}/{}",
        case.cron, case.zone, case.repeated, case.skipped
    );
    let id = create(app, case.cron, case.zone, case.repeated, case.skipped).await;
    let mut expected: Vec<(DateTime<Utc>, String, Option<String>)> = case
        .runs
        .iter()
        .map(|t| (utc(t), "backfilled".to_owned(), None))
        .chain(
            case.declined
                .iter()
                .map(|(t, r)| (utc(t), "skipped".to_owned(), Some((*r).to_owned()))),
        )
        .collect();
    expected.sort();

    // The dry run answers, and runs nothing.
    let (status, dry) = backfill(app, &id, case.range, true).await;
    assert_eq!(status, 200, "{what}: {dry}");
    assert_eq!(
        (dry["dry_run"].clone(), dry["next_start"].clone()),
        (json!(true), Value::Null),
        "{what}: {dry}"
    );
    assert_eq!(answer(&dry), expected, "{what}: dry run {dry}");
    for item in dry["times"].as_array().into_iter().flatten() {
        let t = item["scheduled_for"].as_str().unwrap_or_default();
        assert_eq!(item["workflow_id"], contract_id(&id, t), "{what}: {item}");
    }

    // The backfill answers the same, and runs exactly the policy's times.
    let (status, real) = backfill(app, &id, case.range, false).await;
    assert_eq!(status, 202, "{what}: {real}");
    assert_eq!(real["dry_run"], false);
    assert_eq!(answer(&real), expected, "{what}: backfill {real}");
    let want: Vec<String> = case.runs.iter().map(|t| contract_id(&id, t)).collect();
    let mut want_sorted = want.clone();
    want_sorted.sort();
    let runs: BTreeMap<String, Value> = eventually(Duration::from_secs(90), || async {
        let runs: BTreeMap<String, Value> = app
            .runs_of(&id)
            .await
            .into_iter()
            .map(|r| (r["workflow_id"].as_str().unwrap_or_default().to_owned(), r))
            .collect();
        let done = runs.len() >= want.len() && runs.values().all(|r| r["status"] == "succeeded");
        done.then_some(runs)
    })
    .await;
    assert_eq!(
        runs.keys().cloned().collect::<Vec<_>>(),
        want_sorted,
        "{what}: run rows"
    );
    let executed = eventually(Duration::from_secs(60), || async {
        let ids = run_executions(app, &id).await;
        (ids.len() >= want.len()).then_some(ids)
    })
    .await;
    assert_eq!(executed, want_sorted, "{what}: Temporal executions");

    // Asked again: every time that ran is a duplicate, nothing runs twice.
    let (_, again) = backfill(app, &id, case.range, true).await;
    let duplicates: Vec<DateTime<Utc>> = answer(&again)
        .into_iter()
        .filter(|(_, action, _)| action == "duplicate")
        .map(|(t, _, _)| t)
        .collect();
    assert_eq!(
        duplicates,
        case.runs.iter().map(|t| utc(t)).collect::<Vec<_>>(),
        "{what}: {again}"
    );

    // The timeline: the policy's times ran, the declined ones say why.
    let items = timeline(app, &id, case.range).await;
    let seen: Vec<(DateTime<Utc>, String, Option<String>)> = items
        .iter()
        .map(|i| {
            (
                utc(i["scheduled_for"].as_str().unwrap_or_default()),
                i["status"].as_str().unwrap_or_default().to_owned(),
                i["reason"].as_str().map(str::to_owned),
            )
        })
        .collect();
    let mut wanted_timeline: Vec<(DateTime<Utc>, String, Option<String>)> = case
        .runs
        .iter()
        .map(|t| (utc(t), "succeeded".to_owned(), None))
        .chain(
            case.declined
                .iter()
                .map(|(t, r)| (utc(t), "none".to_owned(), Some((*r).to_owned()))),
        )
        .collect();
    wanted_timeline.sort();
    assert_eq!(seen, wanted_timeline, "{what}: timeline {items:?}");
    // A time that is shifted or repeated says so.
    for item in &items {
        let t = item["scheduled_for"].as_str().unwrap_or_default();
        if let Some((_, reason)) = case.declined.iter().find(|(d, _)| utc(d) == utc(t)) {
            assert_eq!(item["dst"], *reason, "{what}: {item}");
        }
    }
}

const BERLIN_SPRING: (&str, &str) = ("2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z");
const BERLIN_AUTUMN: (&str, &str) = ("2026-10-24T22:00:00Z", "2026-10-25T23:00:00Z");
const NEW_YORK_SPRING: (&str, &str) = ("2026-03-08T05:00:00Z", "2026-03-09T04:00:00Z");
const NEW_YORK_AUTUMN: (&str, &str) = ("2026-11-01T04:00:00Z", "2026-11-02T05:00:00Z");
