//! Run control: retry a failed or cancelled run.

use std::time::Duration;

use uuid::Uuid;

use super::runs::Runs;
use super::{Error, Result, found};
use acp_domain::audit::{Actor, Note, Subject};
use acp_domain::ids;
use acp_domain::retry;
use acp_domain::run::StartOutcome;
use acp_store::retries::RetryBegun;

/// How long a retry waits for the previous execution, already recorded as
/// ended, to close in Temporal.
const CLOSE_WAIT: Duration = Duration::from_secs(15);

/// What a retry request did.
#[derive(Debug, Clone)]
pub struct Retried {
    pub run_id: Uuid,
    /// The contract ID: the same one every attempt runs under.
    pub workflow_id: String,
    /// The attempt this request began (2 for the first retry).
    pub attempt: i32,
    pub requested_by: Option<Uuid>,
}

impl Runs {
    /// Runs a failed or cancelled run again under its contract workflow ID.
    /// Temporal allows a new execution of that ID only after a failed,
    /// cancelled or terminated one (AllowDuplicateFailedOnly), so a run that
    /// succeeded can never run twice; the run workflow keeps the results of
    /// tasks that succeeded (their task workflow IDs already did) and runs
    /// the failed task and those after it. Of concurrent requests exactly
    /// one begins the attempt (a conditional update in PostgreSQL); the
    /// others are a conflict naming the status they found.
    /// The entry is appended when Temporal has started the attempt: a
    /// retry it refused is taken back and leaves none.
    pub async fn retry(
        &self,
        run_id: Uuid,
        requested_by: Option<Uuid>,
        actor: &Actor,
    ) -> Result<Retried> {
        self.check_run_owner(run_id, &actor.project).await?;
        self.retry_via(run_id, requested_by, "run", Some(actor))
            .await
    }

    /// `retry`, counted in `acp_run_retries_total` under `via` (`run`, `bulk`),
    /// with an entry of its own only when `actor` is given.
    pub(super) async fn retry_via(
        &self,
        run_id: Uuid,
        requested_by: Option<Uuid>,
        via: &str,
        actor: Option<&Actor>,
    ) -> Result<Retried> {
        let (run, _) = found(self.runs.get_run(run_id).await, "run")?;
        if let Some(refusal) = retry::not_retryable(run.status) {
            return Err(Error::Conflict(refusal));
        }
        let Some(input) = retry::input_of(&run) else {
            return Err(Error::Conflict(
                "the run has no definition version to run again".to_owned(),
            ));
        };
        let attempt = match found(self.runs.begin_retry(run_id, requested_by).await, "run")? {
            RetryBegun::Begun { attempt } => attempt,
            RetryBegun::Refused(status) => {
                return Err(Error::Conflict(
                    retry::not_retryable(status).unwrap_or_default(),
                ));
            }
        };
        // The same request ID for the same attempt: a start repeated after
        // an answer that got lost is the same start to Temporal.
        let request_id = ids::retry_request_id(run_id, attempt);
        let started = self
            .start_after_close(&run.workflow_id, &input, request_id)
            .await;
        match started {
            Ok(StartOutcome::Started) => {
                let note = Note::action(
                    Subject::run(run_id),
                    serde_json::json!({"workflow_id": run.workflow_id, "attempt": attempt}),
                );
                self.runs
                    .mark_attempt_dispatched(run_id, attempt, actor.map(|a| (a, &note)))
                    .await?;
                crate::metrics::RUN_RETRIES.with_label_values(&[via]).inc();
                Ok(Retried {
                    run_id,
                    workflow_id: run.workflow_id,
                    attempt,
                    requested_by,
                })
            }
            Ok(StartOutcome::Duplicate) => {
                self.runs.undo_retry(run_id, attempt).await?;
                Err(Error::Conflict(format!(
                    "Temporal refused a new execution of {}: its last execution is running or \
                     completed (a run that failed before retries were supported completed \
                     in Temporal and cannot run again under its ID)",
                    run.workflow_id
                )))
            }
            Err(err) => {
                self.runs.undo_retry(run_id, attempt).await?;
                Err(err.into())
            }
        }
    }

    /// Starts the retry's execution. The run's row is written as the run
    /// workflow's last step, a moment before Temporal closes the execution:
    /// a retry asked for in that moment finds the old execution still open,
    /// so it waits (bounded) for the close instead of refusing a run the
    /// caller has seen end.
    async fn start_after_close(
        &self,
        workflow_id: &str,
        input: &acp_domain::run::RunInput,
        request_id: Uuid,
    ) -> std::result::Result<StartOutcome, acp_temporal::GatewayError> {
        let gateway = self.activities.gateway();
        let deadline = tokio::time::Instant::now() + CLOSE_WAIT;
        let mut pause = Duration::from_millis(50);
        // Refused while it was open, closed when asked: it closed in between,
        // so one more start decides.
        let mut seen_closed = false;
        loop {
            let outcome = gateway
                .start_retry(workflow_id, self.activities.task_queue(), input, request_id)
                .await?;
            if outcome != StartOutcome::Duplicate
                || seen_closed
                || tokio::time::Instant::now() >= deadline
            {
                return Ok(outcome);
            }
            seen_closed = !gateway.workflow_is_open(workflow_id).await?;
            if !seen_closed {
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(1));
            }
        }
    }
}
