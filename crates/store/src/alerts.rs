//! `alerts`, and the facts the evaluator reads about runs and dispatches.

use chrono::{DateTime, Utc};
use sqlx::types::Json;
use sqlx::{FromRow, PgPool, Postgres, QueryBuilder};
use uuid::Uuid;

use super::{StoreResult, Text};
use acp_domain::alert::{Alert, AlertKind, Breach};
use acp_domain::notify::NotificationType;
use acp_domain::project::ProjectId;
use acp_domain::query::AlertFilter;
use acp_domain::run::RunStatus;

#[derive(FromRow)]
struct AlertRow {
    id: Uuid,
    activity_id: Uuid,
    kind: Text<AlertKind>,
    summary: String,
    detail: Json<serde_json::Value>,
    opened_at: DateTime<Utc>,
    last_seen_at: DateTime<Utc>,
    resolved_at: Option<DateTime<Utc>>,
}

impl From<AlertRow> for Alert {
    fn from(r: AlertRow) -> Self {
        Alert {
            id: r.id,
            activity_id: r.activity_id,
            kind: r.kind.0,
            summary: r.summary,
            detail: r.detail.0,
            opened_at: r.opened_at,
            last_seen_at: r.last_seen_at,
            resolved_at: r.resolved_at,
        }
    }
}

/// The columns of [`AlertRow`], for the statement built at run time (`list`).
const COLUMNS: &str =
    "id, activity_id, kind, summary, detail, opened_at, last_seen_at, resolved_at";

#[derive(Clone)]
pub struct AlertStore {
    pool: PgPool,
}

/// Records a notification of an alert in the same transaction as its change.
async fn record_notification(
    tx: &mut sqlx::Transaction<'_, Postgres>,
    kind: NotificationType,
    alert: &Alert,
) -> StoreResult<()> {
    sqlx::query!(
        "INSERT INTO notifications (type, activity_id, subject, data) VALUES ($1, $2, $3, $4)",
        kind.as_str(),
        alert.activity_id,
        alert.id.to_string(),
        serde_json::to_value(alert).unwrap_or_default(),
    )
    .execute(&mut **tx)
    .await?;
    Ok(())
}

