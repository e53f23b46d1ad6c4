//! Alerts against real Temporal: a stopped worker and a stopped Temporal
//! open `late_start` (the evaluator reads PostgreSQL only), a blocking
//! webhook opens `stuck`, three failures open `failure_streak`; each opens
//! once per incident and resolves when the expectation holds again.
//!
//! The tests of this binary run one at a time (`SERIAL`): the
//! `acp_alerts_open` gauge is process-wide, and each test's evaluator sets
//! it from its own database.

mod common;

use std::time::Duration;

use chrono::{DateTime, Utc};
use common::*;
use serde_json::{Value, json};
use sqlx::PgPool;

static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The evaluation period of these tests.
const PERIOD: Duration = Duration::from_secs(1);

/// The alert evaluator as `acp api` runs it, until dropped or stopped.
struct Evaluating {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
}

impl Evaluating {
    fn start(app: &TestApp) -> Self {
        let evaluator = acp::alerting::Evaluator::new(&app.state.services);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            evaluator
                .run(PERIOD, async {
                    let _ = stopped.await;
                })
                .await
        });
        Self {
            stop: Some(stop),
            task,
        }
    }

    async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let _ = (&mut self.task).await;
    }
}

async fn alerts_of(app: &TestApp, id: &str, state: Option<&str>) -> Vec<Value> {
    let filter = state.map(|s| format!("&state={s}")).unwrap_or_default();
    let (status, page) = json(
        app.get(&format!("/v1/alerts?activity_id={id}{filter}"))
            .await,
    )
    .await;
    assert_eq!(status, 200, "{page}");
    page["items"].as_array().cloned().unwrap_or_default()
}

/// The value of one Prometheus series, 0 when it is absent.
async fn metric(app: &TestApp, series: &str) -> f64 {
    let text = app.get("/metrics").await.text().await.unwrap_or_default();
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
        .unwrap_or(0.0)
}

async fn open_alert_of_kind(app: &TestApp, id: &str, kind: &str, deadline: Duration) -> Value {
    eventually(deadline, || async {
        alerts_of(app, id, Some("open"))
            .await
            .into_iter()
            .find(|a| a["kind"] == kind)
    })
    .await
}

async fn resolved(app: &TestApp, alert_id: &str, deadline: Duration) -> Value {
    eventually(deadline, || async {
        let (_, alert) = json(app.get(&format!("/v1/alerts/{alert_id}")).await).await;
        (alert["state"] == "resolved").then_some(alert)
    })
    .await
}

fn every_two_seconds(name: &str) -> Value {
    json!({
        "name": name,
        "trigger": {"type": "interval", "every": "PT2S"},
        "tasks": [{"task_type": "noop"}],
        "alerts": {"start_within": "PT5S"}
    })
}

async fn first_success(app: &TestApp, id: &str) {
    eventually(Duration::from_secs(60), || async {
        app.runs_of(id)
            .await
            .iter()
            .any(|r| r["status"] == "succeeded")
            .then_some(())
    })
    .await;
}

/// Stops the worker between two runs: right after one ended, long before
/// the next fire of a two-second schedule. Stopped in the middle of a run,
/// the run would stay `running` until the worker returns, and Temporal's
/// fires meanwhile would be overlap-skips behind a running run, not misses.
async fn stop_between_runs(app: &TestApp, id: &str, worker: acp::temporal::worker::WorkerHandle) {
    eventually(Duration::from_secs(30), || async {
        let runs = app.runs_of(id).await;
        let quiet = runs
            .iter()
            .all(|r| !matches!(r["status"].as_str(), Some("running" | "queued")));
        let just_ended = runs
            .iter()
            .filter_map(|r| r["finished_at"].as_str())
            .filter_map(|t| DateTime::parse_from_rfc3339(t).ok())
            .max()
            .is_some_and(|t| {
                Utc::now() - t.with_timezone(&Utc) < chrono::Duration::milliseconds(600)
            });
        (quiet && just_ended).then_some(())
    })
    .await;
    worker.stop().await;
}

