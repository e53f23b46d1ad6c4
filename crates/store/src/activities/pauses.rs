//! When an activity's fires could not run: its own pauses (`activity_pauses`)
//! and Temporal's outages (`temporal_outages`), both as periods.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::writes::note;
use super::{ActivityRow, ActivityStore, lock_live, record_version};
use crate::{StoreResult, audit};
use acp_domain::activity::Activity;
use acp_domain::audit::Actor;

impl ActivityStore {
    /// Pauses or resumes (idempotently). Returns the activity and, when this
    /// call resumed it, since when it had been paused.
    #[tracing::instrument(skip(self, actor))]
    pub async fn set_paused(
        &self,
        id: Uuid,
        paused: bool,
        pause_note: Option<&str>,
        actor: &Actor,
    ) -> StoreResult<(Activity, Option<DateTime<Utc>>)> {
        let mut tx = self.pool.begin().await?;
        let current = lock_live(&mut tx, id).await?;
        let since = sqlx::query_scalar!("SELECT paused_at FROM activities WHERE id = $1", id)
            .fetch_one(&mut *tx)
            .await?;
        if current.paused == paused {
            // Already so: nothing changes, but the caller asked.
            audit::append(&mut tx, actor, &note(id, Some(&current), Some(&current))).await?;
            tx.commit().await?;
            return Ok((current, None));
        }
        let row = sqlx::query_as!(
            ActivityRow,
            r#"UPDATE activities SET paused = $2, pause_note = $3, version = version + 1, updated_at = now(),
                 paused_at = CASE WHEN $2 THEN now() ELSE NULL END, sync_state = 'pending'
             WHERE id = $1
             RETURNING id, version, definition AS "definition: _", paused, pause_note, created_at, updated_at,
                 deleted_at, sync_state, last_synced_at, last_sync_error, synced_version,
                 schedule_conflict_token"#,
            id,
            paused,
            pause_note,
        )
        .fetch_one(&mut *tx)
        .await?;
        let activity: Activity = row.into();
        record_version(&mut tx, id, activity.version, &activity.definition).await?;
        if paused {
            sqlx::query!(
                "INSERT INTO activity_pauses (activity_id, paused_at) VALUES ($1, now())",
                id,
            )
            .execute(&mut *tx)
            .await?;
        } else {
            sqlx::query!(
                "UPDATE activity_pauses SET resumed_at = now() WHERE activity_id = $1 AND resumed_at IS NULL",
                id,
            )
            .execute(&mut *tx)
            .await?;
        }
        audit::append(&mut tx, actor, &note(id, Some(&current), Some(&activity))).await?;
        tx.commit().await?;
        Ok((activity, if paused { None } else { since }))
    }

    /// Since when a live, paused activity has been paused; `None` when it
    /// is not paused.
    pub async fn paused_since(&self, id: Uuid) -> StoreResult<Option<DateTime<Utc>>> {
        let row = sqlx::query_scalar!(
            "SELECT paused_at FROM activities WHERE id = $1 AND paused AND deleted_at IS NULL",
            id,
        )
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.flatten())
    }

    /// Every pause of an activity: (paused_at, resumed_at).
    pub async fn pauses(
        &self,
        id: Uuid,
    ) -> StoreResult<Vec<(DateTime<Utc>, Option<DateTime<Utc>>)>> {
        let rows = sqlx::query!(
            "SELECT paused_at, resumed_at FROM activity_pauses WHERE activity_id = $1 ORDER BY paused_at",
            id,
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|r| (r.paused_at, r.resumed_at))
            .collect())
    }

    /// Opens an outage period, unless one is open already.
    pub async fn begin_temporal_outage(
        &self,
        since: DateTime<Utc>,
        detected: DateTime<Utc>,
    ) -> StoreResult<()> {
        sqlx::query!(
            "INSERT INTO temporal_outages (started_at, detected_at) VALUES ($1, $2)
             ON CONFLICT ((ended_at IS NULL)) WHERE ended_at IS NULL DO NOTHING",
            since,
            detected,
        )
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Closes the open outage period, if there is one.
    pub async fn end_temporal_outage(&self, at: DateTime<Utc>) -> StoreResult<()> {
        sqlx::query!(
            "UPDATE temporal_outages SET ended_at = greatest($1, started_at) WHERE ended_at IS NULL",
            at,
        )
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Outage periods that overlap `[from, to)`; an open one ends now.
    pub async fn temporal_outages(
        &self,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
    ) -> StoreResult<Vec<(DateTime<Utc>, DateTime<Utc>)>> {
        let rows = sqlx::query!(
            r#"SELECT started_at, coalesce(ended_at, now()) AS "ended_at!" FROM temporal_outages
             WHERE started_at < $2 AND coalesce(ended_at, now()) > $1 ORDER BY started_at"#,
            from,
            to,
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|r| (r.started_at, r.ended_at))
            .collect())
    }
}
