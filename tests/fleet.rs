//! The scaled-out fleet (issue 30): two `acp api` and two `acp worker`
//! processes of the built binary, no `acp serve`, on one PostgreSQL and one
//! Temporal dev server. Every background duty runs somewhere, the single
//! ones in exactly one process, taken over when that process dies.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use acp::reconcile::Reconciler;
use chrono::{DateTime, Utc};
use common::*;
use serde_json::{Value, json};
use sqlx::PgPool;
use temporalio_client::grpc::WorkflowService;
use temporalio_common::protos::temporal::api::schedule::v1::SchedulePatch;
use temporalio_common::protos::temporal::api::workflowservice::v1::PatchScheduleRequest;
use tonic::IntoRequest;

const FLEET_ENV: [(&str, &str); 3] = [
    ("ACP_AUTH_DISABLED", "true"),
    ("ACP_RECONCILE_INTERVAL", "0.5"),
    ("ACP_ALERT_INTERVAL", "0.5"),
];

/// This process's role in `duty`, from its `/readyz` (`None` when it does
/// not answer or does not carry the duty).
async fn role(http: &reqwest::Client, base: &str, duty: &str) -> Option<String> {
    let ready: Value = http
        .get(format!("{base}/readyz"))
        .send()
        .await
        .ok()?
        .json()
        .await
        .ok()?;
    ready["duties"]
        .as_array()?
        .iter()
        .find(|d| d["duty"] == duty)
        .and_then(|d| d["role"].as_str())
        .map(str::to_owned)
}

/// Waits until exactly one of `apis` leads `duty` and every other one
/// stands by; returns the leader's index.
async fn sole_leader(http: &reqwest::Client, apis: &[&ServeProcess], duty: &str) -> usize {
    eventually(Duration::from_secs(30), || async {
        let mut roles = Vec::new();
        for api in apis {
            roles.push(role(http, &api.base, duty).await?);
        }
        let leaders: Vec<usize> = (0..roles.len()).filter(|i| roles[*i] == "leader").collect();
        let rest_stand_by = roles
            .iter()
            .filter(|r| *r != "leader")
            .all(|r| r == "standby");
        (leaders.len() == 1 && rest_stand_by).then(|| leaders[0])
    })
    .await
}

async fn sync_state(http: &reqwest::Client, base: &str, id: &str) -> Option<String> {
    let body: Value = http
        .get(format!("{base}/v1/activities/{id}"))
        .send()
        .await
        .ok()?
        .json()
        .await
        .ok()?;
    body["schedule"]["sync_state"].as_str().map(str::to_owned)
}

/// Pauses the schedule in Temporal behind the service's back.
async fn pause_behind_the_back(address: &str, schedule_id: &str) {
    let mut client = acp::temporal::TemporalGateway::new(temporal_settings(address, "default"))
        .client()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    WorkflowService::patch_schedule(
        &mut client,
        PatchScheduleRequest {
            namespace: "default".into(),
            schedule_id: schedule_id.to_owned(),
            patch: Some(SchedulePatch {
                pause: "paused by hand".into(),
                ..Default::default()
            }),
            request_id: uuid::Uuid::new_v4().to_string(),
            ..Default::default()
        }
        .into_request(),
    )
    .await
    .unwrap_or_else(|e| panic!("pause behind the back: {e}"));
}

async fn paused_in_temporal(address: &str, schedule_id: &str) -> Option<bool> {
    describe_schedule(address, "default", schedule_id)
        .await
        .and_then(|d| d.schedule)
        .and_then(|s| s.state)
        .map(|s| s.paused)
}

/// Drift made by hand is put back by the fleet, whoever leads.
async fn drift_is_repaired(address: &str, schedule_id: &str) {
    pause_behind_the_back(address, schedule_id).await;
    assert_eq!(paused_in_temporal(address, schedule_id).await, Some(true));
    eventually(Duration::from_secs(30), || async {
        (paused_in_temporal(address, schedule_id).await == Some(false)).then_some(())
    })
    .await;
}

