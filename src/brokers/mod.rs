//! Broker consumers: one per enabled source, in every `acp serve` and
//! `acp worker` process (unless `--consume-sources=false`); `acp api`
//! replicas stay stateless and consume nothing.
//!
//! Several replicas consuming one source share its messages (a JetStream
//! durable consumer and a RabbitMQ queue both hand each message to one
//! consumer at a time); a message that two of them see anyway, after a crash
//! or a missed acknowledgement, is a re-delivery, which the idempotency
//! contract absorbs. Each message is acknowledged only after
//! [`Sources::deliver`] committed what it is.

pub mod nats;
pub mod rabbitmq;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;
use uuid::Uuid;

use acp_domain::source::SourceConfig;
use acp_domain::source::{SourceRecord, StatusReport};
use acp_service::Sources;
use acp_service::sources::{Delivered, Message};

/// How the consumers of one process behave.
#[derive(Debug, Clone)]
pub struct ConsumerSettings {
    /// How often the set of enabled sources is read again.
    pub refresh: Duration,
    /// Largest message accepted; larger ones are rejected as `too_large`.
    pub message_limit: usize,
    /// How often a consumer reports its status to PostgreSQL.
    pub report_every: Duration,
    /// Names this process in the status it reports.
    pub instance: String,
}

impl ConsumerSettings {
    pub fn new(refresh: Duration, message_limit: usize) -> Self {
        let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "acp".into());
        Self {
            refresh,
            message_limit,
            report_every: Duration::from_secs(1),
            instance: format!("{host}:{}", std::process::id()),
        }
    }
}

/// What a consumer reports, accumulated between two reports.
#[derive(Default)]
pub struct Status {
    connected: AtomicBool,
    /// -1: not known.
    pending: AtomicI64,
    error: Mutex<Option<String>>,
    accepted: AtomicI64,
    rejected: AtomicI64,
    conflicts: AtomicI64,
}

impl Status {
    pub fn set_connected(&self, connected: bool) {
        self.connected.store(connected, Ordering::Relaxed);
    }

    pub fn set_pending(&self, pending: u64) {
        self.pending.store(
            i64::try_from(pending).unwrap_or(i64::MAX),
            Ordering::Relaxed,
        );
    }

    pub fn fail(&self, error: impl std::fmt::Display) {
        if let Ok(mut slot) = self.error.lock() {
            *slot = Some(error.to_string());
        }
    }

    /// The report since the last one (counters start again at zero).
    fn take(&self) -> StatusReport {
        let pending = self.pending.load(Ordering::Relaxed);
        StatusReport {
            connected: self.connected.load(Ordering::Relaxed),
            pending: (pending >= 0).then_some(pending),
            error: self.error.lock().ok().and_then(|mut e| e.take()),
            accepted: self.accepted.swap(0, Ordering::Relaxed),
            rejected: self.rejected.swap(0, Ordering::Relaxed),
            conflicts: self.conflicts.swap(0, Ordering::Relaxed),
        }
    }

    /// Puts back the counts of a report that could not be written.
    fn restore(&self, report: &StatusReport) {
        self.accepted.fetch_add(report.accepted, Ordering::Relaxed);
        self.rejected.fetch_add(report.rejected, Ordering::Relaxed);
        self.conflicts
            .fetch_add(report.conflicts, Ordering::Relaxed);
        if let Some(error) = &report.error
            && let Ok(mut slot) = self.error.lock()
            && slot.is_none()
        {
            *slot = Some(error.clone());
        }
    }
}

/// What every consumer of a process shares.
#[derive(Clone)]
pub struct Context {
    pub sources: Sources,
    pub settings: Arc<ConsumerSettings>,
}

impl Context {
    /// Commits one message; `true` when it may be acknowledged.
    pub async fn handle(&self, source: &SourceRecord, status: &Status, message: &Message) -> bool {
        let source_id = source.id;
        let outcome = self
            .sources
            .deliver(
                source_id,
                &source.project,
                message,
                self.settings.message_limit,
            )
            .await;
        let (label, ack) = match outcome {
            Ok(Delivered::Accepted { .. }) => {
                status.accepted.fetch_add(1, Ordering::Relaxed);
                ("accepted", true)
            }
            Ok(Delivered::Rejected(_)) => {
                status.rejected.fetch_add(1, Ordering::Relaxed);
                ("rejected", true)
            }
            Ok(Delivered::Conflict { .. }) => {
                status.conflicts.fetch_add(1, Ordering::Relaxed);
                ("conflict", true)
            }
            Err(err) => {
                tracing::warn!(error = %err, %source_id, "message not committed; it will be delivered again");
                status.fail(format!("message not committed: {err}"));
                ("retried", false)
            }
        };
        acp_service::metrics::SOURCE_MESSAGES
            .with_label_values(&[label])
            .inc();
        ack
    }
}

