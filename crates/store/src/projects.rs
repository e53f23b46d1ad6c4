//! `projects`: the teams sharing the service, each at a version, with what
//! each owns and uses counted from the tables that name it.

use chrono::{DateTime, Utc};
use sqlx::PgPool;

use super::{StoreError, StoreResult, audit};
use acp_domain::audit::{Actor, Note, Subject};
use acp_domain::project::{CountQuota, Owned, Project, ProjectId, ProjectRecord, Quotas};
use acp_domain::query::Expect;

pub mod owner;
mod rate;
mod usage;

/// A `projects` row, read into the domain's [`ProjectRecord`].
struct ProjectRow {
    id: String,
    name: String,
    weight: i32,
    quota_activities: Option<i32>,
    quota_events_per_second: Option<i32>,
    quota_events_burst: Option<i32>,
    quota_runs_running: Option<i32>,
    quota_sources: Option<i32>,
    quota_subscriptions: Option<i32>,
    runs_guaranteed: Option<i32>,
    version: i64,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl TryFrom<ProjectRow> for ProjectRecord {
    type Error = StoreError;

    fn try_from(row: ProjectRow) -> StoreResult<Self> {
        let id = ProjectId::parse(&row.id)
            .map_err(|e| StoreError::Other(anyhow::anyhow!("projects.id as stored: {e}")))?;
        Ok(Self {
            id,
            project: Project {
                name: row.name,
                weight: row.weight,
                quotas: Quotas {
                    activities: row.quota_activities,
                    events_per_second: row.quota_events_per_second,
                    events_burst: row.quota_events_burst,
                    runs_running: row.quota_runs_running,
                    sources: row.quota_sources,
                    subscriptions: row.quota_subscriptions,
                    runs_guaranteed: row.runs_guaranteed,
                },
            },
            version: row.version,
            created_at: row.created_at,
            updated_at: row.updated_at,
        })
    }
}

/// A project as an audit entry keeps it.
fn snapshot(record: &ProjectRecord) -> serde_json::Value {
    let q = record.project.quotas;
    serde_json::json!({
        "name": record.project.name,
        "weight": record.project.weight,
        "quotas": {
            "activities": q.activities,
            "events_per_second": q.events_per_second,
            "events_burst": q.events_burst,
            "runs_running": q.runs_running,
            "sources": q.sources,
            "subscriptions": q.subscriptions,
            "runs_guaranteed": q.runs_guaranteed,
        },
        "version": record.version,
    })
}

/// The project's current form, locked for the write that follows.
async fn locked(
    conn: &mut sqlx::PgConnection,
    id: &ProjectId,
) -> StoreResult<Option<ProjectRecord>> {
    sqlx::query_as!(
        ProjectRow,
        "SELECT id, name, weight, quota_activities, quota_events_per_second,
             quota_events_burst, quota_runs_running, quota_sources, quota_subscriptions,
             runs_guaranteed, version, created_at, updated_at
         FROM projects WHERE id = $1 AND deleted_at IS NULL FOR UPDATE",
        id.as_str(),
    )
    .fetch_optional(conn)
    .await?
    .map(TryInto::try_into)
    .transpose()
}

#[derive(Clone)]
pub struct ProjectStore {
    pool: PgPool,
}

impl ProjectStore {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }

