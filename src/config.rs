//! Settings from flags, then environment, then defaults. Secrets are redacted
//! in `Debug`, so logging the settings is safe.

use std::net::SocketAddr;
use std::time::Duration;

use clap::{Args, ValueEnum};

use acp_temporal::TemporalSettings;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Human,
    Json,
}

#[derive(Clone, Args)]
pub struct Settings {
    /// PostgreSQL connection URL.
    #[arg(
        long,
        env = "DATABASE_URL",
        default_value = "postgres://postgres@127.0.0.1:5432/acp",
        global = true
    )]
    pub database_url: String,

    /// Temporal frontend, `host:port` or a URL.
    #[arg(
        long,
        env = "TEMPORAL_ADDRESS",
        default_value = "127.0.0.1:7233",
        global = true
    )]
    pub temporal_address: String,

    #[arg(
        long,
        env = "TEMPORAL_NAMESPACE",
        default_value = "default",
        global = true
    )]
    pub temporal_namespace: String,

    /// API key for Temporal Cloud (implies TLS).
    #[arg(long, env = "TEMPORAL_API_KEY", global = true, hide_env_values = true)]
    pub temporal_api_key: Option<String>,

    /// Use TLS to reach Temporal.
    #[arg(long, env = "TEMPORAL_TLS", default_value_t = false, global = true)]
    pub temporal_tls: bool,

    /// Address the HTTP API listens on.
    #[arg(
        long,
        env = "ACP_LISTEN",
        default_value = "127.0.0.1:8080",
        global = true
    )]
    pub listen: SocketAddr,

    /// Where `acp worker` serves `/healthz`, `/readyz` and `/metrics` (for
    /// probes and scrapes); unset, the worker serves no HTTP.
    #[arg(long, env = "ACP_PROBE_LISTEN", global = true)]
    pub probe_listen: Option<SocketAddr>,

    /// How many changes a stream (`GET /v1/stream`) may fall behind before
    /// it is sent `resync` and closed.
    #[arg(long, env = "ACP_STREAM_BUFFER", default_value_t = acp_service::DEFAULT_STREAM_BUFFER, global = true)]
    pub stream_buffer: usize,

    /// Task queue of the launcher and run workflows.
    #[arg(
        long,
        env = "ACP_TASK_QUEUE",
        default_value = "activity-control-plane",
        global = true
    )]
    pub task_queue: String,

    /// Largest accepted request body, in bytes.
    #[arg(long, env = "ACP_BODY_LIMIT", default_value_t = 1024 * 1024, global = true)]
    pub body_limit: usize,

    /// Seconds between reconcile passes.
    #[arg(
        long,
        env = "ACP_RECONCILE_INTERVAL",
        default_value_t = 5.0,
        global = true
    )]
    pub reconcile_interval_secs: f64,

    /// Seconds between alert evaluations (run by `serve` and `api`).
    #[arg(long, env = "ACP_ALERT_INTERVAL", default_value_t = 5.0, global = true)]
    pub alert_interval_secs: f64,

    /// Seconds between passes that hand recorded notifications to Temporal.
    #[arg(
        long,
        env = "ACP_NOTIFY_INTERVAL",
        default_value_t = 1.0,
        global = true
    )]
    pub notify_interval_secs: f64,

    /// Hours a change stays in the change log (`GET /v1/stream` replays
    /// it) at least; its day partition is dropped once wholly older.
    #[arg(
        long,
        env = "ACP_CHANGE_LOG_RETENTION_HOURS",
        default_value_t = acp_service::retention::DEFAULT_CHANGE_LOG_RETENTION_HOURS,
        global = true
    )]
    pub change_log_retention_hours: f64,

    /// Seconds between passes of the `history_retention` duty.
    #[arg(
        long,
        env = "ACP_RETENTION_INTERVAL",
        default_value_t = acp_service::retention::DEFAULT_INTERVAL_SECS,
        global = true
    )]
    pub retention_interval_secs: f64,

    /// Deadline of one Temporal RPC, in milliseconds.
    #[arg(
        long,
        env = "ACP_TEMPORAL_TIMEOUT_MS",
        default_value_t = 3000,
        global = true
    )]
    pub temporal_timeout_ms: u64,

    /// Largest number of PostgreSQL connections.
    #[arg(
        long,
        env = "ACP_DB_MAX_CONNECTIONS",
        default_value_t = 16,
        global = true
    )]
    pub db_max_connections: u32,

    /// Browser origins allowed to call the API (comma-separated); none by default.
    #[arg(long, env = "ACP_CORS_ORIGINS", value_delimiter = ',', global = true)]
    pub cors_origins: Vec<String>,

    /// Requests handled at once; more wait their turn.
    #[arg(
        long,
        env = "ACP_MAX_CONCURRENCY",
        default_value_t = 1024,
        global = true
    )]
    pub max_concurrency: usize,

    /// Serve `/v1` without API keys. Only for local experiments: anyone who
    /// can reach the port can then do anything. A warning is logged.
    #[arg(
        long,
        env = "ACP_AUTH_DISABLED",
        default_value_t = false,
        action = clap::ArgAction::Set,
        num_args = 0..=1,
        default_missing_value = "true",
        global = true
    )]
    pub auth_disabled: bool,

    /// Longest a request may take, in milliseconds, before it is answered
    /// with a 503 problem.
    #[arg(
        long,
        env = "ACP_REQUEST_TIMEOUT_MS",
        default_value_t = 30_000,
        global = true
    )]
    pub request_timeout_ms: u64,

    /// Seconds that in-flight requests and worker tasks get to finish after
    /// SIGTERM or SIGINT.
    #[arg(
        long,
        env = "ACP_SHUTDOWN_GRACE_SECS",
        default_value_t = 30.0,
        global = true
    )]
    pub shutdown_grace_secs: f64,

    /// Label run metrics with the activity ID (turn off for very many activities).
    #[arg(long, env = "ACP_METRICS_ACTIVITY_LABEL", default_value_t = true, action = clap::ArgAction::Set, global = true)]
    pub metrics_activity_label: bool,

    /// Let webhooks reach loopback, private and link-local addresses (SSRF guard off).
    #[arg(
        long,
        env = "ACP_WEBHOOK_ALLOW_INTERNAL",
        default_value_t = false,
        global = true
    )]
    pub webhook_allow_internal: bool,

    /// Runs started by events or by hand that may run at once, over every
    /// replica, before event dispatches wait in PostgreSQL until runs end
    /// (unset: no limit). While a schedule fires often they are held to an
    /// allowance that follows the engine's pace in any case.
    #[arg(long, env = "ACP_DISPATCH_MAX_RUNNING", global = true)]
    pub dispatch_max_running: Option<usize>,

    /// Consume every enabled broker source (in `serve` and `worker`; `api`
    /// never consumes).
    #[arg(long, env = "ACP_CONSUME_SOURCES", default_value_t = true, action = clap::ArgAction::Set, global = true)]
    pub consume_sources: bool,

    /// Seconds between two reads of the sources table by the consumers.
    #[arg(
        long,
        env = "ACP_SOURCE_REFRESH_SECS",
        default_value_t = 5.0,
        global = true
    )]
    pub source_refresh_secs: f64,

    /// Largest broker message accepted, bytes; larger ones are rejected as `too_large`.
    #[arg(
        long,
        env = "ACP_SOURCE_MESSAGE_LIMIT",
        default_value_t = 512 * 1024,
        global = true
    )]
    pub source_message_limit: usize,

    #[arg(
        long,
        env = "ACP_LOG_FORMAT",
        value_enum,
        default_value = "human",
        global = true
    )]
    pub log_format: LogFormat,
}

