//! The times a cron trigger's DST policy wants and the engine does not fire
//! (`dst_exceptions`' extra times, e.g. the 02:30 of a spring day shifted to
//! 03:00 under `skipped: shift`): the reconciler starts each once it is due,
//! under the launcher's own workflow ID, and the launcher runs it under its
//! contract ID with the misfire rule, as if the engine had fired it.

use chrono::{DateTime, Duration, Utc};

use super::Schedules;
use acp_domain::activity::Activity;
use acp_domain::calendar::dst_exceptions;
use acp_domain::run::StartOutcome;

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
            let due: Vec<DateTime<Utc>> = dst_exceptions(&trigger.cadence, after, now)
                .extra
                .into_iter()
                .map(|t| t.at)
                .filter(|t| {
                    trigger.start_at.is_none_or(|s| *t >= s)
                        && trigger.end_at.is_none_or(|e| *t <= e)
                })
                .collect();
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
