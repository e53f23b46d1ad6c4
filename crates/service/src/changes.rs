//! The change stream's use cases: numbering committed changes (the
//! sequencer, a single duty, every 50 ms), one LISTEN connection per process fanned out
//! to every stream of that process, replay from the log, stream tokens.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use sqlx::postgres::PgListener;
use tokio::sync::{broadcast, watch};
use uuid::Uuid;

use super::Result;
use super::duties::{Duty, DutyBoard};
use acp_domain::change::Change;
use acp_domain::project::ProjectId;
use acp_store::changes::{ChangeStore, LOG_CHANNEL, LogBounds, TokenKey};
use acp_store::lease::DutyLease;

/// Inbox rows one sequencer statement numbers.
const SEQUENCE_BATCH: i64 = 1000;
/// Log rows one read of the fan-out (or one replay page) takes.
const READ_BATCH: i64 = 1000;
/// How often the fan-out reads the log without being woken (a notification
/// lost with a connection).
const POLL: Duration = Duration::from_millis(500);
/// How often the sequencer looks at the inbox. The triggers do not notify:
/// a transaction that notifies takes a cluster-wide lock while it commits,
/// which would queue every run and dispatch write behind one another. An
/// empty look is one index probe.
const SEQUENCE_EVERY: Duration = Duration::from_millis(50);
/// How long a stream token lives.
pub const STREAM_TOKEN_MINUTES: i64 = 5;

#[derive(Clone)]
pub struct ChangeFeed {
    store: ChangeStore,
    live: broadcast::Sender<Arc<Change>>,
    /// The newest `seq` this process has broadcast.
    newest: Arc<std::sync::atomic::AtomicI64>,
    closing: watch::Sender<bool>,
}

impl ChangeFeed {
    /// `buffer`: how many changes a stream may fall behind the live feed
    /// before it is told to resync.
    pub fn new(store: ChangeStore, buffer: usize) -> Self {
        Self {
            store,
            live: broadcast::channel(buffer.max(1)).0,
            newest: Default::default(),
            closing: watch::channel(false).0,
        }
    }