impl Settings {
    pub fn temporal(&self) -> TemporalSettings {
        TemporalSettings {
            address: self.temporal_address.clone(),
            namespace: self.temporal_namespace.clone(),
            api_key: self.temporal_api_key.clone(),
            tls: self.temporal_tls,
            rpc_timeout: Duration::from_millis(self.temporal_timeout_ms.max(100)),
            identity: format!("acp@{}", std::process::id()),
        }
    }

    pub fn worker(&self) -> anyhow::Result<crate::worker::WorkerConfig> {
        use std::str::FromStr;
        Ok(crate::worker::WorkerConfig {
            temporal: self.temporal(),
            task_queue: self.task_queue.clone(),
            database: sqlx::postgres::PgConnectOptions::from_str(&self.database_url)?,
            db_max_connections: self.db_max_connections,
            allow_internal_webhooks: self.webhook_allow_internal,
            #[cfg(feature = "fault-injection")]
            faults: Default::default(),
        })
    }

    pub fn http(&self) -> HttpOptions {
        HttpOptions {
            body_limit: self.body_limit,
            cors_origins: self.cors_origins.clone(),
            max_concurrency: self.max_concurrency,
            request_timeout: Duration::from_millis(self.request_timeout_ms.max(1)),
            auth: !self.auth_disabled,
        }
    }

