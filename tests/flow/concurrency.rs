//! `flow.concurrency`: validated, exact per key for a burst, and what
//! the `skip` and `cancel_oldest` limits do with a run that finds its key full.

use super::*;

#[sqlx::test(migrations = "./migrations")]
async fn flow_is_validated_stored_and_returned(pool: PgPool) {
    let app = app(pool).await;
    let (status, problem) = json(
        app.post(
            "/v1/activities",
            &event_activity(
                "https://x.example/",
                Some(
                    json!({"concurrency": {"limit": 0, "key": "/payload/~x", "on_limit": "drop"}}),
                ),
            ),
        )
        .await,
    )
    .await;
    assert_eq!(status, 422, "{problem}");
    let fields: HashSet<&str> = problem["errors"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["field"].as_str())
        .collect();
    for field in [
        "flow.concurrency.limit",
        "flow.concurrency.key",
        "flow.concurrency.on_limit",
    ] {
        assert!(fields.contains(field), "{field} in {problem}");
    }
    let (status, unknown) = json(
        app.post(
            "/v1/activities",
            &event_activity("https://x.example/", Some(json!({"concurency": {}}))),
        )
        .await,
    )
    .await;
    assert_eq!(status, 400, "{unknown}");

    let created = app
        .create(&event_activity(
            "https://x.example/",
            Some(json!({"concurrency": {"limit": 2, "key": "/payload/customer"}})),
        ))
        .await;
    let want =
        json!({"concurrency": {"limit": 2, "key": "/payload/customer", "on_limit": "queue"}});
    assert_eq!(created["flow"], want);
    let id = created["id"].as_str().unwrap_or_default();
    let (_, fetched) = json(app.get(&format!("/v1/activities/{id}")).await).await;
    assert_eq!(fetched["flow"], want);
    let (status, patched) = json(
        app.patch(
            &format!("/v1/activities/{id}"),
            &json!({"flow": {"concurrency": {"limit": 1, "on_limit": "skip"}}}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 200, "{patched}");
    // A merge patch: the key stays.
    assert_eq!(
        patched["flow"],
        json!({"concurrency": {"limit": 1, "key": "/payload/customer", "on_limit": "skip"}})
    );
}

/// 200 events over 10 customers, at most 2 runs per customer at once, by the
/// sink's own count.
#[sqlx::test(migrations = "./migrations")]
async fn concurrency_limit_per_key_holds_for_a_burst_of_200_events(pool: PgPool) {
    let app = app(pool).await;
    let _worker = app.worker(true, Default::default());
    let _dispatcher = app.dispatcher();
    let sink = HoldingSink::start(Duration::from_secs(3)).await;
    let created = app
        .create(&event_activity(
            &sink.url,
            Some(json!({"concurrency": {"limit": 2, "key": "/payload/customer"}})),
        ))
        .await;
    let id = created["id"].as_str().unwrap_or_default().to_owned();

    post_burst(&app, 200, 10).await;
    // While the burst drains, runs wait as `queued`.
    eventually(Duration::from_secs(120), || async {
        let runs = app.runs_of(&id).await;
        runs.iter().any(|r| r["status"] == "queued").then_some(())
    })
    .await;
    let runs = ended_runs(&app, &id, 200).await;

    let overlap = sink.overlap();
    println!(
        "most calls at once: {} overall, per key {:?}",
        overlap.max_overall, overlap.max_per_key
    );
    assert!(
        overlap.max_per_key.values().all(|&n| n <= 2),
        "{:?}",
        overlap.max_per_key
    );
    assert!(
        overlap.max_per_key.values().any(|&n| n == 2),
        "{:?}",
        overlap.max_per_key
    );
    assert!(overlap.max_overall > 2, "{}", overlap.max_overall);

    // Every event ran exactly once: one call each, one succeeded run each.
    let mut calls: HashMap<&str, usize> = HashMap::new();
    for event in &overlap.events {
        *calls.entry(event.as_str()).or_default() += 1;
    }
    assert_eq!(calls.len(), 200, "{calls:?}");
    assert!(calls.values().all(|&n| n == 1), "{calls:?}");
    assert!(
        runs.iter().all(|r| r["status"] == "succeeded"),
        "{:?}",
        runs.iter().map(|r| &r["status"]).collect::<Vec<_>>()
    );

    // First in first out per key: the order in which runs got their slot
    // (started_at) is the order in which they joined the key's queue.
    let mut by_key: HashMap<String, Vec<(String, String)>> = HashMap::new();
    for run in &runs {
        let key = run["flow"]["key"].as_str().unwrap_or_default().to_owned();
        by_key.entry(key).or_default().push((
            run["flow"]["queued_at"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            run["started_at"].as_str().unwrap_or_default().to_owned(),
        ));
    }
    assert_eq!(by_key.len(), 10, "{:?}", by_key.keys());
    for (key, mut runs) in by_key {
        assert_eq!(runs.len(), 20, "{key}");
        let parse = |t: &str| {
            chrono::DateTime::parse_from_rfc3339(t).unwrap_or_else(|e| panic!("{t}: {e}"))
        };
        runs.sort_by_key(|(queued, _)| parse(queued));
        let started: Vec<_> = runs.iter().map(|(_, s)| parse(s)).collect();
        assert!(
            started.windows(2).all(|w| w[0] <= w[1]),
            "key {key}: slots not granted in queue order: {runs:?}"
        );
    }
}

/// The same burst without the limit: calls of one key do overlap beyond 2,
/// so the test above would fail without the feature.
#[sqlx::test(migrations = "./migrations")]
async fn without_a_limit_the_same_burst_overlaps_per_key(pool: PgPool) {
    let app = app(pool).await;
    let _worker = app.worker(true, Default::default());
    let _dispatcher = app.dispatcher();
    let sink = HoldingSink::start(Duration::from_secs(3)).await;
    let created = app.create(&event_activity(&sink.url, None)).await;
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    post_burst(&app, 200, 10).await;
    ended_runs(&app, &id, 200).await;
    let overlap = sink.overlap();
    println!(
        "without a limit, most calls at once: {} overall, per key {:?}",
        overlap.max_overall, overlap.max_per_key
    );
    assert!(
        overlap.max_per_key.values().any(|&n| n > 2),
        "{:?}",
        overlap.max_per_key
    );
}

/// `on_limit: skip`: a run that finds its key full is recorded `skipped`
/// with reason `concurrency_limit`; another key still runs.
#[sqlx::test(migrations = "./migrations")]
async fn skip_records_a_run_that_finds_its_key_full(pool: PgPool) {
    let app = app(pool).await;
    let _worker = app.worker(true, Default::default());
    let _dispatcher = app.dispatcher();
    let sink = HoldingSink::start(Duration::from_secs(20)).await;
    let created = app
        .create(&event_activity(
            &sink.url,
            Some(json!({"concurrency": {"limit": 1, "key": "/payload/customer", "on_limit": "skip"}})),
        ))
        .await;
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    let post = |n: usize, customer: &'static str| {
        let app = &app;
        async move {
            let (status, body) = json(
                app.post(
                    "/v1/events",
                    &json!({"event_id": format!("s-{n}"), "event_type": "order.placed",
                            "source": "shop", "payload": {"customer": customer}}),
                )
                .await,
            )
            .await;
            assert!((200..300).contains(&status), "{status}: {body}");
        }
    };
    post(1, "a").await;
    // The first holds the key's only slot (its call is in the sink).
    eventually(Duration::from_secs(180), || async {
        (sink.overlap().events.len() == 1).then_some(())
    })
    .await;
    post(2, "a").await;
    post(3, "b").await;
    let skipped = eventually(Duration::from_secs(180), || async {
        let runs = app.runs_of(&id).await;
        runs.into_iter()
            .find(|r| r["event_id"] == "s-2" && r["status"] == "skipped")
    })
    .await;
    assert_eq!(skipped["skip_reason"], "concurrency_limit", "{skipped}");
    assert_eq!(skipped["tasks_succeeded"], 0, "{skipped}");
    // Another key has its own slot.
    eventually(Duration::from_secs(180), || async {
        let events = sink.overlap().events;
        events.iter().any(|e| e == "s-3").then_some(())
    })
    .await;
    // The skipped event never reached the sink.
    assert!(!sink.overlap().events.iter().any(|e| e == "s-2"));
    let (_, activity) = json(app.get(&format!("/v1/activities/{id}")).await).await;
    assert_eq!(activity["flow_state"]["in_use"], 2, "{activity}");
}

/// `on_limit: cancel_oldest`: the run holding the key's slot is cancelled
/// (recorded with the reason), then the new run gets the slot.
#[sqlx::test(migrations = "./migrations")]
async fn cancel_oldest_cancels_the_running_run_then_starts(pool: PgPool) {
    let app = app(pool).await;
    let _worker = app.worker(true, Default::default());
    let _dispatcher = app.dispatcher();
    let sink = HoldingSink::start(Duration::from_secs(30)).await;
    let created = app
        .create(&event_activity(
            &sink.url,
            Some(json!({"concurrency": {"limit": 1, "on_limit": "cancel_oldest"}})),
        ))
        .await;
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    for n in 1..=2 {
        let (status, body) = json(
            app.post(
                "/v1/events",
                &json!({"event_id": format!("k-{n}"), "event_type": "order.placed",
                        "source": "shop", "payload": {"customer": "a"}}),
            )
            .await,
        )
        .await;
        assert!((200..300).contains(&status), "{status}: {body}");
        let seen = n;
        eventually(Duration::from_secs(180), || async {
            (sink.overlap().events.len() == seen).then_some(())
        })
        .await;
    }
    let runs = app.runs_of(&id).await;
    let first = runs
        .iter()
        .find(|r| r["event_id"] == "k-1")
        .cloned()
        .unwrap_or_default();
    let first = wait_run_done(
        &app,
        first["run_id"].as_str().unwrap_or_default(),
        Duration::from_secs(120),
    )
    .await;
    assert_eq!(first["status"], "cancelled", "{first}");
    assert!(
        first["error"]
            .as_str()
            .is_some_and(|e| e.contains("cancel_oldest")),
        "{first}"
    );
    // The new run got the slot only once the oldest had ended. (The
    // oldest's webhook call may still be in flight at the sink: cancelling
    // a run does not interrupt an HTTP request already sent.)
    let runs = app.runs_of(&id).await;
    let second = runs
        .iter()
        .find(|r| r["event_id"] == "k-2")
        .cloned()
        .unwrap_or_default();
    let at = |v: &Value| {
        chrono::DateTime::parse_from_rfc3339(v.as_str().unwrap_or_default())
            .unwrap_or_else(|e| panic!("{v}: {e}"))
    };
    assert!(
        at(&second["started_at"]) >= at(&first["finished_at"]),
        "{second} {first}"
    );
}
