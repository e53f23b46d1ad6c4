//! Alerts: evaluating an activity's expectations from PostgreSQL alone, and
//! reading the alerts that evaluation opened and resolved.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{Result, found};
use acp_domain::activity::Activity;
use acp_domain::alert::{
    self, Alert, AlertKind, Breach, LOOKBACK, MAX_TIMES, Schedule, late_start_events,
    late_start_scheduled,
};
use acp_domain::business_calendar::is_time;
use acp_domain::project::ProjectId;
use acp_domain::query::AlertFilter;
use acp_domain::timeline::History;
use acp_domain::trigger::Cadence;
use acp_domain::window::nominal_times_between;
use acp_store::lease::PassLock;
use acp_store::{ActivityStore, AlertStore, CalendarStore, StoreError, StoreResult};

/// `pg_try_advisory_xact_lock` key of an evaluation pass: "acp-alert".
pub const ALERT_LOCK_KEY: i64 = 0x0061_6370_616c_6572;

/// What one evaluation of one activity changed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Changes {
    pub opened: Vec<AlertKind>,
    pub resolved: Vec<AlertKind>,
}

#[derive(Clone)]
pub struct Alerts {
    store: AlertStore,
    activities: ActivityStore,
    calendars: CalendarStore,
}

impl Alerts {
    pub fn new(store: AlertStore, activities: ActivityStore) -> Self {
        let calendars = CalendarStore::new(store.pool().clone());
        Self {
            store,
            activities,
            calendars,
        }
    }

    /// An alert of the project's activities; another project's is `NotFound`.
    pub async fn get(&self, id: Uuid, project: &ProjectId) -> Result<Alert> {
        found(self.store.get(id, project).await, "alert")
    }

    pub async fn list(
        &self,
        project: &ProjectId,
        filter: &AlertFilter,
        after: Option<(DateTime<Utc>, Uuid)>,
        limit: i64,
    ) -> Result<Vec<Alert>> {
        Ok(self.store.list(project, filter, after, limit).await?)
    }

    pub async fn open_of(&self, activity_id: Uuid) -> Result<Vec<Alert>> {
        Ok(self.store.open_of(activity_id).await?)
    }

    /// Evaluates every activity with expectations or open alerts once.
    pub async fn evaluate_all(&self, now: DateTime<Utc>) -> StoreResult<Changes> {
        let mut all = Changes::default();
        for id in self.store.evaluation_targets().await? {
            match self.evaluate(id, now).await {
                Ok(changes) => {
                    all.opened.extend(changes.opened);
                    all.resolved.extend(changes.resolved);
                }
                Err(err @ acp_store::StoreError::Unavailable(_)) => return Err(err),
                Err(err) => {
                    tracing::warn!(activity_id = %id, error = %err, "alert evaluation failed")
                }
            }
        }
        Ok(all)
    }

    /// Opens an alert for each broken expectation that has none open, and
    /// resolves each open alert whose expectation holds again (or no longer
    /// applies: removed, activity deleted, disabled or paused).
    #[tracing::instrument(skip(self))]
    pub async fn evaluate(&self, id: Uuid, now: DateTime<Utc>) -> StoreResult<Changes> {
        let activity = self.activities.get_any(id).await?;
        let mut breaches = match &activity {
            Some(a) if !a.deleted && !a.schedule_paused() => self.breaches(a, now).await?,
            _ => vec![],
        };
        // Coverage is judged paused or not: running out of it is what
        // pauses an activity under `beyond_coverage: pause`, and the alert
        // stays open until the calendar is extended.
        if let Some(a) = activity.as_ref().filter(|a| !a.deleted) {
            breaches.extend(self.coverage(a, now).await?);
        }
        let mut changes = Changes::default();
        for breach in &breaches {
            if let Some(alert) = self.store.open(id, breach).await? {
                tracing::warn!(activity_id = %id, kind = %alert.kind, summary = %alert.summary, "alert opened");
                crate::metrics::ALERTS_OPENED
                    .with_label_values(&[alert.kind.as_str()])
                    .inc();
                changes.opened.push(alert.kind);
            }
        }
        for open in self.store.open_of(id).await? {
            if breaches.iter().any(|b| b.kind == open.kind) {
                continue;
            }
            if let Some(alert) = self.store.resolve(open.id).await? {
                tracing::info!(activity_id = %id, kind = %alert.kind, "alert resolved");
                crate::metrics::ALERTS_RESOLVED
                    .with_label_values(&[alert.kind.as_str()])
                    .inc();
                changes.resolved.push(alert.kind);
            }
        }
        Ok(changes)
    }

    /// `calendar_coverage`: the trigger's calendar's coverage ends within
    /// the notice (a calendar that no longer exists has none to end).
    async fn coverage(
        &self,
        activity: &Activity,
        now: DateTime<Utc>,
    ) -> StoreResult<Option<Breach>> {
        let notice = activity
            .definition
            .alerts
            .as_ref()
            .and_then(|e| e.calendar_coverage);
        let rule = activity
            .definition
            .trigger
            .as_scheduled()
            .and_then(|t| t.calendar);
        let (Some(notice), Some(rule)) = (notice, rule) else {
            return Ok(None);
        };
        let record = match self.calendars.get(rule.id).await {
            Ok(record) => record,
            Err(StoreError::NotFound) => return Ok(None),
            Err(err) => return Err(err),
        };
        let coverage = alert::Coverage {
            calendar_id: record.id,
            calendar: &record.calendar,
        };
        Ok(alert::coverage_ending(notice, now, coverage))
    }

