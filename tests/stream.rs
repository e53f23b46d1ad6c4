//! `GET /v1/stream`: every change, from a log written in the changes' own
//! transactions, resumable with `Last-Event-ID` across a kill -9 of the
//! service, with a `resync` for a client that falls behind, and stream tokens
//! for browsers.

use crate::common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use serde_json::{Value, json};
use sqlx::PgPool;

/// What a reconnecting client has seen, and its task.
type Client = (Arc<Mutex<Vec<Seen>>>, tokio::task::JoinHandle<()>);

/// One event as a client read it.
#[derive(Debug, Clone, PartialEq)]
struct Seen {
    id: Option<i64>,
    kind: String,
    data: Value,
}

/// Reads one connection of a stream, calling `on` for each event until it
/// returns false or the connection ends.
async fn read_stream(mut response: reqwest::Response, mut on: impl FnMut(Seen) -> bool) {
    let mut text = String::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        text.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = text.find("\n\n") {
            let block: String = text.drain(..end + 2).collect();
            let field = |name: &str| {
                block
                    .lines()
                    .find_map(|l| l.strip_prefix(&format!("{name}:")))
                    .map(|v| v.trim().to_owned())
            };
            let Some(data) = field("data") else { continue };
            let seen = Seen {
                id: field("id").and_then(|i| i.parse().ok()),
                kind: field("event").unwrap_or_default(),
                data: serde_json::from_str(&data).unwrap_or(Value::Null),
            };
            if !on(seen) {
                return;
            }
        }
    }
}

