//! What the benchmarks run against: a database of their own, and the `acp`
//! binary as a child process (so its memory is its own and measurable).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use sqlx::Connection;

/// A fresh database on the server of `DATABASE_URL`, dropped by [`Database::drop`].
pub struct Database {
    pub name: String,
    pub url: String,
    admin_url: String,
}

impl Database {
    pub async fn create(admin_url: &str, purpose: &str) -> anyhow::Result<Self> {
        let name = format!("acp_bench_{}_{purpose}", std::process::id());
        let mut admin = sqlx::PgConnection::connect(admin_url).await?;
        sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
            .execute(&mut admin)
            .await?;
        sqlx::query(&format!("CREATE DATABASE {name}"))
            .execute(&mut admin)
            .await?;
        let mut url = url::Url::parse(admin_url)?;
        url.set_path(&name);
        Ok(Self {
            name,
            url: url.to_string(),
            admin_url: admin_url.to_owned(),
        })
    }

    pub async fn pool(&self, max_connections: u32) -> anyhow::Result<sqlx::PgPool> {
        Ok(sqlx::postgres::PgPoolOptions::new()
            .max_connections(max_connections)
            .connect(&self.url)
            .await?)
    }

    /// Creates the database and applies the service's migrations.
    pub async fn migrated(admin_url: &str, purpose: &str) -> anyhow::Result<(Self, sqlx::PgPool)> {
        let db = Self::create(admin_url, purpose).await?;
        let pool = db.pool(16).await?;
        acp_store::migrate(&pool).await?;
        Ok((db, pool))
    }

    pub async fn drop(self) -> anyhow::Result<()> {
        let mut admin = sqlx::PgConnection::connect(&self.admin_url).await?;
        sqlx::query(&format!("DROP DATABASE {} WITH (FORCE)", self.name))
            .execute(&mut admin)
            .await?;
        Ok(())
    }
}

/// Creates an API key with `acp keys create` and returns its token.
pub async fn create_key(bin: &Path, database_url: &str, scope: &str) -> anyhow::Result<String> {
    let output = tokio::process::Command::new(bin)
        .args(["keys", "create", "--name", "bench", "--scope", scope])
        .env("DATABASE_URL", database_url)
        .env("RUST_LOG", "warn")
        .output()
        .await
        .with_context(|| format!("running {}", bin.display()))?;
    if !output.status.success() {
        bail!(
            "acp keys create failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let token = String::from_utf8(output.stdout)?.trim().to_owned();
    if token.is_empty() {
        bail!("acp keys create printed no token");
    }
    Ok(token)
}

/// `acp <mode>` running as a child process on a free port.
pub struct Service {
    child: tokio::process::Child,
    pid: u32,
    pub base: String,
    log: PathBuf,
}

impl Service {
    /// Starts `acp <mode>` with `env` on top of the inherited environment
    /// and waits until `/healthz` answers.
    pub async fn start(bin: &Path, mode: &str, env: &[(&str, &str)]) -> anyhow::Result<Self> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let log = std::env::temp_dir().join(format!(
            "acp-bench-{}-{mode}-{port}.log",
            std::process::id()
        ));
        let mut command = tokio::process::Command::new(bin);
        command
            .arg(mode)
            .env("ACP_LISTEN", format!("127.0.0.1:{port}"))
            // The service's own default level, not the harness's, unless
            // ACP_BENCH_SERVICE_LOG says otherwise.
            .env(
                "RUST_LOG",
                std::env::var("ACP_BENCH_SERVICE_LOG").unwrap_or_else(|_| "info".into()),
            )
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(&log)?)
            .kill_on_drop(true);
        for (key, value) in env {
            command.env(key, value);
        }
        let mut child = command
            .spawn()
            .with_context(|| format!("starting {} {mode}", bin.display()))?;
        let pid = child.id().context("the child has no pid")?;
        let base = format!("http://127.0.0.1:{port}");
        let http = reqwest::Client::new();
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(status) = child.try_wait()? {
                bail!("acp {mode} exited with {status}; log:\n{}", tail(&log));
            }
            let probe = http
                .get(format!("{base}/healthz"))
                .timeout(Duration::from_secs(1))
                .send()
                .await;
            if matches!(probe, Ok(ref r) if r.status().is_success()) {
                break;
            }
            if Instant::now() > deadline {
                bail!("acp {mode} did not answer /healthz; log:\n{}", tail(&log));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Ok(Self {
            child,
            pid,
            base,
            log,
        })
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Resident set size now, in bytes.
    pub fn rss(&self) -> anyhow::Result<u64> {
        rss_of(self.pid)
    }

    /// SIGTERM, a graceful shutdown, SIGKILL after 10 s. The log is removed
    /// after a clean exit and kept (its path printed) otherwise.
    pub async fn stop(mut self) -> anyhow::Result<()> {
        let _ = std::process::Command::new("kill")
            .args(["-TERM", &self.pid.to_string()])
            .status();
        let status = match tokio::time::timeout(Duration::from_secs(10), self.child.wait()).await {
            Ok(status) => status?,
            Err(_) => {
                self.child.start_kill()?;
                self.child.wait().await?
            }
        };
        if status.success() {
            let _ = std::fs::remove_file(&self.log);
        } else {
            eprintln!(
                "acp (pid {}) ended with {status}; log kept at {}",
                self.pid,
                self.log.display()
            );
        }
        Ok(())
    }
}

fn tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(30)..].join("\n")
}

/// `VmRSS` of a process, in bytes.
pub fn rss_of(pid: u32) -> anyhow::Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .context("no VmRSS in /proc/<pid>/status")?;
    Ok(kib * 1024)
}

/// Samples a process's RSS every `every` until [`RssPeak::finish`].
pub struct RssPeak {
    stop: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<u64>,
}

impl RssPeak {
    pub fn start(pid: u32, every: Duration) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let task = tokio::spawn(async move {
            let mut peak = 0;
            let mut tick = tokio::time::interval(every);
            while !flag.load(Ordering::Relaxed) {
                tick.tick().await;
                peak = peak.max(rss_of(pid).unwrap_or(0));
            }
            peak
        });
        Self { stop, task }
    }

    /// The highest RSS seen, in bytes.
    pub async fn finish(self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        self.task.await.unwrap_or(0)
    }
}

pub fn mib(bytes: u64) -> String {
    format!("{:.1}", bytes as f64 / (1024.0 * 1024.0))
}
