//! Batches answer per event and run each distinct event once; a body
//! that is not a batch is refused naming its events; events arriving
//! together are written together, each exactly once.

use super::*;

#[sqlx::test(migrations = "./migrations")]
async fn a_batch_answers_per_event_and_runs_each_distinct_event_once(pool: PgPool) {
    let app = app(pool.clone()).await;
    let created = app.create(&event_activity("invoice.paid")).await;
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    // Seen before with other content: that item alone is a conflict.
    let (status, _) = json(
        app.post(
            "/v1/events",
            &json!({"event_id": "inv-x", "event_type": "invoice.paid", "source": "billing", "payload": {"v": 1}}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 202);

    let good = |n: usize| json!({"event_id": format!("inv-{n}"), "event_type": "invoice.paid", "source": "billing", "payload": {"n": n}});
    let mut events: Vec<Value> = (0..40).map(good).collect();
    events.push(good(7)); // index 40: the same event twice in one batch
    events.push(json!({"event_type": "not a type", "source": "billing", "payload": {}})); // 41
    events.push(
        json!({"event_type": "invoice.paid", "source": "billing", "payload": {}, "extra": 1}),
    ); // 42
    events.push(json!({"event_id": "inv-x", "event_type": "invoice.paid", "source": "billing", "payload": {"v": 2}})); // 43
    events.push(json!("not an object")); // 44
    let batch = json!({"events": events});

    // An events-scoped key may send batches.
    let (_, key) = json(
        app.post("/v1/keys", &json!({"name": "producer", "scope": "events"}))
            .await,
    )
    .await;
    let token = key["token"].as_str().unwrap_or_default().to_owned();
    let response = reqwest::Client::new()
        .post(app.url("/v1/events:batch"))
        .bearer_auth(&token)
        .json(&batch)
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        response.headers()["content-type"]
            .to_str()
            .unwrap_or_default(),
        "application/json"
    );
    let (status, body) = json(response).await;
    assert_eq!(status, 200, "{body}");
    let items = body["items"].as_array().cloned().unwrap_or_default();
    assert_eq!(items.len(), 45, "{body}");
    for (n, item) in items.iter().enumerate().take(41) {
        assert_eq!(item["index"], n, "{item}");
        assert_eq!(item["status"], 202, "{item}");
        let dispatch = &item["result"]["dispatches"][0];
        assert_eq!(dispatch["outcome"], "pending", "{item}");
        assert_eq!(
            dispatch["workflow_id"],
            format!("activity-{id}:inv-{}", if n == 40 { 7 } else { n }),
            "{item}"
        );
    }
    let field = |i: usize| items[i]["problem"]["errors"][0]["field"].clone();
    assert_eq!(
        (items[41]["status"].clone(), field(41)),
        (json!(422), json!("events[41].event_type"))
    );
    assert_eq!(
        (items[42]["status"].clone(), field(42)),
        (json!(400), json!("events[42].extra"))
    );
    assert_eq!(items[43]["status"], 409, "{}", items[43]);
    assert_eq!(
        (items[44]["status"].clone(), field(44)),
        (json!(400), json!("events[44]"))
    );

    // The dispatcher starts one run per distinct event, and they finish.
    let worker = app.worker(false, Default::default());
    let dispatcher = app.dispatcher();
    eventually(Duration::from_secs(300), || async {
        let done = scalar(
            &pool,
            "SELECT count(*) FROM activity_runs WHERE activity_id IS NOT NULL AND status = 'succeeded'",
        )
        .await;
        (done == 41).then_some(())
    })
    .await;
    let executions = executions_matching(
        &app,
        &format!(
            "WorkflowType = 'RunActivityWorkflow' AND WorkflowId STARTS_WITH 'activity-{id}:inv-'"
        ),
    )
    .await;
    let ids: HashSet<String> = executions.iter().map(|e| e.workflow_id.clone()).collect();
    assert_eq!((executions.len(), ids.len()), (41, 41));

    // The same batch again: every valid event is now a duplicate.
    let (status, again) = json(app.post("/v1/events:batch", &batch).await).await;
    assert_eq!(status, 200, "{again}");
    for item in again["items"].as_array().into_iter().flatten().take(41) {
        assert_eq!(item["status"], 200, "{item}");
        assert_eq!(
            item["result"]["dispatches"][0]["outcome"], "duplicate",
            "{item}"
        );
    }
    drop(dispatcher);
    worker.stop().await;
}

#[sqlx::test(migrations = "./migrations")]
async fn a_batch_that_is_not_one_is_refused_naming_events(pool: PgPool) {
    let app = TestApp::without_temporal(pool.clone()).await;
    let field = |body: &Value| body["errors"][0]["field"].clone();
    let (status, body) = json(app.post("/v1/events:batch", &json!({"events": []})).await).await;
    assert_eq!((status, field(&body)), (422, json!("events")), "{body}");
    let many: Vec<Value> = (0..1001)
        .map(|n| json!({"event_id": format!("e-{n}"), "event_type": "t", "source": "s", "payload": {}}))
        .collect();
    let (status, body) = json(app.post("/v1/events:batch", &json!({"events": many})).await).await;
    assert_eq!((status, field(&body)), (422, json!("events")), "{body}");
    let (status, body) = json(
        app.post("/v1/events:batch", &json!([{"event_type": "t"}]))
            .await,
    )
    .await;
    assert_eq!(status, 400, "{body}");
    let (status, body) = json(
        app.post(
            "/v1/events:batch",
            &json!({"events": [{"event_type": "bad type", "source": "s", "payload": {}}]}),
        )
        .await,
    )
    .await;
    assert_eq!(
        (status, field(&body)),
        (422, json!("events[0].event_type")),
        "{body}"
    );
    let response = app
        .http
        .post(app.url("/v1/events:batch"))
        .header("idempotency-key", "k1")
        .json(&json!({"events": [{"event_type": "t", "source": "s", "payload": {}}]}))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let (status, body) = json(response).await;
    assert_eq!(
        (status, field(&body)),
        (400, json!("Idempotency-Key")),
        "{body}"
    );
    // Nothing of the refused batches was recorded.
    assert_eq!(scalar(&pool, "SELECT count(*) FROM events").await, 0);
}

#[sqlx::test(migrations = "./migrations")]
async fn events_arriving_together_are_written_together_each_exactly_once(pool: PgPool) {
    let app = TestApp::without_temporal(pool.clone()).await;
    let id_of = |v: Value| v["id"].as_str().unwrap_or_default().to_owned();
    // "one" has one subscriber, "two" two, "none" none.
    let one = id_of(app.create(&event_activity("together.one")).await);
    let mut two = vec![
        id_of(app.create(&event_activity("together.two")).await),
        id_of(app.create(&event_activity("together.two")).await),
    ];
    two.sort();
    let types = ["together.one", "together.two", "together.none"];
    let subscribers = |t: &str| match t {
        "together.one" => vec![one.clone()],
        "together.two" => two.clone(),
        _ => vec![],
    };
    // The first event of each type is where this process reads its subscribers.
    for t in types {
        let body = json!({"event_id": format!("{t}-first"), "event_type": t, "source": "s", "payload": {}});
        let (status, answer) = json(app.post("/v1/events", &body).await).await;
        assert!(status == 202 || status == 200, "{status} {answer}");
    }

    // 150 events, each sent twice at once, and 10 of them a third time
    // with other content: all in flight together.
    let event = |n: usize, payload: Value| json!({"event_id": format!("tog-{n}"), "event_type": types[n % 3], "source": "s", "payload": payload});
    let mut bodies: Vec<Value> = Vec::new();
    for n in 0..150 {
        bodies.push(event(n, json!({"n": n})));
        bodies.push(event(n, json!({"n": n})));
    }
    for n in 0..10 {
        bodies.push(event(n, json!({"n": "other"})));
    }
    let answers = futures::future::join_all(bodies.iter().map(|b| app.post("/v1/events", b))).await;
    let mut accepted = vec![0; 150];
    for (body, answer) in bodies.iter().zip(answers) {
        let (status, answer) = json(answer).await;
        let n: usize = body["event_id"].as_str().unwrap_or_default()[4..]
            .parse()
            .unwrap_or(usize::MAX);
        if body["payload"]["n"] == "other" {
            assert_eq!(status, 409, "{answer}");
            continue;
        }
        assert!(status == 202 || status == 200, "{status} {answer}");
        accepted[n] += 1;
        let answered = dispatched_to(&answer);
        assert_eq!(answered, subscribers(types[n % 3]), "{answer}");
    }
    assert!(accepted.iter().all(|&a| a == 2), "{accepted:?}");

    // One row per event, one dispatch per (event, subscriber), each with
    // the content first sent.
    let rows: Vec<(String, String, i64)> = sqlx::query_as(
        "SELECT e.event_id, e.payload->>'n', count(d.activity_id)
         FROM events e LEFT JOIN event_dispatches d USING (event_id)
         WHERE e.event_id LIKE 'tog-%' GROUP BY e.event_id, e.payload",
    )
    .fetch_all(&pool)
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(rows.len(), 150);
    for (event_id, payload, dispatches) in rows {
        let n: usize = event_id[4..].parse().unwrap_or(usize::MAX);
        assert_eq!(payload, n.to_string());
        assert_eq!(
            dispatches as usize,
            subscribers(types[n % 3]).len(),
            "{event_id}"
        );
    }
    // Written together: events of one statement share its transaction's time.
    let statements = scalar(
        &pool,
        "SELECT count(DISTINCT received_at) FROM events WHERE event_id LIKE 'tog-%'",
    )
    .await;
    assert!(statements < 150, "{statements} statements for 150 events");
}
