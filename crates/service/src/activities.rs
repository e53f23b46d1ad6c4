//! Activity definitions and their schedules: every write is committed to
//! PostgreSQL first, then Temporal is brought in line within the request
//! when it answers (the reconciler finishes the job when it does not).

use std::collections::HashMap;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{Error, Result, found};
use acp_domain::activity::{Activity, ActivityDefinition, SyncState};
use acp_domain::audit::Actor;
use acp_domain::business_calendar::{BusinessCalendar, CalendarRecord, runs_after};
use acp_domain::ids;
use acp_domain::project::ProjectId;
use acp_domain::query::{ActivityFilter, Expect, Keyset};
use acp_domain::window::upcoming_times;
use acp_store::activities::CreateOutcome;
use acp_store::{ActivityStore, CalendarStore, StoreError, StoreResult};
use acp_temporal::translate::desired_schedule;
use acp_temporal::{GatewayError, ScheduleView, TemporalGateway};

/// What one sync did.
#[derive(Debug, Clone)]
pub struct SyncOutcome {
    pub state: SyncState,
    pub error: Option<String>,
    /// The schedule as Temporal holds it afterwards, when it answered.
    pub view: Option<ScheduleView>,
}

/// How many next fire times an activity shows.
pub const NEXT_FIRE_TIMES: usize = 10;

/// The next fire times of an activity after `now`, from the one definition
/// of its times (`domain::calendar`, DST policy included) clipped to its
/// `start_at`/`end_at`, with its business calendar applied (`calendar`, the
/// one its trigger names): what runs. None for event triggers, nor while the
/// activity is paused, disabled or deleted.
pub fn next_fire_times(
    activity: &Activity,
    calendar: Option<&BusinessCalendar>,
    now: DateTime<Utc>,
) -> Vec<DateTime<Utc>> {
    let Some(trigger) = activity.definition.trigger.as_scheduled() else {
        return vec![];
    };
    if activity.paused || !activity.definition.enabled || activity.deleted {
        return vec![];
    }
    let times = match (&trigger.calendar, calendar) {
        (Some(rule), Some(calendar)) => runs_after(
            calendar,
            rule,
            upcoming_times(trigger, now),
            now,
            NEXT_FIRE_TIMES,
        ),
        _ => acp_domain::window::upcoming(trigger, now, NEXT_FIRE_TIMES),
    };
    times.into_iter().map(|t| t.at).collect()
}

/// An activity as a write left it, with its next fire times.
#[derive(Debug, Clone)]
pub struct Written {
    pub activity: Activity,
    pub next_fire_times: Vec<DateTime<Utc>>,
    /// A PUT that created the activity (or brought a deleted one back).
    pub created: bool,
    /// A create replayed from an earlier request with the same Idempotency-Key.
    pub replayed: bool,
}

#[derive(Clone)]
pub struct Activities {
    store: ActivityStore,
    calendars: CalendarStore,
    gateway: Arc<TemporalGateway>,
    task_queue: Arc<str>,
}

impl Activities {
    pub fn new(store: ActivityStore, gateway: Arc<TemporalGateway>, task_queue: Arc<str>) -> Self {
        Self {
            calendars: CalendarStore::new(store.pool().clone()),
            store,
            gateway,
            task_queue,
        }
    }

    pub(crate) fn store(&self) -> &ActivityStore {
        &self.store
    }

    pub fn gateway(&self) -> &Arc<TemporalGateway> {
        &self.gateway
    }

    pub fn task_queue(&self) -> &str {
        &self.task_queue
    }

    /// A live activity.
    pub async fn get(&self, id: Uuid) -> Result<Activity> {
        found(self.store.get(id).await, "activity")
    }

    /// The activity (live or deleted) belongs to `project`; another
    /// project's is not found, the same answer as an ID that never existed.
    pub async fn check_owner(&self, id: Uuid, project: &ProjectId) -> Result<()> {
        if self.store.owned_by(id, project).await? {
            Ok(())
        } else {
            Err(Error::NotFound("activity"))
        }
    }

    /// A live activity of `project`.
    pub async fn get_in(&self, id: Uuid, project: &ProjectId) -> Result<Activity> {
        self.check_owner(id, project).await?;
        self.get(id).await
    }

