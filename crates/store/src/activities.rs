//! The `activities` table and its version history.

use chrono::{DateTime, Utc};
use sqlx::types::Json;
use sqlx::{FromRow, PgPool, Postgres, Transaction};
use uuid::Uuid;

use super::{StoreError, StoreResult};
use acp_domain::activity::{Activity, ActivityDefinition, SyncState, SyncStatus};
use acp_domain::project::ProjectId;
use acp_domain::query::{ActivityFilter, Expect, Keyset};

mod pauses;
mod sync;
mod writes;

/// The columns of [`ActivityRow`], for the one statement built at run time
/// (`list`); the others name them in full, checked at build time.
const COLUMNS: &str = "id, version, definition, paused, pause_note, created_at, updated_at, \
    deleted_at, sync_state, last_synced_at, last_sync_error, synced_version, schedule_conflict_token";

#[derive(FromRow)]
struct ActivityRow {
    id: Uuid,
    version: i64,
    definition: Json<ActivityDefinition>,
    paused: bool,
    pause_note: Option<String>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
    deleted_at: Option<DateTime<Utc>>,
    sync_state: String,
    last_synced_at: Option<DateTime<Utc>>,
    last_sync_error: Option<String>,
    synced_version: Option<i64>,
    schedule_conflict_token: Option<Vec<u8>>,
}

impl From<ActivityRow> for Activity {
    fn from(row: ActivityRow) -> Self {
        Activity {
            id: row.id,
            version: row.version,
            definition: row.definition.0,
            paused: row.paused,
            pause_note: row.pause_note,
            created_at: row.created_at,
            updated_at: row.updated_at,
            deleted: row.deleted_at.is_some(),
            sync: SyncStatus {
                state: SyncState::from_db(&row.sync_state),
                last_synced_at: row.last_synced_at,
                last_error: row.last_sync_error,
                synced_version: row.synced_version,
                conflict_token: row.schedule_conflict_token,
            },
        }
    }
}

pub enum CreateOutcome {
    Created(Activity),
    /// The Idempotency-Key was seen before with the same request.
    Replayed(Activity),
}

#[derive(Clone)]
pub struct ActivityStore {
    pool: PgPool,
}

impl ActivityStore {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }

    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// A live activity, or `NotFound`.
    pub async fn get(&self, id: Uuid) -> StoreResult<Activity> {
        match self.get_any(id).await? {
            Some(a) if !a.deleted => Ok(a),
            _ => Err(StoreError::NotFound),
        }
    }

    /// An activity even when soft-deleted, for run history and the reconciler.
    pub async fn get_any(&self, id: Uuid) -> StoreResult<Option<Activity>> {
        let row = sqlx::query_as!(
            ActivityRow,
            r#"SELECT id, version, definition AS "definition: _", paused, pause_note, created_at, updated_at,
                 deleted_at, sync_state, last_synced_at, last_sync_error, synced_version,
                 schedule_conflict_token
               FROM activities WHERE id = $1"#,
            id,
        )
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(Into::into))
    }

    /// Whether the activity (live or deleted) belongs to `project`. An
    /// activity's project never changes, so a check before a write holds
    /// for the write.
    pub async fn owned_by(&self, id: Uuid, project: &ProjectId) -> StoreResult<bool> {
        let owned = sqlx::query_scalar!(
            r#"SELECT EXISTS (SELECT 1 FROM activities WHERE id = $1 AND project_id = $2) AS "owned!""#,
            id,
            project.as_str(),
        )
        .fetch_one(&self.pool)
        .await?;
        Ok(owned)
    }

    /// Whether the calendar exists in `project`: a trigger may name only
    /// a calendar of its own activity's project.
    pub async fn calendar_in(&self, calendar: Uuid, project: &ProjectId) -> StoreResult<bool> {
        let found = sqlx::query_scalar!(
            r#"SELECT EXISTS (SELECT 1 FROM calendars WHERE id = $1 AND project_id = $2) AS "found!""#,
            calendar,
            project.as_str(),
        )
        .fetch_one(&self.pool)
        .await?;
        Ok(found)
    }

    #[tracing::instrument(skip(self))]
    pub async fn list(
        &self,
        filter: &ActivityFilter,
        after: Option<Keyset>,
        limit: i64,
    ) -> StoreResult<Vec<Activity>> {
        let mut qb = sqlx::QueryBuilder::<Postgres>::new(format!(
            "SELECT {COLUMNS} FROM activities WHERE deleted_at IS NULL"
        ));
        if let Some(project) = &filter.project {
            qb.push(" AND project_id = ")
                .push_bind(project.as_str().to_owned());
        }
        if let Some(t) = filter.trigger_type {
            qb.push(" AND trigger_type = ").push_bind(t.as_str());
        }
        if let Some(enabled) = filter.enabled {
            qb.push(" AND enabled = ").push_bind(enabled);
        }
        if let Some((key, value)) = &filter.label {
            let mut obj = serde_json::Map::new();
            obj.insert(key.clone(), serde_json::Value::String(value.clone()));
            qb.push(" AND labels @> ")
                .push_bind(Json(serde_json::Value::Object(obj)));
        }
        if let Some(q) = &filter.q {
            let pattern = format!("%{}%", escape_like(q));
            qb.push(" AND (name ILIKE ")
                .push_bind(pattern.clone())
                .push(" ESCAPE '\\' OR description ILIKE ")
                .push_bind(pattern)
                .push(" ESCAPE '\\')");
        }
        if let Some((created_at, id)) = after {
            qb.push(" AND (created_at, id) < (")
                .push_bind(created_at)
                .push(", ")
                .push_bind(id)
                .push(")");
        }
        qb.push(" ORDER BY created_at DESC, id DESC LIMIT ")
            .push_bind(limit);
        let rows: Vec<ActivityRow> = qb.build_query_as().fetch_all(&self.pool).await?;
        Ok(rows.into_iter().map(Into::into).collect())
    }
}

async fn lock_live(tx: &mut Transaction<'_, Postgres>, id: Uuid) -> StoreResult<Activity> {
    let row = sqlx::query_as!(
        ActivityRow,
        r#"SELECT id, version, definition AS "definition: _", paused, pause_note, created_at, updated_at,
             deleted_at, sync_state, last_synced_at, last_sync_error, synced_version,
             schedule_conflict_token
           FROM activities WHERE id = $1 AND deleted_at IS NULL FOR UPDATE"#,
        id,
    )
    .fetch_optional(&mut **tx)
    .await?;
    row.map(Into::into).ok_or(StoreError::NotFound)
}

async fn record_version(
    tx: &mut Transaction<'_, Postgres>,
    id: Uuid,
    version: i64,
    def: &ActivityDefinition,
) -> StoreResult<()> {
    sqlx::query!(
        "INSERT INTO activity_versions (activity_id, version, definition) VALUES ($1, $2, $3)
         ON CONFLICT (activity_id, version) DO NOTHING",
        id,
        version,
        Json(def) as _,
    )
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Escapes `%`, `_` and `\` so user text matches literally in ILIKE.
fn escape_like(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}
