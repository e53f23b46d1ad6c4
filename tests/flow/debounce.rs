//! `flow.debounce`: a burst per key becomes one run of its last event;
//! only for event triggers.

use super::*;

/// Under `debounce { period: PT2S, key: /payload/doc }`, 30 events for one doc
/// within 1.5 s become one run of the last, started two seconds after it,
/// carrying the 29 it absorbed; the absorbed events are skipped runs
/// (`debounced`) whose dispatches name that run; another doc's events have
/// their own run.
#[sqlx::test(migrations = "./migrations")]
async fn debounce_collapses_a_burst_per_key_into_one_run_of_the_last_event(pool: PgPool) {
    let app = app(pool).await;
    let _worker = app.worker(true, Default::default());
    let _dispatcher = app.dispatcher();
    let sink = HoldingSink::start(Duration::from_millis(10)).await;
    let mut body = event_activity(
        &sink.url,
        Some(json!({"debounce": {"period": "PT2S", "key": "/payload/doc"}})),
    );
    body["trigger"]["event_types"] = json!(["doc.edited"]);
    let created = app.create(&body).await;
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    assert_eq!(
        created["flow"],
        json!({"debounce": {"period": "PT2S", "key": "/payload/doc"}})
    );

    // 30 edits of doc `a` in three batches 0.5 s apart (1 s from first to
    // last), two of doc `b` in between.
    let edit = |doc: &str, n: usize| {
        json!({"specversion": "1.0", "id": format!("{doc}-{n:02}"), "source": "docs",
               "type": "doc.edited", "data": {"doc": doc, "n": n}})
    };
    for batch in 0..3 {
        let mut events: Vec<Value> = (batch * 10..batch * 10 + 10)
            .map(|n| edit("a", n))
            .collect();
        if batch == 1 {
            events.push(edit("b", 0));
            events.push(edit("b", 1));
        }
        let (status, body) = json(
            app.http
                .post(app.url("/v1/events"))
                .header("content-type", "application/cloudevents-batch+json")
                .json(&events)
                .send()
                .await
                .unwrap_or_else(|e| panic!("{e}")),
        )
        .await;
        assert!((200..300).contains(&status), "{status}: {body}");
        if batch < 2 {
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
    let runs = ended_runs(&app, &id, 32).await;
    let ran: Vec<&Value> = runs.iter().filter(|r| r["status"] == "succeeded").collect();
    let mut ran_events: Vec<&str> = ran.iter().filter_map(|r| r["event_id"].as_str()).collect();
    ran_events.sort();
    assert_eq!(ran_events, ["ce:docs:a-29", "ce:docs:b-01"], "{runs:?}");
    let skipped: Vec<&Value> = runs.iter().filter(|r| r["status"] == "skipped").collect();
    assert_eq!(skipped.len(), 30, "{runs:?}");
    assert!(
        skipped.iter().all(|r| r["skip_reason"] == "debounced"),
        "{skipped:?}"
    );

    // The sink saw one call per doc, each carrying what it absorbed.
    let seen = sink.overlap();
    assert_eq!(seen.bodies.len(), 2, "{:?}", seen.events);
    for event in &seen.bodies {
        let (doc_last, absorbed) = match event["payload"]["doc"].as_str() {
            Some("a") => ("ce:docs:a-29", 29),
            _ => ("ce:docs:b-01", 1),
        };
        assert_eq!(event["event_id"], doc_last, "{event}");
        assert_eq!(event["debounce"]["absorbed_count"], absorbed, "{event}");
        let ids = event["debounce"]["absorbed_event_ids"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert_eq!(ids.len(), absorbed, "{event}");
    }

    // The run of doc `a` is its last event's, under that event's contract
    // workflow ID, started at least the period after that event arrived.
    let run_a = ran
        .iter()
        .find(|r| r["event_id"] == "ce:docs:a-29")
        .copied()
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        run_a["workflow_id"],
        format!("activity-{id}:ce:docs:a-29"),
        "{run_a}"
    );
    let (_, last) = json(app.get("/v1/events/ce:docs:a-29").await).await;
    assert!(
        at(&run_a["started_at"]) - at(&last["received_at"]) >= chrono::Duration::seconds(2),
        "{run_a} {last}"
    );
    // Each absorbed event's dispatch names the run that took it.
    for n in [0, 15, 28] {
        let (status, event) = json(app.get(&format!("/v1/events/ce:docs:a-{n:02}")).await).await;
        assert_eq!(status, 200, "{event}");
        let dispatch = &event["dispatches"][0];
        assert_eq!(dispatch["outcome"], "debounced", "{event}");
        assert_eq!(dispatch["absorbed_by_run_id"], run_a["run_id"], "{event}");
    }
}

/// `flow.debounce` is refused on a scheduled activity, naming the field.
#[sqlx::test(migrations = "./migrations")]
async fn debounce_is_for_event_triggers_only(pool: PgPool) {
    let app = app(pool).await;
    let (status, problem) = json(
        app.post(
            "/v1/activities",
            &json!({
                "name": "nightly",
                "trigger": {"type": "interval", "every": "PT1H"},
                "tasks": [{"task_type": "webhook", "config": {"url": "https://x.example/"}}],
                "flow": {"debounce": {"period": "PT2S"}}
            }),
        )
        .await,
    )
    .await;
    assert_eq!(status, 422, "{problem}");
    assert!(
        problem["errors"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|e| e["field"] == "flow.debounce"),
        "{problem}"
    );
}