    /// An activity of `project`, deleted or not.
    pub async fn get_any_in(&self, id: Uuid, project: &ProjectId) -> Result<Activity> {
        self.check_owner(id, project).await?;
        self.get_any(id).await
    }

    /// An activity, deleted or not: its history outlives it.
    pub async fn get_any(&self, id: Uuid) -> Result<Activity> {
        self.store
            .get_any(id)
            .await?
            .ok_or(Error::NotFound("activity"))
    }

    /// A live activity of `project` with its next fire times (computed, so
    /// they are answered whether or not Temporal is).
    pub async fn get_with_next_fire_times(
        &self,
        id: Uuid,
        project: &ProjectId,
    ) -> Result<(Activity, Vec<DateTime<Utc>>)> {
        let activity = self.get_in(id, project).await?;
        let calendar = self.calendar_of(&activity).await?;
        let next = next_fire_times(
            &activity,
            calendar.as_ref().map(|c| &c.calendar),
            Utc::now(),
        );
        Ok((activity, next))
    }

    /// The calendar an activity's trigger names, if it names one that
    /// exists.
    pub async fn calendar_of(&self, activity: &Activity) -> Result<Option<CalendarRecord>> {
        let Some(rule) = activity
            .definition
            .trigger
            .as_scheduled()
            .and_then(|t| t.calendar)
        else {
            return Ok(None);
        };
        match self.calendars.get(rule.id).await {
            Ok(record) => Ok(Some(record)),
            Err(StoreError::NotFound) => Ok(None),
            Err(err) => Err(err.into()),
        }
    }

    /// The calendars the activities' triggers name, by ID.
    pub async fn calendars_of(
        &self,
        activities: &[Activity],
    ) -> Result<HashMap<Uuid, BusinessCalendar>> {
        let mut out = HashMap::new();
        for activity in activities {
            if let Some(record) = self.calendar_of(activity).await?
                && !out.contains_key(&record.id)
            {
                out.insert(record.id, record.calendar);
            }
        }
        Ok(out)
    }

    /// A definition may name only a calendar that exists in the project of
    /// the activity: another project's answers as one that does not exist.
    async fn check_calendar(
        &self,
        definition: &ActivityDefinition,
        project: &ProjectId,
    ) -> Result<()> {
        let Some(rule) = definition.trigger.as_scheduled().and_then(|t| t.calendar) else {
            return Ok(());
        };
        if self.store.calendar_in(rule.id, project).await? {
            Ok(())
        } else {
            Err(Error::invalid(
                "trigger.calendar.id",
                format!("no calendar has the ID {}", rule.id),
            ))
        }
    }

    async fn next_of(&self, activity: &Activity) -> Result<Vec<DateTime<Utc>>> {
        let calendar = self.calendar_of(activity).await?;
        Ok(next_fire_times(
            activity,
            calendar.as_ref().map(|c| &c.calendar),
            Utc::now(),
        ))
    }

    pub async fn list(
        &self,
        filter: &ActivityFilter,
        after: Option<Keyset>,
        limit: i64,
    ) -> Result<Vec<Activity>> {
        Ok(self.store.list(filter, after, limit).await?)
    }

    /// Creates an activity under a new ID. `idempotency` is (key, request
    /// hash): a repeated key with the same request replays the first result.
    pub async fn create(
        &self,
        definition: &ActivityDefinition,
        idempotency: Option<(&str, &str)>,
        actor: &Actor,
    ) -> Result<Written> {
        self.check_calendar(definition, &actor.project).await?;
        match self
            .store
            .create(Uuid::new_v4(), definition, idempotency, actor)
            .await?
        {
            CreateOutcome::Created(activity) => {
                let mut written = self.sync_and_reload(activity).await?;
                written.created = true;
                Ok(written)
            }
            CreateOutcome::Replayed(activity) => Ok(Written {
                next_fire_times: self.next_of(&activity).await?,
                activity,
                created: true,
                replayed: true,
            }),
        }
    }

    /// Create-or-replace under a client-chosen ID.
    pub async fn put(
        &self,
        id: Uuid,
        definition: &ActivityDefinition,
        expect: Expect,
        actor: &Actor,
    ) -> Result<Written> {
        self.check_calendar(definition, &actor.project).await?;
        let (activity, created) = found(
            self.store.put(id, definition, expect, actor).await,
            "activity",
        )?;
        let mut written = self.sync_unless_synced(activity).await?;
        written.created = created;
        Ok(written)
    }

