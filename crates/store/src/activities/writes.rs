//! Writes of an activity's definition: create (idempotently), replace,
//! patch at a version and soft-delete, each recording the version it made.

use sqlx::types::Json;
use sqlx::{Postgres, Transaction};
use uuid::Uuid;

use super::{ActivityRow, ActivityStore, CreateOutcome, Expect, lock_live, record_version};
use crate::{StoreError, StoreResult, audit, projects};
use acp_domain::activity::{Activity, ActivityDefinition, SyncState};
use acp_domain::audit::{Actor, Note, Subject};
use acp_domain::project::{CountQuota, ProjectId};
use acp_domain::trigger::Trigger;

/// The sync state a definition starts in: an event activity that never had a
/// schedule needs nothing from Temporal; anything else waits for a sync.
fn initial_sync_state(new: &ActivityDefinition, old: Option<&ActivityDefinition>) -> SyncState {
    let was_event = old.is_none_or(|o| o.trigger.as_scheduled().is_none());
    if new.trigger.as_scheduled().is_none() && was_event {
        SyncState::NotApplicable
    } else {
        SyncState::Pending
    }
}

/// What an entry keeps of one side of a definition's write.
pub(crate) fn snapshot(activity: &Activity) -> serde_json::Value {
    serde_json::json!({
        "version": activity.version,
        "definition": activity.definition,
        "paused": activity.paused,
        "pause_note": activity.pause_note,
    })
}

/// The entry of a write that took the activity from `before` to `after`
/// (`None`: it did not exist, or no longer does).
pub(crate) fn note(id: Uuid, before: Option<&Activity>, after: Option<&Activity>) -> Note {
    let live = |a: &&Activity| !a.deleted;
    Note::definition(
        Subject::activity(id),
        before.filter(live).map(snapshot),
        after.filter(live).map(snapshot),
    )
}

fn event_types(def: &ActivityDefinition) -> Vec<String> {
    match &def.trigger {
        Trigger::Event { event_types } => {
            event_types.iter().map(|t| t.as_str().to_owned()).collect()
        }
        Trigger::Scheduled(_) => vec![],
    }
}

impl ActivityStore {
    #[tracing::instrument(skip(self, def, idempotency, actor))]
    pub async fn create(
        &self,
        id: Uuid,
        def: &ActivityDefinition,
        idempotency: Option<(&str, &str)>,
        actor: &Actor,
    ) -> StoreResult<CreateOutcome> {
        let mut tx = self.pool.begin().await?;
        if let Some((key, request_hash)) = idempotency {
            let claimed = sqlx::query_scalar!(
                "INSERT INTO idempotency_keys (scope, key, request_hash, resource_id)
                 VALUES ('create_activity', $1, $2, $3)
                 ON CONFLICT (scope, key) DO NOTHING RETURNING key",
                key,
                request_hash,
                id,
            )
            .fetch_optional(&mut *tx)
            .await?;
            if claimed.is_none() {
                let seen = sqlx::query!(
                    "SELECT request_hash, resource_id FROM idempotency_keys
                     WHERE scope = 'create_activity' AND key = $1",
                    key,
                )
                .fetch_one(&mut *tx)
                .await?;
                let (seen_hash, resource_id) = (seen.request_hash, seen.resource_id);
                tx.rollback().await?;
                if seen_hash != request_hash {
                    return Err(StoreError::Conflict(
                        "this Idempotency-Key was already used with a different request body"
                            .into(),
                    ));
                }
                return match self.get_any(resource_id).await? {
                    Some(activity) if !activity.deleted => Ok(CreateOutcome::Replayed(activity)),
                    _ => Err(StoreError::Conflict(
                        "the activity created with this Idempotency-Key has since been deleted"
                            .into(),
                    )),
                };
            }
        }
        projects::admit(&mut tx, &actor.project, CountQuota::Activities).await?;
        let activity = insert(&mut tx, id, &actor.project, def).await?;
        audit::append(&mut tx, actor, &note(id, None, Some(&activity))).await?;
        tx.commit().await?;
        Ok(CreateOutcome::Created(activity))
    }

