//! The service in-process on a random port, driven through real HTTP, with
//! helpers for what tests ask of it (runs, executions, manual triggers).

use std::sync::Arc;
use std::time::Duration;

use acp::api::AppState;
use acp::worker::{WorkerConfig, WorkerHandle};
use acp_service::faults::Faults;
use acp_temporal::TemporalGateway;
use serde_json::Value;
use sqlx::PgPool;

use super::{closed_address, eventually, list_executions, temporal_settings};

/// The service, in-process, on a random port, against the given database and Temporal.
pub struct TestApp {
    pub pool: PgPool,
    pub base: String,
    pub http: reqwest::Client,
    pub state: AppState,
    pub temporal_address: String,
    pub namespace: String,
    /// An `operator` key's token; `http` sends it with every request.
    pub token: String,
    server: tokio::task::JoinHandle<()>,
}

pub const TASK_QUEUE: &str = "acp-tests";

impl TestApp {
    pub async fn spawn(pool: PgPool, temporal_address: &str, namespace: &str) -> Self {
        Self::spawn_with(pool, temporal_address, namespace, 1024 * 1024).await
    }

    pub async fn spawn_with(
        pool: PgPool,
        temporal_address: &str,
        namespace: &str,
        body_limit: usize,
    ) -> Self {
        let options = acp::config::HttpOptions::new(body_limit);
        Self::spawn_with_options(pool, temporal_address, namespace, &options).await
    }

    pub async fn spawn_with_options(
        pool: PgPool,
        temporal_address: &str,
        namespace: &str,
        options: &acp::config::HttpOptions,
    ) -> Self {
        super::init_test_log();
        let gateway = Arc::new(TemporalGateway::new(temporal_settings(
            temporal_address,
            namespace,
        )));
        let state = acp::api::AppState::new(pool.clone(), gateway, TASK_QUEUE);
        let (_, token) = state
            .keys
            .create(
                "tests",
                acp_domain::auth::Scope::Operator,
                &acp_domain::audit::Actor::command_line("create_key"),
            )
            .await
            .unwrap_or_else(|e| panic!("create the test key: {e}"));
        let router = acp::app::build_router_with(state.clone(), options);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap_or_else(|e| panic!("bind: {e}"));
        let addr = listener
            .local_addr()
            .unwrap_or_else(|e| panic!("addr: {e}"));
        let server = tokio::spawn(async move {
            let _ = acp::app::serve(listener, router, std::future::pending()).await;
        });
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert(
            reqwest::header::AUTHORIZATION,
            format!("Bearer {token}")
                .parse()
                .unwrap_or_else(|e| panic!("{e}")),
        );
        let http = reqwest::Client::builder()
            .default_headers(headers)
            .build()
            .unwrap_or_else(|e| panic!("http client: {e}"));
        Self {
            pool,
            base: format!("http://{addr}"),
            http,
            token,
            state,
            temporal_address: temporal_address.to_owned(),
            namespace: namespace.to_owned(),
            server,
        }
    }

    /// A service whose Temporal is a closed port: every sync is `pending`.
    pub async fn without_temporal(pool: PgPool) -> Self {
        Self::spawn(pool, &closed_address(), "default").await
    }

    /// A worker for this app's namespace and task queue, on its own thread.
    pub fn worker(&self, allow_internal_webhooks: bool, faults: Arc<Faults>) -> WorkerHandle {
        let config = WorkerConfig {
            temporal: temporal_settings(&self.temporal_address, &self.namespace),
            task_queue: TASK_QUEUE.to_owned(),
            database: (*self.pool.connect_options()).clone(),
            db_max_connections: 5,
            allow_internal_webhooks,
            faults,
        };
        acp::worker::spawn(config).unwrap_or_else(|e| panic!("worker: {e}"))
    }

