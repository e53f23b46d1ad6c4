//! `api_keys`: who may call the API. Only hashes of secrets are stored.

use chrono::{DateTime, Utc};
use sqlx::PgPool;
use uuid::Uuid;

use super::{StoreError, StoreResult, audit};
use acp_domain::audit::{Actor, Note, Subject};
use acp_domain::auth::{self, ApiKey, KeyFacts, NewToken, Rejection, Scope, UnconfirmedKey};
use acp_domain::project::ProjectId;

/// A key as an audit entry keeps it: never its secret's hash.
fn snapshot(key: &ApiKey) -> serde_json::Value {
    serde_json::json!({
        "name": key.name,
        "scope": key.scope.as_str(),
        "project": key.project.as_ref().map(|p| p.as_str()),
        "revoked_at": key.revoked_at,
    })
}

#[derive(Debug, Clone)]
struct KeyRow {
    id: Uuid,
    name: String,
    scope: String,
    project_id: Option<String>,
    created_at: DateTime<Utc>,
    revoked_at: Option<DateTime<Utc>>,
}

impl TryFrom<KeyRow> for ApiKey {
    type Error = StoreError;

    fn try_from(row: KeyRow) -> StoreResult<Self> {
        let scope = Scope::parse(&row.scope).ok_or_else(|| {
            StoreError::Other(anyhow::anyhow!("api_keys.scope {:?} is unknown", row.scope))
        })?;
        let project = row
            .project_id
            .as_deref()
            .map(ProjectId::parse)
            .transpose()
            .map_err(|e| StoreError::Other(anyhow::anyhow!("api_keys.project_id: {e}")))?;
        Ok(Self {
            id: row.id,
            name: row.name,
            scope,
            project,
            created_at: row.created_at,
            revoked_at: row.revoked_at,
        })
    }
}

#[derive(Clone)]
pub struct KeyStore {
    pool: PgPool,
}

