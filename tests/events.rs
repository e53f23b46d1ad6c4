//! The event router: stable event IDs, exactly one run per (activity, event),
//! even under concurrent re-delivery, crashes, and after Temporal forgot.

mod common;

use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::time::Duration;

use common::*;
use serde_json::{Value, json};
use sqlx::PgPool;
use temporalio_client::grpc::WorkflowService;
use temporalio_common::protos::temporal::api::common::v1::WorkflowExecution;
use temporalio_common::protos::temporal::api::workflowservice::v1::{
    DeleteWorkflowExecutionRequest, DescribeWorkflowExecutionRequest,
};
use tonic::IntoRequest;

async fn app(pool: PgPool) -> TestApp {
    let server = shared_temporal();
    let namespace = new_namespace(&server.address()).await;
    TestApp::spawn(pool, &server.address(), &namespace).await
}

async fn subscriber(app: &TestApp, types: &[&str], enabled: bool) -> String {
    let created = app
        .create(&json!({
            "name": "on-event",
            "enabled": enabled,
            "trigger": {"type": "event", "event_types": types},
            "tasks": [{"task_type": "noop"}]
        }))
        .await;
    created["id"].as_str().unwrap_or_default().to_owned()
}

/// Delivers an event and waits for its starts (`Prefer: wait`), so the
/// answer says what Temporal did; `deliver_async` takes the default path.
async fn deliver(app: &TestApp, body: &Value, key: Option<&str>) -> (u16, Value) {
    let mut request = app
        .http
        .post(app.url("/v1/events"))
        .header("prefer", "wait=10")
        .json(body);
    if let Some(key) = key {
        request = request.header("idempotency-key", key);
    }
    json(request.send().await.unwrap_or_else(|e| panic!("{e}"))).await
}

async fn count(pool: &PgPool, sql: &str, arg: &str) -> i64 {
    sqlx::query_as::<_, (i64,)>(sql)
        .bind(arg)
        .fetch_one(pool)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .0
}

#[sqlx::test(migrations = "./migrations")]
async fn concurrent_redeliveries_start_exactly_one_run(pool: PgPool) {
    let app = app(pool.clone()).await;
    let worker = app.worker(false, Default::default());
    let id = subscriber(&app, &["message.received"], true).await;
    let event = json!({"event_id": "evt_abc123", "event_type": "message.received", "source": "crm", "payload": {"n": 1}});

    let responses = futures::future::join_all((0..200).map(|_| deliver(&app, &event, None))).await;
    let mut started = 0;
    for (status, body) in &responses {
        assert!((200..300).contains(status), "{status}: {body}");
        assert_eq!(body["event_id"], "evt_abc123");
        assert_eq!(body["event_id_origin"], "client");
        let dispatches = body["dispatches"].as_array().cloned().unwrap_or_default();
        assert_eq!(dispatches.len(), 1);
        assert_eq!(
            dispatches[0]["workflow_id"],
            format!("activity-{id}:evt_abc123")
        );
        if dispatches[0]["outcome"] == "started" {
            started += 1;
        } else {
            assert_eq!(dispatches[0]["outcome"], "duplicate");
        }
    }
    assert_eq!(started, 1);
    let workflow_id = format!("activity-{id}:evt_abc123");
    let run_id = acp::domain::ids::run_id(&workflow_id).to_string();
    let run = wait_run_done(&app, &run_id, Duration::from_secs(60)).await;
    assert_eq!(run["status"], "succeeded");
    assert_eq!(run["trigger_type"], "event");
    assert_eq!(run["event_id"], "evt_abc123");
    assert_eq!(executions(&app, &workflow_id).await.len(), 1);
    assert_eq!(
        count(
            &pool,
            "SELECT count(*) FROM activity_runs WHERE workflow_id = $1",
            &workflow_id
        )
        .await,
        1
    );
    assert_eq!(
        count(&pool, "SELECT count(*) FROM task_instances t JOIN activity_runs r USING (run_id) WHERE r.workflow_id = $1", &workflow_id).await,
        1
    );
    assert_eq!(
        count(
            &pool,
            "SELECT count(*) FROM event_dispatches WHERE event_id = $1",
            "evt_abc123"
        )
        .await,
        1
    );

    // The event's page shows its dispatch and the run's status.
    let (status, detail) = json(app.get("/v1/events/evt_abc123").await).await;
    assert_eq!(status, 200);
    assert_eq!(detail["dispatches"][0]["state"], "completed");
    assert_eq!(detail["dispatches"][0]["run_status"], "succeeded");
    assert_eq!(detail["payload"], json!({"n": 1}));
    worker.stop().await;
}

