//! Broker sources against the real brokers (NATS JetStream on
//! 127.0.0.1:4222, RabbitMQ on 127.0.0.1:5672, guest/guest; scripts/test
//! starts them where they do not run): exactly one run per distinct event
//! and subscribed activity under re-delivery, poison messages listed and
//! acknowledged, nothing left unacknowledged, a kill -9 of the consuming
//! process mid-stream, and conflicting re-deliveries recorded, not run.

use crate::common;
mod exactly_once;
mod kill;
mod sources;

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
    let body = json!({
        "name": "on-order",
        "trigger": {"type": "event", "event_types": types},
        "tasks": [{"task_type": "noop"}]
    });
    let (status, body) =
        send_set_up(|| http.post(format!("{app_base}/v1/activities")).json(&body)).await;
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