    /// Creates the project; its ID taken (now or by a deleted project) is
    /// a conflict.
    pub async fn create(
        &self,
        id: &ProjectId,
        project: &Project,
        actor: &Actor,
    ) -> StoreResult<ProjectRecord> {
        let q = project.quotas;
        let mut tx = self.pool.begin().await?;
        let record: ProjectRecord = sqlx::query_as!(
            ProjectRow,
            "INSERT INTO projects (id, name, weight, quota_activities, quota_events_per_second,
                 quota_events_burst, quota_runs_running, quota_sources, quota_subscriptions,
                 runs_guaranteed)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
             RETURNING id, name, weight, quota_activities, quota_events_per_second,
                 quota_events_burst, quota_runs_running, quota_sources, quota_subscriptions,
                 runs_guaranteed, version, created_at, updated_at",
            id.as_str(),
            project.name,
            project.weight,
            q.activities,
            q.events_per_second,
            q.events_burst,
            q.runs_running,
            q.sources,
            q.subscriptions,
            q.runs_guaranteed,
        )
        .fetch_one(&mut *tx)
        .await?
        .try_into()?;
        let note = Note::definition(Subject::project(id.as_str()), None, Some(snapshot(&record)));
        audit::append(&mut tx, actor, &note).await?;
        tx.commit().await?;
        Ok(record)
    }

    /// Creates the project under `id`, or replaces it at a new version:
    /// whether it was created comes back with it. The ID of a deleted
    /// project is a conflict.
    pub async fn upsert(
        &self,
        id: &ProjectId,
        project: &Project,
        actor: &Actor,
    ) -> StoreResult<(ProjectRecord, bool)> {
        let q = project.quotas;
        let mut tx = self.pool.begin().await?;
        let before = locked(&mut tx, id).await?;
        let row = sqlx::query!(
            r#"INSERT INTO projects AS p (id, name, weight, quota_activities,
                 quota_events_per_second, quota_events_burst, quota_runs_running,
                 quota_sources, quota_subscriptions, runs_guaranteed)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
             ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, weight = EXCLUDED.weight,
                 quota_activities = EXCLUDED.quota_activities,
                 quota_events_per_second = EXCLUDED.quota_events_per_second,
                 quota_events_burst = EXCLUDED.quota_events_burst,
                 quota_runs_running = EXCLUDED.quota_runs_running,
                 quota_sources = EXCLUDED.quota_sources,
                 quota_subscriptions = EXCLUDED.quota_subscriptions,
                 runs_guaranteed = EXCLUDED.runs_guaranteed,
                 version = p.version + 1, updated_at = now()
               WHERE p.deleted_at IS NULL
             RETURNING id, name, weight, quota_activities, quota_events_per_second,
                 quota_events_burst, quota_runs_running, quota_sources, quota_subscriptions,
                 runs_guaranteed, version, created_at, updated_at, (xmax = 0) AS "created!""#,
            id.as_str(),
            project.name,
            project.weight,
            q.activities,
            q.events_per_second,
            q.events_burst,
            q.runs_running,
            q.sources,
            q.subscriptions,
            q.runs_guaranteed,
        )
        .fetch_optional(&mut *tx)
        .await?
        .ok_or_else(|| StoreError::Conflict(deleted_id(id)))?;
        let created = row.created;
        let record = ProjectRow {
            id: row.id,
            name: row.name,
            weight: row.weight,
            quota_activities: row.quota_activities,
            quota_events_per_second: row.quota_events_per_second,
            quota_events_burst: row.quota_events_burst,
            quota_runs_running: row.quota_runs_running,
            quota_sources: row.quota_sources,
            quota_subscriptions: row.quota_subscriptions,
            runs_guaranteed: row.runs_guaranteed,
            version: row.version,
            created_at: row.created_at,
            updated_at: row.updated_at,
        };
        let record: ProjectRecord = record.try_into()?;
        let note = Note::definition(
            Subject::project(id.as_str()),
            before.as_ref().map(snapshot),
            Some(snapshot(&record)),
        );
        audit::append(&mut tx, actor, &note).await?;
        tx.commit().await?;
        Ok((record, created))
    }

    pub async fn get(&self, id: &ProjectId) -> StoreResult<ProjectRecord> {
        sqlx::query_as!(
            ProjectRow,
            "SELECT id, name, weight, quota_activities, quota_events_per_second,
                 quota_events_burst, quota_runs_running, quota_sources, quota_subscriptions,
                 runs_guaranteed, version, created_at, updated_at
             FROM projects WHERE id = $1 AND deleted_at IS NULL",
            id.as_str(),
        )
        .fetch_optional(&self.pool)
        .await?
        .ok_or(StoreError::NotFound)?
        .try_into()
    }

    /// Newest first, after the keyset `after`.
    pub async fn list(
        &self,
        after: Option<(DateTime<Utc>, String)>,
        limit: i64,
    ) -> StoreResult<Vec<ProjectRecord>> {
        let (at, id) = after.unzip();
        sqlx::query_as!(
            ProjectRow,
            "SELECT id, name, weight, quota_activities, quota_events_per_second,
                 quota_events_burst, quota_runs_running, quota_sources, quota_subscriptions,
                 runs_guaranteed, version, created_at, updated_at
             FROM projects
             WHERE deleted_at IS NULL
               AND ($1::timestamptz IS NULL OR (created_at, id) < ($1, $2))
             ORDER BY created_at DESC, id DESC LIMIT $3",
            at,
            id,
            limit,
        )
        .fetch_all(&self.pool)
        .await?
        .into_iter()
        .map(TryInto::try_into)
        .collect()
    }

    /// Replaces the project when it is at the version `expect` names (any
    /// version for `Expect::Exists`); absent, it is a version mismatch.
    pub async fn update(
        &self,
        id: &ProjectId,
        expect: Expect,
        project: &Project,
        actor: &Actor,
    ) -> StoreResult<ProjectRecord> {
        let q = project.quotas;
        let mut tx = self.pool.begin().await?;
        let before = locked(&mut tx, id).await?;
        let updated = sqlx::query_as!(
            ProjectRow,
            "UPDATE projects SET name = $2, weight = $3, quota_activities = $4,
                 quota_events_per_second = $5, quota_events_burst = $6,
                 quota_runs_running = $7, quota_sources = $8, quota_subscriptions = $9,
                 runs_guaranteed = $11, version = version + 1, updated_at = now()
             WHERE id = $1 AND deleted_at IS NULL AND ($10::bigint IS NULL OR version = $10)
             RETURNING id, name, weight, quota_activities, quota_events_per_second,
                 quota_events_burst, quota_runs_running, quota_sources, quota_subscriptions,
                 runs_guaranteed, version, created_at, updated_at",
            id.as_str(),
            project.name,
            project.weight,
            q.activities,
            q.events_per_second,
            q.events_burst,
            q.runs_running,
            q.sources,
            q.subscriptions,
            expect.version(),
            q.runs_guaranteed,
        )
        .fetch_optional(&mut *tx)
        .await?;
        let Some(row) = updated else {
            drop(tx);
            return Err(self.mismatch(id).await);
        };
        let record: ProjectRecord = row.try_into()?;
        let note = Note::definition(
            Subject::project(id.as_str()),
            before.as_ref().map(snapshot),
            Some(snapshot(&record)),
        );
        audit::append(&mut tx, actor, &note).await?;
        tx.commit().await?;
        Ok(record)
    }

    /// Why a conditional write touched nothing: the current version, or
    /// version 0 for a project that is not there.
    async fn mismatch(&self, id: &ProjectId) -> StoreError {
        match sqlx::query_scalar!(
            "SELECT version FROM projects WHERE id = $1 AND deleted_at IS NULL",
            id.as_str()
        )
        .fetch_optional(&self.pool)
        .await
        {
            Ok(current) => StoreError::VersionMismatch {
                current: current.unwrap_or(0),
            },
            Err(err) => err.into(),
        }
    }

    /// Deletes the project if it owns nothing live; otherwise leaves it and
    /// says what it owns. The row is kept, marked deleted (see the
    /// migration). The project is locked for the count, so a key or row
    /// naming it that commits first is counted.
    pub async fn delete(
        &self,
        id: &ProjectId,
        expect: Expect,
        actor: &Actor,
    ) -> StoreResult<Option<Owned>> {
        let mut tx = self.pool.begin().await?;
        let before = locked(&mut tx, id).await?.ok_or(StoreError::NotFound)?;
        let version = before.version;
        if let Some(expected) = expect.version()
            && expected != version
        {
            return Err(StoreError::VersionMismatch { current: version });
        }
        let owned = sqlx::query!(
            r#"SELECT
                 (SELECT count(*) FROM activities
                   WHERE project_id = $1 AND deleted_at IS NULL) AS "activities!",
                 (SELECT count(*) FROM sources WHERE project_id = $1) AS "sources!",
                 (SELECT count(*) FROM subscriptions
                   WHERE project_id = $1 AND deleted_at IS NULL) AS "subscriptions!",
                 (SELECT count(*) FROM calendars WHERE project_id = $1) AS "calendars!",
                 (SELECT count(*) FROM api_keys
                   WHERE project_id = $1 AND revoked_at IS NULL) AS "keys!""#,
            id.as_str(),
        )
        .fetch_one(&mut *tx)
        .await?;
        let owned = Owned {
            activities: owned.activities,
            sources: owned.sources,
            subscriptions: owned.subscriptions,
            calendars: owned.calendars,
            keys: owned.keys,
        };
        if !owned.is_empty() {
            return Ok(Some(owned));
        }
        sqlx::query!(
            "UPDATE projects SET deleted_at = now(), version = version + 1, updated_at = now()
             WHERE id = $1",
            id.as_str(),
        )
        .execute(&mut *tx)
        .await?;
        let note = Note::definition(Subject::project(id.as_str()), Some(snapshot(&before)), None);
        audit::append(&mut tx, actor, &note).await?;
        tx.commit().await?;
        Ok(None)
    }
}