#[sqlx::test(migrations = "./migrations")]
async fn event_ids_come_from_the_client_the_key_or_the_content(pool: PgPool) {
    let app = app(pool).await;
    let id = subscriber(&app, &["order.paid"], true).await;
    let body = json!({"event_type": "order.paid", "source": "shop", "occurred_at": "2026-03-01T09:00:00Z", "payload": {"order": 7, "total": 10}});

    let (_, first) = deliver(&app, &body, None).await;
    let (_, again) = deliver(&app, &json!({"payload": {"total": 10, "order": 7}, "source": "shop", "event_type": "order.paid", "occurred_at": "2026-03-01T10:00:00+01:00"}), None).await;
    assert_eq!(first["event_id_origin"], "content_digest");
    assert!(
        first["event_id"]
            .as_str()
            .is_some_and(|e| e.starts_with("sha256:"))
    );
    // Same content (key order and time zone notwithstanding): same ID, one run.
    assert_eq!(again["event_id"], first["event_id"]);
    assert_eq!(first["dispatches"][0]["outcome"], "started");
    assert_eq!(again["dispatches"][0]["outcome"], "duplicate");

    let mut other = body.clone();
    other["payload"]["total"] = json!(11);
    let (_, different) = deliver(&app, &other, None).await;
    assert_ne!(different["event_id"], first["event_id"]);
    assert_eq!(different["dispatches"][0]["outcome"], "started");

    // Idempotency-Key beats the digest; the body's event_id beats both.
    let (_, keyed) = deliver(&app, &body, Some("delivery-42")).await;
    assert_eq!(
        (keyed["event_id"].clone(), keyed["event_id_origin"].clone()),
        (json!("delivery-42"), json!("idempotency_key"))
    );
    assert_eq!(
        keyed["dispatches"][0]["workflow_id"],
        format!("activity-{id}:delivery-42")
    );
    let mut with_id = body.clone();
    with_id["event_id"] = json!("evt_from_body");
    let (_, client) = deliver(&app, &with_id, Some("ignored-key")).await;
    assert_eq!(
        (
            client["event_id"].clone(),
            client["event_id_origin"].clone()
        ),
        (json!("evt_from_body"), json!("client"))
    );

    let (dispatches,): (i64,) =
        sqlx::query_as("SELECT count(*) FROM event_dispatches WHERE activity_id = $1")
            .bind(uuid::Uuid::parse_str(&id).unwrap_or_default())
            .fetch_one(&app.pool)
            .await
            .unwrap_or((0,));
    assert_eq!(dispatches, 4);
}

#[sqlx::test(migrations = "./migrations")]
async fn a_redelivery_after_temporal_forgot_is_still_a_duplicate(pool: PgPool) {
    let app = app(pool.clone()).await;
    let worker = app.worker(false, Default::default());
    let id = subscriber(&app, &["ticket.closed"], true).await;
    let event = json!({"event_id": "evt_old", "event_type": "ticket.closed", "source": "desk", "payload": {}});
    let (_, first) = deliver(&app, &event, None).await;
    assert_eq!(first["dispatches"][0]["outcome"], "started");
    let workflow_id = format!("activity-{id}:evt_old");
    wait_run_done(
        &app,
        &acp::domain::ids::run_id(&workflow_id).to_string(),
        Duration::from_secs(60),
    )
    .await;

    // Temporal forgets the workflow (as it does after the retention period).
    let mut client = app
        .state
        .services
        .activities
        .gateway()
        .client()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    WorkflowService::delete_workflow_execution(
        &mut client,
        DeleteWorkflowExecutionRequest {
            namespace: app.namespace.clone(),
            workflow_execution: Some(WorkflowExecution {
                workflow_id: workflow_id.clone(),
                run_id: String::new(),
            }),
        }
        .into_request(),
    )
    .await
    .unwrap_or_else(|e| panic!("delete: {e}"));
    eventually(Duration::from_secs(90), || {
        let mut client = client.clone();
        let request = DescribeWorkflowExecutionRequest {
            namespace: app.namespace.clone(),
            execution: Some(WorkflowExecution {
                workflow_id: workflow_id.clone(),
                run_id: String::new(),
            }),
        };
        async move {
            // The dev server deletes asynchronously, in about half a minute.
            let described =
                WorkflowService::describe_workflow_execution(&mut client, request.into_request())
                    .await;
            described
                .err()
                .filter(|s| s.code() == tonic::Code::NotFound)
                .map(|_| ())
        }
    })
    .await;

    let (status, again) = deliver(&app, &event, None).await;
    assert_eq!(status, 200);
    assert_eq!(again["dispatches"][0]["outcome"], "duplicate");
    assert_eq!(
        executions(&app, &workflow_id).await.len(),
        0,
        "a second execution was started"
    );
    assert_eq!(
        count(
            &pool,
            "SELECT count(*) FROM activity_runs WHERE workflow_id = $1",
            &workflow_id
        )
        .await,
        1
    );
    worker.stop().await;
}

