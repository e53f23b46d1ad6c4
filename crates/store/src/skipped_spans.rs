//! Spans of nominal times a resume decided not to run (migration
//! `20261204010000_skipped_spans`): one row per resume, however many times.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{RunStore, StoreResult};
use acp_domain::misfire::SkipReason;
use acp_domain::resume::SkippedSpan;

/// A recorded span: `[first, last]` and why its times did not run.
pub type RecordedSpan = (DateTime<Utc>, DateTime<Utc>, SkipReason);

impl RunStore {
    /// Records a span of skipped times (a span without a reason, under
    /// `skip`, is not recorded: the pause itself says why).
    pub async fn insert_skipped_span(
        &self,
        activity_id: Uuid,
        span: &SkippedSpan,
        definition_version: i64,
    ) -> StoreResult<()> {
        let Some(reason) = span.reason else {
            return Ok(());
        };
        sqlx::query!(
            "INSERT INTO skipped_spans (activity_id, first_at, last_at, times, skip_reason, definition_version)
             VALUES ($1, $2, $3, $4, $5, $6)",
            activity_id,
            span.first,
            span.last,
            i64::try_from(span.count).unwrap_or(i64::MAX),
            reason.as_str(),
            definition_version,
        )
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// The spans of an activity that reach into `[from, to)`.
    pub async fn skipped_spans(
        &self,
        activity_id: Uuid,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
    ) -> StoreResult<Vec<RecordedSpan>> {
        let rows = sqlx::query!(
            "SELECT first_at, last_at, skip_reason FROM skipped_spans
             WHERE activity_id = $1 AND last_at >= $2 AND first_at < $3 ORDER BY first_at",
            activity_id,
            from,
            to,
        )
        .fetch_all(self.pool())
        .await?;
        rows.into_iter()
            .map(|row| {
                SkipReason::parse(&row.skip_reason)
                    .map(|r| (row.first_at, row.last_at, r))
                    .map_err(|e| super::StoreError::Other(anyhow::anyhow!(e)))
            })
            .collect()
    }

    /// The window a request chose for a requested time's run.
    pub async fn set_requested_window(
        &self,
        activity_id: Uuid,
        scheduled_for: DateTime<Utc>,
        window_start: DateTime<Utc>,
    ) -> StoreResult<()> {
        sqlx::query!(
            "UPDATE backfill_requests SET window_start = $3 WHERE activity_id = $1 AND scheduled_for = $2",
            activity_id,
            scheduled_for,
            window_start,
        )
        .execute(self.pool())
        .await?;
        Ok(())
    }
}
