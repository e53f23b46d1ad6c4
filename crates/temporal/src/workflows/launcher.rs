//! `LaunchScheduledRunWorkflow`: what a schedule starts. It learns its
//! nominal time and starts the run under the contract ID.

use chrono::{DateTime, Utc};
use temporalio_common::search_attributes::{SearchAttributeKey, Timestamp};
use temporalio_macros::{workflow, workflow_methods};
use temporalio_sdk::{WorkflowContext, WorkflowResult};
use uuid::Uuid;

use super::bookkeeping::bookkeep;
use super::run::RunActivityWorkflow;
use super::{child_options, is_already_started};
use crate::activities::ExecutionActivities;
use crate::messages::*;
use crate::translate::{LauncherInput, launcher_workflow_id_prefix};

/// Temporal sets this on every scheduled start: the nominal, pre-jitter time.
const SCHEDULED_START: SearchAttributeKey<Timestamp> =
    SearchAttributeKey::datetime("TemporalScheduledStartTime");

/// The nominal time from a launcher's workflow ID, `launcher-{id}-{RFC3339}`,
/// for servers that do not set `TemporalScheduledStartTime`.
pub fn nominal_from_workflow_id(activity_id: Uuid, workflow_id: &str) -> Option<DateTime<Utc>> {
    let prefix = format!("{}-", launcher_workflow_id_prefix(activity_id));
    let suffix = workflow_id.strip_prefix(&prefix)?;
    DateTime::parse_from_rfc3339(suffix)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// Started by the schedule. Learns its nominal time, then runs
/// `RunActivityWorkflow` under the contract ID and waits for it, so the
/// schedule's overlap policy governs real runs.
#[workflow]
#[derive(Default)]
pub struct LaunchScheduledRunWorkflow;

#[workflow_methods]
impl LaunchScheduledRunWorkflow {
    #[run(name = "LaunchScheduledRunWorkflow")]
    pub async fn run(
        ctx: &mut WorkflowContext<Self>,
        input: LauncherInput,
    ) -> WorkflowResult<LaunchResult> {
        let from_attribute = ctx
            .search_attributes()
            .get(&SCHEDULED_START)
            .and_then(|ts| DateTime::from_timestamp(ts.seconds(), ts.nanos().max(0) as u32));
        let Some(scheduled_for) = from_attribute
            .or_else(|| nominal_from_workflow_id(input.activity_id, ctx.workflow_id()))
        else {
            return Ok(LaunchResult {
                workflow_id: None,
                outcome: "skipped".into(),
                detail: Some("not started by a schedule: no nominal time".into()),
            });
        };
        let prepared = bookkeep(
            ctx,
            ExecutionActivities::prepare_scheduled_run,
            PrepareScheduledRun {
                activity_id: input.activity_id,
                scheduled_for,
            },
            false,
        )
        .await?;
        let (Some(run), Some(workflow_id)) = (prepared.run, prepared.workflow_id) else {
            return Ok(LaunchResult {
                workflow_id: None,
                outcome: "skipped".into(),
                detail: prepared.reason,
            });
        };
        match ctx
            .start_child_workflow(
                RunActivityWorkflow::run,
                run,
                child_options(workflow_id.clone()),
            )
            .await
        {
            Ok(started) => {
                let detail = match started.result().await {
                    Ok(summary) => Some(summary.status.as_str().to_owned()),
                    Err(err) => Some(err.to_string()),
                };
                Ok(LaunchResult {
                    workflow_id: Some(workflow_id),
                    outcome: "started".into(),
                    detail,
                })
            }
            // Another fire (a retry, a backfill, a duplicate delivery) already
            // started this nominal time: at most one execution, by contract.
            Err(err) if is_already_started(&err) => Ok(LaunchResult {
                workflow_id: Some(workflow_id),
                outcome: "duplicate".into(),
                detail: None,
            }),
            Err(err) => Err(err.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nominal_time_from_the_appended_suffix() {
        let id = Uuid::from_u128(7);
        let wf = format!("launcher-{id}-2026-03-01T09:00:00Z");
        assert_eq!(
            nominal_from_workflow_id(id, &wf).map(|t| t.to_rfc3339()),
            Some("2026-03-01T09:00:00+00:00".into())
        );
        assert_eq!(nominal_from_workflow_id(id, "launcher-other"), None);
        // The ID the service gives a launcher it starts itself is the
        // schedule's, and the launcher reads the same time back from it.
        let at = DateTime::parse_from_rfc3339("2026-03-29T01:00:00Z")
            .map(|t| t.with_timezone(&Utc))
            .ok();
        let own = at.map(|t| crate::translate::launcher_workflow_id(id, t));
        assert_eq!(
            own.as_deref(),
            Some(format!("launcher-{id}-2026-03-29T01:00:00Z").as_str())
        );
        assert_eq!(own.and_then(|wf| nominal_from_workflow_id(id, &wf)), at);
    }
}