impl AlertStore {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }

    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// Live activities with expectations, and any activity with an open
    /// alert (which may need resolving: expectations removed, activity deleted).
    pub async fn evaluation_targets(&self) -> StoreResult<Vec<Uuid>> {
        Ok(sqlx::query_scalar!(
            r#"SELECT id AS "id!" FROM activities WHERE deleted_at IS NULL AND definition ? 'alerts'
             UNION SELECT activity_id FROM alerts WHERE resolved_at IS NULL"#
        )
        .fetch_all(&self.pool)
        .await?)
    }

    /// Status of each run at a nominal time in `[from, to]`.
    pub async fn runs_at(
        &self,
        activity_id: Uuid,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
    ) -> StoreResult<Vec<(DateTime<Utc>, RunStatus)>> {
        let rows = sqlx::query!(
            r#"SELECT scheduled_for AS "scheduled_for!", status AS "status: Text<RunStatus>"
             FROM activity_runs
             WHERE activity_id = $1 AND scheduled_for >= $2 AND scheduled_for <= $3"#,
            activity_id,
            from,
            to,
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|r| (r.scheduled_for, r.status.0))
            .collect())
    }

    /// The newest nominal time that executed (not a recorded skip).
    pub async fn last_executed(&self, activity_id: Uuid) -> StoreResult<Option<DateTime<Utc>>> {
        Ok(sqlx::query_scalar!(
            "SELECT max(scheduled_for) FROM activity_runs WHERE activity_id = $1 AND status <> 'skipped'",
            activity_id,
        )
        .fetch_one(&self.pool)
        .await?)
    }

    /// When runs of the activity executed, `[started, finished)`, overlapping `[from, ∞)`.
    pub async fn busy_since(
        &self,
        activity_id: Uuid,
        from: DateTime<Utc>,
    ) -> StoreResult<Vec<(DateTime<Utc>, Option<DateTime<Utc>>)>> {
        let rows = sqlx::query!(
            r#"SELECT started_at AS "started_at!", finished_at FROM activity_runs
             WHERE activity_id = $1 AND status <> 'skipped' AND started_at IS NOT NULL
               AND (finished_at IS NULL OR finished_at >= $2)"#,
            activity_id,
            from,
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|r| (r.started_at, r.finished_at))
            .collect())
    }

    /// Runs still running: (run ID, started at).
    pub async fn running(&self, activity_id: Uuid) -> StoreResult<Vec<(Uuid, DateTime<Utc>)>> {
        let rows = sqlx::query!(
            r#"SELECT run_id, coalesce(started_at, created_at) AS "started_at!" FROM activity_runs
             WHERE activity_id = $1 AND status = 'running'"#,
            activity_id,
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.into_iter().map(|r| (r.run_id, r.started_at)).collect())
    }

    /// The `n` most recent runs that succeeded or failed, newest first.
    pub async fn recent_outcomes(
        &self,
        activity_id: Uuid,
        n: u32,
    ) -> StoreResult<Vec<(Uuid, RunStatus)>> {
        let rows = sqlx::query!(
            r#"SELECT run_id, status AS "status: Text<RunStatus>" FROM activity_runs
             WHERE activity_id = $1 AND status IN ('succeeded', 'failed')
             ORDER BY finished_at DESC NULLS LAST, run_id DESC LIMIT $2"#,
            activity_id,
            i64::from(n),
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.into_iter().map(|r| (r.run_id, r.status.0)).collect())
    }

    /// Events accepted for the activity since `since` whose run has not
    /// started: (event ID, accepted at).
    pub async fn events_waiting(
        &self,
        activity_id: Uuid,
        since: DateTime<Utc>,
    ) -> StoreResult<Vec<(String, DateTime<Utc>)>> {
        let rows = sqlx::query!(
            "SELECT d.event_id, d.created_at FROM event_dispatches d
             LEFT JOIN activity_runs r ON r.workflow_id = d.workflow_id
             WHERE d.activity_id = $1 AND d.created_at >= $2
               AND (r.run_id IS NULL OR r.status = 'skipped')
             ORDER BY d.created_at LIMIT 1000",
            activity_id,
            since,
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|r| (r.event_id, r.created_at))
            .collect())
    }

    pub async fn open_of(&self, activity_id: Uuid) -> StoreResult<Vec<Alert>> {
        let rows = sqlx::query_as!(
            AlertRow,
            r#"SELECT id, activity_id, kind AS "kind: _", summary, detail AS "detail: _", opened_at,
                 last_seen_at, resolved_at
             FROM alerts WHERE activity_id = $1 AND resolved_at IS NULL
             ORDER BY opened_at DESC, id DESC"#,
            activity_id,
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.into_iter().map(Into::into).collect())
    }

    /// Opens an alert for a breach, unless one of its kind is open already
    /// (then it only refreshes it). Returns the alert when this call opened it.
    pub async fn open(&self, activity_id: Uuid, breach: &Breach) -> StoreResult<Option<Alert>> {
        let mut tx = self.pool.begin().await?;
        let opened = sqlx::query_as!(
            AlertRow,
            r#"INSERT INTO alerts (id, activity_id, kind, summary, detail) VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (activity_id, kind) WHERE resolved_at IS NULL DO NOTHING
             RETURNING id, activity_id, kind AS "kind: _", summary, detail AS "detail: _", opened_at,
                 last_seen_at, resolved_at"#,
            Uuid::new_v4(),
            activity_id,
            breach.kind.as_str(),
            breach.summary,
            Json(&breach.detail) as _,
        )
        .fetch_optional(&mut *tx)
        .await?;
        let opened = match opened {
            Some(row) => {
                let alert = Alert::from(row);
                record_notification(&mut tx, NotificationType::AlertOpened, &alert).await?;
                Some(alert)
            }
            None => {
                sqlx::query!(
                    "UPDATE alerts SET last_seen_at = now(), summary = $3, detail = $4
                     WHERE activity_id = $1 AND kind = $2 AND resolved_at IS NULL",
                    activity_id,
                    breach.kind.as_str(),
                    breach.summary,
                    Json(&breach.detail) as _,
                )
                .execute(&mut *tx)
                .await?;
                None
            }
        };
        tx.commit().await?;
        Ok(opened)
    }

    /// Resolves an open alert. Returns it when this call resolved it.
    pub async fn resolve(&self, id: Uuid) -> StoreResult<Option<Alert>> {
        let mut tx = self.pool.begin().await?;
        let row = sqlx::query_as!(
            AlertRow,
            r#"UPDATE alerts SET resolved_at = greatest(now(), opened_at)
             WHERE id = $1 AND resolved_at IS NULL
             RETURNING id, activity_id, kind AS "kind: _", summary, detail AS "detail: _", opened_at,
                 last_seen_at, resolved_at"#,
            id,
        )
        .fetch_optional(&mut *tx)
        .await?;
        let resolved = row.map(Alert::from);
        if let Some(alert) = &resolved {
            record_notification(&mut tx, NotificationType::AlertResolved, alert).await?;
        }
        tx.commit().await?;
        Ok(resolved)
    }

    /// An alert of an activity of `project`.
    pub async fn get(&self, id: Uuid, project: &ProjectId) -> StoreResult<Alert> {
        let row = sqlx::query_as!(
            AlertRow,
            r#"SELECT id, activity_id, kind AS "kind: _", summary, detail AS "detail: _", opened_at,
                 last_seen_at, resolved_at
             FROM alerts
             WHERE id = $1 AND activity_id IN (SELECT id FROM activities WHERE project_id = $2)"#,
            id,
            project.as_str(),
        )
        .fetch_one(&self.pool)
        .await?;
        Ok(row.into())
    }

    /// The alerts of `project`'s activities, newest first, after the
    /// keyset `(opened_at, id)`.
    pub async fn list(
        &self,
        project: &ProjectId,
        filter: &AlertFilter,
        after: Option<(DateTime<Utc>, Uuid)>,
        limit: i64,
    ) -> StoreResult<Vec<Alert>> {
        let mut q: QueryBuilder<Postgres> = QueryBuilder::new(format!(
            "SELECT {COLUMNS} FROM alerts \
             WHERE activity_id IN (SELECT id FROM activities WHERE project_id = "
        ));
        q.push_bind(project.as_str().to_owned()).push(")");
        if let Some(id) = filter.activity_id {
            q.push(" AND activity_id = ").push_bind(id);
        }
        if let Some(kind) = filter.kind {
            q.push(" AND kind = ").push_bind(kind.as_str());
        }
        match filter.open {
            Some(true) => {
                q.push(" AND resolved_at IS NULL");
            }
            Some(false) => {
                q.push(" AND resolved_at IS NOT NULL");
            }
            None => {}
        }
        if let Some(from) = filter.opened_from {
            q.push(" AND opened_at >= ").push_bind(from);
        }
        if let Some(to) = filter.opened_to {
            q.push(" AND opened_at < ").push_bind(to);
        }
        if let Some((at, id)) = after {
            q.push(" AND (opened_at, id) < (")
                .push_bind(at)
                .push(", ")
                .push_bind(id)
                .push(")");
        }
        q.push(" ORDER BY opened_at DESC, id DESC LIMIT ")
            .push_bind(limit);
        let rows: Vec<AlertRow> = q.build_query_as().fetch_all(&self.pool).await?;
        Ok(rows.into_iter().map(Into::into).collect())
    }

    /// Open alerts by (activity, its project, kind), for the gauge.
    pub async fn open_counts(&self) -> StoreResult<Vec<(Uuid, String, AlertKind, i64)>> {
        let rows = sqlx::query!(
            r#"SELECT l.activity_id, coalesce(a.project_id, 'default') AS "project!",
                 l.kind AS "kind: Text<AlertKind>", count(*) AS "count!"
             FROM alerts l LEFT JOIN activities a ON a.id = l.activity_id
             WHERE l.resolved_at IS NULL GROUP BY l.activity_id, a.project_id, l.kind"#
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|r| (r.activity_id, r.project, r.kind.0, r.count))
            .collect())
    }
}
