//! The change log (see the migration `change_log`): numbering committed
//! changes, reading them back in order, and the stream tokens.

use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};
use sqlx::{Connection, PgPool};
use uuid::Uuid;

use super::StoreResult;
use acp_domain::auth::Scope;
use acp_domain::change::Change;
use acp_domain::project::ProjectId;

/// The key a stream token stands for: the stream acts as that key, in its
/// project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenKey {
    pub id: Uuid,
    pub scope: Scope,
    /// The project the token was made acting in (an operator's choice);
    /// the key's own for tokens made before tokens kept one.
    pub project: Option<ProjectId>,
}

/// `pg_try_advisory_xact_lock` key of one sequencer pass: "acp-seq".
pub const SEQUENCER_LOCK_KEY: i64 = 0x0061_6370_2d73_6571;
/// The channel the sequencer announces new log rows on (payload: the
/// highest `seq`).
pub const LOG_CHANNEL: &str = "acp_changes";

#[derive(Clone)]
pub struct ChangeStore {
    pool: PgPool,
}

/// Where the log starts and ends now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogBounds {
    /// Every change up to this `seq` has been pruned (0: none).
    pub pruned_through: i64,
    /// The newest committed `seq` (0 before the first).
    pub newest: i64,
}

impl ChangeStore {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }

    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// Numbers up to `limit` committed inbox rows, oldest first, under the
    /// sequencer's lock, and announces the highest number on
    /// [`LOG_CHANNEL`]. Returns how many it moved (0 when another process
    /// holds the lock).
    pub async fn sequence(&self, limit: i64) -> StoreResult<u64> {
        let mut conn = self.pool.acquire().await?;
        let mut tx = conn.begin().await?;
        let locked = sqlx::query_scalar!(
            r#"SELECT pg_try_advisory_xact_lock($1) AS "locked!""#,
            SEQUENCER_LOCK_KEY,
        )
        .fetch_one(&mut *tx)
        .await?;
        if !locked {
            return Ok(0);
        }
        // Numbered in inbox order: the sub-select is sorted before
        // nextval() runs on its rows. A change that names no project is
        // its activity's (`default`'s when it has none).
        let numbered = sqlx::query!(
            r#"WITH taken AS (
                 DELETE FROM change_inbox
                  WHERE id IN (SELECT id FROM change_inbox ORDER BY id LIMIT $1)
                 RETURNING id, at, kind, activity_id, subject, data, project_id
             ), numbered AS (
                 INSERT INTO change_log (seq, at, kind, activity_id, subject, data, project_id)
                 SELECT nextval('change_log_seq'), at, kind, activity_id, subject, data, project
                   FROM (SELECT t.*, coalesce(t.project_id, a.project_id, 'default') AS project
                           FROM taken t LEFT JOIN activities a ON a.id = t.activity_id
                          ORDER BY t.id) ordered
                 RETURNING seq
             )
             SELECT count(*) AS "moved!", max(seq) AS newest FROM numbered"#,
            limit,
        )
        .fetch_one(&mut *tx)
        .await?;
        let moved = numbered.moved;
        if let Some(newest) = numbered.newest {
            sqlx::query!("SELECT pg_notify($1, $2)", LOG_CHANNEL, newest.to_string())
                .fetch_one(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(moved as u64)
    }

    /// Changes after `after`, in order, at most `limit`.
    pub async fn after(&self, after: i64, limit: i64) -> StoreResult<Vec<Change>> {
        Ok(sqlx::query_as!(
            Change,
            "SELECT seq, at, kind, activity_id, subject, data, project_id AS project FROM change_log
              WHERE seq > $1 ORDER BY seq LIMIT $2",
            after,
            limit,
        )
        .fetch_all(&self.pool)
        .await?)
    }

    pub async fn bounds(&self) -> StoreResult<LogBounds> {
        let row = sqlx::query!(
            "SELECT pruned_through, (SELECT max(seq) FROM change_log) AS newest FROM change_log_meta"
        )
        .fetch_one(&self.pool)
        .await?;
        Ok(LogBounds {
            pruned_through: row.pruned_through,
            newest: row.newest.unwrap_or(row.pruned_through),
        })
    }

    /// Forgets expired stream tokens. (The log itself is kept in day
    /// partitions that the retention duty drops whole: see `partitions`.)
    pub async fn forget_expired_tokens(&self) -> StoreResult<u64> {
        Ok(
            sqlx::query!("DELETE FROM stream_tokens WHERE expires_at < now()")
                .execute(&self.pool)
                .await?
                .rows_affected(),
        )
    }

    /// A stream token for `key_id` acting in `project`, valid until
    /// `expires_at`: shown once, only its hash kept.
    pub async fn create_stream_token(
        &self,
        key_id: Uuid,
        project: &ProjectId,
        expires_at: DateTime<Utc>,
    ) -> StoreResult<String> {
        let mut secret = [0u8; 32];
        getrandom::getrandom(&mut secret)
            .map_err(|e| super::StoreError::Other(anyhow::anyhow!("no random source: {e}")))?;
        let secret = hex::encode(secret);
        sqlx::query!(
            "INSERT INTO stream_tokens (secret_sha256, key_id, project_id, expires_at)
             VALUES ($1, $2, $3, $4)",
            &Sha256::digest(secret.as_bytes())[..],
            key_id,
            project.as_str(),
            expires_at,
        )
        .execute(&self.pool)
        .await?;
        Ok(format!("{STREAM_TOKEN_PREFIX}{secret}"))
    }

    /// The key a stream token stands for, while the token has not expired
    /// and its key is not revoked; `None` otherwise.
    pub async fn stream_token_key(&self, token: &str) -> StoreResult<Option<TokenKey>> {
        let Some(secret) = token.strip_prefix(STREAM_TOKEN_PREFIX) else {
            return Ok(None);
        };
        if secret.len() != 64 || !secret.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Ok(None);
        }
        let row = sqlx::query!(
            r#"SELECT k.id, k.scope, COALESCE(t.project_id, k.project_id) AS project_id
                 FROM stream_tokens t
               JOIN api_keys k ON k.id = t.key_id
                WHERE t.secret_sha256 = $1 AND t.expires_at > now() AND k.revoked_at IS NULL"#,
            &Sha256::digest(secret.as_bytes())[..],
        )
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.and_then(|r| {
            Some(TokenKey {
                id: r.id,
                scope: Scope::parse(&r.scope)?,
                project: r
                    .project_id
                    .map(|p| ProjectId::parse(&p))
                    .transpose()
                    .ok()?,
            })
        }))
    }

    /// Whether `key_id` is still live (not revoked).
    pub async fn key_is_live(&self, key_id: Uuid) -> StoreResult<bool> {
        let live = sqlx::query_scalar!(
            r#"SELECT EXISTS (SELECT 1 FROM api_keys WHERE id = $1 AND revoked_at IS NULL) AS "live!""#,
            key_id,
        )
        .fetch_one(&self.pool)
        .await?;
        Ok(live)
    }
}

/// A stream token: `acps_` and 64 hex digits (never shaped like an API key,
/// so no other route takes it for one).
pub const STREAM_TOKEN_PREFIX: &str = "acps_";