/// The value of a source's `secret_ref` in this process's environment.
pub fn secret(source: &SourceRecord) -> anyhow::Result<Option<String>> {
    match &source.secret_ref {
        None => Ok(None),
        Some(name) => std::env::var(name).map(Some).map_err(|_| {
            anyhow::anyhow!("secret_ref {name} is not set in the environment of this process")
        }),
    }
}

/// Runs one source's consumer until `stop`, reconnecting with backoff
/// (0.5 s doubling to 30 s; back to 0.5 s after a connection that held).
async fn consume(ctx: Context, source: SourceRecord, mut stop: watch::Receiver<bool>) {
    let status = Arc::new(Status::default());
    status.pending.store(-1, Ordering::Relaxed);
    let config = match SourceConfig::parse(source.kind, source.config.clone()) {
        Ok(config) => config,
        Err(errors) => {
            status.fail(format!("stored config is not valid: {errors:?}"));
            report(&ctx, source.id, &status).await;
            return;
        }
    };
    let reporter = {
        let (ctx, status, mut stop) = (ctx.clone(), status.clone(), stop.clone());
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = stop.wait_for(|s| *s) => break,
                    _ = tokio::time::sleep(ctx.settings.report_every) => {}
                }
                report(&ctx, source.id, &status).await;
            }
        })
    };
    let initial = Duration::from_millis(500);
    let mut backoff = initial;
    loop {
        let started = tokio::time::Instant::now();
        let result = match &config {
            SourceConfig::Nats(c) => nats::run(&ctx, &source, c, &status, stop.clone()).await,
            SourceConfig::Rabbitmq(c) => {
                rabbitmq::run(&ctx, &source, c, &status, stop.clone()).await
            }
        };
        status.set_connected(false);
        match result {
            Ok(()) => break,
            Err(err) => {
                tracing::warn!(source = %source.name, error = format!("{err:#}"), retry_in = ?backoff, "source consumer failed");
                status.fail(format!("{err:#}"));
            }
        }
        if started.elapsed() > Duration::from_secs(30) {
            backoff = initial;
        }
        tokio::select! {
            _ = stop.wait_for(|s| *s) => break,
            _ = tokio::time::sleep(backoff) => {}
        }
        backoff = (backoff * 2).min(Duration::from_secs(30));
    }
    reporter.abort();
    report(&ctx, source.id, &status).await;
}

async fn report(ctx: &Context, id: Uuid, status: &Status) {
    let report = status.take();
    if let Err(err) = ctx
        .sources
        .report(id, &ctx.settings.instance, &report)
        .await
    {
        tracing::debug!(error = %err, "status report failed; kept for the next one");
        status.restore(&report);
    }
}

/// Runs a consumer for every enabled source until `shutdown`, starting,
/// restarting (on a new version) and stopping them as sources change.
pub async fn run(ctx: Context, shutdown: impl Future<Output = ()>) {
    tokio::pin!(shutdown);
    let mut running: HashMap<Uuid, (i64, watch::Sender<bool>, tokio::task::JoinHandle<()>)> =
        HashMap::new();
    let mut first = true;
    loop {
        if !first {
            tokio::select! {
                _ = &mut shutdown => break,
                _ = tokio::time::sleep(ctx.settings.refresh) => {}
            }
        }
        first = false;
        let sources = match ctx.sources.enabled().await {
            Ok(sources) => sources,
            Err(err) => {
                tracing::warn!(error = %err, "cannot read sources");
                continue;
            }
        };
        let wanted: HashMap<Uuid, &SourceRecord> = sources.iter().map(|s| (s.id, s)).collect();
        running.retain(|id, (version, stop, task)| {
            let keep = wanted.get(id).is_some_and(|s| s.version == *version) && !task.is_finished();
            if !keep {
                let _ = stop.send(true);
            }
            keep
        });
        for source in sources {
            if running.contains_key(&source.id) {
                continue;
            }
            tracing::info!(source = %source.name, kind = %source.kind, "starting source consumer");
            let (stop_tx, stop_rx) = watch::channel(false);
            let (id, version) = (source.id, source.version);
            let task = tokio::spawn(consume(ctx.clone(), source, stop_rx));
            running.insert(id, (version, stop_tx, task));
        }
    }
    for (_, stop, _) in running.values() {
        let _ = stop.send(true);
    }
    let stopping = futures::future::join_all(running.into_values().map(|(_, _, task)| task));
    if tokio::time::timeout(Duration::from_secs(10), stopping)
        .await
        .is_err()
    {
        tracing::warn!("source consumers did not stop within 10 s");
    }
}
