//! Business calendars: their definitions, versioned, and the day-by-day
//! view of one.

use chrono::{DateTime, NaiveDate, Utc};
use uuid::Uuid;

use super::{Error, Result, found};
use acp_domain::audit::Actor;
use acp_domain::business_calendar::{
    BusinessCalendar, CalendarInput, CalendarRecord, DayStatus, ImportOptions, ImportWarning,
    import_ical,
};
use acp_domain::project::ProjectId;
use acp_domain::query::Expect;
use acp_store::{CalendarStore, StoreError};

/// The longest range `days` lists: a little over two years, enough for a
/// year grid and its neighbours.
pub const MAX_DAYS: i64 = 800;

/// How many of the activities that use a calendar a refused delete names.
const USERS_NAMED: i64 = 20;

/// A calendar read from an iCalendar file and stored.
#[derive(Debug, Clone)]
pub struct ImportedCalendar {
    pub record: CalendarRecord,
    pub events: usize,
    pub warnings: Vec<ImportWarning>,
}

#[derive(Clone)]
pub struct Calendars {
    store: CalendarStore,
}

impl Calendars {
    pub fn new(store: CalendarStore) -> Self {
        Self { store }
    }

    pub async fn create(
        &self,
        calendar: &BusinessCalendar,
        actor: &Actor,
    ) -> Result<CalendarRecord> {
        Ok(self.store.create(Uuid::new_v4(), calendar, actor).await?)
    }

    /// Reads holidays from an iCalendar file into a new calendar.
    pub async fn import(
        &self,
        text: &str,
        options: &ImportOptions,
        actor: &Actor,
    ) -> Result<ImportedCalendar> {
        let imported = import_ical(text, options).map_err(Error::Invalid)?;
        let record = self.create(&imported.calendar, actor).await?;
        Ok(ImportedCalendar {
            record,
            events: imported.events,
            warnings: imported.warnings,
        })
    }

    /// The project's calendar; another project's is `NotFound`.
    pub async fn get(&self, id: Uuid, project: &ProjectId) -> Result<CalendarRecord> {
        found(self.store.get_in(id, project).await, "calendar")
    }

    /// The calendar a trigger of `project` names (`trigger.calendar.id`): a
    /// missing one, or another project's, is that field's error.
    pub async fn named_by_trigger(&self, id: Uuid, project: &ProjectId) -> Result<CalendarRecord> {
        match self.store.get_in(id, project).await {
            Ok(record) => Ok(record),
            Err(StoreError::NotFound) => Err(Error::invalid(
                "trigger.calendar.id",
                format!("no calendar has the ID {id}"),
            )),
            Err(err) => Err(err.into()),
        }
    }

    pub async fn list(
        &self,
        project: &ProjectId,
        after: Option<(DateTime<Utc>, Uuid)>,
        limit: i64,
    ) -> Result<Vec<CalendarRecord>> {
        Ok(self.store.list(project, after, limit).await?)
    }

    /// Creates or replaces the calendar under a client-chosen ID. With a
    /// precondition (`If-Match`) it must exist, at that version when one is
    /// named. Whether it was created comes back with it.
    pub async fn put(
        &self,
        id: Uuid,
        calendar: &BusinessCalendar,
        expect: Expect,
        actor: &Actor,
    ) -> Result<(CalendarRecord, bool)> {
        match expect {
            Expect::Anything => Ok(self.store.upsert(id, calendar, actor).await?),
            _ => Ok((self.store.update(id, expect, calendar, actor).await?, false)),
        }
    }

    /// Replaces the calendar with what `apply` makes of its current form (a
    /// merge patch), at the version it was made from. `apply` may fail with
    /// the caller's own error type.
    pub async fn patch<E: From<Error>>(
        &self,
        id: Uuid,
        expect: Expect,
        apply: impl FnOnce(CalendarInput) -> std::result::Result<BusinessCalendar, E>,
        actor: &Actor,
    ) -> std::result::Result<CalendarRecord, E> {
        let current = self.get(id, &actor.project).await?;
        if let Expect::Version(v) = expect
            && v != current.version
        {
            return Err(Error::from(StoreError::VersionMismatch {
                current: current.version,
            })
            .into());
        }
        let calendar = apply(current.calendar.to_input())?;
        Ok(self
            .store
            .update(id, Expect::Version(current.version), &calendar, actor)
            .await
            .map_err(Error::from)?)
    }

    /// Deletes the calendar; a calendar an activity's trigger names is
    /// kept (a conflict naming the activities).
    pub async fn delete(&self, id: Uuid, expect: Expect, actor: &Actor) -> Result<()> {
        let project = &actor.project;
        let users = self.store.users(id, project, USERS_NAMED).await?;
        if users.is_empty() && found(self.store.delete(id, expect, actor).await, "calendar")? {
            return Ok(());
        }
        let users = if users.is_empty() {
            self.store.users(id, project, USERS_NAMED).await?
        } else {
            users
        };
        let named: Vec<String> = users
            .iter()
            .map(|(id, name)| format!("{name:?} ({id})"))
            .collect();
        Err(Error::Conflict(format!(
            "the calendar is used by activities {}: change their trigger's calendar first",
            named.join(", ")
        )))
    }

    /// Each date of `[from, to]` in the calendar, with the calendar.
    pub async fn days(
        &self,
        id: Uuid,
        project: &ProjectId,
        from: NaiveDate,
        to: NaiveDate,
    ) -> Result<(CalendarRecord, Vec<DayStatus>)> {
        if to < from {
            return Err(Error::invalid(
                "to",
                format!("{to} is before `from` ({from})"),
            ));
        }
        if (to - from).num_days() >= MAX_DAYS {
            return Err(Error::invalid(
                "to",
                format!("at most {MAX_DAYS} days from `from`"),
            ));
        }
        let record = self.get(id, project).await?;
        let days = record.calendar.days(from, to);
        Ok((record, days))
    }
}