    /// Live changes from now on; the receiver lags (and its stream must
    /// resync) when it falls `buffer` changes behind.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Change>> {
        self.live.subscribe()
    }

    /// Resolves when the process stops: streams end then, so they do not
    /// hold the shutdown's grace period.
    pub fn closing(&self) -> watch::Receiver<bool> {
        self.closing.subscribe()
    }

    pub fn close(&self) {
        let _ = self.closing.send(true);
    }

    pub async fn bounds(&self) -> Result<LogBounds> {
        Ok(self.store.bounds().await?)
    }

    /// A page of the log after `after`, for replay.
    pub async fn after(&self, after: i64) -> Result<Vec<Change>> {
        Ok(self.store.after(after, READ_BATCH).await?)
    }

    /// A stream token for the key that asks, acting in `project`.
    pub async fn create_token(
        &self,
        key_id: Uuid,
        project: &ProjectId,
    ) -> Result<(String, DateTime<Utc>)> {
        let expires_at = Utc::now() + chrono::Duration::minutes(STREAM_TOKEN_MINUTES);
        let token = self
            .store
            .create_stream_token(key_id, project, expires_at)
            .await?;
        Ok((token, expires_at))
    }

    pub async fn token_key(&self, token: &str) -> Result<Option<TokenKey>> {
        Ok(self.store.stream_token_key(token).await?)
    }

    pub async fn key_is_live(&self, key_id: Uuid) -> Result<bool> {
        Ok(self.store.key_is_live(key_id).await?)
    }

    /// The sequencer duty: while this process holds it, numbers committed
    /// changes every [`SEQUENCE_EVERY`]; forgets expired stream tokens
    /// every minute. (The log's retention is the `history_retention`
    /// duty's: see `retention`.)
    pub async fn run_sequencer(
        self,
        duties: DutyBoard,
        lease_interval: Duration,
        shutdown: impl Future<Output = ()>,
    ) {
        let duty = Duty::ChangeSequencer;
        let mut lease = DutyLease::new(self.store.pool(), duty.lease_key());
        let mut last_prune = tokio::time::Instant::now() - Duration::from_secs(3600);
        let mut last_bid = tokio::time::Instant::now() - lease_interval;
        let mut leading = false;
        tokio::pin!(shutdown);
        loop {
            if last_bid.elapsed() >= lease_interval || !leading {
                leading = duties.turn(duty, &mut lease).await;
                last_bid = tokio::time::Instant::now();
            }
            if leading {
                loop {
                    match self.store.sequence(SEQUENCE_BATCH).await {
                        Ok(n) if n as i64 == SEQUENCE_BATCH => continue,
                        Ok(_) => break,
                        Err(err) => {
                            tracing::warn!(error = %err, "could not number changes");
                            break;
                        }
                    }
                }
                if last_prune.elapsed() >= Duration::from_secs(60) {
                    if let Err(err) = self.store.forget_expired_tokens().await {
                        tracing::warn!(error = %err, "could not forget expired stream tokens");
                    }
                    last_prune = tokio::time::Instant::now();
                }
            }
            let wait = if leading {
                SEQUENCE_EVERY
            } else {
                lease_interval
            };
            tokio::select! {
                _ = &mut shutdown => break,
                _ = tokio::time::sleep(wait) => {}
            }
        }
        duties.leave(duty, &mut lease).await;
    }

    /// The fan-out: one LISTEN connection for the process; every change
    /// the log gains is read once and handed to every stream.
    pub async fn run_fanout(self, shutdown: impl Future<Output = ()>) {
        let mut listener: Option<PgListener> = None;
        match self.store.bounds().await {
            Ok(b) => self.set_newest(b.newest),
            Err(err) => tracing::warn!(error = %err, "could not read the change log"),
        }
        tokio::pin!(shutdown);
        loop {
            if listener.is_none() {
                listener = listen(&self.store, LOG_CHANNEL).await;
            }
            loop {
                let newest = self.newest();
                match self.store.after(newest, READ_BATCH).await {
                    Ok(changes) => {
                        let full = changes.len() as i64 == READ_BATCH;
                        for change in changes {
                            self.set_newest(change.seq);
                            let _ = self.live.send(Arc::new(change));
                        }
                        if !full {
                            break;
                        }
                    }
                    Err(err) => {
                        tracing::debug!(error = %err, "could not read the change log");
                        break;
                    }
                }
            }
            tokio::select! {
                _ = &mut shutdown => break,
                woken = wake(&mut listener, POLL) => {
                    if !woken {
                        listener = None;
                    }
                }
            }
        }
        self.close();
    }

    /// The newest `seq` this process has handed to its streams.
    pub fn newest(&self) -> i64 {
        self.newest.load(std::sync::atomic::Ordering::Acquire)
    }

    fn set_newest(&self, seq: i64) {
        self.newest
            .fetch_max(seq, std::sync::atomic::Ordering::AcqRel);
    }
}

async fn listen(store: &ChangeStore, channel: &str) -> Option<PgListener> {
    let mut listener = match PgListener::connect_with(store.pool()).await {
        Ok(l) => l,
        Err(err) => {
            tracing::debug!(error = %err, channel, "could not listen");
            return None;
        }
    };
    match listener.listen(channel).await {
        Ok(()) => Some(listener),
        Err(err) => {
            tracing::debug!(error = %err, channel, "could not listen");
            None
        }
    }
}

/// Waits for a notification or `timeout`; false when the listener broke
/// (it is then made again).
async fn wake(listener: &mut Option<PgListener>, timeout: Duration) -> bool {
    let Some(l) = listener.as_mut() else {
        tokio::time::sleep(timeout).await;
        return true;
    };
    match tokio::time::timeout(timeout, l.try_recv()).await {
        Err(_) => true,
        Ok(Ok(Some(_))) => true,
        Ok(Ok(None)) | Ok(Err(_)) => false,
    }
}
