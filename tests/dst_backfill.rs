//! Backfill over past DST days runs exactly the times of the trigger's `dst`
//! policy, each under its contract workflow ID; `dry_run` answers the same
//! and runs nothing; the timeline agrees and names the times the policy
//! declines (`dst_gap`, `dst_repeat`). And a fire of the engine that the
//! policy excludes, delivered through the launcher, is recorded as a
//! skipped run with reason `dst_policy` (PRODUCT.md 5a).
//!
//! Expected times are written out here, not computed by the service's
//! calendar: Berlin is UTC+1/+2, New York UTC-5/-4.

mod common;

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

#[sqlx::test(migrations = "./migrations")]
async fn berlin_backfills_run_exactly_the_policys_times(pool: PgPool) {
    let app = app(pool).await;
    let worker = app.worker(false, Default::default());
    let cases = [
        // 02:30 does not exist on 2026-03-29: shifted to 03:00 CEST (01:00Z),
        // which the engine does not fire, or not run at all.
        Case {
            cron: "30 2 * * *",
            zone: "Europe/Berlin",
            repeated: "first",
            skipped: "shift",
            range: BERLIN_SPRING,
            runs: &["2026-03-29T01:00:00Z"],
            declined: &[],
        },
        Case {
            cron: "30 2 * * *",
            zone: "Europe/Berlin",
            repeated: "first",
            skipped: "skip",
            range: BERLIN_SPRING,
            runs: &[],
            declined: &[("2026-03-29T01:00:00Z", "dst_gap")],
        },
        // 02:30 happens twice on 2026-10-25: 00:30Z (CEST) and 01:30Z (CET);
        // the engine by itself fires only the second.
        Case {
            cron: "30 2 * * *",
            zone: "Europe/Berlin",
            repeated: "first",
            skipped: "shift",
            range: BERLIN_AUTUMN,
            runs: &["2026-10-25T00:30:00Z"],
            declined: &[("2026-10-25T01:30:00Z", "dst_repeat")],
        },
        Case {
            cron: "30 2 * * *",
            zone: "Europe/Berlin",
            repeated: "last",
            skipped: "shift",
            range: BERLIN_AUTUMN,
            runs: &["2026-10-25T01:30:00Z"],
            declined: &[("2026-10-25T00:30:00Z", "dst_repeat")],
        },
        Case {
            cron: "30 2 * * *",
            zone: "Europe/Berlin",
            repeated: "both",
            skipped: "shift",
            range: BERLIN_AUTUMN,
            runs: &["2026-10-25T00:30:00Z", "2026-10-25T01:30:00Z"],
            declined: &[],
        },
        // 01:30 happens once; but the engine, whose walk re-tries the hour
        // before a repeat one hour later, fires it again at 00:30Z (02:30
        // CEST, a repeated wall time). Once a day, whatever the policy.
        Case {
            cron: "30 1 * * *",
            zone: "Europe/Berlin",
            repeated: "both",
            skipped: "skip",
            range: BERLIN_AUTUMN,
            runs: &["2026-10-24T23:30:00Z"],
            declined: &[("2026-10-25T00:30:00Z", "dst_repeat")],
        },
    ];
    for case in &cases {
        check(&app, case).await;
    }
    worker.stop().await;
}

