//! The launcher's decision for one nominal time of a schedule: the misfire
//! rule applied to the activity's run history, and the fires that do not
//! run recorded as `skipped` runs.

use super::{Execution, ExecutionResult};
use acp_domain::audit::Actor;
use acp_domain::business_calendar::{BeyondCoverage, Fate, fate, is_time};
use acp_domain::ids;
use acp_domain::misfire::{Decision, Fire, SkipReason, catch_up_times_among, decide_among};
use acp_domain::run::RunTrigger;
use acp_domain::trigger::Cadence;
use acp_store::StoreError;
use acp_temporal::messages::*;

impl Execution {
    /// What to run for one nominal time of a schedule: applies the misfire
    /// rule, and records the fires that do not run as `skipped` runs.
    pub async fn prepare_scheduled_run(
        &self,
        input: PrepareScheduledRun,
    ) -> ExecutionResult<Prepared> {
        let none = |reason: &str| Prepared {
            run: None,
            workflow_id: None,
            reason: Some(reason.to_owned()),
        };
        let Some(activity) = self.activities.get_any(input.activity_id).await? else {
            return Ok(none("activity does not exist"));
        };
        if activity.deleted {
            return Ok(none("activity was deleted"));
        }
        let Some(trigger) = activity.definition.trigger.as_scheduled() else {
            return Ok(none("activity is no longer scheduled"));
        };
        let kind = match trigger.cadence {
            Cadence::Cron { .. } => RunTrigger::Cron,
            Cadence::Interval { .. } => RunTrigger::Interval,
        };
        let requested = self
            .runs
            .requested(activity.id, input.scheduled_for)
            .await?;
        let fire = Fire {
            scheduled_for: input.scheduled_for,
            now: chrono::Utc::now(),
            last_window_end: self.runs.last_window_end(activity.id).await?,
            requested: requested.is_some(),
            requested_window_start: requested.flatten(),
        };
        let run_at = |scheduled_for, window_start| RunInput {
            activity_id: activity.id,
            trigger: kind,
            scheduled_for: Some(scheduled_for),
            event_id: None,
            event: None,
            window_start,
            window_end: Some(scheduled_for),
            definition_version: activity.version,
        };
        let skip = async |reason: SkipReason| -> ExecutionResult<()> {
            crate::metrics::SKIPPED_FIRES
                .with_label_values(&[reason.as_str()])
                .inc();
            let workflow_id = ids::scheduled_run_workflow_id(activity.id, input.scheduled_for);
            self.runs
                .insert_skipped(
                    ids::run_id(&workflow_id),
                    activity.id,
                    &workflow_id,
                    kind,
                    input.scheduled_for,
                    reason,
                    activity.version,
                )
                .await?;
            Ok(())
        };
        let mut calendar = None;
        if let Some(rule) = &trigger.calendar {
            // The engine fires the plain cadence; the calendar decides here,
            // before the misfire rule, which of its times run. A time rolled
            // to another day runs under that day's own ID (started by the
            // reconciler when the engine does not fire it).
            match self.calendars.get(rule.id).await {
                Ok(record) => match fate(&record.calendar, rule, input.scheduled_for) {
                    Fate::Run => calendar = Some((record, *rule)),
                    // The engine fires a business-day offset's plain cadence
                    // (every day); only the offset's day is a time of the
                    // trigger, so another day's fire leaves no trace.
                    Fate::NotATime => return Ok(none("not the business day of the month")),
                    Fate::Excluded(reason) => {
                        let reason = SkipReason::from(&reason);
                        if reason == SkipReason::BeyondCoverage
                            && rule.beyond_coverage == BeyondCoverage::Pause
                        {
                            let note = record.calendar.coverage_pause_note();
                            self.activities
                                .set_paused(
                                    activity.id,
                                    true,
                                    Some(&note),
                                    &Actor::service("pause_activity"),
                                )
                                .await?;
                            tracing::info!(activity_id = %activity.id, "{note}");
                        }
                        skip(reason).await?;
                        return Ok(none(reason.as_str()));
                    }
                    Fate::Rolled { .. } => {
                        skip(SkipReason::Rolled).await?;
                        return Ok(none(SkipReason::Rolled.as_str()));
                    }
                },
                // Deleting a calendar in use is refused; should the row be
                // gone anyway, the plain cadence runs.
                Err(StoreError::NotFound) => {
                    tracing::warn!(activity_id = %activity.id, calendar_id = %rule.id, "the trigger's calendar does not exist");
                }
                Err(err) => return Err(err.into()),
            }
        }
        // The misfire rule counts the trigger's own times: under a
        // business-day offset, not the other days its cadence fires on.
        let own = |t: chrono::DateTime<chrono::Utc>| {
            calendar
                .as_ref()
                .is_none_or(|(record, rule)| is_time(&record.calendar, rule, t))
        };
        Ok(match decide_among(trigger, &own, fire) {
            Decision::Run { window_start } => Prepared {
                run: Some(run_at(input.scheduled_for, window_start)),
                workflow_id: Some(ids::scheduled_run_workflow_id(
                    activity.id,
                    input.scheduled_for,
                )),
                reason: None,
            },
            Decision::Skip(reason) => {
                if reason == SkipReason::CatchupLimit {
                    let times = catch_up_times_among(trigger, &own, input.scheduled_for, fire.now);
                    self.runs.plan_catch_up(activity.id, &times).await?;
                    tracing::info!(
                        scheduled_for = %input.scheduled_for,
                        catch_up = ?times,
                        "behind by the catch-up limit: the most recent times will run"
                    );
                }
                skip(reason).await?;
                none(reason.as_str())
            }
            Decision::Compress {
                latest,
                window_start,
            } => {
                skip(SkipReason::Compressed).await?;
                Prepared {
                    run: Some(run_at(latest, window_start)),
                    workflow_id: Some(ids::scheduled_run_workflow_id(activity.id, latest)),
                    reason: Some(SkipReason::Compressed.as_str().to_owned()),
                }
            }
        })
    }
}
