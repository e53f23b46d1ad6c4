//! Notifications against real Temporal and a real HTTP sink: a receiver
//! that fails twice still gets the event (at least once, signed, each
//! attempt listed), a failing receiver does not hold up the run, and a
//! loopback URL is refused unless the SSRF guard is off.

use crate::common;

use std::collections::HashSet;
use std::time::Duration;

use common::*;
use serde_json::{Value, json};
use sqlx::PgPool;

/// In the test process's environment from the start, with this value
/// (.cargo/config.toml's `[env]`), for the worker to sign with.
const SECRET_REF: &str = "ACP_TEST_NOTIFY_SECRET";
const SECRET: &str = "notify-s3cret";

/// The notification dispatcher as `acp api` runs it, until stopped.
struct Dispatching {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
}

impl Dispatching {
    fn start(app: &TestApp) -> Self {
        let dispatcher = app.state.services.notifications.clone();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            dispatcher
                .run_dispatcher(Duration::from_millis(300), async {
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

async fn subscribe(app: &TestApp, body: &Value) -> String {
    let (status, created) = json(app.post("/v1/subscriptions", body).await).await;
    assert_eq!(status, 201, "{created}");
    created["id"].as_str().unwrap_or_default().to_owned()
}

async fn deliveries(app: &TestApp, subscription: &str) -> Vec<Value> {
    let (status, page) = json(
        app.get(&format!("/v1/subscriptions/{subscription}/deliveries"))
            .await,
    )
    .await;
    assert_eq!(status, 200, "{page}");
    page["items"].as_array().cloned().unwrap_or_default()
}

async fn finished_delivery(app: &TestApp, subscription: &str, kind: &str) -> Value {
    eventually(Duration::from_secs(60), || async {
        deliveries(app, subscription)
            .await
            .into_iter()
            .find(|d| d["type"] == kind && (d["state"] == "delivered" || d["state"] == "failed"))
    })
    .await
}

fn event_activity(name: &str) -> Value {
    json!({
        "name": name,
        "trigger": {"type": "event", "event_types": ["never.sent"]},
        "tasks": [{"task_type": "noop"}]
    })
}

#[sqlx::test(migrations = "./migrations")]
async fn a_receiver_failing_twice_gets_each_event_once_signed_and_every_attempt_is_listed(
    pool: PgPool,
) {
    let server = shared_temporal();
    let namespace = new_namespace(&server.address()).await;
    let app = TestApp::spawn(pool, &server.address(), &namespace).await;
    let worker = app.worker(true, Default::default());
    let dispatching = Dispatching::start(&app);

    let sink = WebhookSink::start_sequence(vec![500, 500], 200, Duration::ZERO).await;
    let own = WebhookSink::start(200, Duration::ZERO).await;
    let mut body = event_activity("notified");
    body["notify"] = json!([{"url": own.url, "types": ["run.succeeded"]}]);
    let created = app.create(&body).await;
    assert_eq!(created["notify"][0]["url"], own.url.as_str(), "{created}");
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    let subscription = subscribe(
        &app,
        &json!({"url": sink.url, "secret_ref": SECRET_REF, "types": ["run.succeeded"], "activity_id": id}),
    )
    .await;

    let (status, started) = trigger(&app, &id, Some("n-1")).await;
    assert_eq!(status, 202, "{started}");
    let run_id = started["run_id"].as_str().unwrap_or_default().to_owned();
    let run = wait_run_done(&app, &run_id, Duration::from_secs(30)).await;
    assert_eq!(run["status"], "succeeded");

    let delivery = finished_delivery(&app, &subscription, "run.succeeded").await;
    assert_eq!(delivery["state"], "delivered", "{delivery}");
    let codes: Vec<Value> = delivery["attempts"]
        .as_array()
        .map(|a| a.iter().map(|a| a["status_code"].clone()).collect())
        .unwrap_or_default();
    assert_eq!(codes, [json!(500), json!(500), json!(200)], "{delivery}");
    // The run did not wait for the receiver: it ended before the delivery did.
    assert!(at(&run["finished_at"]) < at(&delivery["finished_at"]));

    // Three requests, one event: the same id each time, each signed.
    let received = sink.bodies();
    assert_eq!(received.len(), 3);
    let mut ids = HashSet::new();
    for (headers, bytes) in &received {
        assert_eq!(
            headers.get("content-type").and_then(|v| v.to_str().ok()),
            Some("application/cloudevents+json")
        );
        let signature = headers
            .get("x-signature")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        assert_eq!(
            signature,
            acp_temporal::webhook::sign(SECRET.as_bytes(), bytes)
        );
        let event: Value = serde_json::from_slice(bytes).unwrap_or_default();
        assert_eq!(event["specversion"], "1.0");
        assert_eq!(event["type"], "run.succeeded");
        assert_eq!(event["subject"], run_id.as_str());
        assert_eq!(event["data"]["run_id"], run_id.as_str());
        assert_eq!(event["data"]["status"], "succeeded");
        ids.insert(event["id"].as_str().unwrap_or_default().to_owned());
    }
    assert_eq!(ids.len(), 1, "after dedupe by id, one event: {ids:?}");
    assert_eq!(delivery["notification_id"], json!(ids.iter().next()));

    // The activity's own target got the same event, once.
    eventually(Duration::from_secs(30), || async {
        (own.count() == 1).then_some(())
    })
    .await;
    let (_, bytes) = &own.bodies()[0];
    let event: Value = serde_json::from_slice(bytes).unwrap_or_default();
    assert!(ids.contains(event["id"].as_str().unwrap_or_default()));
    assert!(
        own.bodies()[0].0.get("x-signature").is_none(),
        "no secret_ref, no signature"
    );

    dispatching.stop().await;
    worker.stop().await;
}

#[sqlx::test(migrations = "./migrations")]
async fn a_loopback_url_is_refused_unless_the_ssrf_guard_is_off(pool: PgPool) {
    let server = shared_temporal();
    let namespace = new_namespace(&server.address()).await;
    let app = TestApp::spawn(pool, &server.address(), &namespace).await;
    let dispatching = Dispatching::start(&app);
    let sink = WebhookSink::start(200, Duration::ZERO).await;
    assert!(sink.url.starts_with("http://127.0.0.1:"));
    let created = app.create(&event_activity("guarded")).await;
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    let subscription = subscribe(&app, &json!({"url": sink.url, "activity_id": id})).await;

    // Guard on: refused at once, not retried, nothing reaches the sink.
    let guarded = app.worker(false, Default::default());
    let (_, started) = trigger(&app, &id, Some("guard-on")).await;
    wait_run_done(
        &app,
        started["run_id"].as_str().unwrap_or_default(),
        Duration::from_secs(30),
    )
    .await;
    let refused = finished_delivery(&app, &subscription, "run.succeeded").await;
    assert_eq!(refused["state"], "failed", "{refused}");
    assert_eq!(
        refused["attempts"].as_array().map(Vec::len),
        Some(1),
        "{refused}"
    );
    let error = refused["last_error"].as_str().unwrap_or_default();
    assert!(error.contains("internal address"), "{refused}");
    assert_eq!(sink.count(), 0);
    guarded.stop().await;

    // Guard off: delivered.
    let open = app.worker(true, Default::default());
    let (_, started) = trigger(&app, &id, Some("guard-off")).await;
    let run_id = started["run_id"].as_str().unwrap_or_default().to_owned();
    wait_run_done(&app, &run_id, Duration::from_secs(30)).await;
    eventually(Duration::from_secs(30), || async {
        deliveries(&app, &subscription)
            .await
            .into_iter()
            .any(|d| d["state"] == "delivered")
            .then_some(())
    })
    .await;
    assert_eq!(sink.count(), 1);
    let event: Value = serde_json::from_slice(&sink.bodies()[0].1).unwrap_or_default();
    assert_eq!(event["subject"], run_id.as_str());

    // Subscriptions need admin; a bad one is a 422 naming the field.
    let (status, problem) = json(
        app.post(
            "/v1/subscriptions",
            &json!({"url": "ftp://x", "types": ["run.nope"]}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 422, "{problem}");
    let fields: Vec<&str> = problem["errors"]
        .as_array()
        .map(|e| e.iter().filter_map(|e| e["field"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(fields, ["url", "types[0]"]);

    dispatching.stop().await;
    open.stop().await;
}

/// In order per subject: a later notification about the same run to the
/// same destination waits until the earlier one's delivery has finished;
/// other runs' notifications do not wait for it. (No Temporal: the
/// dispatcher's choice of what may go is PostgreSQL's.)
#[sqlx::test(migrations = "./migrations")]
async fn a_later_notification_of_a_run_waits_for_the_earlier_one(pool: PgPool) {
    let app = TestApp::without_temporal(pool.clone()).await;
    let created = app.create(&event_activity("ordered")).await;
    let activity: uuid::Uuid = created["id"]
        .as_str()
        .and_then(|t| t.parse().ok())
        .unwrap_or_default();
    let subscription = subscribe(&app, &json!({"url": "https://hooks.example.com/x"})).await;
    let record = |kind: &'static str, subject: &'static str| {
        let pool = pool.clone();
        async move {
            let (id,): (uuid::Uuid,) = sqlx::query_as(
                "INSERT INTO notifications (type, activity_id, subject, data)
                 VALUES ($1, $2, $3, '{}') RETURNING id",
            )
            .bind(kind)
            .bind(activity)
            .bind(subject)
            .fetch_one(&pool)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
            id
        }
    };
    let failed = record("run.failed", "run-a").await;
    let succeeded = record("run.succeeded", "run-a").await;
    let other = record("run.succeeded", "run-b").await;
    let store = acp_store::NotificationStore::new(pool.clone());
    assert_eq!(store.fan_out(100).await.ok(), Some(3));
    let destination = format!("subscription:{subscription}");
    let delivery = |n| acp_domain::notify::delivery_id(n, &destination);

    let ready = store.deliverable(100).await.unwrap_or_default();
    assert_eq!(ready, [delivery(failed), delivery(other)]);
    // Handed over but not finished: run-a's next still waits.
    let _ = store.mark_dispatched(delivery(failed)).await;
    assert_eq!(
        store.deliverable(100).await.unwrap_or_default(),
        [delivery(other)]
    );
    // Finished (even as failed): the next of run-a may go.
    let _ = store.finish(delivery(failed), false, Some("gave up")).await;
    assert_eq!(
        store.deliverable(100).await.unwrap_or_default(),
        [delivery(succeeded), delivery(other)]
    );
    // A second fan-out finds nothing new and makes no second delivery.
    assert_eq!(store.fan_out(100).await.ok(), Some(0));
    assert_eq!(deliveries(&app, &subscription).await.len(), 3);
}
