//! `alerts`, and the facts the evaluator reads about runs and dispatches.

use chrono::{DateTime, Utc};
use sqlx::types::Json;
use sqlx::{FromRow, PgPool, Postgres, QueryBuilder};
use uuid::Uuid;

use super::StoreResult;
use crate::domain::alert::{Alert, AlertKind, Breach};
use crate::domain::notify::NotificationType;
use crate::domain::query::AlertFilter;
use crate::domain::run::RunStatus;

#[derive(FromRow)]
struct AlertRow {
    id: Uuid,
    activity_id: Uuid,
    kind: AlertKind,
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
            kind: r.kind,
            summary: r.summary,
            detail: r.detail.0,
            opened_at: r.opened_at,
            last_seen_at: r.last_seen_at,
            resolved_at: r.resolved_at,
        }
    }
}

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
    sqlx::query(
        "INSERT INTO notifications (type, activity_id, subject, data) VALUES ($1, $2, $3, $4)",
    )
    .bind(kind.as_str())
    .bind(alert.activity_id)
    .bind(alert.id.to_string())
    .bind(Json(serde_json::to_value(alert).unwrap_or_default()))
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
        let rows: Vec<(Uuid,)> = sqlx::query_as(
            "SELECT id FROM activities WHERE deleted_at IS NULL AND definition ? 'alerts'
             UNION SELECT activity_id FROM alerts WHERE resolved_at IS NULL",
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.into_iter().map(|r| r.0).collect())
    }

    /// Status of each run at a nominal time in `[from, to]`.
    pub async fn runs_at(
        &self,
        activity_id: Uuid,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
    ) -> StoreResult<Vec<(DateTime<Utc>, RunStatus)>> {
        Ok(sqlx::query_as(
            "SELECT scheduled_for, status FROM activity_runs
             WHERE activity_id = $1 AND scheduled_for >= $2 AND scheduled_for <= $3",
        )
        .bind(activity_id)
        .bind(from)
        .bind(to)
        .fetch_all(&self.pool)
        .await?)
    }

    /// The newest nominal time that executed (not a recorded skip).
    pub async fn last_executed(&self, activity_id: Uuid) -> StoreResult<Option<DateTime<Utc>>> {
        let (t,): (Option<DateTime<Utc>>,) = sqlx::query_as(
            "SELECT max(scheduled_for) FROM activity_runs WHERE activity_id = $1 AND status <> 'skipped'",
        )
        .bind(activity_id)
        .fetch_one(&self.pool)
        .await?;
        Ok(t)
    }

    /// When runs of the activity executed, `[started, finished)`, overlapping `[from, ∞)`.
    pub async fn busy_since(
        &self,
        activity_id: Uuid,
        from: DateTime<Utc>,
    ) -> StoreResult<Vec<(DateTime<Utc>, Option<DateTime<Utc>>)>> {
        Ok(sqlx::query_as(
            "SELECT started_at, finished_at FROM activity_runs
             WHERE activity_id = $1 AND status <> 'skipped' AND started_at IS NOT NULL
               AND (finished_at IS NULL OR finished_at >= $2)",
        )
        .bind(activity_id)
        .bind(from)
        .fetch_all(&self.pool)
        .await?)
    }

    /// Runs still running: (run ID, started at).
    pub async fn running(&self, activity_id: Uuid) -> StoreResult<Vec<(Uuid, DateTime<Utc>)>> {
        Ok(sqlx::query_as(
            "SELECT run_id, coalesce(started_at, created_at) FROM activity_runs
             WHERE activity_id = $1 AND status = 'running'",
        )
        .bind(activity_id)
        .fetch_all(&self.pool)
        .await?)
    }

    /// The `n` most recent runs that succeeded or failed, newest first.
    pub async fn recent_outcomes(
        &self,
        activity_id: Uuid,
        n: u32,
    ) -> StoreResult<Vec<(Uuid, RunStatus)>> {
        Ok(sqlx::query_as(
            "SELECT run_id, status FROM activity_runs
             WHERE activity_id = $1 AND status IN ('succeeded', 'failed')
             ORDER BY finished_at DESC NULLS LAST, run_id DESC LIMIT $2",
        )
        .bind(activity_id)
        .bind(i64::from(n))
        .fetch_all(&self.pool)
        .await?)
    }

    /// Events accepted for the activity since `since` whose run has not
    /// started: (event ID, accepted at).
    pub async fn events_waiting(
        &self,
        activity_id: Uuid,
        since: DateTime<Utc>,
    ) -> StoreResult<Vec<(String, DateTime<Utc>)>> {
        Ok(sqlx::query_as(
            "SELECT d.event_id, d.created_at FROM event_dispatches d
             LEFT JOIN activity_runs r ON r.workflow_id = d.workflow_id
             WHERE d.activity_id = $1 AND d.created_at >= $2
               AND (r.run_id IS NULL OR r.status = 'skipped')
             ORDER BY d.created_at LIMIT 1000",
        )
        .bind(activity_id)
        .bind(since)
        .fetch_all(&self.pool)
        .await?)
    }

    pub async fn open_of(&self, activity_id: Uuid) -> StoreResult<Vec<Alert>> {
        let rows: Vec<AlertRow> = sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM alerts WHERE activity_id = $1 AND resolved_at IS NULL
             ORDER BY opened_at DESC, id DESC"
        ))
        .bind(activity_id)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.into_iter().map(Into::into).collect())
    }

    /// Opens an alert for a breach, unless one of its kind is open already
    /// (then it only refreshes it). Returns the alert when this call opened it.
    pub async fn open(&self, activity_id: Uuid, breach: &Breach) -> StoreResult<Option<Alert>> {
        let mut tx = self.pool.begin().await?;
        let opened: Option<AlertRow> = sqlx::query_as(&format!(
            "INSERT INTO alerts (id, activity_id, kind, summary, detail) VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (activity_id, kind) WHERE resolved_at IS NULL DO NOTHING
             RETURNING {COLUMNS}"
        ))
        .bind(Uuid::new_v4())
        .bind(activity_id)
        .bind(breach.kind.as_str())
        .bind(&breach.summary)
        .bind(Json(&breach.detail))
        .fetch_optional(&mut *tx)
        .await?;
        let opened = match opened {
            Some(row) => {
                let alert = Alert::from(row);
                record_notification(&mut tx, NotificationType::AlertOpened, &alert).await?;
                Some(alert)
            }
            None => {
                sqlx::query(
                    "UPDATE alerts SET last_seen_at = now(), summary = $3, detail = $4
                     WHERE activity_id = $1 AND kind = $2 AND resolved_at IS NULL",
                )
                .bind(activity_id)
                .bind(breach.kind.as_str())
                .bind(&breach.summary)
                .bind(Json(&breach.detail))
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
        let row: Option<AlertRow> = sqlx::query_as(&format!(
            "UPDATE alerts SET resolved_at = greatest(now(), opened_at)
             WHERE id = $1 AND resolved_at IS NULL RETURNING {COLUMNS}"
        ))
        .bind(id)
        .fetch_optional(&mut *tx)
        .await?;
        let resolved = row.map(Alert::from);
        if let Some(alert) = &resolved {
            record_notification(&mut tx, NotificationType::AlertResolved, alert).await?;
        }
        tx.commit().await?;
        Ok(resolved)
    }

    pub async fn get(&self, id: Uuid) -> StoreResult<Alert> {
        let row: AlertRow = sqlx::query_as(&format!("SELECT {COLUMNS} FROM alerts WHERE id = $1"))
            .bind(id)
            .fetch_one(&self.pool)
            .await?;
        Ok(row.into())
    }

    /// Newest first, after the keyset `(opened_at, id)`.
    pub async fn list(
        &self,
        filter: &AlertFilter,
        after: Option<(DateTime<Utc>, Uuid)>,
        limit: i64,
    ) -> StoreResult<Vec<Alert>> {
        let mut q: QueryBuilder<Postgres> =
            QueryBuilder::new(format!("SELECT {COLUMNS} FROM alerts WHERE true"));
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

    /// Open alerts by (activity, kind), for the gauge.
    pub async fn open_counts(&self) -> StoreResult<Vec<(Uuid, AlertKind, i64)>> {
        Ok(sqlx::query_as(
            "SELECT activity_id, kind, count(*) FROM alerts WHERE resolved_at IS NULL
             GROUP BY activity_id, kind",
        )
        .fetch_all(&self.pool)
        .await?)
    }
}