#[sqlx::test(migrations = "./migrations")]
async fn new_york_backfills_run_exactly_the_policys_times(pool: PgPool) {
    let app = app(pool).await;
    let worker = app.worker(false, Default::default());
    let cases = [
        // 02:30 does not exist on 2026-03-08: 03:00 EDT is 07:00Z.
        Case {
            cron: "30 2 * * *",
            zone: "America/New_York",
            repeated: "first",
            skipped: "shift",
            range: NEW_YORK_SPRING,
            runs: &["2026-03-08T07:00:00Z"],
            declined: &[],
        },
        Case {
            cron: "30 2 * * *",
            zone: "America/New_York",
            repeated: "first",
            skipped: "skip",
            range: NEW_YORK_SPRING,
            runs: &[],
            declined: &[("2026-03-08T07:00:00Z", "dst_gap")],
        },
        // 01:30 happens twice on 2026-11-01: 05:30Z (EDT) and 06:30Z (EST);
        // the engine by itself fires both.
        Case {
            cron: "30 1 * * *",
            zone: "America/New_York",
            repeated: "first",
            skipped: "shift",
            range: NEW_YORK_AUTUMN,
            runs: &["2026-11-01T05:30:00Z"],
            declined: &[("2026-11-01T06:30:00Z", "dst_repeat")],
        },
        Case {
            cron: "30 1 * * *",
            zone: "America/New_York",
            repeated: "last",
            skipped: "shift",
            range: NEW_YORK_AUTUMN,
            runs: &["2026-11-01T06:30:00Z"],
            declined: &[("2026-11-01T05:30:00Z", "dst_repeat")],
        },
        Case {
            cron: "30 1 * * *",
            zone: "America/New_York",
            repeated: "both",
            skipped: "shift",
            range: NEW_YORK_AUTUMN,
            runs: &["2026-11-01T05:30:00Z", "2026-11-01T06:30:00Z"],
            declined: &[],
        },
    ];
    for case in &cases {
        check(&app, case).await;
    }
    worker.stop().await;
}

/// Asks the schedule itself to backfill `[start, end]` (both inclusive), as
/// Temporal's own tools would, without the service.
async fn raw_backfill(app: &TestApp, schedule_id: &str, start: DateTime<Utc>, end: DateTime<Utc>) {
    let mut client = app
        .state
        .services
        .activities
        .gateway()
        .client()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let stamp = |t: DateTime<Utc>| prost_wkt_types::Timestamp {
        seconds: t.timestamp(),
        nanos: 0,
    };
    let request = PatchScheduleRequest {
        namespace: app.namespace.clone(),
        schedule_id: schedule_id.to_owned(),
        patch: Some(SchedulePatch {
            backfill_request: vec![BackfillRequest {
                start_time: Some(stamp(start)),
                end_time: Some(stamp(end)),
                overlap_policy: ScheduleOverlapPolicy::AllowAll as i32,
            }],
            ..Default::default()
        }),
        request_id: uuid::Uuid::new_v4().to_string(),
        ..Default::default()
    };
    WorkflowService::patch_schedule(&mut client, request.into_request())
        .await
        .unwrap_or_else(|e| panic!("backfill: {e}"));
}

