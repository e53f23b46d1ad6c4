//! Our own bookkeeping writes from workflow code (run and task rows): how
//! they are retried, and whether they run as local activities or activity
//! tasks (by [`LOCAL_BOOKKEEPING`]).

use std::time::Duration;

use temporalio_common::data_converters::TemporalDeserializable;
use temporalio_common::error::ActivityExecutionError;
use temporalio_common::{ActivityDefinition, RetryPolicy};
use temporalio_sdk::{
    ActivityOptions, LocalActivityOptions, WorkflowCancellationToken, WorkflowContext,
};

use super::patches::LOCAL_BOOKKEEPING;

/// How our own bookkeeping is retried: until the database answers (an
/// outage delays runs, it does not fail them).
fn bookkeeping_retry() -> RetryPolicy {
    RetryPolicy::builder()
        .initial_interval(Duration::from_millis(500))
        .maximum_interval(Duration::from_secs(10))
        .build()
}

/// How long one bookkeeping attempt may take.
const BOOKKEEPING_ATTEMPT: Duration = Duration::from_secs(30);

/// Options for our own bookkeeping activities: short, retried until the
/// database answers.
pub(super) fn bookkeeping() -> ActivityOptions {
    ActivityOptions::with_start_to_close_timeout(BOOKKEEPING_ATTEMPT)
        .retry_policy(bookkeeping_retry())
        .build()
}

/// Bookkeeping after the workflow was cancelled: on a token of its own, or
/// it would inherit the cancellation and never run. Only a cancelled
/// execution schedules it, so histories without a cancel replay unchanged.
fn bookkeeping_after_cancel() -> ActivityOptions {
    let mut options = bookkeeping();
    options.cancellation_token = Some(WorkflowCancellationToken::new());
    options
}

/// Runs one bookkeeping write: a local activity in executions under
/// [`LOCAL_BOOKKEEPING`], an activity task in those from before it.
/// `after_cancel` puts it on a cancellation token of its own (see
/// [`bookkeeping_after_cancel`]).
pub(super) async fn bookkeep<W, AD>(
    ctx: &WorkflowContext<W>,
    activity: AD,
    input: AD::Input,
    after_cancel: bool,
) -> Result<AD::Output, ActivityExecutionError>
where
    AD: ActivityDefinition,
    AD::Output: TemporalDeserializable,
{
    if ctx.patched(LOCAL_BOOKKEEPING) {
        let options = LocalActivityOptions::builder()
            .start_to_close_timeout(BOOKKEEPING_ATTEMPT)
            .retry_policy(bookkeeping_retry())
            .maybe_cancellation_token(after_cancel.then(WorkflowCancellationToken::new))
            .build();
        ctx.execute_local_activity(activity, input, options).await
    } else {
        let options = if after_cancel {
            bookkeeping_after_cancel()
        } else {
            bookkeeping()
        };
        ctx.execute_activity(activity, input, options).await
    }
}
