//! API keys: minting, listing and revoking them, and finding which key a
//! presented token or stream token stands for. Tokens and scopes are
//! `auth`'s; the rows are `store::keys`' and `store::changes`'.

use sqlx::PgPool;
use uuid::Uuid;

use super::{Error, Result, found};
use acp_domain::audit::Actor;
use acp_domain::auth::{ApiKey, KeyFacts, Rejection, Scope, UnconfirmedKey};
use acp_domain::project::ProjectId;
use acp_store::changes::ChangeStore;
use acp_store::{KeyStore, StoreError};

#[derive(Clone)]
pub struct Keys {
    store: KeyStore,
    /// Where stream tokens (`GET /v1/stream`) are kept.
    stream_tokens: ChangeStore,
}

impl Keys {
    pub fn new(pool: PgPool) -> Self {
        Self {
            store: KeyStore::new(pool.clone()),
            stream_tokens: ChangeStore::new(pool),
        }
    }

    /// A new key with its token, which exists nowhere else: an operator
    /// key for scope `operator`, else a key of the project `default`.
    pub async fn create(
        &self,
        name: &str,
        scope: Scope,
        actor: &Actor,
    ) -> Result<(ApiKey, String)> {
        let project = (scope != Scope::Operator).then(ProjectId::default_project);
        self.create_in(name, scope, project.as_ref(), actor).await
    }

    /// A new key of `project`, with its token. Only an `operator` key has
    /// no project, and it must have none.
    pub async fn create_in(
        &self,
        name: &str,
        scope: Scope,
        project: Option<&ProjectId>,
        actor: &Actor,
    ) -> Result<(ApiKey, String)> {
        match (scope, project) {
            (Scope::Operator, Some(_)) => {
                return Err(Error::invalid(
                    "project",
                    "an operator key belongs to no project: leave `project` null",
                ));
            }
            (Scope::Operator, None) => {}
            (_, None) => {
                return Err(Error::invalid(
                    "project",
                    "only an operator key has no project: name one, or ask for scope `operator`",
                ));
            }
            (_, Some(_)) => {}
        }
        match self.store.create(name, scope, project, actor).await {
            Err(StoreError::NotFound) => Err(Error::invalid(
                "project",
                format!(
                    "there is no project `{}`",
                    project.map(ProjectId::as_str).unwrap_or_default()
                ),
            )),
            other => Ok(other?),
        }
    }

    /// Every key, newest first, revoked ones included.
    pub async fn list(&self) -> Result<Vec<ApiKey>> {
        Ok(self.store.list().await?)
    }

    pub async fn get(&self, id: Uuid) -> Result<ApiKey> {
        found(self.store.get(id).await, "API key")
    }

    /// Revokes a key; revoking it again keeps its first revocation time.
    pub async fn revoke(&self, id: Uuid, actor: &Actor) -> Result<ApiKey> {
        found(self.store.revoke(id, actor).await, "API key")
    }

    /// The key a token (already split by [`acp_domain::auth::parse`]) stands
    /// for, with its [`KeyFacts`] to keep, or why it stands for none.
    pub async fn authenticate(
        &self,
        id: Uuid,
        secret: &str,
    ) -> Result<std::result::Result<(ApiKey, Option<KeyFacts>), Rejection>> {
        Ok(self.store.authenticate(id, secret).await?)
    }

    /// Confirms that `key` is live, unless its request's statement already
    /// did; a revoked key is an error.
    pub async fn confirm(&self, key: &UnconfirmedKey) -> Result<()> {
        Ok(self.store.confirm(key).await?)
    }

    /// The live key and scope a stream token stands for; `None` when the
    /// token is unknown, expired, or its key was revoked.
    pub async fn stream_token_key(
        &self,
        token: &str,
    ) -> Result<Option<acp_store::changes::TokenKey>> {
        Ok(self.stream_tokens.stream_token_key(token).await?)
    }
}