/// Checks `quota` of `project` in the transaction about to create one more
/// of what it counts. The project row stays locked until the transaction
/// ends, so concurrent creates in the project count one after another: none
/// passes a limit another's uncommitted row already reached. (`NO KEY
/// UPDATE` leaves other writes that only name the project, by foreign key,
/// free to proceed.)
pub(crate) async fn admit(
    conn: &mut sqlx::PgConnection,
    project: &ProjectId,
    quota: CountQuota,
) -> StoreResult<()> {
    let row = sqlx::query!(
        "SELECT quota_activities, quota_sources, quota_subscriptions FROM projects
         WHERE id = $1 AND deleted_at IS NULL FOR NO KEY UPDATE",
        project.as_str(),
    )
    .fetch_optional(&mut *conn)
    .await?
    .ok_or_else(|| StoreError::Conflict(format!("project `{project}` was deleted")))?;
    let quotas = Quotas {
        activities: row.quota_activities,
        sources: row.quota_sources,
        subscriptions: row.quota_subscriptions,
        ..Quotas::default()
    };
    if quota.limit(&quotas).is_none() {
        return Ok(());
    }
    let usage = match quota {
        CountQuota::Activities => {
            sqlx::query_scalar!(
                r#"SELECT count(*) AS "n!" FROM activities
                   WHERE project_id = $1 AND deleted_at IS NULL"#,
                project.as_str(),
            )
            .fetch_one(&mut *conn)
            .await?
        }
        CountQuota::Sources => {
            sqlx::query_scalar!(
                r#"SELECT count(*) AS "n!" FROM sources WHERE project_id = $1"#,
                project.as_str(),
            )
            .fetch_one(&mut *conn)
            .await?
        }
        CountQuota::Subscriptions => {
            sqlx::query_scalar!(
                r#"SELECT count(*) AS "n!" FROM subscriptions
                   WHERE project_id = $1 AND deleted_at IS NULL"#,
                project.as_str(),
            )
            .fetch_one(&mut *conn)
            .await?
        }
    };
    quota
        .admit(&quotas, usage)
        .map_err(StoreError::QuotaExceeded)
}

fn deleted_id(id: &ProjectId) -> String {
    format!("project `{id}` was deleted; the ID of a deleted project is not reused")
}
