//! A webhook receiver that records every delivery.

use std::sync::Arc;
use std::time::Duration;

/// A received webhook: its headers and body.
pub type Delivery = (axum::http::HeaderMap, Vec<u8>);

/// A local HTTP endpoint that records every webhook it receives.
pub struct WebhookSink {
    pub url: String,
    pub received: Arc<std::sync::Mutex<Vec<Delivery>>>,
    server: tokio::task::JoinHandle<()>,
}

impl WebhookSink {
    /// Answers `status` after `delay`.
    pub async fn start(status: u16, delay: Duration) -> Self {
        Self::scripted(move |_| (status, delay)).await
    }

    /// Answers the statuses of `first` in turn (one per request), then
    /// `status` to every later request, each after `delay`.
    pub async fn start_sequence(first: Vec<u16>, status: u16, delay: Duration) -> Self {
        Self::scripted(move |n| {
            let status = first.get(n.wrapping_sub(1)).copied().unwrap_or(status);
            (status, delay)
        })
        .await
    }

    /// Answers the `n`th call (from 1) with `answer(n)`: a status, after a delay.
    pub async fn scripted(
        answer: impl Fn(usize) -> (u16, Duration) + Send + Sync + 'static,
    ) -> Self {
        let received: Arc<std::sync::Mutex<Vec<Delivery>>> = Arc::default();
        let log = received.clone();
        let answer = Arc::new(answer);
        let app = axum::Router::new().route(
            "/hook",
            axum::routing::post(
                move |headers: axum::http::HeaderMap, body: axum::body::Bytes| {
                    let (log, answer) = (log.clone(), answer.clone());
                    async move {
                        let call = match log.lock() {
                            Ok(mut log) => {
                                log.push((headers, body.to_vec()));
                                log.len()
                            }
                            Err(_) => 0,
                        };
                        let (status, delay) = answer(call);
                        tokio::time::sleep(delay).await;
                        (
                            axum::http::StatusCode::from_u16(status)
                                .unwrap_or(axum::http::StatusCode::OK),
                            axum::Json(serde_json::json!({"ok": true})),
                        )
                    }
                },
            ),
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
            received,
            server,
        }
    }

    pub fn count(&self) -> usize {
        self.received.lock().map(|r| r.len()).unwrap_or(0)
    }

    pub fn bodies(&self) -> Vec<Delivery> {
        self.received.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

impl Drop for WebhookSink {
    fn drop(&mut self) {
        self.server.abort();
    }
}
