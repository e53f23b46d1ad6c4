//! Run control in bulk: retry or cancel an activity's runs matching filters.
//! Each run goes through the same conditional action as a single request,
//! so a bulk request is idempotent by the runs' state: a repeat (also after
//! a crash in the middle) finds the runs it already handled running,
//! succeeded or cancelled and leaves them alone.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::run_control::CancelRequest;
use super::runs::Runs;
use super::{Error, Result};
use acp_domain::audit::{Actor, Note, Subject};
use acp_domain::project::ProjectId;
use acp_domain::retry::{BULK_LIMIT, BulkOutcome, bulk_statuses};
use acp_domain::run::{RunStatus, RunTrigger};
use acp_store::retries::BulkFilter;

/// Which runs a bulk request acts on.
#[derive(Debug, Clone, Default)]
pub struct BulkRequest {
    pub status: Option<RunStatus>,
    pub trigger_type: Option<RunTrigger>,
    pub scheduled_from: Option<DateTime<Utc>>,
    pub scheduled_to: Option<DateTime<Utc>>,
    /// Only answer which runs the request would act on.
    pub dry_run: bool,
}

/// What a bulk request did with one run.
#[derive(Debug, Clone)]
pub struct BulkItem {
    pub run_id: Uuid,
    pub workflow_id: String,
    pub scheduled_for: Option<DateTime<Utc>>,
    pub outcome: BulkOutcome,
    /// The attempt a retry began.
    pub attempt: Option<i32>,
    pub detail: Option<String>,
}

/// What a bulk request did: one item per run it acted on, and whether more
/// runs matched than one request handles.
#[derive(Debug, Clone)]
pub struct BulkDone {
    pub items: Vec<BulkItem>,
    pub more: bool,
    /// Nothing was done: every item is `matched`.
    pub dry_run: bool,
}

impl Runs {
    async fn bulk_candidates(
        &self,
        activity_id: Uuid,
        cancel: bool,
        request: &BulkRequest,
        project: &ProjectId,
    ) -> Result<(Vec<(Uuid, String, Option<DateTime<Utc>>)>, bool)> {
        self.activities.get_any_in(activity_id, project).await?;
        let statuses =
            bulk_statuses(cancel, request.status).map_err(|m| Error::invalid("status", m))?;
        if let (Some(from), Some(to)) = (request.scheduled_from, request.scheduled_to)
            && from >= to
        {
            return Err(Error::invalid(
                "scheduled_before",
                "must be later than scheduled_after",
            ));
        }
        let filter = BulkFilter {
            trigger_type: request.trigger_type,
            scheduled_from: request.scheduled_from,
            scheduled_to: request.scheduled_to,
        };
        let mut runs = self
            .runs
            .bulk_candidates(activity_id, &statuses, &filter, BULK_LIMIT + 1)
            .await?;
        let more = runs.len() as i64 > BULK_LIMIT;
        runs.truncate(BULK_LIMIT as usize);
        Ok((runs, more))
    }

    /// A dry run's answer: the runs the request would act on.
    fn matched(runs: Vec<(Uuid, String, Option<DateTime<Utc>>)>, more: bool) -> BulkDone {
        let items = runs
            .into_iter()
            .map(|(run_id, workflow_id, scheduled_for)| BulkItem {
                run_id,
                workflow_id,
                scheduled_for,
                outcome: BulkOutcome::Matched,
                attempt: None,
                detail: None,
            })
            .collect();
        BulkDone {
            items,
            more,
            dry_run: true,
        }
    }

    /// Retries the activity's failed and cancelled runs matching `request`
    /// (at most `BULK_LIMIT`), each as `retry` would.
    pub async fn retry_many(
        &self,
        activity_id: Uuid,
        request: &BulkRequest,
        requested_by: Option<Uuid>,
        actor: &Actor,
    ) -> Result<BulkDone> {
        let (runs, more) = self
            .bulk_candidates(activity_id, false, request, &actor.project)
            .await?;
        if request.dry_run {
            return Ok(Self::matched(runs, more));
        }
        let mut items = Vec::with_capacity(runs.len());
        for (run_id, workflow_id, scheduled_for) in runs {
            let item = |outcome, attempt, detail| BulkItem {
                run_id,
                workflow_id: workflow_id.clone(),
                scheduled_for,
                outcome,
                attempt,
                detail,
            };
            items.push(
                match self.retry_via(run_id, requested_by, "bulk", None).await {
                    Ok(retried) => item(BulkOutcome::Retried, Some(retried.attempt), None),
                    Err(err) => failed_item(err, item)?,
                },
            );
        }
        let done = BulkDone {
            items,
            more,
            dry_run: false,
        };
        self.record_bulk(activity_id, request, &done, actor).await?;
        Ok(done)
    }

