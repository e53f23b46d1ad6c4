//! `calendars`: business calendars, each kept whole in its row (the dates
//! as JSONB in the form a client writes them) at a version.

use chrono::{DateTime, NaiveDate, Utc};
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use super::{StoreError, StoreResult, audit};
use acp_domain::audit::{Actor, Note, Subject};
use acp_domain::business_calendar::{
    BlackoutInput, BusinessCalendar, CalendarInput, CalendarRecord, HolidayInput, WorkingDayInput,
};
use acp_domain::project::ProjectId;
use acp_domain::query::Expect;

/// A `calendars` row, read into the domain's [`CalendarRecord`].
struct CalendarRow {
    id: Uuid,
    name: String,
    timezone: String,
    weekend_days: Vec<i16>,
    holidays: serde_json::Value,
    working_days: serde_json::Value,
    blackouts: serde_json::Value,
    covered_until: Option<NaiveDate>,
    version: i64,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl TryFrom<CalendarRow> for CalendarRecord {
    type Error = StoreError;

    fn try_from(row: CalendarRow) -> StoreResult<Self> {
        let id = row.id;
        let broken =
            |what: String| StoreError::Other(anyhow::anyhow!("calendar {id} as stored: {what}"));
        let holidays: Vec<HolidayInput> =
            serde_json::from_value(row.holidays).map_err(|e| broken(e.to_string()))?;
        let working_days: Vec<WorkingDayInput> =
            serde_json::from_value(row.working_days).map_err(|e| broken(e.to_string()))?;
        let blackouts: Vec<BlackoutInput> =
            serde_json::from_value(row.blackouts).map_err(|e| broken(e.to_string()))?;
        let input = CalendarInput {
            name: row.name,
            timezone: Some(row.timezone),
            weekend_days: Some(row.weekend_days.into_iter().map(i64::from).collect()),
            holidays,
            working_days,
            blackouts,
            covered_until: row.covered_until.map(|d| d.to_string()),
        };
        let calendar =
            BusinessCalendar::parse(&input).map_err(|errors| broken(format!("{errors:?}")))?;
        Ok(Self {
            id,
            calendar,
            version: row.version,
            created_at: row.created_at,
            updated_at: row.updated_at,
        })
    }
}

/// A calendar's columns as written.
struct Columns {
    name: String,
    timezone: &'static str,
    weekend_days: Vec<i16>,
    holidays: serde_json::Value,
    working_days: serde_json::Value,
    blackouts: serde_json::Value,
    covered_until: Option<NaiveDate>,
}

fn columns(calendar: &BusinessCalendar) -> StoreResult<Columns> {
    let input = calendar.to_input();
    let json = |value: serde_json::Result<serde_json::Value>| {
        value.map_err(|e| StoreError::Other(e.into()))
    };
    Ok(Columns {
        name: input.name,
        timezone: calendar.timezone().name(),
        weekend_days: calendar
            .weekend_days()
            .numbers()
            .into_iter()
            .map(i16::from)
            .collect(),
        holidays: json(serde_json::to_value(&input.holidays))?,
        working_days: json(serde_json::to_value(&input.working_days))?,
        blackouts: json(serde_json::to_value(&input.blackouts))?,
        covered_until: calendar.covered_until(),
    })
}

#[derive(Clone)]
pub struct CalendarStore {
    pool: PgPool,
}

/// A calendar's row as an audit entry keeps it (locked for the write that
/// reads it); `None` when there is none.
async fn snapshot(conn: &mut PgConnection, id: Uuid) -> StoreResult<Option<serde_json::Value>> {
    Ok(sqlx::query_scalar!(
        r#"SELECT to_jsonb(c) - 'created_at' - 'updated_at' AS "row!" FROM calendars c
           WHERE id = $1 FOR UPDATE"#,
        id,
    )
    .fetch_optional(conn)
    .await?)
}

/// Appends the entry of a write from `before` to the calendar as it is now.
async fn audit_write(
    conn: &mut PgConnection,
    actor: &Actor,
    id: Uuid,
    before: Option<serde_json::Value>,
) -> StoreResult<()> {
    let after = snapshot(conn, id).await?;
    let note = Note::definition(Subject::calendar(id), before, after);
    audit::append(conn, actor, &note).await
}

impl CalendarStore {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }

