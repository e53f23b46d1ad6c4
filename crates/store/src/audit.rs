//! The audit log (`audit_log`): appended by each write in its own
//! transaction ([`append`]), read newest first by `GET /v1/audit`.

use sqlx::{PgConnection, PgPool};

use crate::StoreResult;
use acp_domain::audit::{Actor, AuditEntry, AuditFilter, Note};
use acp_domain::project::ProjectId;

/// Appends `note` as `actor`'s entry on `conn`, which is the write's own
/// transaction: the entry commits or rolls back with the write. A key that
/// authenticated without its name being read (a cached key) is named from
/// its row.
pub async fn append(conn: &mut PgConnection, actor: &Actor, note: &Note) -> StoreResult<()> {
    sqlx::query!(
        "INSERT INTO audit_log (key_id, key_name, operation, subject_type, subject_id,
             request_id, change, project_id)
         VALUES ($1, COALESCE($2, (SELECT name FROM api_keys WHERE id = $1)), $3, $4, $5, $6, $7,
             $8)",
        actor.key_id,
        actor.key_name,
        actor.operation,
        note.subject.kind,
        note.subject.id,
        actor.request_id,
        note.change,
        actor.project.as_str(),
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// The entry a write appends when its caller asks for one: the writes that
/// serve a single request audit there, the same write made for each item of
/// a bulk action or by a background pass does not.
pub type Audit<'a> = Option<(&'a Actor, &'a Note)>;

/// Appends `audit`'s entry, if there is one, on the write's transaction.
pub async fn append_if(conn: &mut PgConnection, audit: Audit<'_>) -> StoreResult<()> {
    match audit {
        Some((actor, note)) => append(conn, actor, note).await,
        None => Ok(()),
    }
}

#[derive(Clone)]
pub struct AuditStore {
    pool: PgPool,
}

impl AuditStore {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }

    /// Appends an entry in a transaction of its own: for the writes that
    /// make no other PostgreSQL write in the request (a manual trigger is a
    /// Temporal start), and for a bulk action's summary.
    pub async fn record(&self, actor: &Actor, note: &Note) -> StoreResult<()> {
        let mut conn = self.pool.acquire().await?;
        append(&mut conn, actor, note).await
    }

    /// The project's entries matching `filter`, newest first, with `seq`
    /// below `before`.
    pub async fn list(
        &self,
        project: &ProjectId,
        filter: &AuditFilter,
        before: Option<i64>,
        limit: i64,
    ) -> StoreResult<Vec<AuditEntry>> {
        let rows = sqlx::query_as!(
            AuditEntry,
            "SELECT seq, at, key_id, key_name, operation, subject_type, subject_id, request_id,
                 change
             FROM audit_log
             WHERE project_id = $9 AND ($1::bigint IS NULL OR seq < $1)
               AND ($2::uuid IS NULL OR key_id = $2)
               AND ($3::text IS NULL OR operation = $3)
               AND ($4::text IS NULL OR subject_type = $4)
               AND ($5::text IS NULL OR subject_id = $5)
               AND ($6::timestamptz IS NULL OR at >= $6)
               AND ($7::timestamptz IS NULL OR at < $7)
             ORDER BY seq DESC
             LIMIT $8",
            before,
            filter.key_id,
            filter.operation,
            filter.subject_type,
            filter.subject_id,
            filter.since,
            filter.until,
            limit,
            project.as_str(),
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(rows)
    }
}