    /// Gathers the facts each expectation needs and asks the domain.
    async fn breaches(&self, activity: &Activity, now: DateTime<Utc>) -> StoreResult<Vec<Breach>> {
        let Some(expect) = &activity.definition.alerts else {
            return Ok(vec![]);
        };
        let id = activity.id;
        let mut out = Vec::new();
        if let Some(max) = expect.max_duration {
            out.extend(alert::stuck(max, now, &self.store.running(id).await?));
        }
        if let Some(n) = expect.failure_streak {
            out.extend(alert::failure_streak(
                n,
                &self.store.recent_outcomes(id, n).await?,
            ));
        }
        let Some(trigger) = activity.definition.trigger.as_scheduled() else {
            if let Some(within) = expect.start_within {
                let waiting = self.store.events_waiting(id, now - LOOKBACK).await?;
                out.extend(late_start_events(within, now, &waiting));
            }
            return Ok(out);
        };
        if expect.start_within.is_none() && !expect.missed_fires {
            return Ok(out);
        }
        // The most recent nominal times, at most MAX_TIMES of them, after the
        // activity's last change: a time before it was judged by what the
        // activity was then (disabled, paused, without this expectation),
        // which the database does not keep. So re-enabling an activity does
        // not raise alerts about the times it was disabled for.
        let mut since = (now - LOOKBACK).max(activity.updated_at);
        if let Cadence::Interval { every } = &trigger.cadence {
            since = since.max(now - every.as_chrono() * (MAX_TIMES as i32 + 1));
        }
        let mut times = nominal_times_between(&trigger.cadence, since, now, usize::MAX >> 1);
        // No fires after `end_at`: nothing is expected of those times.
        times.retain(|t| trigger.end_at.is_none_or(|end| *t <= end));
        // A business-day offset's cadence fires every day; only the
        // offset's day is a time of the activity.
        if let Some(rule) = trigger.calendar.filter(|r| r.business_day.is_some()) {
            match self.calendars.get(rule.id).await {
                Ok(record) => times.retain(|t| is_time(&record.calendar, &rule, *t)),
                Err(StoreError::NotFound) => {}
                Err(err) => return Err(err),
            }
        }
        if times.len() > MAX_TIMES {
            times.drain(..times.len() - MAX_TIMES);
        }
        let Some(first) = times.first().copied() else {
            return Ok(out);
        };
        let runs: HashMap<DateTime<Utc>, _> = self
            .store
            .runs_at(id, first, now)
            .await?
            .into_iter()
            .collect();
        let pauses = self.activities.pauses(id).await?;
        let outages = self.activities.temporal_outages(first, now).await?;
        let busy = self.store.busy_since(id, first).await?;
        let schedule = Schedule {
            times: &times,
            runs: &runs,
            last_executed: self.store.last_executed(id).await?,
            busy: &busy,
            history: History {
                created_at: activity.created_at,
                start_at: trigger.start_at,
                pauses: &pauses,
                temporal_outages: &outages,
                enabled: activity.definition.enabled,
                updated_at: activity.updated_at,
                now,
            },
        };
        if let Some(within) = expect.start_within {
            out.extend(late_start_scheduled(within, &schedule));
        }
        if expect.missed_fires {
            out.extend(alert::missed_fires(&schedule));
        }
        Ok(out)
    }

    /// One evaluation pass of every activity, under the cluster-wide lock;
    /// `None` when another instance holds it. Every instance refreshes its
    /// `acp_alerts_open` gauge.
    #[tracing::instrument(skip(self))]
    pub async fn pass(&self) -> StoreResult<Option<Changes>> {
        let started = std::time::Instant::now();
        let changes = match PassLock::try_take(self.store.pool(), ALERT_LOCK_KEY).await? {
            Some(lock) => {
                let changes = self.evaluate_all(Utc::now()).await?;
                lock.release().await?;
                Some(changes)
            }
            None => None,
        };
        self.refresh_gauge().await?;
        tracing::debug!(
            ran = changes.is_some(),
            elapsed_ms = started.elapsed().as_millis() as u64,
            "alert evaluation pass"
        );
        Ok(changes)
    }

    /// Sets `acp_alerts_open` from the database, so every replica serves
    /// the same figure whichever one evaluated.
    pub async fn refresh_gauge(&self) -> StoreResult<()> {
        let counts = self.store.open_counts().await?;
        crate::metrics::set_open_alerts(counts.into_iter().map(|(activity, project, kind, n)| {
            (
                crate::metrics::activity_label(&activity),
                crate::metrics::project_label(&project),
                kind,
                n,
            )
        }));
        Ok(())
    }
}
