//! Group commit for ingest: events that arrive while a statement is in
//! flight are written together by the next one (`store::ingest`), so that
//! PostgreSQL parses, plans and commits once for many. Nothing waits for a
//! batch to fill: a statement starts as soon as a writer is free, with
//! whatever has arrived by then, and each caller is answered once the
//! statement holding its event has committed.

use std::sync::{Arc, Once};

use chrono::{DateTime, Utc};
use tokio::sync::{Mutex, mpsc, oneshot};

use acp_store::events::EventStore;
use acp_store::ingest::RoutedEvent;

/// Statements in flight at once (each holds one pooled connection).
const WRITERS: usize = 4;
/// Events per statement at most.
const MAX_BATCH: usize = 64;
/// Events waiting for a writer at most; past it callers wait to queue.
const QUEUE: usize = 4096;

struct Pending {
    event: RoutedEvent,
    reply: oneshot::Sender<Option<DateTime<Utc>>>,
}

/// Writes events in batches with `WRITERS` tasks started on first use.
/// Only those tasks hold the receiving end: were they gone (their runtime
/// shut down), sending fails and each event takes the general path rather
/// than waiting for nobody.
#[derive(Clone)]
pub struct GroupCommit {
    queue: mpsc::Sender<Pending>,
    start: Arc<Start>,
}

struct Start {
    once: Once,
    writers: std::sync::Mutex<Option<(mpsc::Receiver<Pending>, EventStore)>>,
}

impl GroupCommit {
    pub fn new(store: EventStore) -> Self {
        let (queue, receiver) = mpsc::channel(QUEUE);
        Self {
            queue,
            start: Arc::new(Start {
                once: Once::new(),
                writers: std::sync::Mutex::new(Some((receiver, store))),
            }),
        }
    }

    /// Writes `event` (see `EventStore::record_routed`): its `received_at`,
    /// or `None` when the general path must take it, which is also the
    /// answer when its statement failed (the general path then meets the
    /// failure itself and reports it as its own).
    pub async fn record(&self, event: RoutedEvent) -> Option<DateTime<Utc>> {
        self.start.once.call_once(|| {
            let taken = self.start.writers.lock().ok().and_then(|mut w| w.take());
            if let Some((receiver, store)) = taken {
                let receiver = Arc::new(Mutex::new(receiver));
                for _ in 0..WRITERS {
                    tokio::spawn(write(receiver.clone(), store.clone()));
                }
            }
        });
        let (reply, answer) = oneshot::channel();
        self.queue.send(Pending { event, reply }).await.ok()?;
        answer.await.ok().flatten()
    }
}

/// One writer: takes everything queued (up to `MAX_BATCH`), writes it in
/// one statement, answers each caller; ends when every sender is gone.
async fn write(queue: Arc<Mutex<mpsc::Receiver<Pending>>>, store: EventStore) {
    loop {
        let batch = {
            let mut queue = queue.lock().await;
            let Some(first) = queue.recv().await else {
                return;
            };
            let mut batch = vec![first];
            while batch.len() < MAX_BATCH {
                match queue.try_recv() {
                    Ok(next) => batch.push(next),
                    Err(_) => break,
                }
            }
            batch
        };
        let (events, replies): (Vec<_>, Vec<_>) =
            batch.into_iter().map(|p| (p.event, p.reply)).unzip();
        crate::metrics::INGEST_STATEMENTS.inc();
        let written = match store.record_routed(&events).await {
            Ok(written) => written,
            Err(e) => {
                tracing::warn!(error = %e, events = events.len(), "group commit failed; each event takes the general path");
                vec![None; events.len()]
            }
        };
        for (reply, received_at) in replies.into_iter().zip(written) {
            // A caller that went away: its event is written all the same.
            let _ = reply.send(received_at);
        }
    }
}
