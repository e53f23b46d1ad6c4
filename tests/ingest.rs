//! Asynchronous event ingest: an event is accepted once it and its dispatch
//! rows are committed, and dispatchers start the runs, exactly once each,
//! across dispatchers and across a killed `acp serve`.

mod common;

use std::collections::HashSet;
use std::time::Duration;

use common::*;
use serde_json::{Value, json};
use sqlx::PgPool;

async fn app(pool: PgPool) -> TestApp {
    let temporal = shared_temporal();
    let namespace = new_namespace(&temporal.address()).await;
    TestApp::spawn(pool, &temporal.address(), &namespace).await
}

fn event_activity(event_type: &str) -> Value {
    json!({
        "name": "ingest",
        "trigger": {"type": "event", "event_types": [event_type]},
        "tasks": [{"task_type": "noop"}]
    })
}

/// The activities an ingest answer lists dispatches for, sorted.
fn dispatched_to(answer: &Value) -> Vec<String> {
    let mut ids: Vec<String> = answer["dispatches"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| d["activity_id"].as_str().unwrap_or_default().to_owned())
        .collect();
    ids.sort();
    ids
}

async fn scalar(pool: &PgPool, sql: &str) -> i64 {
    sqlx::query_as::<_, (i64,)>(sql)
        .fetch_one(pool)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .0
}

#[sqlx::test(migrations = "./migrations")]
async fn accepted_events_are_started_once_by_dispatchers_sharing_the_rows(pool: PgPool) {
    let app = app(pool.clone()).await;
    let worker = app.worker(false, Default::default());
    let created = app.create(&event_activity("order.placed")).await;
    let id = created["id"].as_str().unwrap_or_default().to_owned();

    // No dispatcher yet: the answers come from the database alone.
    let events: Vec<Value> = (0..200)
        .map(|n| json!({"event_id": format!("ord-{n}"), "event_type": "order.placed", "source": "shop", "payload": {"n": n}}))
        .collect();
    let answers = futures::future::join_all(events.iter().map(|e| app.post("/v1/events", e))).await;
    for answer in answers {
        let (status, body) = json(answer).await;
        assert_eq!(status, 202, "{body}");
        assert_eq!(body["dispatches"][0]["outcome"], "pending", "{body}");
        assert_eq!(body["dispatches"][0]["activity_id"], id.as_str());
    }
    assert_eq!(
        scalar(
            &pool,
            "SELECT count(*) FROM event_dispatches WHERE state = 'pending'"
        )
        .await,
        200
    );

    // Two dispatchers (as two replicas would run them) share the rows.
    let first = app.dispatcher();
    let second = app.dispatcher();
    eventually(Duration::from_secs(300), || async {
        let done = scalar(
            &pool,
            "SELECT count(*) FROM activity_runs WHERE activity_id IS NOT NULL AND status = 'succeeded'",
        )
        .await;
        (done == 200).then_some(())
    })
    .await;
    drop((first, second));

    // Every dispatch completed by exactly one start attempt, one run each.
    assert_eq!(
        scalar(
            &pool,
            "SELECT count(*) FROM event_dispatches WHERE state = 'completed' AND attempts = 1"
        )
        .await,
        200
    );
    let executions = executions_matching(
        &app,
        &format!(
            "WorkflowType = 'RunActivityWorkflow' AND WorkflowId STARTS_WITH 'activity-{id}:ord-'"
        ),
    )
    .await;
    let ids: HashSet<String> = executions.iter().map(|e| e.workflow_id.clone()).collect();
    assert_eq!((executions.len(), ids.len()), (200, 200));

    // A re-delivery now finds its run started: 200, duplicate.
    let (status, again) = json(app.post("/v1/events", &events[7]).await).await;
    assert_eq!(
        (status, again["dispatches"][0]["outcome"].clone()),
        (200, json!("duplicate"))
    );
    worker.stop().await;
}

