//! The events-per-second quota over HTTP: a project at 1/s with a burst of
//! 5 has its 6th immediate event refused (429, `Retry-After`, the problem's
//! quota, limit and usage), the one after waiting that long accepted; a
//! batch takes tokens in order and answers the rest 429 each; a rate of 0
//! accepts its burst and then nothing, on every ingest route; every event
//! accepted is recorded and none refused is. Temporal is not needed.

use crate::common;
use crate::quotas::call;

use std::time::Duration;

use common::*;
use reqwest::Method;
use serde_json::{Value, json};
use sqlx::PgPool;

fn event(n: usize) -> Value {
    json!({"event_id": format!("rate-{n}"), "event_type": "test.rate", "source": "test",
           "payload": {"n": n}})
}

fn assert_rate_refused(answer: &(u16, Value, Option<String>), limit: i64, usage: i64) {
    let (status, problem, _) = answer;
    assert_eq!(*status, 429, "{problem}");
    assert_eq!(
        problem["type"],
        "https://activity-control-plane.dev/problems/quota-exceeded"
    );
    assert_eq!(
        (&problem["quota"], &problem["limit"], &problem["usage"]),
        (&json!("events_per_second"), &json!(limit), &json!(usage)),
        "{problem}"
    );
}

async fn recorded(pool: &PgPool) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM events")
        .fetch_one(pool)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

#[sqlx::test(migrations = "./migrations")]
async fn events_beyond_the_rate_are_refused_until_a_token_is_back(pool: PgPool) {
    let app = TestApp::without_temporal(pool.clone()).await;
    let paced = app
        .project_with_admin("paced", json!({"events_per_second": 1, "events_burst": 5}))
        .await;
    let mut accepted = 0;
    for n in 0..5 {
        let (status, body, _) =
            call(&app, Method::POST, "/v1/events", &paced, Some(&event(n))).await;
        assert_eq!(status, 200, "event {n}: {body}");
        accepted += 1;
    }
    let sixth = call(&app, Method::POST, "/v1/events", &paced, Some(&event(5))).await;
    // One token a second: six posts take far less even on a loaded machine.
    assert_rate_refused(&sixth, 1, 5);
    let retry_after: u64 = sixth
        .2
        .as_deref()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("Retry-After: {:?}", sixth.2));
    assert_eq!(retry_after, 1, "a token is back within a second");
    // A client that waits as told is accepted.
    tokio::time::sleep(Duration::from_secs(retry_after)).await;
    let (status, body, _) = call(&app, Method::POST, "/v1/events", &paced, Some(&event(5))).await;
    assert_eq!(status, 200, "after Retry-After: {body}");
    accepted += 1;

    // A rate of 0 with a burst of 3: a batch of 5 gets 3 in, in order, and
    // the other two are 429 each; then nothing, on any ingest route.
    let frozen = app
        .project_with_admin("frozen", json!({"events_per_second": 0, "events_burst": 3}))
        .await;
    let batch = json!({"events": (10..15).map(event).collect::<Vec<_>>()});
    let (status, body, _) = call(
        &app,
        Method::POST,
        "/v1/events:batch",
        &frozen,
        Some(&batch),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let statuses: Vec<u64> = body["items"]
        .as_array()
        .unwrap_or_else(|| panic!("{body}"))
        .iter()
        .map(|r| r["status"].as_u64().unwrap_or_default())
        .collect();
    assert_eq!(statuses, [200, 200, 200, 429, 429], "{body}");
    assert_eq!(
        body["items"][3]["problem"]["quota"], "events_per_second",
        "{body}"
    );
    accepted += 3;
    let refused = call(&app, Method::POST, "/v1/events", &frozen, Some(&event(20))).await;
    assert_rate_refused(&refused, 0, 3);
    assert_eq!(refused.2.as_deref(), Some("60"), "no token ever comes");
    let refused = call(
        &app,
        Method::POST,
        "/v1/events:batch",
        &frozen,
        Some(&batch),
    )
    .await;
    assert_rate_refused(&refused, 0, 3);
    let cloudevent = reqwest::Client::new()
        .post(app.url("/v1/cloudevents"))
        .bearer_auth(&frozen)
        .header("content-type", "application/cloudevents+json")
        .json(&json!({"specversion": "1.0", "id": "c-1", "source": "test", "type": "test.rate"}))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(cloudevent.status().as_u16(), 429);

    // Every event accepted is recorded; none refused is.
    assert_eq!(recorded(&pool).await, accepted);
    // The operator's (default) project has no quota: unaffected.
    let (status, body) = json(app.post("/v1/events", &event(30)).await).await;
    assert_eq!(status, 200, "{body}");
}