    pub fn shutdown_grace(&self) -> Duration {
        Duration::from_secs_f64(self.shutdown_grace_secs.clamp(0.1, 3600.0))
    }

    pub fn consumers(&self) -> crate::brokers::ConsumerSettings {
        crate::brokers::ConsumerSettings::new(
            Duration::from_secs_f64(self.source_refresh_secs.clamp(0.1, 3600.0)),
            self.source_message_limit,
        )
    }

    pub fn reconcile_interval(&self) -> Duration {
        Duration::from_secs_f64(self.reconcile_interval_secs.clamp(0.1, 3600.0))
    }

    pub fn alert_interval(&self) -> Duration {
        Duration::from_secs_f64(self.alert_interval_secs.clamp(0.1, 3600.0))
    }

    pub fn notify_interval(&self) -> Duration {
        Duration::from_secs_f64(self.notify_interval_secs.clamp(0.1, 3600.0))
    }

    /// How the history tables are kept: the retention at least a second,
    /// at most a century.
    pub fn retention(&self) -> acp_service::retention::RetentionSettings {
        let hours = self
            .change_log_retention_hours
            .clamp(1.0 / 3600.0, 876_000.0);
        acp_service::retention::RetentionSettings {
            change_log: Some(chrono::Duration::milliseconds(
                (hours * 3_600_000.0).round() as i64,
            )),
            interval: Duration::from_secs_f64(self.retention_interval_secs.clamp(0.1, 86_400.0)),
        }
    }
}

/// HTTP-level settings of the router.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    pub body_limit: usize,
    /// Origins allowed to call the API from a browser; none by default.
    pub cors_origins: Vec<String>,
    /// Requests handled at once; more wait their turn.
    pub max_concurrency: usize,
    /// Longest a request may take before it is answered with a 503 problem.
    pub request_timeout: Duration,
    /// Whether `/v1` needs an API key. Off only when asked for explicitly.
    pub auth: bool,
}

impl HttpOptions {
    pub fn new(body_limit: usize) -> Self {
        Self {
            body_limit,
            cors_origins: vec![],
            max_concurrency: 1024,
            request_timeout: Duration::from_secs(30),
            auth: true,
        }
    }
}

/// Hides the password of a `scheme://user:password@host/db` URL.
pub fn redact_url(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            let _ = parsed.set_password(Some("[redacted]"));
            parsed.to_string()
        }
        Ok(parsed) => parsed.to_string(),
        Err(_) => "[unparseable URL]".to_owned(),
    }
}

impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Settings")
            .field("database_url", &redact_url(&self.database_url))
            .field("temporal_address", &self.temporal_address)
            .field("temporal_namespace", &self.temporal_namespace)
            .field(
                "temporal_api_key",
                &self.temporal_api_key.as_ref().map(|_| "[redacted]"),
            )
            .field("temporal_tls", &self.temporal_tls)
            .field("listen", &self.listen)
            .field("task_queue", &self.task_queue)
            .field("body_limit", &self.body_limit)
            .field("reconcile_interval_secs", &self.reconcile_interval_secs)
            .field("alert_interval_secs", &self.alert_interval_secs)
            .field("notify_interval_secs", &self.notify_interval_secs)
            .field(
                "change_log_retention_hours",
                &self.change_log_retention_hours,
            )
            .field("retention_interval_secs", &self.retention_interval_secs)
            .field("temporal_timeout_ms", &self.temporal_timeout_ms)
            .field("db_max_connections", &self.db_max_connections)
            .field("metrics_activity_label", &self.metrics_activity_label)
            .field("cors_origins", &self.cors_origins)
            .field("max_concurrency", &self.max_concurrency)
            .field("request_timeout_ms", &self.request_timeout_ms)
            .field("auth_disabled", &self.auth_disabled)
            .field("shutdown_grace_secs", &self.shutdown_grace_secs)
            .field("webhook_allow_internal", &self.webhook_allow_internal)
            .field("log_format", &self.log_format)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Wrapper {
        #[command(flatten)]
        settings: Settings,
    }

    #[test]
    fn debug_hides_secrets() {
        let w = Wrapper::parse_from([
            "acp",
            "--database-url",
            "postgres://app:hunter2@db:5432/acp",
            "--temporal-api-key",
            "sekrit-key",
        ]);
        let text = format!("{:?}", w.settings);
        assert!(!text.contains("hunter2"), "{text}");
        assert!(!text.contains("sekrit-key"), "{text}");
        assert!(text.contains("[redacted]"));
        assert!(!format!("{:?}", w.settings.temporal()).contains("sekrit-key"));
    }
}