    /// Replaces a live activity's definition with what `apply` makes of the
    /// current one (a merge patch), at the version it was made from. `apply`
    /// may fail with the caller's own error type.
    pub async fn patch<E: From<Error>>(
        &self,
        id: Uuid,
        expect: Expect,
        apply: impl FnOnce(&ActivityDefinition) -> std::result::Result<ActivityDefinition, E>,
        actor: &Actor,
    ) -> std::result::Result<Written, E> {
        let current = self.get_in(id, &actor.project).await?;
        if let Expect::Version(v) = expect
            && v != current.version
        {
            return Err(Error::from(StoreError::VersionMismatch {
                current: current.version,
            })
            .into());
        }
        let definition = apply(&current.definition)?;
        self.check_calendar(&definition, &actor.project).await?;
        let activity = self
            .store
            .replace_at(id, current.version, &definition, actor)
            .await
            .map_err(Error::from)?;
        Ok(self.sync_unless_synced(activity).await?)
    }

    /// Soft-deletes a live activity of the caller's project and removes its
    /// schedule.
    pub async fn delete(&self, id: Uuid, expect: Expect, actor: &Actor) -> Result<()> {
        self.check_owner(id, &actor.project).await?;
        let activity = found(self.store.delete(id, expect, actor).await, "activity")?;
        self.sync(&activity).await?;
        Ok(())
    }

    /// Syncs the schedule right after a write, then re-reads the row so the
    /// caller sees the sync state that was recorded.
    async fn sync_and_reload(&self, activity: Activity) -> Result<Written> {
        self.sync(&activity).await?;
        let reloaded = self.store.get_any(activity.id).await?.unwrap_or(activity);
        Ok(Written {
            next_fire_times: self.next_of(&reloaded).await?,
            activity: reloaded,
            created: false,
            replayed: false,
        })
    }

    /// After a PUT or PATCH: every change to a definition leaves the row
    /// `pending` (or `not_applicable`), so "not synced" covers both a change
    /// and an earlier sync that did not finish; an unchanged, synced activity
    /// costs Temporal nothing.
    async fn sync_unless_synced(&self, activity: Activity) -> Result<Written> {
        if activity.sync.state == SyncState::Synced {
            Ok(Written {
                next_fire_times: self.next_of(&activity).await?,
                activity,
                created: false,
                replayed: false,
            })
        } else {
            self.sync_and_reload(activity).await
        }
    }

    /// Brings Temporal in line with one activity and records the outcome
    /// (unless the activity moved on meanwhile: the newer write syncs
    /// itself). The one path that writes a schedule: writes call it right
    /// after their commit, and the reconciler for everything not known to be
    /// in sync.
    #[tracing::instrument(skip_all, fields(activity_id = %activity.id, version = activity.version))]
    pub async fn sync(&self, activity: &Activity) -> StoreResult<SyncOutcome> {
        let desired = desired_schedule(activity, &self.task_queue);
        let schedule_id = ids::schedule_id(activity.id);
        let outcome = self
            .gateway
            .apply(
                &schedule_id,
                desired.as_ref(),
                activity.sync.conflict_token.as_deref(),
            )
            .await;
        let (state, error, view) = match outcome {
            Ok(view) => {
                let state = if desired.is_some() {
                    SyncState::Synced
                } else {
                    SyncState::NotApplicable
                };
                (state, None, view)
            }
            Err(GatewayError::Rejected(message)) => {
                tracing::warn!(%message, "Temporal rejected the schedule");
                (SyncState::Error, Some(message), None)
            }
            Err(err) => {
                tracing::info!(error = %err, "schedule sync deferred");
                (SyncState::Pending, Some(err.to_string()), None)
            }
        };
        if matches!(state, SyncState::Pending | SyncState::Error) {
            crate::metrics::SYNC_FAILURES
                .with_label_values(&[state.as_str()])
                .inc();
        }
        let token = view.as_ref().map(|v| v.conflict_token.as_slice());
        self.store
            .record_sync(
                activity.id,
                activity.version,
                state,
                error.as_deref(),
                token,
            )
            .await?;
        Ok(SyncOutcome { state, error, view })
    }
}
