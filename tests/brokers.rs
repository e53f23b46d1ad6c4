//! Broker sources against the real brokers (NATS JetStream on
//! 127.0.0.1:4222, RabbitMQ on 127.0.0.1:5672, guest/guest; scripts/test
//! starts them where they do not run): exactly one run per distinct event
//! and subscribed activity under re-delivery, poison messages listed and
//! acknowledged, nothing left unacknowledged, a kill -9 of the consuming
//! process mid-stream, and conflicting re-deliveries recorded, not run.

mod common;

use std::sync::Arc;
use std::time::Duration;

use acp::brokers::{ConsumerSettings, Context};
use async_nats::jetstream;
use common::*;
use lapin::options::{BasicPublishOptions, QueueDeclareOptions};
use lapin::types::{AMQPValue, FieldTable};
use lapin::{BasicProperties, Connection, ConnectionProperties};
use serde_json::{Value, json};
use sqlx::PgPool;
use temporalio_client::grpc::WorkflowService;
use tonic::IntoRequest;
use uuid::Uuid;

const MESSAGE_LIMIT: usize = 512 * 1024;

/// A stream (or queue) of the test's own, on one of the real brokers.
enum Broker {
    Nats {
        js: jetstream::Context,
        stream: String,
        subject: String,
        durable: String,
    },
    Rabbit {
        _connection: Connection,
        channel: lapin::Channel,
        queue: String,
    },
}

impl Broker {
    async fn nats() -> Self {
        let client = async_nats::connect("nats://127.0.0.1:4222")
            .await
            .unwrap_or_else(|e| panic!("NATS on 127.0.0.1:4222 (scripts/test starts it): {e}"));
        let js = jetstream::new(client);
        let tag = Uuid::new_v4().simple().to_string();
        let stream = format!("ACPTEST_{tag}");
        let subject = format!("acptest.{tag}");
        js.create_stream(jetstream::stream::Config {
            name: stream.clone(),
            subjects: vec![format!("{subject}.>")],
            max_bytes: 512 * 1024 * 1024,
            ..Default::default()
        })
        .await
        .unwrap_or_else(|e| panic!("create stream: {e}"));
        Self::Nats {
            js,
            stream,
            subject,
            durable: format!("acp-{tag}"),
        }
    }

    async fn rabbit() -> Self {
        let connection = Connection::connect(
            "amqp://guest:guest@127.0.0.1:5672/%2f",
            ConnectionProperties::default(),
        )
        .await
        .unwrap_or_else(|e| panic!("RabbitMQ on 127.0.0.1:5672 (scripts/test starts it): {e}"));
        let channel = connection
            .create_channel()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let queue = format!("acptest-{}", Uuid::new_v4().simple());
        channel
            .queue_declare(
                queue.as_str().into(),
                QueueDeclareOptions {
                    durable: true,
                    ..Default::default()
                },
                FieldTable::default(),
            )
            .await
            .unwrap_or_else(|e| panic!("declare queue: {e}"));
        Self::Rabbit {
            _connection: connection,
            channel,
            queue,
        }
    }

    /// The body of `POST /v1/sources` for this stream or queue; the
    /// RabbitMQ password comes from `secret_ref`, as in production.
    fn source(&self) -> Value {
        match self {
            Self::Nats {
                stream,
                subject,
                durable,
                ..
            } => json!({
                "name": format!("nats-{stream}"),
                "kind": "nats",
                "config": {"url": "nats://127.0.0.1:4222", "stream": stream, "subject": format!("{subject}.>"), "durable": durable}
            }),
            Self::Rabbit { queue, .. } => json!({
                "name": format!("rabbit-{queue}"),
                "kind": "rabbitmq",
                "secret_ref": "ACP_TEST_RABBIT_SECRET",
                "config": {"url": "amqp://guest@127.0.0.1:5672/%2f", "queue": queue, "prefetch": 64}
            }),
        }
    }

