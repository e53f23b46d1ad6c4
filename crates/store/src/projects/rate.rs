//! The events-per-second quota's token buckets (see
//! `domain::project::rate`): one row per project, taken from atomically.

use super::ProjectStore;
use crate::StoreResult;
use acp_domain::project::ProjectId;
use acp_domain::project::rate::Taken;

impl ProjectStore {
    /// Takes up to `wanted` tokens from `project`'s bucket, refilled first
    /// by the time since the last taking; `None` when the project has no
    /// events-per-second quota. One statement: the row's lock orders the
    /// takings of every replica, so no two take the same token.
    pub async fn take_event_tokens(
        &self,
        project: &ProjectId,
        wanted: i64,
    ) -> StoreResult<Option<Taken>> {
        // `level` is the refilled bucket, computed in each SET from the
        // row as it was (a SET sees the old row, not the other SETs).
        let row = sqlx::query!(
            r#"WITH q AS (
                 SELECT id, quota_events_per_second AS rate,
                        coalesce(quota_events_burst, quota_events_per_second) AS burst
                 FROM projects
                 WHERE id = $1 AND quota_events_per_second IS NOT NULL AND deleted_at IS NULL
             )
             INSERT INTO project_event_buckets AS b (project_id, tokens, refilled_at, granted)
             SELECT q.id, q.burst - least($2::bigint, q.burst), now(), least($2::bigint, q.burst) FROM q
             ON CONFLICT (project_id) DO UPDATE SET
                 granted = least($2::bigint, floor(least((SELECT burst FROM q),
                     b.tokens + extract(epoch FROM now() - b.refilled_at)::float8
                                * (SELECT rate FROM q))))::bigint,
                 tokens = least((SELECT burst FROM q),
                     b.tokens + extract(epoch FROM now() - b.refilled_at)::float8
                                * (SELECT rate FROM q))
                   - least($2::bigint, floor(least((SELECT burst FROM q),
                     b.tokens + extract(epoch FROM now() - b.refilled_at)::float8
                                * (SELECT rate FROM q)))),
                 refilled_at = now()
             RETURNING b.granted, b.tokens, (SELECT rate FROM q) AS "rate!",
                       (SELECT burst FROM q) AS "burst!""#,
            project.as_str(),
            wanted,
        )
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(|r| Taken {
            wanted,
            granted: r.granted,
            left: r.tokens,
            rate: r.rate,
            burst: r.burst,
        }))
    }
}