    /// Create-or-replace. Returns the activity and whether it was created.
    #[tracing::instrument(skip(self, def, actor))]
    pub async fn put(
        &self,
        id: Uuid,
        def: &ActivityDefinition,
        expect: Expect,
        actor: &Actor,
    ) -> StoreResult<(Activity, bool)> {
        let mut tx = self.pool.begin().await?;
        let current = sqlx::query_as!(
            ActivityRow,
            r#"SELECT id, version, definition AS "definition: _", paused, pause_note, created_at, updated_at,
                 deleted_at, sync_state, last_synced_at, last_sync_error, synced_version,
                 schedule_conflict_token
               FROM activities WHERE id = $1 FOR UPDATE"#,
            id,
        )
        .fetch_optional(&mut *tx)
        .await?;
        let current: Option<Activity> = current.map(Into::into);
        if current.is_some() {
            // Another project's ID, live or deleted, is not the caller's to
            // replace or bring back: it answers as an ID that never existed.
            let owner = sqlx::query_scalar!("SELECT project_id FROM activities WHERE id = $1", id)
                .fetch_one(&mut *tx)
                .await?;
            if owner != actor.project.as_str() {
                return Err(StoreError::NotFound);
            }
        }
        match current {
            None => {
                if expect != Expect::Anything {
                    return Err(StoreError::VersionMismatch { current: 0 });
                }
                projects::admit(&mut tx, &actor.project, CountQuota::Activities).await?;
                let activity = insert(&mut tx, id, &actor.project, def).await?;
                audit::append(&mut tx, actor, &note(id, None, Some(&activity))).await?;
                tx.commit().await?;
                Ok((activity, true))
            }
            Some(current) if current.deleted => {
                if expect != Expect::Anything {
                    return Err(StoreError::VersionMismatch { current: 0 });
                }
                // A PUT to a deleted ID brings it back as a new life of the same
                // activity (in the caller's project); the version keeps
                // counting so ETags never repeat.
                projects::admit(&mut tx, &actor.project, CountQuota::Activities).await?;
                let activity =
                    update_definition(&mut tx, &current, def, Some(&actor.project)).await?;
                audit::append(&mut tx, actor, &note(id, None, Some(&activity))).await?;
                tx.commit().await?;
                Ok((activity, true))
            }
            Some(current) => {
                check_expect(&current, expect)?;
                // An unchanged definition is still a write the caller made:
                // its entry says so (the same before and after).
                let activity = if current.definition == *def {
                    current.clone()
                } else {
                    update_definition(&mut tx, &current, def, None).await?
                };
                audit::append(&mut tx, actor, &note(id, Some(&current), Some(&activity))).await?;
                tx.commit().await?;
                Ok((activity, false))
            }
        }
    }

    /// Replaces the definition of a live activity at exactly `expected_version`
    /// (PATCH: the caller merged onto that version).
    #[tracing::instrument(skip(self, def, actor))]
    pub async fn replace_at(
        &self,
        id: Uuid,
        expected_version: i64,
        def: &ActivityDefinition,
        actor: &Actor,
    ) -> StoreResult<Activity> {
        let mut tx = self.pool.begin().await?;
        let current = lock_live(&mut tx, id).await?;
        check_expect(&current, Expect::Version(expected_version))?;
        let activity = if current.definition == *def {
            current.clone()
        } else {
            update_definition(&mut tx, &current, def, None).await?
        };
        audit::append(&mut tx, actor, &note(id, Some(&current), Some(&activity))).await?;
        tx.commit().await?;
        Ok(activity)
    }