    async fn publish(&self, message: &Published) {
        match self {
            Self::Nats { js, subject, .. } => {
                let mut headers = async_nats::HeaderMap::new();
                for (k, v) in &message.headers {
                    headers.insert(k.as_str(), v.as_str());
                }
                if let Some(ct) = &message.content_type {
                    headers.insert("content-type", ct.as_str());
                }
                js.publish_with_headers(
                    format!("{subject}.events"),
                    headers,
                    message.body.clone().into(),
                )
                .await
                .unwrap_or_else(|e| panic!("publish: {e}"))
                .await
                .unwrap_or_else(|e| panic!("publish ack: {e}"));
            }
            Self::Rabbit { channel, queue, .. } => {
                let mut table = FieldTable::default();
                for (k, v) in &message.headers {
                    table.insert(k.as_str().into(), AMQPValue::LongString(v.as_str().into()));
                }
                let mut properties = BasicProperties::default()
                    .with_headers(table)
                    .with_delivery_mode(2);
                if let Some(ct) = &message.content_type {
                    properties = properties.with_content_type(ct.as_str().into());
                }
                channel
                    .basic_publish(
                        "".into(),
                        queue.as_str().into(),
                        BasicPublishOptions::default(),
                        &message.body,
                        properties,
                    )
                    .await
                    .unwrap_or_else(|e| panic!("publish: {e}"));
            }
        }
    }

    /// Messages not yet acknowledged: JetStream's pending plus delivered and
    /// unacknowledged; RabbitMQ's ready plus unacknowledged messages (with no
    /// consumer attached, unacknowledged ones are back in the queue; an
    /// attached consumer counts as one).
    async fn unacknowledged(&self) -> u64 {
        match self {
            Self::Nats {
                js,
                stream,
                durable,
                ..
            } => {
                let stream = js
                    .get_stream(stream)
                    .await
                    .unwrap_or_else(|e| panic!("{e}"));
                let info = stream
                    .consumer_info(durable)
                    .await
                    .unwrap_or_else(|e| panic!("consumer info: {e}"));
                info.num_pending + info.num_ack_pending as u64
            }
            Self::Rabbit { channel, queue, .. } => {
                let declared = channel
                    .queue_declare(
                        queue.as_str().into(),
                        QueueDeclareOptions {
                            passive: true,
                            ..Default::default()
                        },
                        FieldTable::default(),
                    )
                    .await
                    .unwrap_or_else(|e| panic!("{e}"));
                // A consumer still attached may hold unacknowledged ones.
                u64::from(declared.message_count()) + u64::from(declared.consumer_count())
            }
        }
    }
}

/// One message as published.
#[derive(Clone)]
struct Published {
    headers: Vec<(String, String)>,
    content_type: Option<String>,
    body: Vec<u8>,
}

/// The i-th distinct event, in one of three encodings: CloudEvents binary
/// mode (every 5th), this API's own JSON (every 5th, shifted), CloudEvents
/// structured mode (the rest). Every 10th is an `order.paid`, the rest
/// `order.created`.
fn event_message(i: usize, data: Value) -> (Published, String) {
    let event_type = if i % 10 == 0 {
        "order.paid"
    } else {
        "order.created"
    };
    match i % 5 {
        0 => (
            Published {
                headers: vec![
                    ("ce-specversion".into(), "1.0".into()),
                    ("ce-id".into(), format!("o-{i}")),
                    ("ce-source".into(), "shop".into()),
                    ("ce-type".into(), event_type.into()),
                    ("ce-time".into(), "2026-03-01T09:00:00Z".into()),
                ],
                content_type: Some("application/json".into()),
                body: data.to_string().into_bytes(),
            },
            format!("ce:shop:o-{i}"),
        ),
        1 => (
            Published {
                headers: vec![],
                content_type: None,
                body: json!({"event_id": format!("n-{i}"), "event_type": event_type, "source": "shop", "payload": data})
                    .to_string()
                    .into_bytes(),
            },
            format!("n-{i}"),
        ),
        _ => (
            Published {
                headers: vec![],
                content_type: Some("application/cloudevents+json".into()),
                body: json!({"specversion": "1.0", "id": format!("o-{i}"), "source": "shop", "type": event_type, "data": data})
                    .to_string()
                    .into_bytes(),
            },
            format!("ce:shop:o-{i}"),
        ),
    }
}

