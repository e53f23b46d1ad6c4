//! The times a cron trigger's DST policy wants and the engine does not fire
//! (`dst_exceptions`' extra times, e.g. the 02:30 of a spring day shifted to
//! 03:00 under `skipped: shift`): the reconciler starts each once it is due,
//! under the launcher's own workflow ID, and the launcher runs it under its
//! contract ID with the misfire rule, as if the engine had fired it.

use chrono::{DateTime, Duration, Utc};

use super::Schedules;
use acp_domain::activity::Activity;
use acp_domain::business_calendar::{near_range, rolled_extras};
use acp_domain::calendar::{dst_exceptions, times_after};
use acp_domain::run::StartOutcome;
use acp_domain::trigger::ScheduledTrigger;

/// How far back a pass looks for extra times that have not started. Passes
/// come every few seconds; an hour covers a reconciler that was down for a
/// while, and stays well inside Temporal's retention, so a launcher that ran
/// is still known there (and its run row here is checked as well).
pub const EXTRAS_LOOKBACK: Duration = Duration::hours(1);

impl Schedules {
    /// Starts the due extra times of `activities` (in `(now − lookback,
    /// now]`) that have no run yet. Returns how many launchers it started.
    pub async fn start_due_dst_extras(&self, activities: &[Activity], now: DateTime<Utc>) -> usize {
        let mut started = 0;
        for activity in activities {
            // Only while the engine itself fires this definition: a paused,
            // disabled, deleted or not yet synced schedule fires nothing.
            if activity.deleted
                || activity.paused
                || !activity.definition.enabled
                || !activity.is_synced()
            {
                continue;
            }
            let Some(trigger) = activity.definition.trigger.as_scheduled() else {
                continue;
            };
            let after = (now - EXTRAS_LOOKBACK).max(activity.created_at);
            let mut due: Vec<DateTime<Utc>> = dst_exceptions(&trigger.cadence, after, now)
                .extra
                .into_iter()
                .map(|t| t.at)
                .collect();
            match self.calendar_extras(activity, trigger, after, now).await {
                Ok(rolled) => due.extend(rolled),
                Err(err) => {
                    tracing::warn!(error = %err, activity_id = %activity.id, "could not read the trigger's calendar");
                }
            }
            due.retain(|t| {
                trigger.start_at.is_none_or(|s| *t >= s) && trigger.end_at.is_none_or(|e| *t <= e)
            });
            due.sort();
            due.dedup();
            if due.is_empty() {
                continue;
            }
            match self.start_extras(activity, &due).await {
                Ok(n) => started += n,
                Err(err) => {
                    tracing::warn!(error = %err, activity_id = %activity.id, "could not start DST extra times");
                }
            }
        }
        started
    }

    /// The times in `(after, now]` a time of the cadence rolled to (by the
    /// trigger's business calendar) that the engine does not fire.
    async fn calendar_extras(
        &self,
        activity: &Activity,
        trigger: &ScheduledTrigger,
        after: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<Vec<DateTime<Utc>>, crate::Error> {
        let Some(rule) = &trigger.calendar else {
            return Ok(Vec::new());
        };
        let Some(record) = self.activities.calendar_of(activity).await? else {
            return Ok(Vec::new());
        };
        let Some((near_from, near_to)) = near_range(&record.calendar, rule, after, now) else {
            return Ok(Vec::new());
        };
        let tick = Duration::nanoseconds(1);
        let near = times_after(&trigger.cadence, near_from - tick).take_while(|t| t.at < near_to);
        let within = times_after(&trigger.cadence, after).take_while(|t| t.at <= now);
        let is_fired = |at: DateTime<Utc>| {
            times_after(&trigger.cadence, at - tick)
                .next()
                .is_some_and(|t| t.at == at)
        };
        Ok(rolled_extras(
            &record.calendar,
            rule,
            near.chain(within),
            is_fired,
            after,
            now,
        ))
    }

    async fn start_extras(
        &self,
        activity: &Activity,
        due: &[DateTime<Utc>],
    ) -> Result<usize, crate::Error> {
        let id = activity.id;
        let (Some(first), Some(last)) = (due.first(), due.last()) else {
            return Ok(0);
        };
        let recorded: std::collections::HashSet<DateTime<Utc>> = self
            .runs
            .scheduled_between(id, *first, *last + Duration::seconds(1))
            .await?
            .into_iter()
            .filter_map(|r| r.scheduled_for)
            .collect();
        let pauses = self.activities.store().pauses(id).await?;
        let mut started = 0;
        for t in due {
            let paused = pauses
                .iter()
                .any(|(from, to)| *from <= *t && to.is_none_or(|to| *t < to));
            if recorded.contains(t) || paused {
                continue;
            }
            let outcome = self
                .activities
                .gateway()
                .start_launcher(id, *t, self.activities.task_queue(), false)
                .await?;
            if outcome == StartOutcome::Started {
                tracing::info!(activity_id = %id, scheduled_for = %t, "started a DST extra time");
                started += 1;
            }
        }
        Ok(started)
    }
}
