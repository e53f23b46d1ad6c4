//! Subscriptions, the notification outbox, deliveries and their attempts:
//! here subscriptions, in `deliveries` the outbox's fan-out and delivery.

mod deliveries;

pub use deliveries::REDISPATCH_AFTER;

use chrono::{DateTime, Utc};
use sqlx::PgPool;
use uuid::Uuid;

use super::{StoreResult, audit};
use acp_domain::audit::{Actor, Note, Subject};
use acp_domain::notify::Subscription;
use acp_domain::project::{CountQuota, ProjectId};

#[derive(Clone)]
pub struct NotificationStore {
    pool: PgPool,
}

/// A live subscription of `project`, its row as an audit entry keeps it;
/// `None` when there is none.
async fn snapshot(
    conn: &mut sqlx::PgConnection,
    id: Uuid,
    project: &ProjectId,
) -> StoreResult<Option<serde_json::Value>> {
    Ok(sqlx::query_scalar!(
        r#"SELECT to_jsonb(s) - 'created_at' - 'deleted_at' AS "row!" FROM subscriptions s
           WHERE id = $1 AND project_id = $2 AND deleted_at IS NULL FOR UPDATE"#,
        id,
        project.as_str(),
    )
    .fetch_optional(conn)
    .await?)
}

impl NotificationStore {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }

    pub async fn create_subscription(
        &self,
        s: &Subscription,
        actor: &Actor,
    ) -> StoreResult<Subscription> {
        let mut tx = self.pool.begin().await?;
        crate::projects::admit(&mut tx, &actor.project, CountQuota::Subscriptions).await?;
        let created = sqlx::query_as!(
            Subscription,
            "INSERT INTO subscriptions (id, url, secret_ref, types, activity_id, description,
                 project_id)
             VALUES ($1, $2, $3, $4, $5, $6, $7)
             RETURNING id, url, secret_ref, types, activity_id, description, created_at",
            s.id,
            s.url,
            s.secret_ref,
            &s.types[..],
            s.activity_id,
            s.description,
            actor.project.as_str(),
        )
        .fetch_one(&mut *tx)
        .await?;
        let after = snapshot(&mut tx, s.id, &actor.project).await?;
        let note = Note::definition(Subject::subscription(s.id), None, after);
        audit::append(&mut tx, actor, &note).await?;
        tx.commit().await?;
        Ok(created)
    }

    /// A live subscription of `project`.
    pub async fn get_subscription(
        &self,
        id: Uuid,
        project: &ProjectId,
    ) -> StoreResult<Subscription> {
        Ok(sqlx::query_as!(
            Subscription,
            "SELECT id, url, secret_ref, types, activity_id, description, created_at
             FROM subscriptions WHERE id = $1 AND project_id = $2 AND deleted_at IS NULL",
            id,
            project.as_str(),
        )
        .fetch_one(&self.pool)
        .await?)
    }

    /// The project's live subscriptions, newest first.
    pub async fn list_subscriptions(
        &self,
        project: &ProjectId,
        after: Option<(DateTime<Utc>, Uuid)>,
        limit: i64,
    ) -> StoreResult<Vec<Subscription>> {
        let (at, id) = after.unzip();
        Ok(sqlx::query_as!(
            Subscription,
            "SELECT id, url, secret_ref, types, activity_id, description, created_at
             FROM subscriptions WHERE deleted_at IS NULL AND project_id = $4
               AND ($1::timestamptz IS NULL OR (created_at, id) < ($1, $2))
             ORDER BY created_at DESC, id DESC LIMIT $3",
            at,
            id,
            limit,
            project.as_str(),
        )
        .fetch_all(&self.pool)
        .await?)
    }

    /// Soft delete of the actor's project's subscription: its delivery
    /// history stays readable by ID.
    pub async fn delete_subscription(&self, id: Uuid, actor: &Actor) -> StoreResult<bool> {
        let mut tx = self.pool.begin().await?;
        let Some(before) = snapshot(&mut tx, id, &actor.project).await? else {
            return Ok(false);
        };
        sqlx::query!(
            "UPDATE subscriptions SET deleted_at = now() WHERE id = $1",
            id,
        )
        .execute(&mut *tx)
        .await?;
        let note = Note::definition(Subject::subscription(id), Some(before), None);
        audit::append(&mut tx, actor, &note).await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Whether `project` has (or had) the subscription.
    pub async fn subscription_exists(&self, id: Uuid, project: &ProjectId) -> StoreResult<bool> {
        Ok(sqlx::query_scalar!(
            r#"SELECT EXISTS (SELECT 1 FROM subscriptions WHERE id = $1 AND project_id = $2)
               AS "exists!""#,
            id,
            project.as_str(),
        )
        .fetch_one(&self.pool)
        .await?)
    }
}
