//! Leasing pending dispatches in fair order (see `domain::fair_share`):
//! a bounded read of each activity's oldest pending rows and of what each
//! competing project has in flight, the order decided in the domain, then
//! the rows locked in that order.
//!
//! "In flight" includes the runs a project started in the last 10 seconds
//! that have finished already: when the admission lets only a run or two
//! start at once, runs finish faster than they pile up, and a count of
//! running runs alone would leave every project at zero, every tie to the
//! oldest row, and a burst ahead of everyone again.

use chrono::{DateTime, Utc};
use sqlx::types::Json;
use uuid::Uuid;

use super::LeasedDispatch;
use crate::StoreResult;
use crate::events::EventStore;
use acp_domain::fair_share::{self, Candidate, Load};

/// How many guaranteed runs a round looks for when the admission leaves
/// it no room.
const GUARANTEED_PER_ROUND: i64 = 8;

impl EventStore {
    /// Leases up to `room` pending dispatches whose lease (if any) lapsed,
    /// for `lease`, in fair order across projects (by weight, within
    /// guarantees and caps) and across activities within a project (each
    /// one's oldest first), and beyond `room` those within their project's
    /// guarantee (even with `room` 0); rows another dispatcher is leasing
    /// right now are skipped, not waited for. With one project pending it
    /// is oldest first per activity, taking turns.
    pub async fn lease_due(
        &self,
        room: i64,
        lease: std::time::Duration,
    ) -> StoreResult<Vec<LeasedDispatch>> {
        // At most `limit` of each activity's and of each project's: no
        // round takes more, and a cap or a guarantee only ever lowers that.
        // With no room the read still looks for guaranteed runs, a few per
        // round (the next round, soon after, takes more).
        // A FOR UPDATE cannot sit on these window functions: the rows are
        // locked by the second statement.
        let room = room.max(0);
        let limit = room.max(GUARANTEED_PER_ROUND);
        let rows = sqlx::query!(
            r#"WITH cand AS (
                 SELECT a.project_id, c.event_id, c.activity_id, c.created_at, c.turn
                 FROM activities a
                 CROSS JOIN LATERAL (
                     SELECT d.event_id, d.activity_id, d.created_at,
                            row_number() OVER (ORDER BY d.created_at) AS turn
                     FROM event_dispatches d
                     WHERE d.activity_id = a.id AND d.state = 'pending'
                       AND (d.leased_until IS NULL OR d.leased_until < now())
                     ORDER BY d.created_at LIMIT $1
                 ) c
                 -- With no room only guaranteed runs can go: the projects
                 -- that have a guarantee (usually none, or a few).
                 WHERE $2 OR a.project_id IN (SELECT id FROM projects WHERE runs_guaranteed > 0)
             ), placed AS (
                 SELECT cand.*, row_number() OVER (PARTITION BY project_id
                                                   ORDER BY turn, created_at) AS place
                 FROM cand
             ), load AS (
                 SELECT p.id, p.weight, p.runs_guaranteed, p.quota_runs_running,
                        (SELECT count(*) FROM activity_runs r JOIN activities a ON a.id = r.activity_id
                          WHERE a.project_id = p.id AND r.status = 'running'
                            AND r.trigger_type IN ('event', 'manual')
                            AND r.created_at > now() - interval '15 minutes')
                        AS running,
                        (SELECT count(*) FROM activity_runs r JOIN activities a ON a.id = r.activity_id
                          WHERE a.project_id = p.id AND r.status <> 'running'
                            AND r.trigger_type IN ('event', 'manual')
                            AND r.created_at > now() - interval '10 seconds')
                        AS finished_lately,
                        (SELECT count(*) FROM event_dispatches d JOIN activities a ON a.id = d.activity_id
                          WHERE a.project_id = p.id AND d.state = 'pending'
                            AND d.leased_until IS NOT NULL AND d.leased_until > now()
                            AND (d.debounce_until IS NULL OR d.debounce_until < now()))
                        AS leased
                 FROM projects p WHERE p.id IN (SELECT project_id FROM placed WHERE place = 1)
             )
             SELECT pl.project_id AS "project_id!", pl.event_id AS "event_id!",
                    pl.activity_id AS "activity_id!", pl.created_at AS "created_at!",
                    pl.place AS "place!", l.weight, l.runs_guaranteed, l.quota_runs_running,
                    l.running AS "running!", l.finished_lately AS "finished_lately!",
                    l.leased AS "leased!"
             FROM placed pl JOIN load l ON l.id = pl.project_id
             WHERE pl.place <= $1"#,
            limit,
            room > 0,
        )
        .fetch_all(&self.pool)
        .await?;
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        let mut projects: Vec<&str> = Vec::new();
        let mut loads: Vec<Load> = Vec::new();
        let mut candidates: Vec<Candidate<(DateTime<Utc>, usize)>> = Vec::new();
        for (i, row) in rows.iter().enumerate() {
            let project = match projects.iter().position(|p| *p == row.project_id) {
                Some(at) => at,
                None => {
                    projects.push(&row.project_id);
                    loads.push(Load {
                        weight: row.weight,
                        guaranteed: row.runs_guaranteed.map_or(0, i64::from),
                        cap: row.quota_runs_running.map(i64::from),
                        in_flight: row.running + row.leased + row.finished_lately,
                        running: row.running + row.leased,
                    });
                    loads.len() - 1
                }
            };
            candidates.push(Candidate {
                project,
                place: row.place,
                age_key: (row.created_at, i),
            });
        }
        let order = fair_share::order(&loads, &candidates)
            .take(usize::try_from(room).unwrap_or(usize::MAX));
        if order.is_empty() {
            return Ok(Vec::new());
        }
        let take = order.len() as i64;
        let event_ids: Vec<String> = order.iter().map(|&i| rows[i].event_id.clone()).collect();
        let activity_ids: Vec<Uuid> = order.iter().map(|&i| rows[i].activity_id).collect();
        let mut leased: Vec<(LeasedDispatch, i64)> = sqlx::query!(
            r#"WITH due AS (
                 SELECT d.event_id, d.activity_id, c.ord
                 FROM unnest($1::text[], $2::uuid[]) WITH ORDINALITY AS c (event_id, activity_id, ord)
                 JOIN event_dispatches d ON d.event_id = c.event_id AND d.activity_id = c.activity_id
                 WHERE d.state = 'pending' AND (d.leased_until IS NULL OR d.leased_until < now())
                 ORDER BY c.ord LIMIT $3
                 FOR UPDATE OF d SKIP LOCKED
             )
             UPDATE event_dispatches d SET leased_until = now() + $4::interval
             FROM due, events e
             WHERE d.event_id = due.event_id AND d.activity_id = due.activity_id
               AND e.project_id = d.project_id AND e.event_id = d.event_id
             RETURNING d.event_id, d.activity_id, d.workflow_id, d.definition_version,
                 e.event_type, e.source, e.occurred_at, e.payload, d.debounce_key,
                 due.ord AS "ord!""#,
            &event_ids,
            &activity_ids,
            take,
            lease as _,
        )
        .fetch_all(&self.pool)
        .await?
        .into_iter()
        .map(|r| {
            let dispatch = LeasedDispatch {
                event_id: r.event_id,
                activity_id: r.activity_id,
                workflow_id: r.workflow_id,
                definition_version: r.definition_version,
                event_type: r.event_type,
                source: r.source,
                occurred_at: r.occurred_at,
                payload: Json(r.payload),
                debounce_key: r.debounce_key,
            };
            (dispatch, r.ord)
        })
        .collect();
        // UPDATE ... RETURNING keeps no order: the fair order again.
        leased.sort_by_key(|(_, ord)| *ord);
        Ok(leased.into_iter().map(|(d, _)| d).collect())
    }
}