impl KeyStore {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }

    /// Creates a key in `project` (none for an operator key) and returns it
    /// with its token, which exists nowhere else. A project that does not
    /// exist, or was deleted, is `NotFound`.
    pub async fn create(
        &self,
        name: &str,
        scope: Scope,
        project: Option<&ProjectId>,
        actor: &Actor,
    ) -> StoreResult<(ApiKey, String)> {
        let NewToken {
            key_id,
            token,
            secret_sha256,
        } = auth::mint().map_err(StoreError::Other)?;
        let mut tx = self.pool.begin().await?;
        let row = sqlx::query_as!(
            KeyRow,
            "INSERT INTO api_keys (id, name, scope, secret_sha256, project_id)
             SELECT $1::uuid, $2::text, $3::text, $4::bytea, $5::text
             WHERE $5::text IS NULL
                OR EXISTS (SELECT 1 FROM projects WHERE id = $5 AND deleted_at IS NULL)
             RETURNING id, name, scope, project_id, created_at, revoked_at",
            key_id,
            name,
            scope.as_str(),
            &secret_sha256[..],
            project.map(ProjectId::as_str),
        )
        .fetch_optional(&mut *tx)
        .await?
        .ok_or(StoreError::NotFound)?;
        let key: ApiKey = row.try_into()?;
        let note = Note::definition(Subject::api_key(key.id), None, Some(snapshot(&key)));
        audit::append(&mut tx, actor, &note).await?;
        tx.commit().await?;
        Ok((key, token))
    }

    /// Every key, newest first, revoked ones included.
    pub async fn list(&self) -> StoreResult<Vec<ApiKey>> {
        let rows = sqlx::query_as!(
            KeyRow,
            "SELECT id, name, scope, project_id, created_at, revoked_at FROM api_keys
             ORDER BY created_at DESC, id DESC"
        )
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter().map(ApiKey::try_from).collect()
    }

    pub async fn get(&self, id: Uuid) -> StoreResult<ApiKey> {
        let row = sqlx::query_as!(
            KeyRow,
            "SELECT id, name, scope, project_id, created_at, revoked_at FROM api_keys WHERE id = $1",
            id,
        )
        .fetch_one(&self.pool)
        .await?;
        row.try_into()
    }

    /// Revokes a key; revoking a revoked key keeps its first revocation time.
    pub async fn revoke(&self, id: Uuid, actor: &Actor) -> StoreResult<ApiKey> {
        let mut tx = self.pool.begin().await?;
        let before = sqlx::query_as!(
            KeyRow,
            "SELECT id, name, scope, project_id, created_at, revoked_at FROM api_keys WHERE id = $1
             FOR UPDATE",
            id,
        )
        .fetch_one(&mut *tx)
        .await?;
        let before: ApiKey = before.try_into()?;
        let row = sqlx::query_as!(
            KeyRow,
            "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1
             RETURNING id, name, scope, project_id, created_at, revoked_at",
            id,
        )
        .fetch_one(&mut *tx)
        .await?;
        let key: ApiKey = row.try_into()?;
        let note = Note::definition(
            Subject::api_key(id),
            Some(snapshot(&before)),
            Some(snapshot(&key)),
        );
        audit::append(&mut tx, actor, &note).await?;
        tx.commit().await?;
        Ok(key)
    }

    /// The key a token (already split by [`auth::parse`]) stands for, with
    /// its [`KeyFacts`] to keep (`None` for a stored hash of another
    /// length), or why it stands for none: one primary-key read.
    pub async fn authenticate(
        &self,
        id: Uuid,
        secret: &str,
    ) -> StoreResult<Result<(ApiKey, Option<KeyFacts>), Rejection>> {
        let found = sqlx::query!(
            "SELECT id, name, scope, project_id, created_at, revoked_at, secret_sha256 FROM api_keys
             WHERE id = $1",
            id,
        )
        .fetch_optional(&self.pool)
        .await?;
        let Some(found) = found else {
            return Ok(Err(Rejection::UnknownKey));
        };
        let secret_sha256 = found.secret_sha256;
        let key = KeyRow {
            id: found.id,
            name: found.name,
            scope: found.scope,
            project_id: found.project_id,
            created_at: found.created_at,
            revoked_at: found.revoked_at,
        };
        if !auth::verify(secret, &secret_sha256) {
            return Ok(Err(Rejection::WrongSecret));
        }
        if key.revoked_at.is_some() {
            return Ok(Err(Rejection::Revoked));
        }
        let key: ApiKey = key.try_into()?;
        let facts = <[u8; 32]>::try_from(secret_sha256.as_slice())
            .ok()
            .map(|secret_sha256| KeyFacts {
                scope: key.scope,
                secret_sha256,
                project: key.project.clone(),
            });
        Ok(Ok((key, facts)))
    }

    /// Confirms that `key` is live, unless its request's statement already
    /// did: [`StoreError::KeyRevoked`] when it is not.
    pub async fn confirm(&self, key: &UnconfirmedKey) -> StoreResult<()> {
        confirm_key(&self.pool, Some(key)).await
    }
}

/// Confirms `key` with a statement of its own (the fallback of a path that
/// could not fold the check into its own statement); nothing for `None` or
/// a key already confirmed.
pub(crate) async fn confirm_key(pool: &PgPool, key: Option<&UnconfirmedKey>) -> StoreResult<()> {
    let Some(id) = UnconfirmedKey::pending(key) else {
        return Ok(());
    };
    let live = sqlx::query_scalar!(
        r#"SELECT revoked_at IS NULL AS "live!" FROM api_keys WHERE id = $1"#,
        id,
    )
    .fetch_optional(pool)
    .await?;
    match (live, key) {
        (Some(true), Some(key)) => {
            key.confirm();
            Ok(())
        }
        _ => Err(StoreError::KeyRevoked),
    }
}
