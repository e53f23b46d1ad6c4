//! Patch IDs: each marks executions recorded after a change of workflow
//! code, so that histories from before it replay into the commands they
//! recorded. An ID, once released, never changes.

/// Executions that reached this patch write their rows (the launcher's
/// `prepare_scheduled_run`, the run's `log_run` and `finish_run`, the task's
/// `start_task` and `finish_task`, a retry's `task_state`) as local
/// activities: the worker runs them inside the workflow task that asked,
/// and history keeps one marker instead of an activity task's three events,
/// its dispatch through the server and the workflow task that follows.
/// They are the same idempotent upserts, retried the same way.
/// Histories from before the patch keep their activity tasks on replay.
pub(super) const LOCAL_BOOKKEEPING: &str = "bookkeeping-as-local-activities";

/// Marks executions whose failures end their workflow as failed in
/// Temporal (a failed task's workflow, a failed run's workflow), so that a
/// retry may run their IDs again. Histories without it completed instead,
/// and keep replaying that way.
pub(super) const FAILURES_FAIL: &str = "failures-fail-the-workflow";

/// Executions that reached this patch write their run's log on a
/// cancellation token of their own, so that a cancel delivered with the
/// first workflow task (a retry cancelled before any worker took it) is
/// recorded instead of cancelling the log. Histories from before it keep
/// their cancellable log on replay.
pub(super) const LOG_SURVIVES_CANCEL: &str = "log-run-survives-cancel";