    /// This app's event dispatcher, as `acp serve` and `acp api` run it;
    /// it stops when the handle is dropped.
    pub fn dispatcher(&self) -> Dispatcher {
        let router = self.state.services.events.clone();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            router
                .run_dispatcher(Duration::from_millis(200), async {
                    let _ = stopped.await;
                })
                .await;
        });
        Dispatcher {
            stop: Some(stop),
            task,
        }
    }

    /// The `/metrics` text this app serves.
    pub async fn metrics_text(&self) -> String {
        self.http
            .get(self.url("/metrics"))
            .send()
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .text()
            .await
            .unwrap_or_default()
    }

    /// Passes this process made of `duty` (`acp_duty_passes_total`, every
    /// outcome).
    pub async fn duty_passes(&self, duty: &str) -> u64 {
        let prefix = format!("acp_duty_passes_total{{duty=\"{duty}\"");
        self.metrics_text()
            .await
            .lines()
            .filter(|l| l.starts_with(&prefix))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
            .sum()
    }

    /// Waits until `n` more passes of `duty` have ended: the event that
    /// proves the time for them passed, before asserting that they did
    /// not change something.
    pub async fn passes_of(&self, duty: &str, n: u64) {
        let target = self.duty_passes(duty).await + n;
        super::eventually(std::time::Duration::from_secs(60), || async {
            (self.duty_passes(duty).await >= target).then_some(())
        })
        .await;
    }

    /// Runs of an activity, from the history API (first page, newest first).
    pub async fn runs_of(&self, activity_id: &str) -> Vec<Value> {
        let (status, page) = json(
            self.get(&format!("/v1/activities/{activity_id}/runs?limit=200"))
                .await,
        )
        .await;
        assert_eq!(status, 200, "{page}");
        page["items"].as_array().cloned().unwrap_or_default()
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub async fn post(&self, path: &str, body: &Value) -> reqwest::Response {
        self.http
            .post(self.url(path))
            .json(body)
            .send()
            .await
            .unwrap_or_else(|e| panic!("POST {path}: {e}"))
    }

    pub async fn get(&self, path: &str) -> reqwest::Response {
        self.http
            .get(self.url(path))
            .send()
            .await
            .unwrap_or_else(|e| panic!("GET {path}: {e}"))
    }

    pub async fn put(&self, path: &str, body: &Value) -> reqwest::Response {
        self.http
            .put(self.url(path))
            .json(body)
            .send()
            .await
            .unwrap_or_else(|e| panic!("PUT {path}: {e}"))
    }

    pub async fn patch(&self, path: &str, body: &Value) -> reqwest::Response {
        self.http
            .patch(self.url(path))
            .header("content-type", "application/merge-patch+json")
            .body(body.to_string())
            .send()
            .await
            .unwrap_or_else(|e| panic!("PATCH {path}: {e}"))
    }

    pub async fn delete(&self, path: &str) -> reqwest::Response {
        self.http
            .delete(self.url(path))
            .send()
            .await
            .unwrap_or_else(|e| panic!("DELETE {path}: {e}"))
    }

    /// Creates an activity and returns its JSON, asserting 201.
    pub async fn create(&self, body: &Value) -> Value {
        let (status, json) =
            super::send_set_up(|| self.http.post(self.url("/v1/activities")).json(body)).await;
        assert_eq!(status, 201, "create failed: {json}");
        json
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        self.server.abort();
    }
}

pub async fn json(response: reqwest::Response) -> (u16, Value) {
    let status = response.status().as_u16();
    let body = response.json().await.unwrap_or(Value::Null);
    (status, body)
}

/// A valid activity body with the given trigger.
pub fn activity_with(trigger: Value) -> Value {
    serde_json::json!({
        "name": "test-activity",
        "trigger": trigger,
        "tasks": [{"task_type": "noop"}]
    })
}

pub fn interval_activity(every: &str) -> Value {
    activity_with(serde_json::json!({"type": "interval", "every": every}))
}

/// Waits until a run reaches a final status and returns it (with tasks).
pub async fn wait_run_done(app: &TestApp, run_id: &str, deadline: Duration) -> Value {
    eventually(deadline, || async {
        let (status, run) = json(app.get(&format!("/v1/runs/{run_id}")).await).await;
        (status == 200 && run["status"] != "running").then_some(run)
    })
    .await
}

/// Every execution of a workflow ID, as Temporal's visibility lists them.
pub async fn executions(
    app: &TestApp,
    workflow_id: &str,
) -> Vec<temporalio_common::protos::temporal::api::common::v1::WorkflowExecution> {
    executions_matching(app, &format!("WorkflowId = '{workflow_id}'")).await
}

pub async fn executions_matching(
    app: &TestApp,
    query: &str,
) -> Vec<temporalio_common::protos::temporal::api::common::v1::WorkflowExecution> {
    list_executions(&app.temporal_address, &app.namespace, query).await
}

/// A `postgres://` URL for the test's own database (for child processes).
pub fn database_url(pool: &PgPool) -> String {
    let base = std::env::var("DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into());
    let mut url = url::Url::parse(&base).unwrap_or_else(|e| panic!("DATABASE_URL: {e}"));
    let database = pool
        .connect_options()
        .get_database()
        .unwrap_or("postgres")
        .to_owned();
    url.set_path(&database);
    url.to_string()
}

/// `POST /v1/activities/{id}/trigger`, with an `Idempotency-Key` if given.
pub async fn trigger(app: &TestApp, id: &str, key: Option<&str>) -> (u16, Value) {
    let mut request = app
        .http
        .post(app.url(&format!("/v1/activities/{id}/trigger")));
    if let Some(key) = key {
        request = request.header("idempotency-key", key);
    }
    json(request.send().await.unwrap_or_else(|e| panic!("{e}"))).await
}

/// A running event dispatcher (see `TestApp::dispatcher`).
pub struct Dispatcher {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Dispatcher {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        self.task.abort();
    }
}