#[sqlx::test(migrations = "./migrations")]
async fn late_start_opens_when_the_worker_stops_and_resolves_when_it_returns(pool: PgPool) {
    let _serial = SERIAL.lock().await;
    let server = shared_temporal();
    let namespace = new_namespace(&server.address()).await;
    let app = TestApp::spawn(pool, &server.address(), &namespace).await;
    let worker = app.worker(true, Default::default());
    let mut body = every_two_seconds("late-start");
    body["alerts"]["missed_fires"] = json!(true);
    let created = app.create(&body).await;
    assert_eq!(
        created["alerts"],
        json!({"start_within": "PT5S", "missed_fires": true})
    );
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    // Alert notifications go to a subscriber, in order per alert.
    let sink = WebhookSink::start(200, Duration::ZERO).await;
    let (status, subscription) = json(
        app.post(
            "/v1/subscriptions",
            &json!({"url": sink.url, "types": ["alert.opened", "alert.resolved"]}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 201, "{subscription}");
    let dispatcher = app.state.services.notifications.clone();
    let (stop_dispatcher, dispatcher_stopped) = tokio::sync::oneshot::channel::<()>();
    let dispatching = tokio::spawn(async move {
        dispatcher
            .run_dispatcher(Duration::from_millis(300), async {
                let _ = dispatcher_stopped.await;
            })
            .await
    });
    let evaluating = Evaluating::start(&app);
    first_success(&app, &id).await;

    // Healthy for a while: nothing opens.
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert!(alerts_of(&app, &id, None).await.is_empty());
    let gauge = format!("acp_alerts_open{{activity=\"{id}\",kind=\"late_start\"}}");
    let opened_counter = "acp_alerts_opened_total{kind=\"late_start\"}";
    let resolved_counter = "acp_alerts_resolved_total{kind=\"late_start\"}";
    let (opened_before, resolved_before) = (
        metric(&app, opened_counter).await,
        metric(&app, resolved_counter).await,
    );

    stop_between_runs(&app, &id, worker).await;
    let stopped = Utc::now();
    let last_run = app
        .runs_of(&id)
        .await
        .iter()
        .filter(|r| r["status"] != "skipped")
        .map(|r| at(&r["scheduled_for"]))
        .max();
    let alert = open_alert_of_kind(&app, &id, "late_start", Duration::from_secs(30)).await;
    let opened_at = at(&alert["opened_at"]);
    let due = at(&alert["detail"]["scheduled_for"]);
    assert!(
        last_run.is_some_and(|t| due > t),
        "{alert} after {last_run:?}"
    );
    // Within one evaluation period after the 5 s (plus a moment for the pass).
    let late = (opened_at - due).to_std().unwrap_or_default();
    assert!(
        late >= Duration::from_secs(5)
            && late <= Duration::from_secs(5) + PERIOD + Duration::from_millis(700),
        "opened {late:?} after the nominal time it is about: {alert}"
    );
    eprintln!(
        "late_start opened {late:?} after its nominal time, {:?} after the worker stopped",
        (opened_at - stopped).to_std().unwrap_or_default()
    );
    assert!(opened_at - stopped < chrono::Duration::seconds(10));
    // The fires Temporal dropped while nobody ran them are missed.
    let missed = open_alert_of_kind(&app, &id, "missed_fire", Duration::from_secs(30)).await;
    assert!(missed["detail"]["missed"].as_u64() >= Some(1), "{missed}");
    assert_eq!(metric(&app, &gauge).await, 1.0);
    assert!(metric(&app, opened_counter).await >= opened_before + 1.0);
    let (_, activity) = json(app.get(&format!("/v1/activities/{id}")).await).await;
    let open_ids: Vec<&Value> = activity["open_alerts"]
        .as_array()
        .map(|a| a.iter().map(|a| &a["id"]).collect())
        .unwrap_or_default();
    assert!(open_ids.contains(&&alert["id"]), "{activity}");

    // Still one incident however many evaluations see it.
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(alerts_of(&app, &id, None).await.len(), 2);

    let worker = app.worker(true, Default::default());
    let back = Utc::now();
    let alert_id = alert["id"].as_str().unwrap_or_default();
    let done = resolved(&app, alert_id, Duration::from_secs(60)).await;
    eprintln!(
        "late_start resolved {:?} after the worker came back",
        (at(&done["resolved_at"]) - back)
            .to_std()
            .unwrap_or_default()
    );
    assert!(at(&done["resolved_at"]) > opened_at);
    resolved(
        &app,
        missed["id"].as_str().unwrap_or_default(),
        Duration::from_secs(60),
    )
    .await;
    let all = alerts_of(&app, &id, None).await;
    assert_eq!(
        all.iter().filter(|a| a["kind"] == "late_start").count(),
        1,
        "exactly one alert for the incident: {all:?}"
    );
    assert_eq!(all.len(), 2, "{all:?}");
    assert!(alerts_of(&app, &id, Some("open")).await.is_empty());
    assert_eq!(metric(&app, &gauge).await, 0.0);
    assert!(metric(&app, resolved_counter).await >= resolved_before + 1.0);
    let (_, activity) = json(app.get(&format!("/v1/activities/{id}")).await).await;
    assert_eq!(activity["open_alerts"], json!([]));

    // The subscriber heard of each alert opening, then resolving, in order.
    let subjects: Vec<String> = [&alert, &missed]
        .iter()
        .map(|a| a["id"].as_str().unwrap_or_default().to_owned())
        .collect();
    let heard = eventually(Duration::from_secs(60), || async {
        let events: Vec<(String, String)> = sink
            .bodies()
            .iter()
            .filter_map(|(_, b)| serde_json::from_slice::<Value>(b).ok())
            .map(|e| {
                (
                    e["subject"].as_str().unwrap_or_default().to_owned(),
                    e["type"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect();
        (events.len() >= 4).then_some(events)
    })
    .await;
    for subject in &subjects {
        let of_it: Vec<&str> = heard
            .iter()
            .filter(|(s, _)| s == subject)
            .map(|(_, t)| t.as_str())
            .collect();
        assert_eq!(of_it, ["alert.opened", "alert.resolved"], "{heard:?}");
    }

    evaluating.stop().await;
    let _ = stop_dispatcher.send(());
    let _ = dispatching.await;
    let _ = app
        .patch(&format!("/v1/activities/{id}"), &json!({"enabled": false}))
        .await;
    worker.stop().await;
}

/// `acp api` alone (no worker in it) runs the evaluator: a deployment of
/// api + worker processes notices its workers stopping.
#[sqlx::test(migrations = "./migrations")]
async fn acp_api_notices_a_stopped_worker(pool: PgPool) {
    let _serial = SERIAL.lock().await;
    let server = shared_temporal();
    let namespace = new_namespace(&server.address()).await;
    // In-process: the worker (and an HTTP client to the same database).
    let app = TestApp::spawn(pool.clone(), &server.address(), &namespace).await;
    let api = ServeProcess::start_command(
        "api",
        &pool,
        &server.address(),
        &namespace,
        &[("ACP_TASK_QUEUE", TASK_QUEUE), ("ACP_ALERT_INTERVAL", "1")],
    )
    .await;
    let worker = app.worker(false, Default::default());
    let created = app.create(&every_two_seconds("api-process")).await;
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    first_success(&app, &id).await;
    worker.stop().await;
    let alert = open_alert_of_kind(&app, &id, "late_start", Duration::from_secs(30)).await;
    // The figure is served by the process that evaluated.
    let text = reqwest::get(format!("{}/metrics", api.base))
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .text()
        .await
        .unwrap_or_default();
    let gauge = format!("acp_alerts_open{{activity=\"{id}\",kind=\"late_start\"}} 1");
    assert!(text.lines().any(|l| l == gauge), "{alert}\n{}", api.log());
    let _ = app
        .patch(&format!("/v1/activities/{id}"), &json!({"enabled": false}))
        .await;
}

#[sqlx::test(migrations = "./migrations")]
async fn late_start_opens_while_temporal_is_down(pool: PgPool) {
    let _serial = SERIAL.lock().await;
    let mut server = TemporalServer::start();
    let namespace = new_namespace(&server.address()).await;
    let app = TestApp::spawn(pool, &server.address(), &namespace).await;
    let worker = app.worker(false, Default::default());
    let created = app.create(&every_two_seconds("temporal-down")).await;
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    let evaluating = Evaluating::start(&app);
    first_success(&app, &id).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(alerts_of(&app, &id, None).await.is_empty());

    server.stop();
    let stopped = Utc::now();
    let alert = open_alert_of_kind(&app, &id, "late_start", Duration::from_secs(30)).await;
    assert!(
        at(&alert["opened_at"]) - stopped < chrono::Duration::seconds(10),
        "{alert}"
    );
    // Temporal was down the whole time: the evaluator decided from PostgreSQL.
    let (status, ready) = json(app.get("/readyz").await).await;
    assert_eq!(status, 503, "{ready}");

    server.restart();
    let alert_id = alert["id"].as_str().unwrap_or_default();
    resolved(&app, alert_id, Duration::from_secs(120)).await;
    assert_eq!(alerts_of(&app, &id, None).await.len(), 1);

    evaluating.stop().await;
    let _ = app
        .patch(&format!("/v1/activities/{id}"), &json!({"enabled": false}))
        .await;
    worker.stop().await;
}

#[sqlx::test(migrations = "./migrations")]
async fn a_blocking_webhook_is_stuck_and_three_failures_are_a_streak(pool: PgPool) {
    let _serial = SERIAL.lock().await;
    let server = shared_temporal();
    let namespace = new_namespace(&server.address()).await;
    let app = TestApp::spawn(pool, &server.address(), &namespace).await;
    let worker = app.worker(true, Default::default());
    let evaluating = Evaluating::start(&app);

    // A webhook that answers after 6 s, against max_duration 2 s.
    let slow = WebhookSink::start(200, Duration::from_secs(6)).await;
    let created = app
        .create(&json!({
            "name": "slow",
            "trigger": {"type": "event", "event_types": ["never.sent"]},
            "tasks": [{"task_type": "webhook", "config": {"url": slow.url, "timeout": "PT20S"}}],
            "alerts": {"max_duration": "PT2S"}
        }))
        .await;
    let slow_id = created["id"].as_str().unwrap_or_default().to_owned();
    let (status, started) = trigger(&app, &slow_id, Some("slow-1")).await;
    assert_eq!(status, 202, "{started}");
    let stuck = open_alert_of_kind(&app, &slow_id, "stuck", Duration::from_secs(20)).await;
    assert_eq!(stuck["detail"]["runs"][0], started["run_id"], "{stuck}");
    // The run ends: the alert resolves.
    resolved(
        &app,
        stuck["id"].as_str().unwrap_or_default(),
        Duration::from_secs(30),
    )
    .await;

    // A webhook refused with 400 (not retried): every run fails.
    let refusing = WebhookSink::start(400, Duration::ZERO).await;
    let created = app
        .create(&json!({
            "name": "failing",
            "trigger": {"type": "event", "event_types": ["never.sent"]},
            "tasks": [{"task_type": "webhook", "config": {"url": refusing.url}}],
            "alerts": {"failure_streak": 3}
        }))
        .await;
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    for n in 1..=3 {
        let (status, started) = trigger(&app, &id, Some(&format!("fail-{n}"))).await;
        assert_eq!(status, 202, "{started}");
        let run = wait_run_done(
            &app,
            started["run_id"].as_str().unwrap_or_default(),
            Duration::from_secs(30),
        )
        .await;
        assert_eq!(run["status"], "failed", "{run}");
        if n < 3 {
            // Evaluations after two failures open nothing.
            tokio::time::sleep(PERIOD * 2).await;
            assert!(
                alerts_of(&app, &id, None).await.is_empty(),
                "after {n} failures"
            );
        }
    }
    let streak = open_alert_of_kind(&app, &id, "failure_streak", Duration::from_secs(10)).await;
    assert_eq!(streak["detail"]["runs"].as_array().map(Vec::len), Some(3));

    // A success ends the streak.
    let (status, _) = json(
        app.patch(
            &format!("/v1/activities/{id}"),
            &json!({"tasks": [{"task_type": "noop"}]}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 200);
    let (_, started) = trigger(&app, &id, Some("ok-1")).await;
    wait_run_done(
        &app,
        started["run_id"].as_str().unwrap_or_default(),
        Duration::from_secs(30),
    )
    .await;
    resolved(
        &app,
        streak["id"].as_str().unwrap_or_default(),
        Duration::from_secs(10),
    )
    .await;
    assert_eq!(alerts_of(&app, &id, None).await.len(), 1);

    // Filters: kind and state.
    let (status, page) = json(app.get("/v1/alerts?kind=stuck&state=resolved").await).await;
    assert_eq!(status, 200);
    assert_eq!(page["items"].as_array().map(Vec::len), Some(1), "{page}");
    let (status, problem) = json(app.get("/v1/alerts?kind=bored").await).await;
    assert_eq!(status, 400, "{problem}");

    evaluating.stop().await;
    worker.stop().await;
}

#[sqlx::test(migrations = "./migrations")]
async fn bad_expectations_are_422_naming_the_field(pool: PgPool) {
    let app = TestApp::without_temporal(pool).await;
    let response = app
        .post(
            "/v1/activities",
            &json!({
                "name": "x",
                "trigger": {"type": "event", "event_types": ["a"]},
                "tasks": [{"task_type": "noop"}],
                "alerts": {"start_within": "PT0S", "failure_streak": 0, "missed_fires": true},
                "notify": [{"url": "not a url", "types": ["run.bored"]}]
            }),
        )
        .await;
    let (status, problem) = json(response).await;
    assert_eq!(status, 422, "{problem}");
    let fields: Vec<&str> = problem["errors"]
        .as_array()
        .map(|e| e.iter().filter_map(|e| e["field"].as_str()).collect())
        .unwrap_or_default();
    for field in [
        "alerts.start_within",
        "alerts.failure_streak",
        "alerts.missed_fires",
        "notify[0].url",
        "notify[0].types[0]",
    ] {
        assert!(fields.contains(&field), "{field} missing from {problem}");
    }
}