#[sqlx::test(migrations = "./migrations")]
async fn every_accepted_event_runs_once_after_a_kill_9_mid_burst(pool: PgPool) {
    let temporal = shared_temporal();
    let namespace = new_namespace(&temporal.address()).await;
    let token = cli_key(&pool, "admin");
    let mut serve = ServeProcess::start(&pool, &temporal.address(), &namespace, &[]).await;
    let http = reqwest::Client::new();
    let created: Value = http
        .post(format!("{}/v1/activities", serve.base))
        .bearer_auth(&token)
        .json(&event_activity("file.stored"))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .json()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let id = created["id"].as_str().unwrap_or_default().to_owned();

    // 500 events, 32 at a time; the process is killed while they arrive.
    let base = serve.base.clone();
    let burst = {
        let (http, token) = (http.clone(), token.clone());
        tokio::spawn(async move {
            use futures::StreamExt;
            futures::stream::iter(0..500)
                .map(|n| {
                    let (http, token, base) = (http.clone(), token.clone(), base.clone());
                    async move {
                        let event = json!({"event_id": format!("file-{n}"), "event_type": "file.stored", "source": "s3", "payload": {"n": n}});
                        let accepted = http
                            .post(format!("{base}/v1/events"))
                            .bearer_auth(&token)
                            .json(&event)
                            .timeout(Duration::from_secs(10))
                            .send()
                            .await
                            .is_ok_and(|r| r.status().is_success());
                        (n, accepted)
                    }
                })
                .buffer_unordered(32)
                .collect::<Vec<_>>()
                .await
        })
    };
    // Kill once part of the burst is in.
    eventually(Duration::from_secs(60), || async {
        let n = scalar(&pool, "SELECT count(*) FROM events").await;
        (n >= 150).then_some(())
    })
    .await;
    serve
        .child
        .kill()
        .unwrap_or_else(|e| panic!("kill -9: {e}"));
    let _ = serve.child.wait();
    let results = burst.await.unwrap_or_else(|e| panic!("{e}"));
    let accepted: Vec<i64> = results
        .iter()
        .filter(|(_, ok)| *ok)
        .map(|(n, _)| *n)
        .collect();
    // Some were answered before the kill, the rest were refused with it
    // (an event recorded but never answered is the client's to re-send).
    assert!(
        !accepted.is_empty() && accepted.len() < 500,
        "accepted {}",
        accepted.len()
    );

    // Back up: every accepted event has exactly one run, and it succeeded.
    let serve = ServeProcess::start(&pool, &temporal.address(), &namespace, &[]).await;
    let expected = accepted.len() as i64;
    let accepted_ids: Vec<String> = accepted
        .iter()
        .map(|n| format!("activity-{id}:file-{n}"))
        .collect();
    let succeeded = || async {
        let (n,): (i64,) = sqlx::query_as(
            "SELECT count(*) FROM activity_runs WHERE workflow_id = ANY($1) AND status = 'succeeded'",
        )
        .bind(&accepted_ids)
        .fetch_one(&pool)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
        n
    };
    eventually(Duration::from_secs(240), || async {
        (succeeded().await == expected).then_some(())
    })
    .await;
    // Exactly one run row each (the count above is per distinct workflow ID:
    // `activity_runs.workflow_id` is unique), and every dispatch completed.
    let (incomplete,): (i64,) = sqlx::query_as(
        "SELECT count(*) FROM event_dispatches WHERE workflow_id = ANY($1) AND state <> 'completed'",
    )
    .bind(&accepted_ids)
    .fetch_one(&pool)
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(incomplete, 0, "{}", serve.log());
    // No event ran twice: one run row per workflow ID is the table's own
    // constraint; Temporal holds one execution per ID as well.
    let executions = list_executions(
        &temporal.address(),
        &namespace,
        &format!(
            "WorkflowType = 'RunActivityWorkflow' AND WorkflowId STARTS_WITH 'activity-{id}:'"
        ),
    )
    .await;
    let distinct: HashSet<&String> = executions.iter().map(|e| &e.workflow_id).collect();
    assert_eq!(executions.len(), distinct.len());
    assert!(executions.len() as i64 >= expected);
}

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

/// Ingest writes a new event and its dispatch rows in one statement from the
/// subscribers it last read; that statement compares them with the table in
/// its own snapshot. A subscriber added, deleted, changed or given a
/// debounce since the last event is seen by the very next one.
#[sqlx::test(migrations = "./migrations")]
async fn the_next_event_sees_subscribers_changed_since_the_last(pool: PgPool) {
    let app = TestApp::without_temporal(pool.clone()).await;
    let rows = async |event_id: &str| -> Vec<(String, i64, bool)> {
        sqlx::query_as(
            "SELECT activity_id::text, definition_version, debounce_key IS NOT NULL
             FROM event_dispatches WHERE event_id = $1 ORDER BY activity_id",
        )
        .bind(event_id)
        .fetch_all(&pool)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
    };
    let mut n = 0;
    let mut post = async || {
        n += 1;
        let event_id = format!("sub-{n}");
        let body = json!({"event_id": event_id, "event_type": "sub.changed", "source": "s", "payload": {"n": n}});
        let (status, answer) = json(app.post("/v1/events", &body).await).await;
        assert!(status == 200 || status == 202, "{answer}");
        let answered = dispatched_to(&answer);
        (event_id, answered)
    };
    let ids = |rows: &[(String, i64, bool)]| rows.iter().map(|r| r.0.clone()).collect::<Vec<_>>();

    // Twice with one subscriber: the second from what the first read.
    let a = app.create(&event_activity("sub.changed")).await["id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    for _ in 0..2 {
        let (event, answered) = post().await;
        assert_eq!(answered, std::slice::from_ref(&a));
        assert_eq!(rows(&event).await, [(a.clone(), 1, false)]);
    }
    // A second subscriber.
    let b = app.create(&event_activity("sub.changed")).await["id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let mut both = vec![a.clone(), b.clone()];
    both.sort();
    let (event, answered) = post().await;
    assert_eq!(answered, both);
    assert_eq!(ids(&rows(&event).await), both);
    let (event, _) = post().await;
    assert_eq!(ids(&rows(&event).await), both, "again, from memory");
    // The first deleted.
    let (status, _) = json(app.delete(&format!("/v1/activities/{a}")).await).await;
    assert_eq!(status, 204);
    let (event, answered) = post().await;
    assert_eq!(answered, std::slice::from_ref(&b));
    assert_eq!(rows(&event).await, [(b.clone(), 1, false)]);
    // The second changed: its new version is the one dispatched.
    let (status, patched) = json(
        app.patch(
            &format!("/v1/activities/{b}"),
            &json!({"description": "v2"}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 200, "{patched}");
    let (event, _) = post().await;
    assert_eq!(rows(&event).await, [(b.clone(), 2, false)]);
    // Given a debounce: its dispatches are debounced from the next event on.
    let (status, patched) = json(
        app.patch(
            &format!("/v1/activities/{b}"),
            &json!({"flow": {"debounce": {"period": "PT1H"}}}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 200, "{patched}");
    for _ in 0..2 {
        let (event, _) = post().await;
        assert_eq!(rows(&event).await, [(b.clone(), 3, true)]);
    }
    // Deleted too: no dispatch at all.
    let (status, _) = json(app.delete(&format!("/v1/activities/{b}")).await).await;
    assert_eq!(status, 204);
    for _ in 0..2 {
        let (event, answered) = post().await;
        assert!(answered.is_empty());
        assert!(rows(&event).await.is_empty());
    }
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
