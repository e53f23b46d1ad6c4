//! Run control: cancel a running run.

use uuid::Uuid;

use super::runs::Runs;
use super::{Error, Result, found};
use acp_domain::audit::{Actor, Note, Subject};
use acp_domain::run::{Cancellation, RunStatus, TaskStatus};
use acp_store::runs::NewTask;

/// What a cancel request did.
#[derive(Debug, Clone)]
pub struct Cancelled {
    pub run_id: Uuid,
    pub workflow_id: String,
    /// `running` while the cancellation travels through Temporal (the
    /// workflow records `cancelled` when it has stopped its task), or
    /// `cancelled` when it was forced or there was nothing left to stop.
    pub status: RunStatus,
    pub cancellation: Cancellation,
}

/// The cancel request of a run, as a client sent it.
#[derive(Debug, Clone, Default)]
pub struct CancelRequest {
    pub reason: Option<String>,
    pub force: bool,
    /// The API key asking; `None` when authentication is disabled.
    pub requested_by: Option<Uuid>,
}

impl Runs {
    /// Cancels a running run through Temporal: the run workflow, and through
    /// it the task workflow it waits for, get cancellation; the run ends
    /// `cancelled` and the tasks it did not finish too. With `force` the
    /// workflows are terminated instead and the rows are ended here.
    /// A second request while the first travels is answered the same way.
    /// The entry is appended with the recorded request, before Temporal is
    /// asked: the request stays recorded (and is repeated by a second
    /// request) whatever Temporal answers.
    pub async fn cancel(
        &self,
        run_id: Uuid,
        request: CancelRequest,
        actor: &Actor,
    ) -> Result<Cancelled> {
        self.check_run_owner(run_id, &actor.project).await?;
        self.cancel_as(run_id, request, Some(actor)).await
    }

    /// `cancel`, with an entry of its own only when `actor` is given (a bulk
    /// action appends one for all its runs).
    pub(super) async fn cancel_as(
        &self,
        run_id: Uuid,
        request: CancelRequest,
        actor: Option<&Actor>,
    ) -> Result<Cancelled> {
        let (run, tasks) = found(self.runs.get_run(run_id).await, "run")?;
        let not_running = |status: RunStatus| {
            Error::Conflict(format!(
                "the run is {}: only a running or queued run can be cancelled",
                status.as_str()
            ))
        };
        // A queued run (waiting for a concurrency slot) is cancelled the same
        // way: its workflow stops waiting and records `cancelled`.
        if !matches!(run.status, RunStatus::Running | RunStatus::Queued) {
            return Err(not_running(run.status));
        }
        let note = Note::action(
            Subject::run(run_id),
            serde_json::json!({
                "workflow_id": run.workflow_id,
                "reason": request.reason,
                "force": request.force,
            }),
        );
        let Some(cancellation) = self
            .runs
            .request_cancel(
                run_id,
                request.reason.as_deref(),
                request.requested_by,
                request.force,
                actor.map(|actor| (actor, &note)),
            )
            .await?
        else {
            // It ended between the read and the update.
            let (run, _) = found(self.runs.get_run(run_id).await, "run")?;
            return Err(not_running(run.status));
        };
        let reason = cancellation
            .reason
            .clone()
            .unwrap_or_else(|| "cancelled through the API".to_owned());
        let gateway = self.activities.gateway();
        let open = if request.force {
            let open = gateway
                .terminate_workflow(&run.workflow_id, &reason)
                .await?;
            for task in tasks.iter().filter(|t| t.status == TaskStatus::Running) {
                gateway
                    .terminate_workflow(&task.workflow_id, &reason)
                    .await?;
            }
            open
        } else {
            gateway.cancel_workflow(&run.workflow_id, &reason).await?
        };
        crate::metrics::RUN_CANCELS
            .with_label_values(&[if request.force {
                "terminated"
            } else {
                "cancel_requested"
            }])
            .inc();
        let mut status = RunStatus::Running;
        if request.force || !open {
            // Nothing in Temporal will record the ending: record it here.
            let unstarted = match run.definition_version {
                Some(version) => self
                    .runs
                    .definition_at(run.activity_id, version)
                    .await
                    .map(|d| d.tasks)
                    .unwrap_or_default(),
                None => Vec::new(),
            };
            let unstarted: Vec<NewTask> = unstarted
                .iter()
                .enumerate()
                .skip(tasks.len())
                .map(|(i, t)| {
                    NewTask::of_run(run_id, i as u32, t.task_type.as_str(), t.name.clone())
                })
                .collect();
            self.runs.cancel_tasks(run_id, &unstarted).await?;
            let count = |s: TaskStatus| tasks.iter().filter(|t| t.status == s).count() as i32;
            let how = if request.force {
                "terminated"
            } else {
                "cancelled"
            };
            let ended = self
                .runs
                .finish_run(
                    run_id,
                    RunStatus::Cancelled,
                    Some(&format!("{how}: {reason}")),
                    count(TaskStatus::Succeeded),
                    count(TaskStatus::Failed),
                )
                .await?;
            status = RunStatus::Cancelled;
            if let Some((activity_id, ended)) = ended {
                crate::metrics::count_run(self.activities.store().pool(), activity_id, ended).await;
                status = ended;
            }
        }
        Ok(Cancelled {
            run_id,
            workflow_id: run.workflow_id,
            status,
            cancellation,
        })
    }

    /// Cancels the running runs that have outlived their activity's
    /// `run_timeout` (at most 100 per call), marked so that they end
    /// `timed_out`. Called by the reconciler's loop; a run whose
    /// cancellation is still travelling is asked again, which is harmless.
    /// Returns how many runs were asked to stop.
    pub async fn enforce_run_timeouts(&self) -> Result<usize> {
        let now = chrono::Utc::now();
        let mut stopped = 0;
        for (run_id, started_at, text) in self.runs.running_with_deadline(100).await? {
            let Ok(limit) = acp_domain::duration::IsoDuration::parse(&text) else {
                continue;
            };
            if !acp_domain::retry::exceeded(started_at, limit.as_std(), now) {
                continue;
            }
            self.runs.mark_timed_out(run_id).await?;
            let request = CancelRequest {
                reason: Some(format!("run_timeout {text} exceeded")),
                force: false,
                requested_by: None,
            };
            match self.cancel_as(run_id, request, None).await {
                Ok(_) => stopped += 1,
                // It ended meanwhile.
                Err(Error::Conflict(_)) | Err(Error::NotFound(_)) => {}
                Err(err) => return Err(err),
            }
        }
        Ok(stopped)
    }
}
