//! `acp serve` as a child process, and the `acp keys` CLI.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use sqlx::PgPool;

use super::{database_url, eventually, free_port};

/// The `acp` binary under test: cargo's, unless `ACP_TEST_BIN` names a copy
/// (for machines where several checkouts share one target directory, and so
/// one `target/debug/acp`).
pub fn acp_bin() -> PathBuf {
    std::env::var_os("ACP_TEST_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_acp")))
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
        Self::start_command("serve", pool, temporal_address, namespace, env).await
    }

    /// `acp <command>` (`serve` or `api`) as its own process.
    pub async fn start_command(
        subcommand: &str,
        pool: &PgPool,
        temporal_address: &str,
        namespace: &str,
        env: &[(&str, &str)],
    ) -> Self {
        let served = Self::spawn_command(subcommand, pool, temporal_address, namespace, env);
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

    /// `acp <command>` as its own process, not waiting for it (`worker`
    /// serves no HTTP to wait on).
    pub fn spawn_command(
        subcommand: &str,
        pool: &PgPool,
        temporal_address: &str,
        namespace: &str,
        env: &[(&str, &str)],
    ) -> Self {
        let port = free_port();
        let log_path = std::env::temp_dir().join(format!("acp-serve-{}.log", uuid::Uuid::new_v4()));
        let log = std::fs::File::create(&log_path).unwrap_or_else(|e| panic!("{e}"));
        let mut command = Command::new(acp_bin());
        command
            .arg(subcommand)
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
            .unwrap_or_else(|e| panic!("spawn acp {subcommand}: {e}"));
        Self {
            child,
            base: format!("http://127.0.0.1:{port}"),
            log_path,
        }
    }

    /// kill -9: no shutdown, no goodbye to PostgreSQL or Temporal.
    pub fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
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
    let out = Command::new(acp_bin())
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
