//! One activity attempt as the worker runs it: its span, its latency, and
//! the failures it reports to Temporal.

use temporalio_common::error::ApplicationFailure;
use temporalio_sdk::activities::{ActivityContext, ActivityError};
use tracing::Instrument;

use acp_service::execution::ExecutionError;

/// The span of one activity attempt: its name, the run it serves (all but
/// `prepare_scheduled_run`, which records the activity instead), the calling
/// workflow and the attempt. Every log line of the activity carries them.
pub(super) fn activity_span(ctx: &ActivityContext, run_id: Option<uuid::Uuid>) -> Attempt {
    let info = ctx.info();
    let span = tracing::info_span!(
        "temporal_activity",
        activity = %info.activity_type,
        run_id = tracing::field::Empty,
        activity_id = tracing::field::Empty,
        delivery_id = tracing::field::Empty,
        workflow_id = %info.workflow_id.as_deref().unwrap_or("-"),
        attempt = info.attempt,
    );
    if let Some(run_id) = run_id {
        span.record("run_id", tracing::field::display(run_id));
    }
    Attempt {
        span,
        activity_type: info.activity_type.clone(),
    }
}

/// One activity attempt: its span, and its type for the latency histogram.
pub(super) struct Attempt {
    pub(super) span: tracing::Span,
    activity_type: String,
}

/// Runs one activity attempt in its span and logs how it ended.
pub(super) async fn traced<T>(
    Attempt {
        span,
        activity_type,
    }: Attempt,
    work: impl Future<Output = Result<T, ExecutionError>>,
) -> Result<T, ActivityError> {
    let started = std::time::Instant::now();
    let result = work.instrument(span.clone()).await.map_err(failure);
    let elapsed = started.elapsed();
    acp_service::metrics::TASK_LATENCY
        .with_label_values(&[activity_type.as_str()])
        .observe(elapsed.as_secs_f64());
    let elapsed_ms = elapsed.as_millis() as u64;
    span.in_scope(|| match &result {
        Ok(_) => tracing::debug!(elapsed_ms, "activity completed"),
        Err(err) => tracing::warn!(elapsed_ms, error = ?err, "activity failed"),
    });
    result
}

/// What Temporal is told of a failed step: a `Final` one is not retried.
pub(super) fn failure(err: ExecutionError) -> ActivityError {
    match err {
        ExecutionError::Final(message) => {
            ActivityError::application(ApplicationFailure::non_retryable(anyhow::anyhow!(message)))
        }
        ExecutionError::Store(err) => err.into(),
        ExecutionError::Failed(err) => err.into(),
    }
}
