//! Projects: their definitions, versioned, what each owns and uses now.
//! Deleting one is refused while it owns anything live.

use std::collections::HashMap;

use chrono::{DateTime, Utc};

use super::{Error, Result, found};
use acp_domain::audit::Actor;
use acp_domain::project::{Project, ProjectId, ProjectInput, ProjectRecord, Usage};
use acp_domain::query::Expect;
use acp_store::{ProjectStore, StoreError};

#[derive(Clone)]
pub struct Projects {
    store: ProjectStore,
}

impl Projects {
    pub fn new(store: ProjectStore) -> Self {
        Self { store }
    }

    pub async fn create(
        &self,
        id: &ProjectId,
        project: &Project,
        actor: &Actor,
    ) -> Result<ProjectRecord> {
        Ok(self.store.create(id, project, actor).await?)
    }

    /// Takes `wanted` events' tokens from the project's events-per-second
    /// bucket: how many were granted and what is left (`None`: no quota).
    pub async fn take_event_tokens(
        &self,
        id: &ProjectId,
        wanted: i64,
    ) -> Result<Option<acp_domain::project::rate::Taken>> {
        Ok(self.store.take_event_tokens(id, wanted).await?)
    }

    pub async fn get(&self, id: &ProjectId) -> Result<ProjectRecord> {
        found(self.store.get(id).await, "project")
    }

    pub async fn list(
        &self,
        after: Option<(DateTime<Utc>, String)>,
        limit: i64,
    ) -> Result<Vec<ProjectRecord>> {
        Ok(self.store.list(after, limit).await?)
    }

    /// What each project of `records` uses now (zero for one not found).
    pub async fn usage(&self, records: &[ProjectRecord]) -> Result<HashMap<ProjectId, Usage>> {
        let ids: Vec<ProjectId> = records.iter().map(|r| r.id.clone()).collect();
        Ok(self.store.usage(&ids).await?)
    }

    /// Creates or replaces the project under `id`. With a precondition
    /// (`If-Match`) it must exist, at that version when one is named.
    /// Whether it was created comes back with it.
    pub async fn put(
        &self,
        id: &ProjectId,
        project: &Project,
        expect: Expect,
        actor: &Actor,
    ) -> Result<(ProjectRecord, bool)> {
        match expect {
            Expect::Anything => Ok(self.store.upsert(id, project, actor).await?),
            _ => Ok((self.store.update(id, expect, project, actor).await?, false)),
        }
    }

    /// Replaces the project with what `apply` makes of its current form (a
    /// merge patch), at the version it was made from.
    pub async fn patch<E: From<Error>>(
        &self,
        id: &ProjectId,
        expect: Expect,
        actor: &Actor,
        apply: impl FnOnce(ProjectInput) -> std::result::Result<Project, E>,
    ) -> std::result::Result<ProjectRecord, E> {
        let current = self.get(id).await?;
        if let Expect::Version(v) = expect
            && v != current.version
        {
            return Err(Error::from(StoreError::VersionMismatch {
                current: current.version,
            })
            .into());
        }
        let project = apply(current.project.to_input())?;
        Ok(self
            .store
            .update(id, Expect::Version(current.version), &project, actor)
            .await
            .map_err(Error::from)?)
    }

    /// Deletes the project when it owns nothing live; `default` never.
    pub async fn delete(&self, id: &ProjectId, expect: Expect, actor: &Actor) -> Result<()> {
        if id.is_default() {
            return Err(Error::Conflict(
                "the project `default` cannot be deleted".into(),
            ));
        }
        match found(self.store.delete(id, expect, actor).await, "project")? {
            None => Ok(()),
            Some(owned) => Err(Error::Conflict(format!(
                "project `{id}` still owns {}: delete or move them (and revoke its keys) first",
                owned.describe()
            ))),
        }
    }
}