/// The poison messages, each with the reason it must be listed with.
fn poison() -> Vec<(Published, &'static str)> {
    let plain = |body: Vec<u8>| Published {
        headers: vec![],
        content_type: None,
        body,
    };
    vec![
        (plain(b"garbage{".to_vec()), "not_json"),
        (
            plain(json!({"specversion": "1.0", "id": "p-1", "source": "shop", "data": {}}).to_string().into_bytes()),
            "missing_type",
        ),
        (
            plain(json!({"event_type": "order.created", "source": "shop", "payload": {"blob": "x".repeat(600 * 1024)}}).to_string().into_bytes()),
            "too_large",
        ),
        (
            plain(json!({"event_id": "has space", "event_type": "order.created", "source": "shop", "payload": {}}).to_string().into_bytes()),
            "bad_event_id",
        ),
        (
            Published {
                headers: vec![
                    ("ce-specversion".into(), "1.0".into()),
                    ("ce-id".into(), "p-2".into()),
                    ("ce-source".into(), "shop".into()),
                ],
                content_type: Some("application/json".into()),
                body: b"{}".to_vec(),
            },
            "missing_type",
        ),
    ]
}

async fn count(pool: &PgPool, sql: &str) -> i64 {
    sqlx::query_as::<_, (i64,)>(sql)
        .fetch_one(pool)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .0
}

async fn runs_of(pool: &PgPool, activity: &str) -> i64 {
    sqlx::query_as::<_, (i64,)>("SELECT count(*) FROM activity_runs WHERE activity_id = $1::uuid")
        .bind(activity)
        .fetch_one(pool)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .0
}

/// `RunActivityWorkflow` executions Temporal holds in `namespace`.
async fn temporal_runs(app: &TestApp, namespace: &str) -> i64 {
    let mut client = app
        .state
        .services
        .activities
        .gateway()
        .client()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let request = temporalio_common::protos::temporal::api::workflowservice::v1::CountWorkflowExecutionsRequest {
        namespace: namespace.to_owned(),
        query: "WorkflowType = 'RunActivityWorkflow'".to_owned(),
    };
    WorkflowService::count_workflow_executions(&mut client, request.into_request())
        .await
        .map(|r| r.into_inner().count)
        .unwrap_or(-1)
}

async fn subscriber(app_base: &str, http: &reqwest::Client, types: &[&str]) -> String {
    let response = http
        .post(format!("{app_base}/v1/activities"))
        .json(&json!({
            "name": "on-order",
            "trigger": {"type": "event", "event_types": types},
            "tasks": [{"task_type": "noop"}]
        }))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let (status, body) = json(response).await;
    assert_eq!(status, 201, "{body}");
    body["id"].as_str().unwrap_or_default().to_owned()
}

async fn create_source(base: &str, http: &reqwest::Client, body: &Value) -> String {
    let response = http
        .post(format!("{base}/v1/sources"))
        .json(body)
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let (status, created) = json(response).await;
    assert_eq!(status, 201, "{created}");
    created["id"].as_str().unwrap_or_default().to_owned()
}

fn consumers(app: &TestApp) -> Context {
    Context {
        sources: app.state.services.sources.clone(),
        settings: Arc::new(ConsumerSettings {
            refresh: Duration::from_millis(300),
            message_limit: MESSAGE_LIMIT,
            report_every: Duration::from_millis(300),
            instance: "tests".into(),
        }),
    }
}