    pub async fn create(
        &self,
        id: Uuid,
        calendar: &BusinessCalendar,
        actor: &Actor,
    ) -> StoreResult<CalendarRecord> {
        let c = columns(calendar)?;
        let mut tx = self.pool.begin().await?;
        let record: CalendarRecord = sqlx::query_as!(
            CalendarRow,
            "INSERT INTO calendars (id, name, timezone, weekend_days, holidays, working_days,
                 blackouts, covered_until, project_id)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
             RETURNING id, name, timezone, weekend_days, holidays, working_days, blackouts,
                 covered_until, version, created_at, updated_at",
            id,
            c.name,
            c.timezone,
            &c.weekend_days,
            c.holidays,
            c.working_days,
            c.blackouts,
            c.covered_until,
            actor.project.as_str(),
        )
        .fetch_one(&mut *tx)
        .await?
        .try_into()?;
        audit_write(&mut tx, actor, id, None).await?;
        tx.commit().await?;
        Ok(record)
    }

    /// Any project's calendar: for the scheduler and the launcher, which
    /// act for the activity that names it.
    pub async fn get(&self, id: Uuid) -> StoreResult<CalendarRecord> {
        sqlx::query_as!(
            CalendarRow,
            "SELECT id, name, timezone, weekend_days, holidays, working_days, blackouts,
                 covered_until, version, created_at, updated_at
             FROM calendars WHERE id = $1",
            id,
        )
        .fetch_optional(&self.pool)
        .await?
        .ok_or(StoreError::NotFound)?
        .try_into()
    }

    /// The calendar when `project` owns it; another project's is as
    /// absent as one that never existed.
    pub async fn get_in(&self, id: Uuid, project: &ProjectId) -> StoreResult<CalendarRecord> {
        sqlx::query_as!(
            CalendarRow,
            "SELECT id, name, timezone, weekend_days, holidays, working_days, blackouts,
                 covered_until, version, created_at, updated_at
             FROM calendars WHERE id = $1 AND project_id = $2",
            id,
            project.as_str(),
        )
        .fetch_optional(&self.pool)
        .await?
        .ok_or(StoreError::NotFound)?
        .try_into()
    }

    /// The project's calendars, newest first, after the keyset `after`.
    pub async fn list(
        &self,
        project: &ProjectId,
        after: Option<(DateTime<Utc>, Uuid)>,
        limit: i64,
    ) -> StoreResult<Vec<CalendarRecord>> {
        let (at, id) = after.unzip();
        sqlx::query_as!(
            CalendarRow,
            "SELECT id, name, timezone, weekend_days, holidays, working_days, blackouts,
                 covered_until, version, created_at, updated_at
             FROM calendars
             WHERE project_id = $4 AND ($1::timestamptz IS NULL OR (created_at, id) < ($1, $2))
             ORDER BY created_at DESC, id DESC LIMIT $3",
            at,
            id,
            limit,
            project.as_str(),
        )
        .fetch_all(&self.pool)
        .await?
        .into_iter()
        .map(TryInto::try_into)
        .collect()
    }

    /// Creates the calendar under `id`, or replaces it at a new version:
    /// whether it was created comes back with it. Another project's
    /// calendar under `id` is not touched: `NotFound`.
    pub async fn upsert(
        &self,
        id: Uuid,
        calendar: &BusinessCalendar,
        actor: &Actor,
    ) -> StoreResult<(CalendarRecord, bool)> {
        let c = columns(calendar)?;
        let mut tx = self.pool.begin().await?;
        let before = snapshot(&mut tx, id).await?;
        let row = sqlx::query!(
            r#"INSERT INTO calendars AS c (id, name, timezone, weekend_days, holidays, working_days,
                 blackouts, covered_until, project_id)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
             ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, timezone = EXCLUDED.timezone,
                 weekend_days = EXCLUDED.weekend_days, holidays = EXCLUDED.holidays,
                 working_days = EXCLUDED.working_days, blackouts = EXCLUDED.blackouts,
                 covered_until = EXCLUDED.covered_until, version = c.version + 1, updated_at = now()
             WHERE c.project_id = EXCLUDED.project_id
             RETURNING id, name, timezone, weekend_days, holidays, working_days, blackouts,
                 covered_until, version, created_at, updated_at, (xmax = 0) AS "created!""#,
            id,
            c.name,
            c.timezone,
            &c.weekend_days,
            c.holidays,
            c.working_days,
            c.blackouts,
            c.covered_until,
            actor.project.as_str(),
        )
        .fetch_optional(&mut *tx)
        .await?
        .ok_or(StoreError::NotFound)?;
        audit_write(&mut tx, actor, id, before).await?;
        tx.commit().await?;
        let created = row.created;
        let record = CalendarRow {
            id: row.id,
            name: row.name,
            timezone: row.timezone,
            weekend_days: row.weekend_days,
            holidays: row.holidays,
            working_days: row.working_days,
            blackouts: row.blackouts,
            covered_until: row.covered_until,
            version: row.version,
            created_at: row.created_at,
            updated_at: row.updated_at,
        };
        Ok((record.try_into()?, created))
    }

    /// Replaces the calendar when it is at the version `expect` names (any
    /// version for `Expect::Exists`); absent, it is a version mismatch.
    pub async fn update(
        &self,
        id: Uuid,
        expect: Expect,
        calendar: &BusinessCalendar,
        actor: &Actor,
    ) -> StoreResult<CalendarRecord> {
        let c = columns(calendar)?;
        let mut tx = self.pool.begin().await?;
        let before = snapshot(&mut tx, id).await?;
        let updated = sqlx::query_as!(
            CalendarRow,
            "UPDATE calendars SET name = $2, timezone = $3, weekend_days = $4, holidays = $5,
                 working_days = $6, blackouts = $7, covered_until = $8,
                 version = version + 1, updated_at = now()
             WHERE id = $1 AND project_id = $10 AND ($9::bigint IS NULL OR version = $9)
             RETURNING id, name, timezone, weekend_days, holidays, working_days, blackouts,
                 covered_until, version, created_at, updated_at",
            id,
            c.name,
            c.timezone,
            &c.weekend_days,
            c.holidays,
            c.working_days,
            c.blackouts,
            c.covered_until,
            expect.version(),
            actor.project.as_str(),
        )
        .fetch_optional(&mut *tx)
        .await?;
        match updated {
            Some(row) => {
                let record = row.try_into()?;
                audit_write(&mut tx, actor, id, before).await?;
                tx.commit().await?;
                Ok(record)
            }
            None => {
                drop(tx);
                Err(self.mismatch(id, &actor.project).await)
            }
        }
    }

    /// Why a conditional write touched nothing: the current version, or
    /// version 0 for a calendar that is not there (or is another project's).
    async fn mismatch(&self, id: Uuid, project: &ProjectId) -> StoreError {
        match sqlx::query_scalar!(
            "SELECT version FROM calendars WHERE id = $1 AND project_id = $2",
            id,
            project.as_str(),
        )
        .fetch_optional(&self.pool)
        .await
        {
            Ok(current) => StoreError::VersionMismatch {
                current: current.unwrap_or(0),
            },
            Err(err) => err.into(),
        }
    }

    /// The project's live activities whose trigger names the calendar,
    /// `(id, name)` by name, at most `limit`.
    pub async fn users(
        &self,
        id: Uuid,
        project: &ProjectId,
        limit: i64,
    ) -> StoreResult<Vec<(Uuid, String)>> {
        let rows = sqlx::query!(
            "SELECT id, name FROM activities
             WHERE deleted_at IS NULL AND project_id = $3
               AND definition -> 'trigger' -> 'calendar' IS NOT NULL
               AND (definition -> 'trigger' -> 'calendar' ->> 'id') = $1
             ORDER BY name, id LIMIT $2",
            id.to_string(),
            limit,
            project.as_str(),
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.into_iter().map(|r| (r.id, r.name)).collect())
    }

    /// Deletes the calendar unless a live activity names it (the caller
    /// asks [`Self::users`] which; a row that is still there afterwards is
    /// reported as not deleted, `Ok(false)`).
    pub async fn delete(&self, id: Uuid, expect: Expect, actor: &Actor) -> StoreResult<bool> {
        let mut tx = self.pool.begin().await?;
        let before = snapshot(&mut tx, id).await?;
        let deleted = sqlx::query!(
            "DELETE FROM calendars WHERE id = $1 AND project_id = $3
               AND ($2::bigint IS NULL OR version = $2)
               AND NOT EXISTS (SELECT 1 FROM activities
                   WHERE deleted_at IS NULL AND definition -> 'trigger' -> 'calendar' IS NOT NULL
                     AND (definition -> 'trigger' -> 'calendar' ->> 'id') = $1::text)",
            id,
            expect.version(),
            actor.project.as_str(),
        )
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if deleted > 0 {
            audit_write(&mut tx, actor, id, before).await?;
            tx.commit().await?;
            return Ok(true);
        }
        drop(tx);
        if !self.users(id, &actor.project, 1).await?.is_empty() {
            return Ok(false);
        }
        match self.mismatch(id, &actor.project).await {
            StoreError::VersionMismatch { current: 0 } => Err(StoreError::NotFound),
            other => Err(other),
        }
    }
}
