//! `sources`, their live status, their rejected messages, and conflicting
//! re-deliveries of events.

use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use super::{StoreError, StoreResult, Text, audit};
use acp_domain::audit::{Actor, Note, Subject};
use acp_domain::event::ConflictRecord;
use acp_domain::message::RejectReason;
use acp_domain::project::{CountQuota, ProjectId};
use acp_domain::query::Expect;
use acp_domain::source::{RejectionRecord, SourceKind, SourceRecord, StatusRecord, StatusReport};

/// A source as written by a create or an update.
pub struct SourceWrite<'a> {
    pub name: &'a str,
    pub kind: SourceKind,
    pub config: &'a serde_json::Value,
    pub secret_ref: Option<&'a str>,
    pub enabled: bool,
}

/// A `sources` row, read into the domain's [`SourceRecord`].
struct SourceRow {
    id: Uuid,
    project_id: String,
    name: String,
    kind: Text<SourceKind>,
    config: serde_json::Value,
    secret_ref: Option<String>,
    enabled: bool,
    version: i64,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl TryFrom<SourceRow> for SourceRecord {
    type Error = StoreError;

    fn try_from(row: SourceRow) -> StoreResult<Self> {
        let project = ProjectId::parse(&row.project_id)
            .map_err(|e| StoreError::Other(anyhow::anyhow!("sources.project_id: {e}")))?;
        Ok(Self {
            id: row.id,
            project,
            name: row.name,
            kind: row.kind.0,
            config: row.config,
            secret_ref: row.secret_ref,
            enabled: row.enabled,
            version: row.version,
            created_at: row.created_at,
            updated_at: row.updated_at,
        })
    }
}

/// A `source_rejections` row, read into the domain's [`RejectionRecord`].
struct RejectionRow {
    id: i64,
    source_id: Uuid,
    received_at: DateTime<Utc>,
    reason: Text<RejectReason>,
    detail: String,
    size: i32,
    raw: Vec<u8>,
    headers: serde_json::Value,
}

impl From<RejectionRow> for RejectionRecord {
    fn from(row: RejectionRow) -> Self {
        Self {
            id: row.id,
            source_id: row.source_id,
            received_at: row.received_at,
            reason: row.reason.0,
            detail: row.detail,
            size: row.size,
            raw: row.raw,
            headers: row.headers,
        }
    }
}

#[derive(Clone)]
pub struct SourceStore {
    pool: PgPool,
}

/// A source's row as an audit entry keeps it (locked for the write that
/// reads it); `None` when there is none.
async fn snapshot(conn: &mut PgConnection, id: Uuid) -> StoreResult<Option<serde_json::Value>> {
    Ok(sqlx::query_scalar!(
        r#"SELECT to_jsonb(s) - 'created_at' - 'updated_at' AS "row!" FROM sources s
           WHERE id = $1 FOR UPDATE"#,
        id,
    )
    .fetch_optional(conn)
    .await?)
}

/// Appends the entry of a write from `before` to the source as it is now.
async fn audit_write(
    conn: &mut PgConnection,
    actor: &Actor,
    id: Uuid,
    before: Option<serde_json::Value>,
) -> StoreResult<()> {
    let after = snapshot(conn, id).await?;
    let note = Note::definition(Subject::source(id), before, after);
    audit::append(conn, actor, &note).await
}

impl SourceStore {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }

    pub async fn create(
        &self,
        id: Uuid,
        source: &SourceWrite<'_>,
        actor: &Actor,
    ) -> StoreResult<SourceRecord> {
        let mut tx = self.pool.begin().await?;
        crate::projects::admit(&mut tx, &actor.project, CountQuota::Sources).await?;
        let record: SourceRecord = sqlx::query_as!(
            SourceRow,
            r#"INSERT INTO sources (id, name, kind, config, secret_ref, enabled, project_id)
             VALUES ($1, $2, $3, $4, $5, $6, $7)
             RETURNING id, project_id, name, kind AS "kind: _", config, secret_ref, enabled, version,
                 created_at, updated_at"#,
            id,
            source.name,
            source.kind.as_str(),
            source.config,
            source.secret_ref,
            source.enabled,
            actor.project.as_str(),
        )
        .fetch_one(&mut *tx)
        .await?
        .try_into()?;
        audit_write(&mut tx, actor, id, None).await?;
        tx.commit().await?;
        Ok(record)
    }