/// 1000 distinct events (some in binary mode, some in this API's JSON),
/// 10 % of them published twice, five poison messages: exactly one run per
/// event and subscribed activity, the poison listed with its reason,
/// nothing left unacknowledged; then a conflicting re-delivery is recorded
/// on its event and runs nothing.
async fn a_thousand_messages(pool: PgPool, broker: Broker) {
    // SAFETY: set before any thread of this test reads the environment for it.
    unsafe { std::env::set_var("ACP_TEST_RABBIT_SECRET", "guest") };
    let server = shared_temporal();
    let namespace = new_namespace(&server.address()).await;
    let app = TestApp::spawn(pool.clone(), &server.address(), &namespace).await;
    let _worker = app.worker(false, Default::default());
    let all = subscriber(&app.base, &app.http, &["order.created", "order.paid"]).await;
    let paid = subscriber(&app.base, &app.http, &["order.paid"]).await;
    let source = create_source(&app.base, &app.http, &broker.source()).await;

    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let stopped = move || {
        let mut rx = stop_rx.clone();
        async move {
            let _ = rx.wait_for(|s| *s).await;
        }
    };
    let consuming = tokio::spawn(acp::brokers::run(consumers(&app), stopped()));
    // As in `acp serve` and a consuming `acp worker`: the dispatcher starts
    // the runs of what the consumers committed.
    let dispatcher = app.state.services.events.clone();
    tokio::spawn(dispatcher.run_dispatcher(Duration::from_secs(1), stopped()));

    let started = std::time::Instant::now();
    let mut ids = Vec::new();
    for i in 0..1000 {
        let (message, id) = event_message(i, json!({"order": i}));
        broker.publish(&message).await;
        ids.push(id);
    }
    for (message, _) in poison() {
        broker.publish(&message).await;
    }
    for i in (3..1000).step_by(10) {
        broker
            .publish(&event_message(i, json!({"order": i})).0)
            .await;
    }

    eventually(Duration::from_secs(600), || async {
        let events = count(&pool, "SELECT count(*) FROM events").await;
        let done = count(
            &pool,
            "SELECT count(*) FROM event_dispatches WHERE state = 'completed'",
        )
        .await;
        let rejected = count(&pool, "SELECT count(*) FROM source_rejections").await;
        (events == 1000 && done == 1100 && rejected == 5).then_some(())
    })
    .await;
    let committed = started.elapsed();
    let (stored,): (i64,) = sqlx::query_as("SELECT count(*) FROM events WHERE event_id = ANY($1)")
        .bind(&ids)
        .fetch_one(&pool)
        .await
        .unwrap_or((0,));
    assert_eq!(
        stored, 1000,
        "every published event under its documented ID"
    );

    // Exactly one run per (event, subscribed activity): every dispatch
    // completed, one RunActivityWorkflow execution each in Temporal, and
    // never more run rows than that (the worker logs them at its own pace;
    // on a shared machine it may not have caught up yet).
    eventually(Duration::from_secs(120), || async {
        (temporal_runs(&app, &namespace).await == 1100).then_some(())
    })
    .await;
    let (a, b) = (runs_of(&pool, &all).await, runs_of(&pool, &paid).await);
    assert!(a <= 1000 && b <= 100, "more runs than events: {a}, {b}");
    // For the record (not a benchmark: the machine is shared).
    eprintln!(
        "1105 messages published and 1000 events with 1100 dispatches committed in {:.1} s; 1100 runs started in Temporal after {:.1} s",
        committed.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );

    // The poison, listed with its reasons and bytes.
    let (status, page) = json(app.get(&format!("/v1/sources/{source}/rejected")).await).await;
    assert_eq!(status, 200, "{page}");
    let mut reasons: Vec<String> = page["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["reason"].as_str().map(str::to_owned))
        .collect();
    reasons.sort();
    let mut expected: Vec<String> = poison().into_iter().map(|(_, r)| r.to_owned()).collect();
    expected.sort();
    assert_eq!(reasons, expected);
    let garbage = page["items"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["reason"] == "not_json")
        .cloned()
        .unwrap_or_default();
    assert_eq!(garbage["raw_text"], "garbage{");
    let large = page["items"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["reason"] == "too_large")
        .cloned()
        .unwrap_or_default();
    assert_eq!(large["truncated"], true, "{large}");

    // A conflicting re-delivery: recorded on the event, no second run.
    broker
        .publish(&event_message(2, json!({"order": "changed"})).0)
        .await;
    let event = eventually(Duration::from_secs(60), || async {
        let (_, event) = json(app.get("/v1/events/ce:shop:o-2").await).await;
        (event["conflicts"].as_array().is_some_and(|c| !c.is_empty())).then_some(event)
    })
    .await;
    assert_eq!(event["conflicts"][0]["differs"], json!(["payload"]));
    assert_eq!(event["conflicts"][0]["source_id"], source.as_str());
    assert_eq!(
        event["payload"],
        json!({"order": 2}),
        "the first content stands"
    );
    assert_eq!(event["dispatches"].as_array().map(Vec::len), Some(1));

    // Live status, then nothing left unacknowledged.
    let status = eventually(Duration::from_secs(30), || async {
        let (_, body) = json(app.get(&format!("/v1/sources/{source}")).await).await;
        let s = body["status"].clone();
        (s["accepted"].as_i64() >= Some(1100)
            && s["rejected"] == 5
            && s["conflicts"] == 1
            && s["pending"] == 0)
            .then_some(s)
    })
    .await;
    assert_eq!(status["connected"], true, "{status}");
    let _ = stop_tx.send(true);
    consuming.await.unwrap_or_else(|e| panic!("{e}"));
    eventually(Duration::from_secs(30), || async {
        (broker.unacknowledged().await == 0).then_some(())
    })
    .await;
    assert!(runs_of(&pool, &all).await <= 1000);
    assert_eq!(temporal_runs(&app, &namespace).await, 1100);

    let metrics = app.get("/metrics").await.text().await.unwrap_or_default();
    for line in [
        "acp_source_rejections_total{reason=\"not_json\"}",
        "acp_source_messages_total{outcome=\"conflict\"}",
    ] {
        let value: f64 = metrics
            .lines()
            .find_map(|l| l.strip_prefix(line))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0.0);
        assert!(value >= 1.0, "{line} {value}");
    }
}