/// The engine fires Berlin's second 02:30 and New York's second 01:30
/// (among others); under `repeated: first` the launcher, handed such a fire
/// by Temporal itself (a schedule backfill, bypassing the service), records
/// it as a skipped run with reason `dst_policy` and runs nothing; a backfill
/// of the day then runs the first occurrence; the timeline calls the skipped
/// one `dst_repeat`.
#[sqlx::test(migrations = "./migrations")]
async fn the_launcher_skips_a_fire_the_policy_excludes(pool: PgPool) {
    let app = app(pool).await;
    let worker = app.worker(false, Default::default());
    // `from`: where the raw backfill starts. The engine's walk reaches
    // Berlin's second 02:30 from before the repeat (from inside the first
    // copy it does not), and New York's second 01:30 from inside the first
    // copy; starting after the first occurrence keeps that one out.
    for (cron, zone, from, excluded, wanted, range) in [
        (
            "30 2 * * *",
            "Europe/Berlin",
            "2026-10-24T13:30:00Z",
            "2026-10-25T01:30:00Z",
            "2026-10-25T00:30:00Z",
            BERLIN_AUTUMN,
        ),
        (
            "30 1 * * *",
            "America/New_York",
            "2026-11-01T05:31:00Z",
            "2026-11-01T06:30:00Z",
            "2026-11-01T05:30:00Z",
            NEW_YORK_AUTUMN,
        ),
    ] {
        let id = create(&app, cron, zone, "first", "shift").await;
        let schedule_id = format!("activity-{id}");
        // The engine's fire, straight from Temporal, bypassing the service
        // (a backfill of exactly `[t, t]` inside a repeated hour would find
        // another time: the walk then starts inside the repeat).
        raw_backfill(&app, &schedule_id, utc(from), utc(excluded)).await;
        let skipped = eventually(Duration::from_secs(90), || async {
            app.runs_of(&id).await.into_iter().next()
        })
        .await;
        assert_eq!(
            (
                skipped["status"].clone(),
                skipped["skip_reason"].clone(),
                skipped["workflow_id"].clone()
            ),
            (
                json!("skipped"),
                json!("dst_policy"),
                json!(contract_id(&id, excluded))
            ),
            "{zone}: {skipped}"
        );
        // The launcher ended without starting a run.
        eventually(Duration::from_secs(60), || async {
            let closed = executions_matching(
                &app,
                &format!(
                    "WorkflowType = 'LaunchScheduledRunWorkflow' AND ExecutionStatus = 'Completed' \
                     AND WorkflowId = 'launcher-{id}-{}'",
                    utc(excluded).format("%Y-%m-%dT%H:%M:%SZ")
                ),
            )
            .await;
            (!closed.is_empty()).then_some(())
        })
        .await;
        assert!(run_executions(&app, &id).await.is_empty(), "{zone}");
        // The service's backfill of the day runs the policy's occurrence and
        // declines the other one.
        let (status, real) = backfill(&app, &id, range, false).await;
        assert_eq!(status, 202, "{real}");
        assert_eq!(
            answer(&real),
            // The first occurrence is the earlier instant.
            vec![
                (utc(wanted), "backfilled".to_owned(), None),
                (
                    utc(excluded),
                    "skipped".to_owned(),
                    Some("dst_repeat".to_owned())
                ),
            ],
            "{zone}: {real}"
        );
        let executed = eventually(Duration::from_secs(90), || async {
            let ids = run_executions(&app, &id).await;
            (!ids.is_empty()).then_some(ids)
        })
        .await;
        assert_eq!(executed, vec![contract_id(&id, wanted)], "{zone}");
        let runs = eventually(Duration::from_secs(90), || async {
            let runs = app.runs_of(&id).await;
            (runs.len() == 2 && runs.iter().any(|r| r["status"] == "succeeded")).then_some(runs)
        })
        .await;
        assert!(
            runs.iter()
                .any(|r| r["workflow_id"] == contract_id(&id, wanted) && r["status"] == "succeeded"),
            "{zone}: {runs:?}"
        );
        // The timeline names the skipped fire.
        let items = timeline(&app, &id, range).await;
        let entry = items
            .iter()
            .find(|i| utc(i["scheduled_for"].as_str().unwrap_or_default()) == utc(excluded))
            .unwrap_or_else(|| panic!("{zone}: {excluded} not on the timeline: {items:?}"));
        assert_eq!(
            (
                entry["status"].clone(),
                entry["reason"].clone(),
                entry["dst"].clone()
            ),
            (json!("skipped"), json!("dst_repeat"), json!("dst_repeat")),
            "{zone}: {entry}"
        );
    }
    worker.stop().await;
}

/// A range holding more than 1000 nominal times is cut, and the answer says
/// where to continue; continuing from there covers the rest.
#[sqlx::test(migrations = "./migrations")]
async fn a_long_backfill_is_cut_and_says_where_to_continue(pool: PgPool) {
    let app = app(pool).await;
    let created = app
        .create(&json!({
            "name": "every-minute",
            "enabled": false,
            "trigger": {"type": "cron", "cron": "* * * * *", "timezone": "Europe/Berlin"},
            "tasks": [{"task_type": "noop"}]
        }))
        .await;
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    // 2026-10-25 in Berlin has 25 hours: 1500 minutes from 22:00Z the day
    // before to 23:00Z; the repeated hour's first copy runs (default
    // `first`), its second copy is declined.
    let range = ("2026-10-24T22:00:00Z", "2026-10-25T23:00:00Z");
    let (status, first) = backfill(&app, &id, range, true).await;
    assert_eq!(status, 200, "{first}");
    let first_times = answer(&first);
    let would_run = |a: &[(DateTime<Utc>, String, Option<String>)]| {
        a.iter()
            .filter(|(_, action, _)| action == "backfilled")
            .count()
    };
    assert_eq!(would_run(&first_times), 1000, "{first}");
    let next = first["next_start"].as_str().unwrap_or_default().to_owned();
    assert!(!next.is_empty(), "{first}");
    assert!(
        first_times.iter().all(|(t, _, _)| *t < utc(&next)),
        "{first}"
    );
    let (status, rest) = backfill(&app, &id, (&next, range.1), true).await;
    assert_eq!(status, 200, "{rest}");
    assert_eq!(rest["next_start"], Value::Null, "{rest}");
    let rest_times = answer(&rest);
    // 1500 minutes of the day, of which the 60 of the repeated hour's
    // second copy are declined: 1440 run, 60 dst_repeat.
    assert_eq!(would_run(&first_times) + would_run(&rest_times), 1440);
    let declined: Vec<&(DateTime<Utc>, String, Option<String>)> = first_times
        .iter()
        .chain(&rest_times)
        .filter(|(_, action, _)| action == "skipped")
        .collect();
    assert_eq!(declined.len(), 60);
    assert!(
        declined
            .iter()
            .all(|(t, _, r)| r.as_deref() == Some("dst_repeat")
                && *t >= utc("2026-10-25T01:00:00Z")
                && *t < utc("2026-10-25T02:00:00Z"))
    );
    // Nothing ran (the activity is disabled: its schedule fires nothing).
    assert!(app.runs_of(&id).await.is_empty());
}

