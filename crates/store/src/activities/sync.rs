//! Whether Temporal holds what an activity wants: the outcome of each sync,
//! and what the reconciler must look at.

use uuid::Uuid;

use super::{ActivityRow, ActivityStore};
use crate::StoreResult;
use acp_domain::activity::{Activity, SyncState};

impl ActivityStore {
    /// Records the outcome of bringing Temporal to `version`. A stale outcome
    /// (the activity moved on meanwhile) is dropped: the newer write syncs itself.
    #[tracing::instrument(skip(self, conflict_token))]
    pub async fn record_sync(
        &self,
        id: Uuid,
        version: i64,
        state: SyncState,
        error: Option<&str>,
        conflict_token: Option<&[u8]>,
    ) -> StoreResult<bool> {
        let result = sqlx::query!(
            "UPDATE activities SET
                 sync_state = $3,
                 last_sync_error = $4,
                 last_synced_at = CASE WHEN $3 IN ('synced', 'not_applicable') THEN now() ELSE last_synced_at END,
                 synced_version = CASE WHEN $3 IN ('synced', 'not_applicable') THEN $2 ELSE synced_version END,
                 schedule_conflict_token = CASE WHEN $3 = 'synced' THEN $5 ELSE schedule_conflict_token END
             WHERE id = $1 AND version = $2",
            id,
            version,
            state.as_str(),
            error,
            conflict_token,
        )
        .execute(&self.pool)
        .await?;
        Ok(result.rows_affected() == 1)
    }

    /// Everything the reconciler must look at: live activities, and deleted ones
    /// whose schedule may still exist. Those not in sync come first, then the
    /// synced ones by how long ago they were last checked.
    pub async fn reconcile_candidates(&self) -> StoreResult<Vec<Activity>> {
        let rows = sqlx::query_as!(
            ActivityRow,
            r#"SELECT id, version, definition AS "definition: _", paused, pause_note, created_at, updated_at,
                 deleted_at, sync_state, last_synced_at, last_sync_error, synced_version,
                 schedule_conflict_token
             FROM activities
             WHERE deleted_at IS NULL OR sync_state <> 'not_applicable'
             ORDER BY (sync_state IN ('synced', 'not_applicable')
                       AND synced_version IS NOT DISTINCT FROM version),
                      last_synced_at NULLS FIRST, id"#
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.into_iter().map(Into::into).collect())
    }
}