    /// Appends a bulk action's one entry: a digest of what it did with each
    /// run. Each run's action is a write of its own (a conditional update,
    /// then Temporal), so the entry follows them in a transaction of its
    /// own; it is the request's record, each run's own change is in its row.
    async fn record_bulk(
        &self,
        activity_id: Uuid,
        request: &BulkRequest,
        done: &BulkDone,
        actor: &Actor,
    ) -> Result<()> {
        let note = Note::action(Subject::activity(activity_id), bulk_summary(request, done));
        Ok(self.audit.record(actor, &note).await?)
    }

    /// Cancels the activity's running runs matching `request` (at most
    /// `BULK_LIMIT`), each as `cancel` would.
    pub async fn cancel_many(
        &self,
        activity_id: Uuid,
        request: &BulkRequest,
        cancel: CancelRequest,
        actor: &Actor,
    ) -> Result<BulkDone> {
        let (runs, more) = self
            .bulk_candidates(activity_id, true, request, &actor.project)
            .await?;
        if request.dry_run {
            return Ok(Self::matched(runs, more));
        }
        let mut items = Vec::with_capacity(runs.len());
        for (run_id, workflow_id, scheduled_for) in runs {
            let item = |outcome, attempt, detail| BulkItem {
                run_id,
                workflow_id: workflow_id.clone(),
                scheduled_for,
                outcome,
                attempt,
                detail,
            };
            items.push(match self.cancel_as(run_id, cancel.clone(), None).await {
                Ok(done) if done.status == RunStatus::Cancelled => {
                    item(BulkOutcome::Cancelled, None, None)
                }
                Ok(_) => item(BulkOutcome::CancelRequested, None, None),
                Err(err) => failed_item(err, item)?,
            });
        }
        let done = BulkDone {
            items,
            more,
            dry_run: false,
        };
        self.record_bulk(activity_id, request, &done, actor).await?;
        Ok(done)
    }
}

/// What a bulk action's entry keeps: its filter, and each run it acted on
/// with the outcome (at most `BULK_LIMIT` runs, so the digest stays small).
fn bulk_summary(request: &BulkRequest, done: &BulkDone) -> serde_json::Value {
    let runs: Vec<serde_json::Value> = done
        .items
        .iter()
        .map(|item| serde_json::json!({"run_id": item.run_id, "outcome": item.outcome.as_str()}))
        .collect();
    serde_json::json!({
        "filter": {
            "status": request.status.map(|s| s.as_str()),
            "trigger_type": request.trigger_type.map(|t| t.as_str()),
            "scheduled_after": request.scheduled_from,
            "scheduled_before": request.scheduled_to,
        },
        "runs": runs,
        "more": done.more,
    })
}

/// One run's failure as its item; what is not about that one run (a bug)
/// fails the request.
fn failed_item(
    err: Error,
    item: impl Fn(BulkOutcome, Option<i32>, Option<String>) -> BulkItem,
) -> Result<BulkItem> {
    match err {
        Error::Conflict(detail) => Ok(item(BulkOutcome::Skipped, None, Some(detail))),
        Error::NotFound(what) => Ok(item(
            BulkOutcome::Skipped,
            None,
            Some(format!("{what} no longer exists")),
        )),
        Error::Temporal(e @ acp_temporal::GatewayError::Unavailable(_)) => {
            Ok(item(BulkOutcome::Unavailable, None, Some(e.to_string())))
        }
        Error::Temporal(e) => Ok(item(BulkOutcome::Skipped, None, Some(e.to_string()))),
        Error::Store(acp_store::StoreError::Unavailable(e)) => {
            Ok(item(BulkOutcome::Unavailable, None, Some(e.to_string())))
        }
        other => Err(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bulk_digest_names_each_run_and_the_filter() {
        let run_id = Uuid::nil();
        let request = BulkRequest {
            status: Some(RunStatus::Failed),
            ..Default::default()
        };
        let done = BulkDone {
            items: vec![BulkItem {
                run_id,
                workflow_id: "w".into(),
                scheduled_for: None,
                outcome: BulkOutcome::Retried,
                attempt: Some(2),
                detail: None,
            }],
            more: true,
            dry_run: false,
        };
        let digest = bulk_summary(&request, &done);
        assert_eq!(digest["filter"]["status"], "failed");
        assert_eq!(digest["filter"]["trigger_type"], serde_json::Value::Null);
        assert_eq!(digest["runs"][0]["run_id"], run_id.to_string());
        assert_eq!(digest["runs"][0]["outcome"], "retried");
        assert_eq!(digest["more"], true);
    }
}
