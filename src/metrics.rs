//! Prometheus metrics, served at `/metrics`. Labels stay low-cardinality:
//! the matched route rather than the path, and no IDs except the activity
//! ID, which `ACP_METRICS_ACTIVITY_LABEL=false` turns off.

use std::sync::LazyLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounterVec, Opts, Registry, TextEncoder,
};

pub static REGISTRY: LazyLock<Registry> = LazyLock::new(Registry::new);
static ACTIVITY_LABEL: AtomicBool = AtomicBool::new(true);

fn counter(name: &str, help: &str, labels: &[&str]) -> IntCounterVec {
    let c = IntCounterVec::new(Opts::new(name, help), labels)
        .unwrap_or_else(|e| panic!("metric {name}: {e}"));
    let _ = REGISTRY.register(Box::new(c.clone()));
    c
}

/// A counter whose label values are all known: each series exists, at zero,
/// from the start, so that a rate() over it has a beginning.
fn counter_of(name: &str, help: &str, label: &str, values: &[&str]) -> IntCounterVec {
    let c = counter(name, help, &[label]);
    for value in values {
        c.with_label_values(&[*value]);
    }
    c
}

fn histogram(name: &str, help: &str, labels: &[&str], buckets: Vec<f64>) -> HistogramVec {
    let h = HistogramVec::new(HistogramOpts::new(name, help).buckets(buckets), labels)
        .unwrap_or_else(|e| panic!("metric {name}: {e}"));
    let _ = REGISTRY.register(Box::new(h.clone()));
    h
}

fn latency_buckets() -> Vec<f64> {
    vec![
        0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
    ]
}

pub static HTTP_REQUESTS: LazyLock<IntCounterVec> = LazyLock::new(|| {
    counter(
        "acp_http_requests_total",
        "HTTP requests by matched route and status",
        &["method", "route", "status"],
    )
});
pub static HTTP_LATENCY: LazyLock<HistogramVec> = LazyLock::new(|| {
    histogram(
        "acp_http_request_duration_seconds",
        "HTTP request latency",
        &["method", "route"],
        latency_buckets(),
    )
});
pub static RUNS: LazyLock<IntCounterVec> = LazyLock::new(|| {
    counter(
        "acp_runs_total",
        "Runs ended, by activity and status",
        &["activity_id", "status"],
    )
});
/// Run control (issue 13): cancel requests that reached a running run.
pub static RUN_CANCELS: LazyLock<IntCounterVec> = LazyLock::new(|| {
    counter_of(
        "acp_run_cancels_total",
        "Cancel requests for running runs, by what was done: cancel_requested or terminated",
        "action",
        &["cancel_requested", "terminated"],
    )
});
pub static SKIPPED_FIRES: LazyLock<IntCounterVec> = LazyLock::new(|| {
    use crate::domain::misfire::SkipReason;
    counter_of(
        "acp_skipped_fires_total",
        "Scheduled fires not run, by reason",
        "reason",
        &SkipReason::ALL
            .iter()
            .map(|r| r.as_str())
            .collect::<Vec<_>>(),
    )
});
pub static DISPATCHES: LazyLock<IntCounterVec> = LazyLock::new(|| {
    use crate::domain::event::DispatchOutcome;
    counter_of(
        "acp_event_dispatches_total",
        "Event dispatches by outcome",
        "outcome",
        &DispatchOutcome::ALL
            .iter()
            .map(|o| o.as_str())
            .collect::<Vec<_>>(),
    )
});
pub static SYNC_FAILURES: LazyLock<IntCounterVec> = LazyLock::new(|| {
    use crate::domain::activity::SyncState;
    counter_of(
        "acp_schedule_sync_failures_total",
        "Schedule syncs that failed",
        "state",
        &[SyncState::Pending.as_str(), SyncState::Error.as_str()],
    )
});
pub static RECONCILE_DURATION: LazyLock<HistogramVec> = LazyLock::new(|| {
    let h = histogram(
        "acp_reconcile_duration_seconds",
        "Duration of a reconcile pass",
        &[],
        latency_buckets(),
    );
    h.with_label_values::<&str>(&[]);
    h
});
pub static TASK_LATENCY: LazyLock<HistogramVec> = LazyLock::new(|| {
    histogram(
        "acp_task_duration_seconds",
        "Worker activity latency by activity type",
        &["activity_type"],
        latency_buckets(),
    )
});

pub fn set_activity_label(enabled: bool) {
    ACTIVITY_LABEL.store(enabled, Ordering::Relaxed);
}

/// The activity ID label, or `all` when the label is turned off.
pub fn activity_label(id: &uuid::Uuid) -> String {
    if ACTIVITY_LABEL.load(Ordering::Relaxed) {
        id.to_string()
    } else {
        "all".into()
    }
}

/// Counts and times every request by its matched route (`unmatched` for
/// paths no route serves).
pub async fn track(request: Request, next: Next) -> Response {
    let method = request.method().as_str().to_owned();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_else(|| "unmatched".into());
    let started = Instant::now();
    let response = next.run(request).await;
    HTTP_LATENCY
        .with_label_values(&[&method, &route])
        .observe(started.elapsed().as_secs_f64());
    HTTP_REQUESTS
        .with_label_values(&[&method, &route, response.status().as_str()])
        .inc();
    response
}

/// `GET /metrics`: the Prometheus text format.
pub async fn render() -> Response {
    // Register every family. Those with known label values then show each
    // series at zero; the others (routes, activities, activity types) appear
    // when first seen.
    LazyLock::force(&HTTP_REQUESTS);
    LazyLock::force(&HTTP_LATENCY);
    LazyLock::force(&RUNS);
    LazyLock::force(&RUN_CANCELS);
    LazyLock::force(&SKIPPED_FIRES);
    LazyLock::force(&DISPATCHES);
    LazyLock::force(&SYNC_FAILURES);
    LazyLock::force(&RECONCILE_DURATION);
    LazyLock::force(&TASK_LATENCY);
    let mut buffer = Vec::new();
    let _ = TextEncoder::new().encode(&REGISTRY.gather(), &mut buffer);
    (
        [(
            axum::http::header::CONTENT_TYPE,
            "text/plain; version=0.0.4",
        )],
        buffer,
    )
        .into_response()
}