#[sqlx::test(migrations = "./migrations")]
async fn nats_a_thousand_messages_one_run_each(pool: PgPool) {
    a_thousand_messages(pool, Broker::nats().await).await;
}

#[sqlx::test(migrations = "./migrations")]
async fn rabbitmq_a_thousand_messages_one_run_each(pool: PgPool) {
    a_thousand_messages(pool, Broker::rabbit().await).await;
}

/// `acp serve` consuming is killed with SIGKILL mid-stream and started
/// again: every published event has exactly one run, none lost, none doubled.
async fn kill_mid_stream(pool: PgPool, broker: Broker) {
    const EVENTS: usize = 400;
    let server = shared_temporal();
    let namespace = new_namespace(&server.address()).await;
    let token = cli_key(&pool, "admin");
    let env = [
        ("ACP_SOURCE_REFRESH_SECS", "0.3"),
        ("ACP_TEST_RABBIT_SECRET", "guest"),
    ];
    let mut serve = ServeProcess::start(&pool, &server.address(), &namespace, &env).await;
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(
        reqwest::header::AUTHORIZATION,
        format!("Bearer {token}")
            .parse()
            .unwrap_or_else(|e| panic!("{e}")),
    );
    let http = reqwest::Client::builder()
        .default_headers(headers)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let activity = subscriber(&serve.base, &http, &["order.created", "order.paid"]).await;
    create_source(&serve.base, &http, &broker.source()).await;

    for i in 0..EVENTS {
        broker
            .publish(&event_message(i, json!({"order": i})).0)
            .await;
        if i % 10 == 3 {
            broker
                .publish(&event_message(i, json!({"order": i})).0)
                .await;
        }
    }
    // Mid-stream: some events committed, not all.
    let seen = eventually(Duration::from_secs(120), || async {
        let n = count(&pool, "SELECT count(*) FROM events").await;
        (n >= 100).then_some(n)
    })
    .await;
    let _ = serve.child.kill(); // SIGKILL
    let _ = serve.child.wait();
    let at_kill = count(&pool, "SELECT count(*) FROM events").await;
    assert!(
        at_kill < EVENTS as i64,
        "killed too late to prove anything: {at_kill} of {EVENTS} (first seen {seen})"
    );

    let _serve = ServeProcess::start(&pool, &server.address(), &namespace, &env).await;
    eventually(Duration::from_secs(600), || async {
        let events = count(&pool, "SELECT count(*) FROM events").await;
        let done = count(
            &pool,
            "SELECT count(*) FROM event_dispatches WHERE state = 'completed'",
        )
        .await;
        let runs = runs_of(&pool, &activity).await;
        assert!(runs <= EVENTS as i64, "more runs than events: {runs}");
        (events == EVENTS as i64 && done == EVENTS as i64).then_some(())
    })
    .await;
    let pending = count(
        &pool,
        "SELECT count(*) FROM event_dispatches WHERE state <> 'completed'",
    )
    .await;
    assert_eq!(pending, 0);
    let temporal = TestApp::spawn(pool.clone(), &server.address(), &namespace).await;
    // One RunActivityWorkflow execution per event in Temporal: none lost,
    // none doubled (the worker logs their rows at its own pace).
    eventually(Duration::from_secs(120), || async {
        (temporal_runs(&temporal, &namespace).await == EVENTS as i64).then_some(())
    })
    .await;
    drop(_serve);
    // JetStream re-delivers what the killed process held after ack_wait.
    eventually(Duration::from_secs(90), || async {
        (broker.unacknowledged().await == 0).then_some(())
    })
    .await;
    assert!(runs_of(&pool, &activity).await <= EVENTS as i64);
}