    /// The project's source of this ID.
    pub async fn get(&self, project: &ProjectId, id: Uuid) -> StoreResult<SourceRecord> {
        sqlx::query_as!(
            SourceRow,
            r#"SELECT id, project_id, name, kind AS "kind: _", config, secret_ref, enabled, version,
                 created_at, updated_at
             FROM sources WHERE id = $1 AND project_id = $2"#,
            id,
            project.as_str(),
        )
        .fetch_optional(&self.pool)
        .await?
        .ok_or(StoreError::NotFound)?
        .try_into()
    }

    /// The project's sources, newest first, after the keyset `after`.
    pub async fn list(
        &self,
        project: &ProjectId,
        after: Option<(DateTime<Utc>, Uuid)>,
        limit: i64,
    ) -> StoreResult<Vec<SourceRecord>> {
        let (at, id) = after.unzip();
        sqlx::query_as!(
            SourceRow,
            r#"SELECT id, project_id, name, kind AS "kind: _", config, secret_ref, enabled, version,
                 created_at, updated_at
             FROM sources
             WHERE project_id = $4 AND ($1::timestamptz IS NULL OR (created_at, id) < ($1, $2))
             ORDER BY created_at DESC, id DESC LIMIT $3"#,
            at,
            id,
            limit,
            project.as_str(),
        )
        .fetch_all(&self.pool)
        .await?
        .into_iter()
        .map(TryInto::try_into)
        .collect()
    }

    pub async fn enabled(&self) -> StoreResult<Vec<SourceRecord>> {
        sqlx::query_as!(
            SourceRow,
            r#"SELECT id, project_id, name, kind AS "kind: _", config, secret_ref, enabled, version,
                 created_at, updated_at
             FROM sources WHERE enabled ORDER BY id"#
        )
        .fetch_all(&self.pool)
        .await?
        .into_iter()
        .map(TryInto::try_into)
        .collect()
    }

    async fn check(&self, project: &ProjectId, id: Uuid, expect: Expect) -> StoreResult<()> {
        let current = self.get(project, id).await?;
        match expect {
            Expect::Version(v) if v != current.version => Err(StoreError::VersionMismatch {
                current: current.version,
            }),
            _ => Ok(()),
        }
    }

    pub async fn update(
        &self,
        id: Uuid,
        expect: Expect,
        source: &SourceWrite<'_>,
        actor: &Actor,
    ) -> StoreResult<SourceRecord> {
        let version = match expect {
            Expect::Version(v) => Some(v),
            _ => None,
        };
        let mut tx = self.pool.begin().await?;
        let before = snapshot(&mut tx, id).await?;
        let updated = sqlx::query_as!(
            SourceRow,
            r#"UPDATE sources SET name = $2, config = $3, secret_ref = $4, enabled = $5,
                 version = version + 1, updated_at = now()
             WHERE id = $1 AND ($6::bigint IS NULL OR version = $6) AND project_id = $7
             RETURNING id, project_id, name, kind AS "kind: _", config, secret_ref, enabled, version,
                 created_at, updated_at"#,
            id,
            source.name,
            source.config,
            source.secret_ref,
            source.enabled,
            version,
            actor.project.as_str(),
        )
        .fetch_optional(&mut *tx)
        .await?;
        match updated {
            Some(record) => {
                audit_write(&mut tx, actor, id, before).await?;
                tx.commit().await?;
                record.try_into()
            }
            None => {
                drop(tx);
                self.check(&actor.project, id, expect)
                    .await
                    .and(Err(StoreError::NotFound))
            }
        }
    }

    pub async fn delete(&self, id: Uuid, expect: Expect, actor: &Actor) -> StoreResult<()> {
        let version = match expect {
            Expect::Version(v) => Some(v),
            _ => None,
        };
        let mut tx = self.pool.begin().await?;
        let before = snapshot(&mut tx, id).await?;
        let deleted = sqlx::query!(
            "DELETE FROM sources
             WHERE id = $1 AND ($2::bigint IS NULL OR version = $2) AND project_id = $3",
            id,
            version,
            actor.project.as_str(),
        )
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if deleted == 0 {
            drop(tx);
            self.check(&actor.project, id, expect).await?;
            return Err(StoreError::NotFound);
        }
        audit_write(&mut tx, actor, id, before).await?;
        tx.commit().await?;
        Ok(())
    }