/// A client that reads the stream and, whenever its connection ends,
/// connects again (to whichever service is up) with `Last-Event-ID`.
fn reconnecting_client(
    base: Arc<Mutex<String>>,
    seen: Arc<Mutex<Vec<Seen>>>,
    stop: Arc<std::sync::atomic::AtomicBool>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let http = reqwest::Client::new();
        while !stop.load(std::sync::atomic::Ordering::SeqCst) {
            let last = seen
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .last()
                .and_then(|s| s.id)
                .unwrap_or(0);
            let url = format!(
                "{}/v1/stream",
                base.lock().unwrap_or_else(|p| p.into_inner())
            );
            let response = http
                .get(url)
                .header("last-event-id", last.to_string())
                .send()
                .await;
            if let Ok(response) = response
                && response.status() == 200
            {
                let stop = stop.clone();
                read_stream(response, |event| {
                    seen.lock().unwrap_or_else(|p| p.into_inner()).push(event);
                    !stop.load(std::sync::atomic::Ordering::SeqCst)
                })
                .await;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
}

async fn log_seqs(pool: &PgPool) -> Vec<(i64, String)> {
    sqlx::query_as("SELECT seq, kind FROM change_log ORDER BY seq")
        .fetch_all(pool)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Three clients follow the stream while 300 event runs execute; the
/// service is killed -9 mid-stream and started again; each client
/// reconnects with `Last-Event-ID`. Every client saw exactly the change
/// log, in order, nothing missing or doubled, the runs' final states among
/// it.
#[sqlx::test(migrations = "./migrations")]
async fn three_clients_see_the_whole_log_across_a_kill_9(pool: PgPool) {
    const EVENTS: usize = 300;
    let temporal = shared_temporal();
    let namespace = new_namespace(&temporal.address()).await;
    let env = [("ACP_AUTH_DISABLED", "true")];
    let mut serve = ServeProcess::start(&pool, &temporal.address(), &namespace, &env).await;
    let http = reqwest::Client::new();
    let created: Value = http
        .post(format!("{}/v1/activities", serve.base))
        .json(&json!({
            "name": "streamed",
            "trigger": {"type": "event", "event_types": ["stream.test"]},
            "tasks": [{"task_type": "noop"}]
        }))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .json()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let activity_id = created["id"].as_str().unwrap_or_default().to_owned();

    let base = Arc::new(Mutex::new(serve.base.clone()));
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let clients: Vec<Client> = (0..3)
        .map(|_| {
            let seen = Arc::new(Mutex::new(Vec::new()));
            let task = reconnecting_client(base.clone(), seen.clone(), stop.clone());
            (seen, task)
        })
        .collect();

    // The events, each sent until some service accepts it.
    let burst = {
        let base = base.clone();
        let events = (0..EVENTS)
            .map(|n| json!({"event_id": format!("s-{n}"), "event_type": "stream.test", "source": "t", "payload": {"n": n}}))
            .collect();
        post_events_until_accepted(http.clone(), events, move |_, _| {
            base.lock().unwrap_or_else(|p| p.into_inner()).clone()
        })
    };
    // Mid-stream: kill -9, and a new process on another port.
    eventually(Duration::from_secs(120), || async {
        let (n,): (i64,) =
            sqlx::query_as("SELECT count(*) FROM change_log WHERE kind = 'run.status_changed'")
                .fetch_one(&pool)
                .await
                .ok()?;
        (n >= 100).then_some(())
    })
    .await;
    serve.kill9();
    serve = ServeProcess::start(&pool, &temporal.address(), &namespace, &env).await;
    *base.lock().unwrap_or_else(|p| p.into_inner()) = serve.base.clone();
    let accepted = burst.await.unwrap_or_else(|e| panic!("{e}"));
    assert!(accepted.iter().all(|a| *a), "an event was never accepted");

    // Every run ends; every client catches up with the log.
    eventually(Duration::from_secs(300), || async {
        let (n,): (i64,) = sqlx::query_as(
            "SELECT count(*) FROM activity_runs WHERE activity_id = $1::uuid AND status = 'succeeded'",
        )
        .bind(&activity_id)
        .fetch_one(&pool)
        .await
        .ok()?;
        (n == EVENTS as i64).then_some(())
    })
    .await;
    let log = eventually(Duration::from_secs(60), || async {
        // Every committed change numbered: a run's last change can still
        // sit in the inbox when its row already says succeeded, even while
        // the log stays quiet for a moment.
        let (unnumbered,): (i64,) = sqlx::query_as("SELECT count(*) FROM change_inbox")
            .fetch_one(&pool)
            .await
            .ok()?;
        if unnumbered > 0 {
            return None;
        }
        let log = log_seqs(&pool).await;
        let newest = log.last().map(|(s, _)| *s)?;
        let caught_up = clients.iter().all(|(seen, _)| {
            seen.lock()
                .unwrap_or_else(|p| p.into_inner())
                .last()
                .and_then(|s| s.id)
                == Some(newest)
        });
        // Quiet for a moment: nothing more is being logged.
        (caught_up && log_seqs(&pool).await.len() == log.len()).then_some(log)
    })
    .await;
    stop.store(true, std::sync::atomic::Ordering::SeqCst);

    for (i, (seen, task)) in clients.into_iter().enumerate() {
        task.abort();
        let seen = seen.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let got: Vec<(i64, String)> = seen
            .iter()
            .map(|s| (s.id.unwrap_or(-1), s.kind.clone()))
            .collect();
        assert_eq!(
            got.len(),
            log.len(),
            "client {i}: {} events, the log has {}",
            got.len(),
            log.len()
        );
        assert!(got == log, "client {i} saw another sequence than the log");
        // The data is the log's, and every run's final state is in it.
        let succeeded: std::collections::HashSet<&str> = seen
            .iter()
            .filter(|s| s.kind == "run.status_changed" && s.data["data"]["status"] == "succeeded")
            .filter_map(|s| s.data["subject"].as_str())
            .collect();
        assert_eq!(succeeded.len(), EVENTS, "client {i}");
    }
}

/// A client that stops reading falls behind the live feed: it is sent
/// `resync` and the stream ends, and everything before is contiguous.
#[sqlx::test(migrations = "./migrations")]
async fn a_client_that_falls_behind_gets_resync_not_a_gap(pool: PgPool) {
    let temporal = shared_temporal();
    let namespace = new_namespace(&temporal.address()).await;
    let env = [("ACP_AUTH_DISABLED", "true"), ("ACP_STREAM_BUFFER", "64")];
    let serve = ServeProcess::start(&pool, &temporal.address(), &namespace, &env).await;
    let http = reqwest::Client::new();
    let created: Value = http
        .post(format!("{}/v1/activities", serve.base))
        .json(&interval_activity("PT1H"))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .json()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    let response = http
        .get(format!("{}/v1/stream?since=0", serve.base))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(response.status(), 200);
    // 2,000 changes of 8 KB each (16 MB) while the client reads nothing: far
    // more than the socket buffers hold, so the stream stops being read and
    // falls behind. Few large changes rather than many small ones: each
    // update of the one row walks the row's chain of versions made earlier in
    // the same transaction, so the statement's cost grows with the square of
    // its updates (20,000 of them kept a PostgreSQL core busy for minutes).
    sqlx::query(
        "DO $$ BEGIN FOR i IN 1..2000 LOOP
             UPDATE activities SET sync_state = CASE WHEN sync_state = 'synced' THEN 'pending' ELSE 'synced' END,
                                   last_sync_error = repeat('x', 8000)
              WHERE id = $1::uuid;
         END LOOP; END $$"
            .replace("$1::uuid", &format!("'{id}'::uuid"))
            .as_str(),
    )
    .execute(&pool)
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    tokio::time::sleep(Duration::from_secs(3)).await;
    let mut seen = Vec::new();
    tokio::time::timeout(
        Duration::from_secs(60),
        read_stream(response, |event| {
            let more = event.kind != "resync";
            seen.push(event);
            more
        }),
    )
    .await
    .unwrap_or_else(|_| panic!("the stream neither ended nor resynced"));
    let last = seen
        .last()
        .cloned()
        .unwrap_or_else(|| panic!("nothing read"));
    assert_eq!(last.kind, "resync", "{last:?}");
    let ids: Vec<i64> = seen.iter().filter_map(|s| s.id).collect();
    assert!(
        ids.windows(2).all(|w| w[1] == w[0] + 1),
        "a gap before the resync"
    );
    assert_eq!(
        last.data["last_event_id"],
        json!(ids.last().copied().unwrap_or(0))
    );
    assert!(ids.len() < 20_000, "it never fell behind");
}

/// Stream tokens: made by a key, good only on the stream, refused once
/// their key is revoked; a `since` older than the log is a 410.
#[sqlx::test(migrations = "./migrations")]
async fn stream_tokens_open_the_stream_only_while_their_key_lives(pool: PgPool) {
    let temporal = shared_temporal();
    let namespace = new_namespace(&temporal.address()).await;
    let token = cli_key(&pool, "read");
    let serve = ServeProcess::start(&pool, &temporal.address(), &namespace, &[]).await;
    let http = reqwest::Client::new();
    let (status, body) = json(
        http.post(format!("{}/v1/stream/tokens", serve.base))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap_or_else(|e| panic!("{e}")),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let stream_token = body["token"].as_str().unwrap_or_default().to_owned();
    assert!(stream_token.starts_with("acps_"));

    let open = |t: String| {
        let (http, base) = (http.clone(), serve.base.clone());
        async move {
            http.get(format!("{base}/v1/stream"))
                .query(&[("token", t.as_str()), ("since", "0")])
                .send()
                .await
                .unwrap_or_else(|e| panic!("{e}"))
                .status()
                .as_u16()
        }
    };
    assert_eq!(open(stream_token.clone()).await, 200);
    // Nowhere else: not as a bearer token, not as a query parameter.
    let elsewhere = http
        .get(format!("{}/v1/runs", serve.base))
        .bearer_auth(&stream_token)
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(elsewhere.status(), 401);
    let elsewhere = http
        .get(format!("{}/v1/runs?token={stream_token}", serve.base))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(elsewhere.status(), 401);
    // A made-up token, and the key revoked: refused.
    assert_eq!(open(format!("acps_{}", "0".repeat(64))).await, 401);
    let key_id = stream_token_key(&pool).await;
    let revoked = std::process::Command::new(acp_bin())
        .args(["keys", "revoke", &key_id.to_string()])
        .env("DATABASE_URL", database_url(&pool))
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(revoked.status.success());
    assert_eq!(open(stream_token).await, 401);

    // Pruned changes: a `since` before them must reload.
    sqlx::query("UPDATE change_log_meta SET pruned_through = 10")
        .execute(&pool)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let admin = cli_key(&pool, "admin");
    let (status, problem) = json(
        http.get(format!("{}/v1/stream?since=3", serve.base))
            .bearer_auth(&admin)
            .send()
            .await
            .unwrap_or_else(|e| panic!("{e}")),
    )
    .await;
    assert_eq!(status, 410, "{problem}");
    assert!(
        problem["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("reload")
    );
    let (status, problem) = json(
        http.get(format!("{}/v1/stream?since=ten", serve.base))
            .bearer_auth(&admin)
            .send()
            .await
            .unwrap_or_else(|e| panic!("{e}")),
    )
    .await;
    assert_eq!(
        (status, problem["errors"][0]["field"].clone()),
        (400, json!("since"))
    );
}

async fn stream_token_key(pool: &PgPool) -> uuid::Uuid {
    let (id,): (uuid::Uuid,) = sqlx::query_as("SELECT key_id FROM stream_tokens LIMIT 1")
        .fetch_one(pool)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    id
}
