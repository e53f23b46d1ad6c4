//! Accepted events are started once by the dispatchers, also after a
//! kill -9 mid-burst, and see the subscribers of their own moment.

use super::*;

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

    // Every dispatch completed, one run each. A start that fails under load
    // (its error is cleared on completion) is retried by whoever leases the
    // row next: `attempts` 2 is the retry working, so the once-ness is shown
    // by the executions below, not by the attempt count.
    assert_eq!(
        scalar(
            &pool,
            "SELECT count(*) FROM event_dispatches WHERE state = 'completed' AND outcome = 'started'"
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
    // A probe that cannot get a connection (the burst holds many) tries again.
    eventually(Duration::from_secs(60), || async {
        let n: Option<(i64,)> = sqlx::query_as("SELECT count(*) FROM events")
            .fetch_one(&pool)
            .await
            .ok();
        n.is_some_and(|(n,)| n >= 150).then_some(())
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
