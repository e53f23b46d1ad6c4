//! Whose an activity is, for what reads it outside a request (the run
//! metrics' `project` label).

use sqlx::PgPool;
use uuid::Uuid;

use crate::StoreResult;

/// The project of the activity (deleted or not); `None` when there is no
/// such activity.
pub async fn of_activity(pool: &PgPool, activity_id: Uuid) -> StoreResult<Option<String>> {
    Ok(sqlx::query_scalar!(
        "SELECT project_id FROM activities WHERE id = $1",
        activity_id,
    )
    .fetch_optional(pool)
    .await?)
}
