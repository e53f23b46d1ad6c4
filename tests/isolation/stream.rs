//! The change stream: a stream opened with team-a's key (or a stream token
//! it made) carries team-a's changes only, live and in a replay.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use super::world::World;
use acp_store::changes::ChangeStore;

pub async fn walk(world: &World) -> Vec<&'static str> {
    let (a, b) = (&world.a, &world.b);
    let log = ChangeStore::new(world.app.pool.clone());
    sequence_all(&log).await;
    // The app's fan-out, as `acp serve` runs it, from the log's end on.
    let feed = world.app.state.services.changes.clone();
    let fanout = tokio::spawn(feed.clone().run_fanout(std::future::pending()));
    let newest = log.bounds().await.unwrap_or_else(|e| panic!("{e}")).newest;
    tokio::time::timeout(Duration::from_secs(30), async {
        while feed.newest() < newest {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("the fan-out never read the log"));

    // Live: B's change, then A's; A's stream shows A's alone.
    let live = world
        .app
        .http
        .get(world.app.url("/v1/stream"))
        .bearer_auth(&a.token)
        .send()
        .await
        .unwrap_or_else(|e| panic!("stream: {e}"));
    assert_eq!(live.status(), 200);
    for owner in [b, a] {
        let (status, body) = world
            .call(
                &owner.token,
                Method::PATCH,
                &format!("/v1/calendars/{}", owner.calendar),
                Some(&json!({"name": format!("{} holidays, renamed", owner.project)})),
            )
            .await;
        assert_eq!(status, 200, "{body}");
    }
    sequence_all(&log).await;
    let seen = read_until_own_change(live, &a.calendar).await;
    assert_none_of(world, &seen, "live");
    fanout.abort();

    // Replay from the log's start, with a stream token of A's key.
    let (status, token) = world
        .call(&a.token, Method::POST, "/v1/stream/tokens", None)
        .await;
    assert_eq!(status, 201, "{token}");
    let replay = reqwest::Client::new()
        .get(world.app.url("/v1/stream"))
        .query(&[
            ("token", token["token"].as_str().unwrap_or_default()),
            ("since", "0"),
        ])
        .send()
        .await
        .unwrap_or_else(|e| panic!("stream: {e}"));
    assert_eq!(replay.status(), 200);
    let seen = read_until_own_change(replay, &a.calendar).await;
    assert!(
        seen.iter()
            .any(|e| e["kind"] == "activity.created" && e["subject"] == json!(a.activity)),
        "the replay shows team-a's own changes"
    );
    assert_none_of(world, &seen, "replay");

    vec!["stream", "create_stream_token"]
}

/// Numbers every change made so far, as the sequencer duty does.
async fn sequence_all(log: &ChangeStore) {
    while log.sequence(1000).await.unwrap_or_else(|e| panic!("{e}")) > 0 {}
}

/// The stream's events (`data:` of each) up to A's calendar being
/// renamed.
async fn read_until_own_change(mut response: reqwest::Response, calendar: &str) -> Vec<Value> {
    let mut seen = Vec::new();
    let mut text = String::new();
    let read = async {
        while let Ok(Some(chunk)) = response.chunk().await {
            text.push_str(&String::from_utf8_lossy(&chunk));
            while let Some(end) = text.find("\n\n") {
                let block: String = text.drain(..end + 2).collect();
                let Some(data) = block.lines().find_map(|l| l.strip_prefix("data:")) else {
                    continue;
                };
                let event: Value = serde_json::from_str(data.trim()).unwrap_or(Value::Null);
                let done = event["kind"] == "calendar.updated" && event["subject"] == calendar;
                seen.push(event);
                if done {
                    return;
                }
            }
        }
        panic!("the stream ended before team-a's change: {seen:?}");
    };
    tokio::time::timeout(Duration::from_secs(30), read)
        .await
        .unwrap_or_else(|_| panic!("team-a's change never came"));
    seen
}

/// No event names anything of B's (its objects, or its audit entries).
fn assert_none_of(world: &World, seen: &[Value], how: &str) {
    let b = &world.b;
    for event in seen {
        let text = event.to_string();
        for id in [&b.activity, &b.scheduled, &b.calendar, &b.alert, &b.run] {
            assert!(
                !text.contains(id.as_str()),
                "{how}: team-a's stream shows team-b's {id}: {event}"
            );
        }
    }
}
