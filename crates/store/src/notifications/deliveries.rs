//! The outbox's fan-out into deliveries, and each delivery's attempts.

use chrono::{DateTime, Utc};
use sqlx::types::Json;
use uuid::Uuid;

use super::NotificationStore;
use crate::{StoreResult, Text};
use acp_domain::notify::{
    Attempt, Delivery, DeliveryState, Notification, NotificationType, NotifyTarget, delivery_id,
    destination_of_activity_target, destination_of_subscription,
};

struct NotificationRow {
    id: Uuid,
    seq: i64,
    kind: String,
    activity_id: Uuid,
    subject: String,
    occurred_at: DateTime<Utc>,
    data: serde_json::Value,
}

impl NotificationRow {
    fn into_domain(self) -> Option<Notification> {
        Some(Notification {
            id: self.id,
            kind: NotificationType::parse(&self.kind).ok()?,
            activity_id: self.activity_id,
            subject: self.subject,
            time: self.occurred_at,
            data: self.data,
        })
    }
}

/// Longer than any delivery workflow runs (8 attempts of at most 30 s,
/// at most 60 s apart): a delivery still `dispatched` after this is handed
/// over again.
pub const REDISPATCH_AFTER: std::time::Duration = std::time::Duration::from_secs(15 * 60);

/// A `notification_deliveries` row (with its notification's type), read
/// into the domain's [`Delivery`].
struct DeliveryRow {
    id: Uuid,
    notification_id: Uuid,
    destination: String,
    subscription_id: Option<Uuid>,
    url: String,
    secret_ref: Option<String>,
    state: Text<DeliveryState>,
    attempts: i32,
    last_error: Option<String>,
    created_at: DateTime<Utc>,
    dispatched_at: Option<DateTime<Utc>>,
    finished_at: Option<DateTime<Utc>>,
    kind: String,
}

impl From<DeliveryRow> for Delivery {
    fn from(row: DeliveryRow) -> Self {
        Self {
            id: row.id,
            notification_id: row.notification_id,
            destination: row.destination,
            subscription_id: row.subscription_id,
            url: row.url,
            secret_ref: row.secret_ref,
            state: row.state.0,
            attempts: row.attempts,
            last_error: row.last_error,
            created_at: row.created_at,
            dispatched_at: row.dispatched_at,
            finished_at: row.finished_at,
            kind: row.kind,
        }
    }
}

impl NotificationStore {
    /// Gives every notification not yet fanned out a delivery per
    /// destination: live subscriptions of the activity's project that want
    /// it (another project's never hear of it), and the activity's own
    /// `notify` targets as its current definition names them. Returns how
    /// many notifications it handled. Safe to run concurrently (row locks)
    /// and again (delivery IDs are derived).
    pub async fn fan_out(&self, limit: i64) -> StoreResult<usize> {
        let mut tx = self.pool.begin().await?;
        let rows = sqlx::query_as!(
            NotificationRow,
            "SELECT id, seq, type AS kind, activity_id, subject, occurred_at, data FROM notifications
             WHERE fanned_out_at IS NULL ORDER BY seq LIMIT $1 FOR UPDATE SKIP LOCKED",
            limit,
        )
        .fetch_all(&mut *tx)
        .await?;
        let count = rows.len();
        for n in rows {
            let subscriptions = sqlx::query!(
                "SELECT id, url, secret_ref FROM subscriptions
                 WHERE deleted_at IS NULL AND (cardinality(types) = 0 OR $1 = ANY(types))
                   AND (activity_id IS NULL OR activity_id = $2)
                   AND project_id = (SELECT project_id FROM activities WHERE id = $2)",
                n.kind,
                n.activity_id,
            )
            .fetch_all(&mut *tx)
            .await?;
            let targets = sqlx::query_scalar!(
                r#"SELECT definition -> 'notify' AS "notify: Json<Vec<NotifyTarget>>"
                 FROM activities WHERE id = $1"#,
                n.activity_id,
            )
            .fetch_optional(&mut *tx)
            .await?;
            let kind = NotificationType::parse(&n.kind).ok();
            let mut destinations: Vec<(String, Option<Uuid>, String, Option<String>)> =
                subscriptions
                    .into_iter()
                    .map(|s| {
                        (
                            destination_of_subscription(s.id),
                            Some(s.id),
                            s.url,
                            s.secret_ref,
                        )
                    })
                    .collect();
            let targets = targets.flatten().map(|t| t.0).unwrap_or_default();
            for (index, target) in targets.into_iter().enumerate() {
                if kind.is_some_and(|k| target.wants(k)) {
                    destinations.push((
                        destination_of_activity_target(n.activity_id, index),
                        None,
                        target.url,
                        target.secret_ref,
                    ));
                }
            }
            for (destination, subscription_id, url, secret_ref) in destinations {
                sqlx::query!(
                    "INSERT INTO notification_deliveries (id, notification_id, seq, subject,
                         destination, subscription_id, url, secret_ref)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (id) DO NOTHING",
                    delivery_id(n.id, &destination),
                    n.id,
                    n.seq,
                    n.subject,
                    destination,
                    subscription_id,
                    url,
                    secret_ref,
                )
                .execute(&mut *tx)
                .await?;
            }
            sqlx::query!(
                "UPDATE notifications SET fanned_out_at = now() WHERE id = $1",
                n.id,
            )
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(count)
    }