/// A time the policy wants and the engine does not fire (Berlin's 02:30 on
/// 2026-03-29, shifted to 03:00 CEST = 01:00Z) is started by the
/// reconciler's pass once it is due, once, under its contract workflow ID.
/// The pass is driven with the clock of that night (the activity's creation
/// moved back to before it, as a test may); the launcher then decides with
/// today's clock, so the trigger is `catchup` with a limit the months since
/// do not reach.
#[sqlx::test(migrations = "./migrations")]
async fn the_reconciler_starts_an_extra_time_once_it_is_due(pool: PgPool) {
    let app = app(pool.clone()).await;
    let worker = app.worker(false, Default::default());
    let created = app
        .create(&json!({
            "name": "dst-extra",
            "trigger": {
                "type": "cron", "cron": "30 2 * * *", "timezone": "Europe/Berlin",
                "misfire_policy": "catchup", "catchup_limit": 1000
            },
            "tasks": [{"task_type": "noop"}]
        }))
        .await;
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    let uuid: uuid::Uuid = id.parse().unwrap_or_else(|e| panic!("{e}"));
    sqlx::query("UPDATE activities SET created_at = '2026-03-01T00:00:00Z' WHERE id = $1")
        .bind(uuid)
        .execute(&pool)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let services = &app.state.services;
    let activity = services
        .activities
        .get(uuid)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let extra = "2026-03-29T01:00:00Z";
    let pass = |now: &'static str| {
        let activity = activity.clone();
        async move {
            services
                .schedules
                .start_due_dst_extras(&[activity], utc(now))
                .await
        }
    };
    // Not due yet: nothing.
    assert_eq!(pass("2026-03-29T00:59:59Z").await, 0);
    // Due: started once.
    assert_eq!(pass("2026-03-29T01:00:05Z").await, 1);
    let run = eventually(Duration::from_secs(90), || async {
        app.runs_of(&id)
            .await
            .into_iter()
            .find(|r| r["status"] == "succeeded")
    })
    .await;
    assert_eq!(run["workflow_id"], contract_id(&id, extra), "{run}");
    // Later passes find it run: nothing more starts.
    assert_eq!(pass("2026-03-29T01:00:10Z").await, 0);
    assert_eq!(pass("2026-03-29T01:59:00Z").await, 0);
    assert_eq!(
        run_executions(&app, &id).await,
        vec![contract_id(&id, extra)]
    );
    assert_eq!(app.runs_of(&id).await.len(), 1);
    // The timeline shows the shifted time run.
    let items = timeline(&app, &id, BERLIN_SPRING).await;
    assert_eq!(items.len(), 1, "{items:?}");
    assert_eq!(
        (
            items[0]["scheduled_for"].clone(),
            items[0]["status"].clone(),
            items[0]["dst"].clone()
        ),
        (json!(extra), json!("succeeded"), json!("dst_gap")),
        "{items:?}"
    );
    worker.stop().await;
}