    pub async fn status(&self, id: Uuid) -> StoreResult<Option<StatusRecord>> {
        Ok(sqlx::query_as!(
            StatusRecord,
            "SELECT connected, pending, last_error, last_error_at, accepted, rejected, conflicts,
                 reported_by, reported_at
             FROM source_status WHERE source_id = $1",
            id,
        )
        .fetch_optional(&self.pool)
        .await?)
    }

    /// Adds a consumer's report; a source deleted meanwhile is ignored.
    pub async fn report(&self, id: Uuid, by: &str, report: &StatusReport) -> StoreResult<()> {
        sqlx::query!(
            "INSERT INTO source_status AS s (source_id, connected, pending, last_error, last_error_at,
                 accepted, rejected, conflicts, reported_by, reported_at)
             SELECT $1, $2, $3, $4, CASE WHEN $4::text IS NULL THEN NULL ELSE now() END, $5, $6, $7, $8, now()
             WHERE EXISTS (SELECT 1 FROM sources WHERE id = $1)
             ON CONFLICT (source_id) DO UPDATE SET
                 connected = EXCLUDED.connected,
                 pending = COALESCE(EXCLUDED.pending, s.pending),
                 last_error = COALESCE(EXCLUDED.last_error, s.last_error),
                 last_error_at = COALESCE(EXCLUDED.last_error_at, s.last_error_at),
                 accepted = s.accepted + EXCLUDED.accepted,
                 rejected = s.rejected + EXCLUDED.rejected,
                 conflicts = s.conflicts + EXCLUDED.conflicts,
                 reported_by = EXCLUDED.reported_by,
                 reported_at = now()",
            id,
            report.connected,
            report.pending,
            report.error.as_deref(),
            report.accepted,
            report.rejected,
            report.conflicts,
            by,
        )
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub async fn reject(
        &self,
        source_id: Uuid,
        reason: RejectReason,
        detail: &str,
        size: usize,
        raw: &[u8],
        headers: &serde_json::Value,
    ) -> StoreResult<()> {
        sqlx::query!(
            "INSERT INTO source_rejections (source_id, reason, detail, size, raw, headers)
             SELECT $1, $2, $3, $4, $5, $6 WHERE EXISTS (SELECT 1 FROM sources WHERE id = $1)",
            source_id,
            reason.as_str(),
            detail,
            i32::try_from(size).unwrap_or(i32::MAX),
            raw,
            headers,
        )
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// A source's rejected messages, newest first, below the keyset `after`.
    pub async fn rejections(
        &self,
        source_id: Uuid,
        after: Option<i64>,
        limit: i64,
    ) -> StoreResult<Vec<RejectionRecord>> {
        Ok(sqlx::query_as!(
            RejectionRow,
            r#"SELECT id, source_id, received_at, reason AS "reason: _", detail, size, raw, headers
             FROM source_rejections
             WHERE source_id = $1 AND ($2::bigint IS NULL OR id < $2)
             ORDER BY id DESC LIMIT $3"#,
            source_id,
            after,
            limit,
        )
        .fetch_all(&self.pool)
        .await?
        .into_iter()
        .map(Into::into)
        .collect())
    }

    #[allow(clippy::too_many_arguments)]
    pub async fn record_conflict(
        &self,
        project: &ProjectId,
        event_id: &str,
        source_id: Option<Uuid>,
        differs: &[&str],
        event_type: &str,
        source: &str,
        occurred_at: Option<DateTime<Utc>>,
        payload: &serde_json::Value,
    ) -> StoreResult<()> {
        sqlx::query!(
            "INSERT INTO event_conflicts
                 (event_id, source_id, differs, event_type, source, occurred_at, payload, project_id)
             VALUES ($1, (SELECT id FROM sources WHERE id = $2), $3, $4, $5, $6, $7, $8)",
            event_id,
            source_id,
            differs as _,
            event_type,
            source,
            occurred_at,
            payload,
            project.as_str(),
        )
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// The conflicting re-deliveries of the project's event of this ID.
    pub async fn conflicts_of(
        &self,
        project: &ProjectId,
        event_id: &str,
    ) -> StoreResult<Vec<ConflictRecord>> {
        Ok(sqlx::query_as!(
            ConflictRecord,
            "SELECT event_id, source_id, seen_at, differs, event_type, source, occurred_at, payload
             FROM event_conflicts WHERE project_id = $1 AND event_id = $2 ORDER BY id",
            project.as_str(),
            event_id,
        )
        .fetch_all(&self.pool)
        .await?)
    }
}