    /// Pending deliveries that may go now: no earlier delivery about the
    /// same subject to the same destination is still on its way (in order
    /// per run and per alert). Also deliveries handed over longer ago than
    /// any delivery workflow lives (`REDISPATCH_AFTER`): handing them over
    /// again is a duplicate while Temporal knows the workflow, and a new
    /// delivery if it was lost (terminated by hand, namespace reset).
    pub async fn deliverable(&self, limit: i64) -> StoreResult<Vec<Uuid>> {
        Ok(sqlx::query_scalar!(
            "SELECT d.id FROM notification_deliveries d
             WHERE (d.state = 'pending'
                    OR (d.state = 'dispatched' AND d.dispatched_at < now() - make_interval(secs => $2)))
               AND NOT EXISTS (
                 SELECT 1 FROM notification_deliveries e
                 WHERE e.destination = d.destination AND e.subject = d.subject
                   AND e.seq < d.seq AND e.state IN ('pending', 'dispatched'))
             ORDER BY d.seq LIMIT $1",
            limit,
            REDISPATCH_AFTER.as_secs_f64(),
        )
        .fetch_all(&self.pool)
        .await?)
    }

    pub async fn mark_dispatched(&self, id: Uuid) -> StoreResult<()> {
        sqlx::query!(
            "UPDATE notification_deliveries SET state = 'dispatched', dispatched_at = now()
             WHERE id = $1 AND state IN ('pending', 'dispatched')",
            id,
        )
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// A delivery with its notification, for the worker.
    pub async fn load(&self, id: Uuid) -> StoreResult<(Delivery, Notification)> {
        let delivery = sqlx::query_as!(
            DeliveryRow,
            r#"SELECT d.id, d.notification_id, d.destination, d.subscription_id, d.url, d.secret_ref,
                 d.state AS "state: _", d.attempts, d.last_error, d.created_at, d.dispatched_at,
                 d.finished_at, n.type AS kind
             FROM notification_deliveries d
             JOIN notifications n ON n.id = d.notification_id WHERE d.id = $1"#,
            id,
        )
        .fetch_one(&self.pool)
        .await
        .map(Delivery::from)?;
        let row = sqlx::query_as!(
            NotificationRow,
            "SELECT id, seq, type AS kind, activity_id, subject, occurred_at, data
             FROM notifications WHERE id = $1",
            delivery.notification_id,
        )
        .fetch_one(&self.pool)
        .await?;
        let notification = row.into_domain().ok_or_else(|| {
            crate::StoreError::Other(anyhow::anyhow!("unknown notification type"))
        })?;
        Ok((delivery, notification))
    }

    /// Records one attempt (a retried recording of the same attempt keeps one row).
    pub async fn record_attempt(
        &self,
        id: Uuid,
        attempt: i32,
        status_code: Option<i32>,
        error: Option<&str>,
        duration_ms: i32,
    ) -> StoreResult<()> {
        let mut tx = self.pool.begin().await?;
        sqlx::query!(
            "INSERT INTO delivery_attempts (delivery_id, attempt, status_code, error, duration_ms)
             VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (delivery_id, attempt) DO UPDATE SET status_code = EXCLUDED.status_code,
                 error = EXCLUDED.error, duration_ms = EXCLUDED.duration_ms,
                 attempted_at = EXCLUDED.attempted_at",
            id,
            attempt,
            status_code,
            error,
            duration_ms,
        )
        .execute(&mut *tx)
        .await?;
        sqlx::query!(
            "UPDATE notification_deliveries SET attempts = greatest(attempts, $2), last_error = $3
             WHERE id = $1",
            id,
            attempt,
            error,
        )
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Ends a delivery, delivered or failed.
    pub async fn finish(&self, id: Uuid, delivered: bool, error: Option<&str>) -> StoreResult<()> {
        let state = if delivered {
            DeliveryState::Delivered
        } else {
            DeliveryState::Failed
        };
        sqlx::query!(
            "UPDATE notification_deliveries SET state = $2, finished_at = now(),
                 last_error = coalesce($3, last_error)
             WHERE id = $1 AND state IN ('pending', 'dispatched')",
            id,
            state.as_str(),
            error,
        )
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// A subscription's deliveries, newest first, after the keyset `(created_at, id)`.
    pub async fn deliveries_of(
        &self,
        subscription_id: Uuid,
        after: Option<(DateTime<Utc>, Uuid)>,
        limit: i64,
    ) -> StoreResult<Vec<Delivery>> {
        let (at, id) = after.unzip();
        Ok(sqlx::query_as!(
            DeliveryRow,
            r#"SELECT d.id, d.notification_id, d.destination, d.subscription_id, d.url, d.secret_ref,
                 d.state AS "state: _", d.attempts, d.last_error, d.created_at, d.dispatched_at,
                 d.finished_at, n.type AS kind
             FROM notification_deliveries d
             JOIN notifications n ON n.id = d.notification_id
             WHERE d.subscription_id = $1
               AND ($2::timestamptz IS NULL OR (d.created_at, d.id) < ($2, $3))
             ORDER BY d.created_at DESC, d.id DESC LIMIT $4"#,
            subscription_id,
            at,
            id,
            limit,
        )
        .fetch_all(&self.pool)
        .await?
        .into_iter()
        .map(Into::into)
        .collect())
    }

    /// Attempts of these deliveries, oldest first.
    pub async fn attempts_of(&self, ids: &[Uuid]) -> StoreResult<Vec<Attempt>> {
        Ok(sqlx::query_as!(
            Attempt,
            "SELECT delivery_id, attempt, attempted_at, status_code, error, duration_ms
             FROM delivery_attempts WHERE delivery_id = ANY($1) ORDER BY delivery_id, attempt",
            ids,
        )
        .fetch_all(&self.pool)
        .await?)
    }
}
