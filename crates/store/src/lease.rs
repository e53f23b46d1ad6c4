//! Leadership of a background duty that must have one active instance in
//! the whole fleet: a session advisory lock held on a connection of its own.
//!
//! PostgreSQL frees a session lock when the session ends, so when the
//! holder dies (kill -9, a lost host) its connection closes and the next
//! standby that asks takes the duty over. The server probes an idle lock
//! connection with TCP keepalives, so a holder that vanished without closing
//! its socket is noticed within about [`DEAD_PEER_SECS`] too. The holder
//! confirms its connection every time it asks, and gives the duty up the
//! moment that fails.

use futures::future::BoxFuture;
use sqlx::postgres::{PgConnectOptions, PgConnection};
use sqlx::{Connection, PgPool};

/// Roughly how long PostgreSQL takes to drop a holder that vanished without
/// closing its connection: keepalive idle + interval × count.
pub const DEAD_PEER_SECS: u64 = 5 + 2 * 3;

/// Leadership of one duty: `hold` answers whether this process has it now,
/// taking it when it is free.
pub struct DutyLease {
    options: PgConnectOptions,
    key: i64,
    /// This process's lock session: kept while standing by too, so that
    /// asking again costs one statement, not a connection.
    conn: Option<PgConnection>,
    held: bool,
}

impl DutyLease {
    /// A lease on `key`, connecting like `pool` does (but outside it: a
    /// session lock must not go back into a pool with its connection).
    pub fn new(pool: &PgPool, key: i64) -> Self {
        Self {
            options: (*pool.connect_options()).clone(),
            key,
            conn: None,
            held: false,
        }
    }

    /// True when this process holds the duty now: the lock it held is
    /// still held (its session answers), or it was free and is taken.
    ///
    /// Boxed so that callers' futures are `Send` (the connection's
    /// executor bounds are higher-ranked, which the compiler cannot prove
    /// through generic callers).
    pub fn hold(&mut self) -> BoxFuture<'_, bool> {
        Box::pin(self.hold_now())
    }

    async fn hold_now(&mut self) -> bool {
        match self.ask().await {
            Ok(held) => {
                if self.held && !held {
                    tracing::warn!(key = self.key, "gave up a duty: its lock is no longer held");
                }
                self.held = held;
            }
            Err(err) => {
                if self.held {
                    tracing::warn!(key = self.key, error = %err, "lost the connection holding a duty");
                } else {
                    tracing::debug!(key = self.key, error = %err, "could not ask for a duty");
                }
                // A broken session holds nothing: the next turn starts anew.
                self.conn = None;
                self.held = false;
            }
        }
        self.held
    }

    async fn ask(&mut self) -> Result<bool, sqlx::Error> {
        if self.conn.is_none() {
            let mut conn = PgConnection::connect_with(&self.options).await?;
            // Server-side keepalives on this mostly idle connection: a
            // holder gone without a word is dropped, its lock freed, in
            // seconds.
            sqlx::query!(
                "SELECT set_config('tcp_keepalives_idle', '5', false) AS idle,
                        set_config('tcp_keepalives_interval', '2', false) AS interval,
                        set_config('tcp_keepalives_count', '3', false) AS count"
            )
            .fetch_one(&mut conn)
            .await?;
            self.conn = Some(conn);
        }
        let Some(conn) = self.conn.as_mut() else {
            return Ok(false);
        };
        if self.held {
            // Held by this session until it ends: the session answering is
            // the lock still being ours.
            conn.ping().await?;
            return Ok(true);
        }
        let taken = sqlx::query_scalar!(r#"SELECT pg_try_advisory_lock($1) AS "taken!""#, self.key)
            .fetch_one(conn)
            .await?;
        Ok(taken)
    }

    /// Gives the duty up now (at shutdown), so a standby takes it at its
    /// next turn rather than after the connection times out.
    pub fn release(&mut self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            self.held = false;
            if let Some(conn) = self.conn.take() {
                let _ = conn.close().await;
            }
        })
    }
}

/// One pass of a single duty holding its transaction-scoped advisory lock
/// (`pg_try_advisory_xact_lock`), on a connection of its own: two passes
/// never overlap, even while the duty's lease changes hands. Dropping it
/// without `release` (a pass that failed) rolls back, which frees it too.
pub struct PassLock(sqlx::Transaction<'static, sqlx::Postgres>);

impl PassLock {
    /// The lock on `key`, or `None` when another session holds it.
    pub async fn try_take(pool: &PgPool, key: i64) -> crate::StoreResult<Option<Self>> {
        let mut tx = pool.begin().await?;
        let locked =
            sqlx::query_scalar!(r#"SELECT pg_try_advisory_xact_lock($1) AS "locked!""#, key)
                .fetch_one(&mut *tx)
                .await?;
        Ok(locked.then_some(Self(tx)))
    }

    /// Ends the pass: commits the lock's transaction, which frees it.
    pub async fn release(self) -> crate::StoreResult<()> {
        self.0.commit().await?;
        Ok(())
    }
}
