//! HTTP-level behaviour: request IDs, CORS, and PostgreSQL outages that
//! become 503 problems and heal without a restart.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use sqlx::PgPool;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Mutex;
use tokio::task::JoinSet;

#[sqlx::test(migrations = "./migrations")]
async fn request_ids_are_kept_or_made_and_echoed(pool: PgPool) {
    let app = TestApp::without_temporal(pool).await;
    let given = app
        .http
        .get(app.url("/healthz"))
        .header("x-request-id", "req-123")
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(given.headers()["x-request-id"], "req-123");
    let made = app.get("/v1/activities").await;
    let id = made.headers()["x-request-id"]
        .to_str()
        .unwrap_or_default()
        .to_owned();
    assert!(uuid::Uuid::parse_str(&id).is_ok(), "{id}");
    // Problems carry it too.
    let problem = app.get("/v1/activities/nope").await;
    assert!(problem.headers().contains_key("x-request-id"));
}

#[sqlx::test(migrations = "./migrations")]
async fn cors_allows_only_configured_origins(pool: PgPool) {
    let gateway = Arc::new(acp_temporal::TemporalGateway::new(temporal_settings(
        &closed_address(),
        "default",
    )));
    let state = acp::api::AppState::new(pool, gateway, TASK_QUEUE);
    let mut options = acp::config::HttpOptions::new(1024 * 1024);
    options.cors_origins = vec!["https://dashboard.example".into()];
    let router = acp::app::build_router_with(state, &options);
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let base = format!(
        "http://{}",
        listener.local_addr().unwrap_or_else(|e| panic!("{e}"))
    );
    tokio::spawn(async move {
        let _ = acp::app::serve(listener, router, std::future::pending()).await;
    });
    let http = reqwest::Client::new();
    let preflight = |origin: &'static str| {
        http.request(reqwest::Method::OPTIONS, format!("{base}/v1/activities"))
            .header("origin", origin)
            .header("access-control-request-method", "POST")
            .header("access-control-request-headers", "content-type")
            .send()
    };
    let allowed = preflight("https://dashboard.example")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        allowed.headers()["access-control-allow-origin"],
        "https://dashboard.example"
    );
    let denied = preflight("https://evil.example")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(!denied.headers().contains_key("access-control-allow-origin"));
}

/// A TCP proxy to PostgreSQL that the test can cut and restore.
struct Proxy {
    port: u16,
    upstream: u16,
    tasks: Arc<Mutex<JoinSet<()>>>,
    acceptor: Option<tokio::task::JoinHandle<()>>,
}

impl Proxy {
    async fn start(upstream: u16) -> Self {
        let mut proxy = Self {
            port: free_port(),
            upstream,
            tasks: Arc::default(),
            acceptor: None,
        };
        proxy.up().await;
        proxy
    }

    async fn up(&mut self) {
        let listener = TcpListener::bind(("127.0.0.1", self.port))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let (tasks, upstream) = (self.tasks.clone(), self.upstream);
        self.acceptor = Some(tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                tasks.lock().await.spawn(async move {
                    if let Ok(mut server) = TcpStream::connect(("127.0.0.1", upstream)).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
            }
        }));
    }

    /// Refuses new connections and drops every open one.
    async fn down(&mut self) {
        if let Some(acceptor) = self.acceptor.take() {
            acceptor.abort();
            let _ = acceptor.await;
        }
        self.tasks.lock().await.shutdown().await;
    }
}

#[sqlx::test(migrations = "./migrations")]
async fn postgres_outage_is_a_503_and_heals_without_restart(pool: PgPool) {
    let options = (*pool.connect_options()).clone();
    let mut proxy = Proxy::start(options.get_port()).await;
    let via_proxy = sqlx::postgres::PgPoolOptions::new()
        .max_connections(4)
        .acquire_timeout(Duration::from_secs(2))
        .connect_lazy_with(options.port(proxy.port));
    let app = TestApp::spawn(via_proxy, &closed_address(), "default").await;

    let before = app.create(&interval_activity("PT30S")).await;
    proxy.down().await;
    for response in [
        app.get("/v1/activities").await,
        app.post("/v1/activities", &interval_activity("PT1M")).await,
        app.get(&format!(
            "/v1/runs?activity_id={}",
            before["id"].as_str().unwrap_or_default()
        ))
        .await,
    ] {
        assert_eq!(response.status(), 503);
        assert_eq!(
            response.headers()["content-type"],
            "application/problem+json"
        );
        assert_eq!(response.headers()["retry-after"], "5");
        let problem: serde_json::Value = response.json().await.unwrap_or_default();
        assert!(
            problem["detail"]
                .as_str()
                .is_some_and(|d| d.contains("PostgreSQL")),
            "{problem}"
        );
    }
    let (status, ready) = json(app.get("/readyz").await).await;
    assert_eq!(status, 503);
    assert_eq!(ready["postgres"]["status"], "down");
    // Liveness does not depend on it.
    assert_eq!(app.get("/healthz").await.status(), 200);

    proxy.up().await;
    eventually(Duration::from_secs(30), || async {
        let response = app.post("/v1/activities", &interval_activity("PT2M")).await;
        (response.status() == 201).then_some(())
    })
    .await;
    let (status, list) = json(app.get("/v1/activities").await).await;
    assert_eq!(status, 200);
    let ids: Vec<&str> = list["items"]
        .as_array()
        .map(|items| items.iter().filter_map(|i| i["id"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(ids.len(), 2, "{list}");
    assert!(
        ids.contains(&before["id"].as_str().unwrap_or_default()),
        "an accepted write was lost"
    );
}

/// A Temporal frontend that accepts connections and never answers.
async fn silent_server() -> (String, tokio::task::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let address = listener
        .local_addr()
        .unwrap_or_else(|e| panic!("{e}"))
        .to_string();
    let task = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    (address, task)
}

#[sqlx::test(migrations = "./migrations")]
async fn a_request_over_the_timeout_is_a_503_problem(pool: PgPool) {
    let (silent, _server) = silent_server().await;
    let mut options = acp::config::HttpOptions::new(1024 * 1024);
    options.request_timeout = Duration::from_millis(400);
    let app = TestApp::spawn_with_options(pool, &silent, "default", &options).await;

    // Creating a scheduled activity syncs it to a Temporal that never answers.
    let started = std::time::Instant::now();
    let response = app.post("/v1/activities", &interval_activity("PT1M")).await;
    let elapsed = started.elapsed();
    assert_eq!(response.status(), 503);
    assert_eq!(
        response.headers()["content-type"],
        "application/problem+json"
    );
    assert_eq!(response.headers()["retry-after"], "5");
    assert!(response.headers().contains_key("x-request-id"));
    let problem: serde_json::Value = response.json().await.unwrap_or_default();
    assert_eq!(
        problem["type"],
        "https://activity-control-plane.dev/problems/timeout"
    );
    assert!(
        problem["detail"]
            .as_str()
            .is_some_and(|d| d.contains("400 ms")),
        "{problem}"
    );
    eprintln!("answered after {elapsed:?}");
    // Requests that need no Temporal are not affected.
    assert_eq!(app.get("/v1/activities").await.status(), 200);
}