#[sqlx::test(migrations = "./migrations")]
async fn a_fleet_without_serve_syncs_repairs_drift_and_hands_the_duty_over(pool: PgPool) {
    let mut server = TemporalServer::start();
    let address = server.address();
    let mut apis = vec![
        ServeProcess::start_command("api", &pool, &address, "default", &FLEET_ENV).await,
        ServeProcess::start_command("api", &pool, &address, "default", &FLEET_ENV).await,
    ];
    // Workers serve their probes on ACP_PROBE_LISTEN.
    let probes: Vec<String> = (0..2)
        .map(|_| format!("127.0.0.1:{}", free_port()))
        .collect();
    let _workers: Vec<ServeProcess> = probes
        .iter()
        .map(|probe| {
            let mut env = FLEET_ENV.to_vec();
            env.push(("ACP_PROBE_LISTEN", probe));
            ServeProcess::spawn_command("worker", &pool, &address, "default", &env)
        })
        .collect();
    let http = reqwest::Client::new();
    for probe in &probes {
        let base = format!("http://{probe}");
        eventually(Duration::from_secs(60), || async {
            role(&http, &base, "temporal_worker")
                .await
                .filter(|r| r == "shared")
        })
        .await;
        // Single duties live with the API processes.
        assert_eq!(role(&http, &base, "reconcile").await, None);
    }
    // Exactly one API process reconciles, and one evaluates alerts.
    sole_leader(&http, &[&apis[0], &apis[1]], "reconcile").await;
    sole_leader(&http, &[&apis[0], &apis[1]], "alert_evaluation").await;
    for api in &apis {
        assert_eq!(
            role(&http, &api.base, "event_dispatch").await.as_deref(),
            Some("shared")
        );
        let metrics = http
            .get(format!("{}/metrics", api.base))
            .send()
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .text()
            .await
            .unwrap_or_default();
        assert!(
            metrics.contains("acp_duty_leader{duty=\"reconcile\"}"),
            "{metrics}"
        );
    }

    // Created while Temporal is down: accepted, pending, and synced by the
    // fleet once Temporal is back.
    server.stop();
    let created = http
        .post(format!("{}/v1/activities", apis[1].base))
        .json(&interval_activity("PT45S"))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(created.status(), 201);
    let created: Value = created.json().await.unwrap_or_default();
    assert_eq!(created["schedule"]["sync_state"], "pending", "{created}");
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    let schedule_id = format!("activity-{id}");
    server.restart();
    eventually(Duration::from_secs(60), || async {
        (sync_state(&http, &apis[0].base, &id).await.as_deref() == Some("synced")).then_some(())
    })
    .await;
    assert_eq!(
        paused_in_temporal(&address, &schedule_id).await,
        Some(false)
    );

    // Drift is repaired by the current holder...
    drift_is_repaired(&address, &schedule_id).await;

    // ...and, once it is killed -9, by the process that takes the duty over.
    let leader = sole_leader(&http, &[&apis[0], &apis[1]], "reconcile").await;
    apis[leader].kill9();
    let survivor = apis.remove(1 - leader);
    eventually(Duration::from_secs(30), || async {
        (role(&http, &survivor.base, "reconcile").await.as_deref() == Some("leader")).then_some(())
    })
    .await;
    drift_is_repaired(&address, &schedule_id).await;
    assert_eq!(
        role(&http, &survivor.base, "alert_evaluation")
            .await
            .as_deref(),
        Some("leader")
    );
}

fn utc(s: &str) -> DateTime<Utc> {
    s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
}