#[sqlx::test(migrations = "./migrations")]
async fn a_crash_between_record_and_start_is_finished_by_the_dispatcher(pool: PgPool) {
    let app = app(pool.clone()).await;
    let worker = app.worker(false, Default::default());
    let id = subscriber(&app, &["file.uploaded"], true).await;
    app.state
        .services
        .events
        .faults
        .crash_after_claim
        .store(1, Ordering::SeqCst);
    let event = json!({"event_id": "evt_crash", "event_type": "file.uploaded", "source": "s3", "payload": {"key": "a"}});
    let (status, body) = deliver(&app, &event, None).await;
    assert_eq!(status, 202);
    assert_eq!(body["dispatches"][0]["outcome"], "pending");
    let workflow_id = format!("activity-{id}:evt_crash");
    assert_eq!(executions(&app, &workflow_id).await.len(), 0);
    let (_, detail) = json(app.get("/v1/events/evt_crash").await).await;
    assert_eq!(detail["dispatches"][0]["state"], "pending");

    // The request held its row for its own start; once that lease lapses,
    // a dispatcher round takes it.
    let swept = eventually(Duration::from_secs(30), || async {
        let leased = app
            .state
            .services
            .events
            .dispatch_due()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        (leased > 0).then_some(leased)
    })
    .await;
    assert_eq!(swept, 1);
    let run = wait_run_done(
        &app,
        &acp::domain::ids::run_id(&workflow_id).to_string(),
        Duration::from_secs(60),
    )
    .await;
    assert_eq!(run["status"], "succeeded");
    // The event reached the run's context.
    let (_, stored): (u16, Value) = json(
        app.get(&format!(
            "/v1/runs/{}",
            run["run_id"].as_str().unwrap_or_default()
        ))
        .await,
    )
    .await;
    assert_eq!(stored["event_id"], "evt_crash");
    // Nothing left to dispatch, and a re-delivery is a duplicate: one run in all.
    assert_eq!(
        app.state.services.events.dispatch_due().await.unwrap_or(99),
        0
    );
    let (_, again) = deliver(&app, &event, None).await;
    assert_eq!(again["dispatches"][0]["outcome"], "duplicate");
    assert_eq!(executions(&app, &workflow_id).await.len(), 1);
    assert_eq!(
        count(
            &pool,
            "SELECT count(*) FROM activity_runs WHERE workflow_id = $1",
            &workflow_id
        )
        .await,
        1
    );
    worker.stop().await;
}

