//! Nominal times asked for explicitly (`backfill_requests`): a backfill's,
//! a resume's or a catch-up's, and whether Temporal has accepted them yet.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::RunStore;
use crate::StoreResult;
use crate::audit::{self, Audit};

impl RunStore {
    /// Whether a nominal time was asked for explicitly: `None` if not, else
    /// the window start the request chose for its run, if it chose one.
    pub async fn requested(
        &self,
        activity_id: Uuid,
        scheduled_for: DateTime<Utc>,
    ) -> StoreResult<Option<Option<DateTime<Utc>>>> {
        let row = sqlx::query_scalar!(
            "SELECT window_start FROM backfill_requests WHERE activity_id = $1 AND scheduled_for = $2",
            activity_id,
            scheduled_for,
        )
        .fetch_optional(&self.pool)
        .await?;
        Ok(row)
    }

    /// Records times asked for explicitly, to be handed to Temporal. Asking
    /// again for a time recorded before (a catch-up's plan, an earlier
    /// backfill) makes it undispatched again until this request's backfill
    /// is accepted.
    pub async fn request_times(
        &self,
        activity_id: Uuid,
        times: &[DateTime<Utc>],
        audit: Audit<'_>,
    ) -> StoreResult<()> {
        let mut tx = self.pool.begin().await?;
        sqlx::query!(
            "INSERT INTO backfill_requests (activity_id, scheduled_for)
             SELECT $1, t FROM unnest($2::timestamptz[]) AS t
             ON CONFLICT (activity_id, scheduled_for)
             DO UPDATE SET requested_at = now(), dispatched_at = NULL",
            activity_id,
            times,
        )
        .execute(&mut *tx)
        .await?;
        audit::append_if(&mut tx, audit).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Records the times a catch-up decided to run as asked for. Temporal
    /// already holds their fires (buffered behind the backlog), so they count
    /// as dispatched: nothing hands them over again.
    pub async fn plan_catch_up(
        &self,
        activity_id: Uuid,
        times: &[DateTime<Utc>],
    ) -> StoreResult<()> {
        sqlx::query!(
            "INSERT INTO backfill_requests (activity_id, scheduled_for, dispatched_at)
             SELECT $1, t, now() FROM unnest($2::timestamptz[]) AS t ON CONFLICT DO NOTHING",
            activity_id,
            times,
        )
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Marks requested times as accepted by Temporal.
    pub async fn mark_dispatched(
        &self,
        activity_id: Uuid,
        times: &[DateTime<Utc>],
    ) -> StoreResult<()> {
        sqlx::query!(
            "UPDATE backfill_requests SET dispatched_at = now()
             WHERE activity_id = $1 AND scheduled_for = ANY($2) AND dispatched_at IS NULL",
            activity_id,
            times,
        )
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Requested times that Temporal has not accepted yet, asked for at least
    /// `older_than` ago (younger ones may still be in their request), by
    /// activity, for live scheduled activities. Times that ran meanwhile are
    /// left out.
    pub async fn undispatched(
        &self,
        older_than: std::time::Duration,
    ) -> StoreResult<Vec<(Uuid, Vec<DateTime<Utc>>)>> {
        let rows = sqlx::query!(
            r#"SELECT b.activity_id, array_agg(b.scheduled_for ORDER BY b.scheduled_for) AS "times!"
             FROM backfill_requests b JOIN activities a ON a.id = b.activity_id
             WHERE b.dispatched_at IS NULL AND a.deleted_at IS NULL
               AND b.requested_at < now() - make_interval(secs => $1)
               AND NOT EXISTS (SELECT 1 FROM activity_runs r
                               WHERE r.activity_id = b.activity_id AND r.scheduled_for = b.scheduled_for
                                 AND r.status <> 'skipped')
             GROUP BY b.activity_id"#,
            older_than.as_secs_f64(),
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.into_iter().map(|r| (r.activity_id, r.times)).collect())
    }
}