/// A reconcile loop of its own (as one process of a fleet would run it),
/// reading the shared driven clock.
fn reconcile_loop(
    app: &TestApp,
    clock: &Arc<AtomicI64>,
) -> (
    tokio::task::JoinHandle<()>,
    tokio::sync::oneshot::Sender<()>,
) {
    let clock = clock.clone();
    let reconciler = Reconciler::new(&app.state.services).with_clock(Arc::new(move || {
        DateTime::from_timestamp(clock.load(Ordering::SeqCst), 0).unwrap_or_default()
    }));
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let handle = tokio::spawn(reconciler.run(Duration::from_millis(200), async {
        let _ = stop_rx.await;
    }));
    (handle, stop_tx)
}

fn leads(app: &TestApp) -> bool {
    app.state
        .services
        .duties
        .snapshot()
        .iter()
        .any(|(d, r)| d.as_str() == "reconcile" && r.as_str() == "leader")
}

/// A time the DST policy wants and the engine does not fire (Berlin's 02:30
/// on 2026-03-29, shifted to 01:00Z) is started once by two reconcile
/// loops side by side, also when the loop holding the duty dies just before
/// the time is due. The loops read a driven clock (a process cannot be
/// moved to that night), each with its own pool and lease, as two
/// processes would.
#[sqlx::test(migrations = "./migrations")]
async fn a_dst_extra_time_starts_once_when_its_holder_dies_before_it_is_due(pool: PgPool) {
    let server = shared_temporal();
    let namespace = new_namespace(&server.address()).await;
    let first = TestApp::spawn(pool.clone(), &server.address(), &namespace).await;
    let second = TestApp::spawn(pool.clone(), &server.address(), &namespace).await;
    let worker = first.worker(false, Default::default());
    let created = first
        .create(&json!({
            "name": "dst-extra-fleet",
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
    let extra = "2026-03-29T01:00:00Z";
    let clock = Arc::new(AtomicI64::new(utc("2026-03-29T00:59:00Z").timestamp()));

    // The first loop takes the duty; the second stands by.
    let (first_loop, _first_stop) = reconcile_loop(&first, &clock);
    eventually(Duration::from_secs(10), || async {
        leads(&first).then_some(())
    })
    .await;
    let (second_loop, second_stop) = reconcile_loop(&second, &clock);
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert!(!leads(&second), "two holders of the reconcile duty");
    assert!(first.runs_of(&id).await.is_empty());

    // The holder dies (its task and its lease connection gone, as with
    // kill -9) one second before the time is due.
    clock.store(utc("2026-03-29T00:59:59Z").timestamp(), Ordering::SeqCst);
    first_loop.abort();
    let _ = first_loop.await;
    clock.store(utc("2026-03-29T01:00:05Z").timestamp(), Ordering::SeqCst);
    eventually(Duration::from_secs(30), || async {
        leads(&second).then_some(())
    })
    .await;
    let run = eventually(Duration::from_secs(90), || async {
        first
            .runs_of(&id)
            .await
            .into_iter()
            .find(|r| r["status"] == "succeeded")
    })
    .await;
    assert_eq!(
        run["workflow_id"],
        format!("activity-{id}:2026-03-29T01:00:00+00:00"),
        "{run}"
    );
    assert_eq!(run["scheduled_for"], extra, "{run}");

    // The first comes back as a standby; later passes of either start
    // nothing more.
    let (again, again_stop) = reconcile_loop(&first, &clock);
    clock.store(utc("2026-03-29T01:30:00Z").timestamp(), Ordering::SeqCst);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let executions: Vec<String> =
        executions_matching(&first, "WorkflowType = 'RunActivityWorkflow'")
            .await
            .into_iter()
            .map(|e| e.workflow_id)
            .filter(|w| w.starts_with(&format!("activity-{id}:")))
            .collect();
    assert_eq!(executions.len(), 1, "{executions:?}");
    assert_eq!(first.runs_of(&id).await.len(), 1);
    let _ = second_stop.send(());
    let _ = again_stop.send(());
    let _ = second_loop.await;
    let _ = again.await;
    worker.stop().await;
}

/// The deployment examples describe the shape the test above runs: API and
/// worker processes and no `serve`, probes on `/readyz` and `/healthz`, and
/// only settings the binary knows.
#[test]
fn the_deployment_examples_are_the_tested_fleet() {
    let help = std::process::Command::new(acp_bin())
        .arg("--help")
        .output()
        .unwrap_or_else(|e| panic!("acp --help: {e}"));
    let help = String::from_utf8_lossy(&help.stdout).into_owned();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for file in ["deploy/kubernetes.yaml", "deploy/docker-compose.fleet.yml"] {
        let text = std::fs::read_to_string(root.join(file)).unwrap_or_else(|e| panic!("{e}"));
        let commands: Vec<&str> = ["\"api\"", "\"worker\"", "\"serve\"", "\"migrate\""]
            .into_iter()
            .filter(|c| text.contains(&format!("[{c}]")))
            .collect();
        assert_eq!(
            commands,
            ["\"api\"", "\"worker\"", "\"migrate\""],
            "{file} runs other processes"
        );
        assert!(text.contains("/readyz"), "{file} has no readiness probe");
        for word in text.split(|c: char| !(c.is_ascii_uppercase() || c == '_')) {
            let setting =
                word.starts_with("ACP_") || word.starts_with("TEMPORAL_") || word == "DATABASE_URL";
            if setting {
                assert!(
                    help.contains(&format!("env: {word}="))
                        || help.contains(&format!("env: {word}]")),
                    "{file} sets {word}, which acp does not read"
                );
            }
        }
    }
}

/// A count from the test's database, for one activity (`$1`).
async fn count(pool: &PgPool, sql: &str, activity: &str) -> i64 {
    let id: uuid::Uuid = activity.parse().unwrap_or_else(|e| panic!("{e}"));
    sqlx::query_as::<_, (i64,)>(sql)
        .bind(id)
        .fetch_one(pool)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .0
}

async fn create_in(http: &reqwest::Client, base: &str, body: Value) -> String {
    let created: Value = http
        .post(format!("{base}/v1/activities"))
        .json(&body)
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .json()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    created["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{created}"))
        .to_owned()
}

/// The fleet rolled under a burst: 400 events posted to two API processes
/// and a PT1S schedule firing, while a worker is killed -9, an API is
/// killed -9 (its unanswered posts re-sent to the other) and the other
/// worker is stopped with SIGTERM, each restarted. Every event has exactly
/// one run and one execution, no nominal time runs twice, nothing is stuck.
#[sqlx::test(migrations = "./migrations")]
async fn a_rolling_restart_under_a_burst_runs_every_event_once(pool: PgPool) {
    const EVENTS: usize = 400;
    let temporal = shared_temporal();
    let address = temporal.address();
    let namespace = new_namespace(&address).await;
    let start_api = || ServeProcess::start_command("api", &pool, &address, &namespace, &FLEET_ENV);
    let start_worker =
        || ServeProcess::spawn_command("worker", &pool, &address, &namespace, &FLEET_ENV);
    let mut apis = [start_api().await, start_api().await];
    let mut workers = [start_worker(), start_worker()];
    let http = reqwest::Client::new();
    let events_id = create_in(
        &http,
        &apis[0].base,
        json!({
            "name": "fleet-burst",
            "trigger": {"type": "event", "event_types": ["fleet.burst"]},
            "tasks": [{"task_type": "noop"}]
        }),
    )
    .await;
    let ticking_id = create_in(&http, &apis[1].base, interval_activity("PT1S")).await;

    // Each event goes to one API and, unanswered there, to the other, until
    // one accepts it.
    let bases = Arc::new(std::sync::Mutex::new(
        apis.iter().map(|a| a.base.clone()).collect::<Vec<_>>(),
    ));
    let burst = {
        let bases = bases.clone();
        let events = (0..EVENTS)
            .map(|n| json!({"event_id": format!("e-{n}"), "event_type": "fleet.burst", "source": "fleet", "payload": {"n": n}}))
            .collect();
        post_events_until_accepted(http.clone(), events, move |n, attempt| {
            let bases = bases.lock().unwrap_or_else(|p| p.into_inner());
            bases[(n + attempt) % bases.len()].clone()
        })
    };
    let events_in = |at_least: i64| {
        let pool = pool.clone();
        async move {
            eventually(Duration::from_secs(120), || async {
                let (n,): (i64,) = sqlx::query_as("SELECT count(*) FROM events")
                    .fetch_one(&pool)
                    .await
                    .ok()?;
                (n >= at_least).then_some(())
            })
            .await
        }
    };

    // The roll: a worker killed -9, an API killed -9, the other worker
    // stopped; each comes back.
    events_in(80).await;
    workers[0].kill9();
    workers[0] = start_worker();
    events_in(160).await;
    apis[0].kill9();
    apis[0] = start_api().await;
    bases.lock().unwrap_or_else(|p| p.into_inner())[0] = apis[0].base.clone();
    events_in(240).await;
    workers[1].sigterm();
    let exit = workers[1].wait_exit(Duration::from_secs(60)).await;
    assert!(exit.success(), "worker stopped with {exit}");
    workers[1] = start_worker();

    let answered = burst.await.unwrap_or_else(|e| panic!("{e}"));
    assert!(
        answered.iter().all(|a| *a),
        "some events were never accepted"
    );

    // Every event exactly one run, succeeded.
    eventually(Duration::from_secs(240), || async {
        let done = count(
            &pool,
            "SELECT count(*) FROM activity_runs WHERE activity_id = $1 AND status = 'succeeded'",
            &events_id,
        )
        .await;
        (done == EVENTS as i64).then_some(())
    })
    .await;
    // The schedule stops firing; whatever it started ends.
    let deleted = http
        .delete(format!("{}/v1/activities/{ticking_id}", apis[1].base))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(deleted.status(), 204);
    eventually(Duration::from_secs(120), || async {
        let open = count(
            &pool,
            "SELECT count(*) FROM activity_runs WHERE activity_id = $1 AND status IN ('queued', 'running')",
            &ticking_id,
        )
        .await;
        (open == 0).then_some(())
    })
    .await;

    let runs = count(
        &pool,
        "SELECT count(*) FROM activity_runs WHERE activity_id = $1",
        &events_id,
    )
    .await;
    let workflows = count(
        &pool,
        "SELECT count(DISTINCT workflow_id) FROM activity_runs WHERE activity_id = $1",
        &events_id,
    )
    .await;
    assert_eq!((runs, workflows), (EVENTS as i64, EVENTS as i64));
    let executions = list_executions(
        &address,
        &namespace,
        &format!("WorkflowType = 'RunActivityWorkflow' AND WorkflowId STARTS_WITH 'activity-{events_id}:'"),
    )
    .await;
    let distinct: std::collections::HashSet<&str> =
        executions.iter().map(|e| e.workflow_id.as_str()).collect();
    assert_eq!((executions.len(), distinct.len()), (EVENTS, EVENTS));
    // No dispatch left pending.
    let (pending,): (i64,) =
        sqlx::query_as("SELECT count(*) FROM event_dispatches WHERE state = 'pending'")
            .fetch_one(&pool)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(pending, 0);
    // The schedule fired through the roll, and no nominal time ran twice.
    let ticks = count(
        &pool,
        "SELECT count(*) FROM activity_runs WHERE activity_id = $1 AND status = 'succeeded'",
        &ticking_id,
    )
    .await;
    assert!(ticks > 0, "the PT1S schedule never ran");
    let doubled = count(
        &pool,
        "SELECT count(*) FROM (SELECT scheduled_for FROM activity_runs WHERE activity_id = $1 \
         AND scheduled_for IS NOT NULL GROUP BY scheduled_for HAVING count(*) > 1) d",
        &ticking_id,
    )
    .await;
    assert_eq!(doubled, 0);
}
