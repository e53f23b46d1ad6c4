//! What a project uses now, counted from the tables that name it.

use std::collections::HashMap;

use super::ProjectStore;
use crate::StoreResult;
use acp_domain::project::{ProjectId, Usage};

impl ProjectStore {
    /// What each of `ids` uses now: live activities, sources, live
    /// subscriptions, runs running (from the running runs' index) and events
    /// received in the last minute (from the events' time index).
    pub async fn usage(&self, ids: &[ProjectId]) -> StoreResult<HashMap<ProjectId, Usage>> {
        let names: Vec<String> = ids.iter().map(|id| id.as_str().to_owned()).collect();
        let rows = sqlx::query!(
            r#"SELECT p.id AS "id!",
                 (SELECT count(*) FROM activities a
                   WHERE a.project_id = p.id AND a.deleted_at IS NULL) AS "activities!",
                 (SELECT count(*) FROM sources s WHERE s.project_id = p.id) AS "sources!",
                 (SELECT count(*) FROM subscriptions s
                   WHERE s.project_id = p.id AND s.deleted_at IS NULL) AS "subscriptions!",
                 (SELECT count(*) FROM activity_runs r JOIN activities a ON a.id = r.activity_id
                   WHERE r.status = 'running' AND a.project_id = p.id) AS "runs_running!",
                 (SELECT count(*) FROM events e
                   WHERE e.received_at > now() - interval '1 minute'
                     AND e.project_id = p.id) AS "events_last_minute!"
             FROM unnest($1::text[]) AS p (id)"#,
            &names,
        )
        .fetch_all(&self.pool)
        .await?;
        let mut usage = HashMap::new();
        for row in rows {
            if let Ok(id) = ProjectId::parse(&row.id) {
                usage.insert(
                    id,
                    Usage {
                        activities: row.activities,
                        sources: row.sources,
                        subscriptions: row.subscriptions,
                        runs_running: row.runs_running,
                        events_last_minute: row.events_last_minute,
                    },
                );
            }
        }
        Ok(usage)
    }
}
