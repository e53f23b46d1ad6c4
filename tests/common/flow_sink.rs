//! A webhook receiver that holds every call and keeps its own log of how
//! many calls overlapped, overall and per key (the event's
//! `payload.customer`), for the flow-control tests.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the sink saw, by its own count.
#[derive(Debug, Default, Clone)]
pub struct Overlap {
    in_flight: HashMap<String, usize>,
    in_flight_all: usize,
    /// The most calls of one key at once, per key.
    pub max_per_key: HashMap<String, usize>,
    /// The most calls at once, all keys together.
    pub max_overall: usize,
    /// Every call's event ID, in arrival order.
    pub events: Vec<String>,
    /// Every call's event (`context.event`), in arrival order.
    pub bodies: Vec<serde_json::Value>,
}

pub struct HoldingSink {
    pub url: String,
    pub log: Arc<Mutex<Overlap>>,
    server: tokio::task::JoinHandle<()>,
}

fn field(body: &serde_json::Value, pointer: &str) -> String {
    body.pointer(pointer)
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .to_owned()
}

impl HoldingSink {
    /// Answers 200 to every call after holding it for `hold`.
    pub async fn start(hold: Duration) -> Self {
        let log: Arc<Mutex<Overlap>> = Arc::default();
        let state = log.clone();
        let app = axum::Router::new().route(
            "/hook",
            axum::routing::post(move |body: axum::Json<serde_json::Value>| {
                let log = state.clone();
                async move {
                    let key = field(&body, "/context/event/payload/customer");
                    let event = field(&body, "/context/event/event_id");
                    if let Ok(mut o) = log.lock() {
                        let n = o.in_flight.entry(key.clone()).or_default();
                        *n += 1;
                        let n = *n;
                        let max = o.max_per_key.entry(key.clone()).or_default();
                        *max = (*max).max(n);
                        o.in_flight_all += 1;
                        o.max_overall = o.max_overall.max(o.in_flight_all);
                        o.events.push(event);
                        o.bodies
                            .push(body.pointer("/context/event").cloned().unwrap_or_default());
                    }
                    tokio::time::sleep(hold).await;
                    if let Ok(mut o) = log.lock() {
                        if let Some(n) = o.in_flight.get_mut(&key) {
                            *n -= 1;
                        }
                        o.in_flight_all -= 1;
                    }
                    axum::Json(serde_json::json!({"ok": true}))
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap_or_else(|e| panic!("bind: {e}"));
        let addr = listener
            .local_addr()
            .unwrap_or_else(|e| panic!("addr: {e}"));
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self {
            url: format!("http://{addr}/hook"),
            log,
            server,
        }
    }

    pub fn overlap(&self) -> Overlap {
        self.log.lock().map(|o| o.clone()).unwrap_or_default()
    }
}

impl Drop for HoldingSink {
    fn drop(&mut self) {
        self.server.abort();
    }
}