    /// Soft-deletes a live activity; its runs stay readable.
    #[tracing::instrument(skip(self, actor))]
    pub async fn delete(&self, id: Uuid, expect: Expect, actor: &Actor) -> StoreResult<Activity> {
        let mut tx = self.pool.begin().await?;
        let current = lock_live(&mut tx, id).await?;
        check_expect(&current, expect)?;
        let sync_state =
            if current.wants_schedule() || current.sync.state != SyncState::NotApplicable {
                SyncState::Pending
            } else {
                SyncState::NotApplicable
            };
        let row = sqlx::query_as!(
            ActivityRow,
            r#"UPDATE activities SET deleted_at = now(), updated_at = now(), version = version + 1,
                 sync_state = $2
             WHERE id = $1
             RETURNING id, version, definition AS "definition: _", paused, pause_note, created_at, updated_at,
                 deleted_at, sync_state, last_synced_at, last_sync_error, synced_version,
                 schedule_conflict_token"#,
            id,
            sync_state.as_str(),
        )
        .fetch_one(&mut *tx)
        .await?;
        audit::append(&mut tx, actor, &note(id, Some(&current), None)).await?;
        tx.commit().await?;
        Ok(row.into())
    }
}

fn check_expect(current: &Activity, expect: Expect) -> StoreResult<()> {
    match expect {
        Expect::Version(v) if v != current.version => Err(StoreError::VersionMismatch {
            current: current.version,
        }),
        _ => Ok(()),
    }
}

/// A new activity, at version 1, in `project`.
async fn insert(
    tx: &mut Transaction<'_, Postgres>,
    id: Uuid,
    project: &ProjectId,
    def: &ActivityDefinition,
) -> StoreResult<Activity> {
    let version = 1;
    let sync_state = initial_sync_state(def, None);
    let row = sqlx::query_as!(
        ActivityRow,
        r#"INSERT INTO activities (id, version, definition, name, description, enabled, trigger_type,
             labels, event_types, sync_state, project_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
         RETURNING id, version, definition AS "definition: _", paused, pause_note, created_at, updated_at,
             deleted_at, sync_state, last_synced_at, last_sync_error, synced_version,
             schedule_conflict_token"#,
        id,
        version,
        Json(def) as _,
        def.name,
        def.description,
        def.enabled,
        def.trigger.trigger_type().as_str(),
        Json(&def.labels) as _,
        &event_types(def),
        sync_state.as_str(),
        project.as_str(),
    )
    .fetch_one(&mut **tx)
    .await?;
    record_version(tx, id, version, def).await?;
    Ok(row.into())
}

async fn update_definition(
    tx: &mut Transaction<'_, Postgres>,
    current: &Activity,
    def: &ActivityDefinition,
    revive_in: Option<&ProjectId>,
) -> StoreResult<Activity> {
    let revive = revive_in.is_some();
    let old = (!current.deleted).then_some(&current.definition);
    let mut sync_state = initial_sync_state(def, old);
    if current.sync.state != SyncState::NotApplicable {
        // A schedule may still exist from before: it must be brought in line.
        sync_state = SyncState::Pending;
    }
    let version = current.version + 1;
    let row = sqlx::query_as!(
        ActivityRow,
        r#"UPDATE activities SET version = $2, definition = $3, name = $4, description = $5,
             enabled = $6, trigger_type = $7, labels = $8, event_types = $9, sync_state = $10,
             updated_at = now(),
             deleted_at = CASE WHEN $11 THEN NULL ELSE deleted_at END,
             created_at = CASE WHEN $11 THEN now() ELSE created_at END,
             paused = CASE WHEN $11 THEN false ELSE paused END,
             pause_note = CASE WHEN $11 THEN NULL ELSE pause_note END,
             project_id = COALESCE($12, project_id)
         WHERE id = $1
         RETURNING id, version, definition AS "definition: _", paused, pause_note, created_at, updated_at,
             deleted_at, sync_state, last_synced_at, last_sync_error, synced_version,
             schedule_conflict_token"#,
        current.id,
        version,
        Json(def) as _,
        def.name,
        def.description,
        def.enabled,
        def.trigger.trigger_type().as_str(),
        Json(&def.labels) as _,
        &event_types(def),
        sync_state.as_str(),
        revive,
        revive_in.map(ProjectId::as_str),
    )
    .fetch_one(&mut **tx)
    .await?;
    record_version(tx, current.id, version, def).await?;
    Ok(row.into())
}