#[sqlx::test(migrations = "./migrations")]
async fn nats_kill_9_mid_stream_loses_and_doubles_nothing(pool: PgPool) {
    kill_mid_stream(pool, Broker::nats().await).await;
}

#[sqlx::test(migrations = "./migrations")]
async fn rabbitmq_kill_9_mid_stream_loses_and_doubles_nothing(pool: PgPool) {
    kill_mid_stream(pool, Broker::rabbit().await).await;
}

/// Sources are validated field by field, and their credentials are only
/// ever the name of an environment variable.
#[sqlx::test(migrations = "./migrations")]
async fn sources_are_validated_and_managed(pool: PgPool) {
    let app = TestApp::without_temporal(pool).await;
    let bad = json!({"name": "", "kind": "nats", "secret_ref": "lower", "config": {"url": "nats://u:secret@h:4222", "stream": "a b", "durable": "d"}});
    let (status, problem) = json(app.post("/v1/sources", &bad).await).await;
    assert_eq!(status, 422, "{problem}");
    let fields: Vec<&str> = problem["errors"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["field"].as_str())
        .collect();
    assert_eq!(
        fields,
        ["name", "secret_ref", "config.url", "config.stream"]
    );
    let (status, problem) = json(
        app.post(
            "/v1/sources",
            &json!({"name": "x", "kind": "kafka", "config": {}}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 400, "{problem}");

    let good = json!({"name": "orders", "kind": "rabbitmq", "secret_ref": "RABBIT", "enabled": false, "config": {"url": "amqp://guest@127.0.0.1:5672/%2f", "queue": "orders"}});
    let response = app.post("/v1/sources", &good).await;
    assert_eq!(response.status(), 201);
    let (_, created) = json(response).await;
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    assert_eq!(created["config"]["prefetch"], 50);
    let (status, _) = json(app.post("/v1/sources", &good).await).await;
    assert_eq!(status, 409, "names are unique");
    let (status, one) = json(app.get(&format!("/v1/sources/{id}")).await).await;
    assert_eq!(status, 200);
    assert_eq!(one["status"]["connected"], false);
    assert_eq!(one["status"]["reported_at"], Value::Null);

    let (status, patched) = json(
        app.patch(
            &format!("/v1/sources/{id}"),
            &json!({"config": {"prefetch": 10}, "enabled": true}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 200, "{patched}");
    assert_eq!(
        (
            patched["config"]["prefetch"].clone(),
            patched["version"].clone()
        ),
        (json!(10), json!(2))
    );
    let (status, problem) = json(
        app.patch(
            &format!("/v1/sources/{id}"),
            &json!({"config": {"prefetch": 0}}),
        )
        .await,
    )
    .await;
    assert_eq!(
        (status, problem["errors"][0]["field"].clone()),
        (422, json!("config.prefetch"))
    );
    let stale = app
        .http
        .delete(app.url(&format!("/v1/sources/{id}")))
        .header("if-match", "\"1\"")
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(stale.status(), 412);
    assert_eq!(app.delete(&format!("/v1/sources/{id}")).await.status(), 204);
    assert_eq!(app.get(&format!("/v1/sources/{id}")).await.status(), 404);
    assert_eq!(
        app.get(&format!("/v1/sources/{id}/rejected"))
            .await
            .status(),
        404
    );
}
