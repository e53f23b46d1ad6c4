//! Exactly one run per (activity, event): under concurrent re-delivery,
//! after Temporal forgot, after a crash between record and start; event IDs
//! from the client, the key or the content.

use super::*;

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
    let run_id = acp_domain::ids::run_id(&workflow_id).to_string();
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
        &acp_domain::ids::run_id(&workflow_id).to_string(),
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
        &acp_domain::ids::run_id(&workflow_id).to_string(),
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