#[sqlx::test(migrations = "./migrations")]
async fn one_event_fans_out_to_every_enabled_subscriber(pool: PgPool) {
    let app = app(pool.clone()).await;
    let worker = app.worker(false, Default::default());
    let mut subscribed = HashSet::new();
    for types in [
        &["user.created"][..],
        &["user.created", "user.deleted"],
        &["user.created"],
    ] {
        subscribed.insert(subscriber(&app, types, true).await);
    }
    let disabled = subscriber(&app, &["user.created"], false).await;
    let unrelated = subscriber(&app, &["user.deleted"], true).await;

    let (status, body) = deliver(&app, &json!({"event_id": "evt_fan", "event_type": "user.created", "source": "idp", "payload": {}}), None).await;
    assert_eq!(status, 200);
    let dispatches = body["dispatches"].as_array().cloned().unwrap_or_default();
    let targets: HashSet<String> = dispatches
        .iter()
        .map(|d| d["activity_id"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(targets, subscribed);
    assert!(!targets.contains(&disabled) && !targets.contains(&unrelated));
    for d in &dispatches {
        assert_eq!(d["outcome"], "started");
        assert_eq!(
            d["workflow_id"],
            format!(
                "activity-{}:evt_fan",
                d["activity_id"].as_str().unwrap_or_default()
            )
        );
        wait_run_done(
            &app,
            d["run_id"].as_str().unwrap_or_default(),
            Duration::from_secs(60),
        )
        .await;
    }
    assert!(app.runs_of(&disabled).await.is_empty());

    // An event nobody subscribes to is still recorded.
    let (status, lonely) = deliver(
        &app,
        &json!({"event_type": "nobody.cares", "source": "x", "payload": {}}),
        None,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(lonely["dispatches"], json!([]));
    let (_, list) = json(app.get("/v1/events?event_type=nobody.cares").await).await;
    assert_eq!(list["items"].as_array().map(Vec::len), Some(1));
    let (_, all) = json(app.get("/v1/events?source=idp").await).await;
    assert_eq!(all["items"][0]["event_id"], "evt_fan");
    worker.stop().await;
}

#[sqlx::test(migrations = "./migrations")]
async fn bad_events_name_their_field(pool: PgPool) {
    let app = TestApp::without_temporal(pool).await;
    let valid = json!({"event_type": "a.b", "source": "s", "payload": {}});
    let with = |key: &str, value: Value| {
        let mut body = valid.clone();
        body[key] = value;
        body
    };
    let without = |key: &str| {
        let mut body = valid.clone();
        body.as_object_mut().map(|o| o.remove(key));
        body
    };
    let cases: Vec<(Value, Option<&str>, u16, &str)> = vec![
        (without("event_type"), None, 400, "event_type"),
        (
            with("event_type", json!("has space")),
            None,
            422,
            "event_type",
        ),
        (without("source"), None, 400, "source"),
        (with("source", json!("")), None, 422, "source"),
        (with("payload", json!([1, 2])), None, 422, "payload"),
        (with("payload", json!("text")), None, 422, "payload"),
        (
            with("payload", json!({"blob": "x".repeat(300 * 1024)})),
            None,
            422,
            "payload",
        ),
        (
            with("occurred_at", json!("last tuesday")),
            None,
            422,
            "occurred_at",
        ),
        (
            with("event_id", json!("x".repeat(201))),
            None,
            422,
            "event_id",
        ),
        (
            with("event_id", json!("evt with space")),
            None,
            422,
            "event_id",
        ),
        (with("event_id", json!("a/b")), None, 422, "event_id"),
        (with("event_id", json!(42)), None, 400, "event_id"),
        (with("extra", json!(1)), None, 400, "extra"),
        (valid.clone(), Some("bad key"), 422, "Idempotency-Key"),
    ];
    for (body, key, status, field) in cases {
        let (got, problem) = deliver(&app, &body, key).await;
        assert_eq!(got, status, "{field}: {problem}");
        let fields: Vec<&str> = problem["errors"]
            .as_array()
            .map(|e| e.iter().filter_map(|e| e["field"].as_str()).collect())
            .unwrap_or_default();
        assert!(fields.contains(&field), "expected {field}: {problem}");
    }
    for (path, status, field) in [
        ("/v1/events?limit=0", 400, "limit"),
        ("/v1/events?cursor=zzz", 400, "cursor"),
        ("/v1/events?received_after=soon", 400, "received_after"),
        ("/v1/events/has%20space", 400, "event_id"),
    ] {
        let (got, problem) = json(app.get(path).await).await;
        assert_eq!(got, status, "{path}: {problem}");
        assert_eq!(problem["errors"][0]["field"], field);
    }
    assert_eq!(app.get("/v1/events/evt_missing").await.status(), 404);
}

/// Numbers at the edges of what JSON parsers hold come back as they went in:
/// PostgreSQL keeps a jsonb number exactly, and its decimal rendering of the
/// largest doubles must still read back (it once failed, answering 500).
#[sqlx::test(migrations = "./migrations")]
async fn extreme_numbers_in_a_payload_round_trip(pool: PgPool) {
    let app = TestApp::without_temporal(pool).await;
    let payload = json!({
        "max": f64::MAX,
        "min": f64::MIN,
        "tiny": 5e-324,
        "beyond_u64": 1.2345678901234568e22,
        "nested": [{"": -1.7976931348623157e308}],
        "int": i64::MIN,
        "uint": u64::MAX
    });
    // The first of its type takes the general path, the second the one
    // statement that writes events together (their rows as JSON there).
    for event_id in ["extremes", "extremes-again"] {
        let body = json!({"event_id": event_id, "event_type": "edge.numbers", "source": "tests",
            "occurred_at": "2026-03-01T09:00:00.123456789Z", "payload": payload});
        let (status, ingested) = deliver(&app, &body, None).await;
        assert_eq!(status, 200, "{ingested}");
        let (status, event) = json(app.get(&format!("/v1/events/{event_id}")).await).await;
        assert_eq!(status, 200, "{event}");
        assert_eq!(event["payload"], payload);
        // PostgreSQL keeps microseconds.
        assert_eq!(
            event["occurred_at"], "2026-03-01T09:00:00.123456Z",
            "{event}"
        );
    }
    let (status, page) = json(app.get("/v1/events?event_type=edge.numbers").await).await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(page["items"][0]["payload"], payload);
    assert_eq!(page["items"][1]["payload"], payload);
}
