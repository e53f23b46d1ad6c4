//! The use cases' Prometheus metrics, in the one registry the server's
//! `/metrics` renders (the server adds its HTTP families). Labels stay
//! low-cardinality: no IDs except the activity ID, which
//! `ACP_METRICS_ACTIVITY_LABEL=false` turns off, and the project ID, of
//! which at most [`PROJECT_LABELS`] values are shown.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{LazyLock, Mutex};

use prometheus::{HistogramOpts, HistogramVec, IntCounterVec, IntGaugeVec, Opts, Registry};

mod project;

pub use project::{OTHER_PROJECTS, PROJECT_LABELS, count_run, project_label};

pub static REGISTRY: LazyLock<Registry> = LazyLock::new(Registry::new);
static ACTIVITY_LABEL: AtomicBool = AtomicBool::new(true);

pub fn counter(name: &str, help: &str, labels: &[&str]) -> IntCounterVec {
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

pub fn histogram(name: &str, help: &str, labels: &[&str], buckets: Vec<f64>) -> HistogramVec {
    let h = HistogramVec::new(HistogramOpts::new(name, help).buckets(buckets), labels)
        .unwrap_or_else(|e| panic!("metric {name}: {e}"));
    let _ = REGISTRY.register(Box::new(h.clone()));
    h
}

pub fn latency_buckets() -> Vec<f64> {
    vec![
        0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
    ]
}

pub static RUNS: LazyLock<IntCounterVec> = LazyLock::new(|| {
    counter(
        "acp_runs_total",
        "Runs ended, by activity, project and status",
        &["activity_id", "project", "status"],
    )
});
/// Run control: cancel requests that reached a running run.
pub static RUN_CANCELS: LazyLock<IntCounterVec> = LazyLock::new(|| {
    counter_of(
        "acp_run_cancels_total",
        "Cancel requests for running runs, by what was done: cancel_requested or terminated",
        "action",
        &["cancel_requested", "terminated"],
    )
});
/// Run control: retries that began a new attempt of a run, by
/// how they were asked for: `run` (one run) or `bulk` (an activity's runs).
pub static RUN_RETRIES: LazyLock<IntCounterVec> = LazyLock::new(|| {
    counter_of(
        "acp_run_retries_total",
        "Retries that began a new attempt of a failed or cancelled run, by how they were asked for",
        "via",
        &["run", "bulk"],
    )
});
pub static SKIPPED_FIRES: LazyLock<IntCounterVec> = LazyLock::new(|| {
    use acp_domain::misfire::SkipReason;
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
    use acp_domain::event::DispatchOutcome;
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
pub static EVENT_INGEST: LazyLock<IntCounterVec> = LazyLock::new(|| {
    counter_of(
        "acp_event_ingest_total",
        "Events ingested, by how they were written: one_statement (the event, its dispatch rows \
         and the key check in one statement, from the subscribers last read) or general (the \
         first event of its type in this process, a re-delivery, changed or debounced \
         subscribers, Prefer: wait)",
        "path",
        &["one_statement", "general"],
    )
});
pub static INGEST_STATEMENTS: LazyLock<prometheus::IntCounter> = LazyLock::new(|| {
    let c = prometheus::IntCounter::new(
        "acp_event_ingest_statements_total",
        "Statements that wrote one_statement events: events that arrive together share one \
         (acp_event_ingest_total{path=\"one_statement\"} over this is the mean batch)",
    )
    .unwrap_or_else(|e| panic!("metric: {e}"));
    let _ = REGISTRY.register(Box::new(c.clone()));
    c
});
pub static EVENT_CONFLICTS: LazyLock<prometheus::IntCounter> = LazyLock::new(|| {
    let c = prometheus::IntCounter::new(
        "acp_event_conflicts_total",
        "Re-deliveries of a known event ID with other content (HTTP 409s and broker messages)",
    )
    .unwrap_or_else(|e| panic!("metric: {e}"));
    let _ = REGISTRY.register(Box::new(c.clone()));
    c
});
pub static SOURCE_MESSAGES: LazyLock<IntCounterVec> = LazyLock::new(|| {
    counter_of(
        "acp_source_messages_total",
        "Broker messages handled, by outcome (retried: not acknowledged, delivered again)",
        "outcome",
        &["accepted", "rejected", "conflict", "retried"],
    )
});
pub static SOURCE_REJECTIONS: LazyLock<IntCounterVec> = LazyLock::new(|| {
    use acp_domain::message::RejectReason;
    counter_of(
        "acp_source_rejections_total",
        "Poison broker messages acknowledged and kept in the rejected list, by reason",
        "reason",
        &RejectReason::ALL
            .iter()
            .map(|r| r.as_str())
            .collect::<Vec<_>>(),
    )
});
pub static SYNC_FAILURES: LazyLock<IntCounterVec> = LazyLock::new(|| {
    use acp_domain::activity::SyncState;
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

pub static FLOW_QUEUED: LazyLock<IntGaugeVec> = LazyLock::new(|| {
    let g = IntGaugeVec::new(
        Opts::new(
            "acp_flow_queued_runs",
            "Runs queued for a concurrency slot (flow.concurrency), by activity",
        ),
        &["activity"],
    )
    .unwrap_or_else(|e| panic!("metric acp_flow_queued_runs: {e}"));
    let _ = REGISTRY.register(Box::new(g.clone()));
    g
});

pub static FLOW_OLDEST_WAIT: LazyLock<prometheus::GaugeVec> = LazyLock::new(|| {
    let g = prometheus::GaugeVec::new(
        Opts::new(
            "acp_flow_oldest_wait_seconds",
            "How long the longest-waiting queued run (flow.concurrency or flow.rate_limit) \
             has waited, by activity; 0 when none waits",
        ),
        &["activity"],
    )
    .unwrap_or_else(|e| panic!("metric acp_flow_oldest_wait_seconds: {e}"));
    let _ = REGISTRY.register(Box::new(g.clone()));
    g
});

pub static DISPATCH_ALLOWANCE: LazyLock<prometheus::IntGauge> = LazyLock::new(|| {
    let g = prometheus::IntGauge::new(
        "acp_dispatch_allowance",
        "How many runs started by events or by hand this process's dispatcher lets run at \
         once now: while a schedule fires often, an allowance that follows how long runs wait for \
         the engine; otherwise ACP_DISPATCH_MAX_RUNNING (0: no limit)",
    )
    .unwrap_or_else(|e| panic!("metric acp_dispatch_allowance: {e}"));
    let _ = REGISTRY.register(Box::new(g.clone()));
    g
});

pub static FLOW_SLOTS_RECOVERED: LazyLock<prometheus::IntCounter> = LazyLock::new(|| {
    let c = prometheus::IntCounter::new(
        "acp_flow_slots_recovered_total",
        "Concurrency slots freed because their run's workflow had closed without ending the run",
    )
    .unwrap_or_else(|e| panic!("metric acp_flow_slots_recovered_total: {e}"));
    let _ = REGISTRY.register(Box::new(c.clone()));
    c
});

pub static DUTY_LEADER: LazyLock<IntGaugeVec> = LazyLock::new(|| {
    let g = IntGaugeVec::new(
        Opts::new(
            "acp_duty_leader",
            "1 while this process holds a duty that must be single in the fleet \
             (reconcile, alert_evaluation, change_sequencer), 0 while it stands by for it",
        ),
        &["duty"],
    )
    .unwrap_or_else(|e| panic!("metric acp_duty_leader: {e}"));
    let _ = REGISTRY.register(Box::new(g.clone()));
    g
});

/// Passes of a fleet-single duty this process made while holding it, by
/// duty and outcome (`ok`, `failed`): a duty whose counter stands still on
/// every replica is not being carried out.
pub static DUTY_PASSES: LazyLock<IntCounterVec> = LazyLock::new(|| {
    counter(
        "acp_duty_passes_total",
        "Passes of a fleet-single duty (reconcile, alert_evaluation) made by this process, \
         by duty and outcome: ok or failed",
        &["duty", "outcome"],
    )
});

/// Counts one pass of `duty`.
pub fn duty_pass(duty: &str, ok: bool) {
    DUTY_PASSES
        .with_label_values(&[duty, if ok { "ok" } else { "failed" }])
        .inc();
}

pub static ALERTS_OPEN: LazyLock<IntGaugeVec> = LazyLock::new(|| {
    let g = IntGaugeVec::new(
        Opts::new(
            "acp_alerts_open",
            "Open alerts by activity, project and kind",
        ),
        &["activity", "kind", "project"],
    )
    .unwrap_or_else(|e| panic!("metric acp_alerts_open: {e}"));
    let _ = REGISTRY.register(Box::new(g.clone()));
    g
});
pub static ALERTS_OPENED: LazyLock<IntCounterVec> = LazyLock::new(|| {
    use acp_domain::alert::AlertKind;
    counter_of(
        "acp_alerts_opened_total",
        "Alerts opened, by kind",
        "kind",
        &AlertKind::ALL
            .iter()
            .map(|k| k.as_str())
            .collect::<Vec<_>>(),
    )
});
pub static ALERTS_RESOLVED: LazyLock<IntCounterVec> = LazyLock::new(|| {
    use acp_domain::alert::AlertKind;
    counter_of(
        "acp_alerts_resolved_total",
        "Alerts resolved, by kind",
        "kind",
        &AlertKind::ALL
            .iter()
            .map(|k| k.as_str())
            .collect::<Vec<_>>(),
    )
});
pub static NOTIFICATION_DELIVERIES: LazyLock<IntCounterVec> = LazyLock::new(|| {
    counter_of(
        "acp_notification_attempts_total",
        "Notification delivery attempts, by outcome",
        "outcome",
        &["delivered", "failed"],
    )
});

/// An `acp_alerts_open` series: activity label, kind, project label.
type OpenSeries = (String, String, String);

/// Series of `acp_alerts_open` seen so far: one whose alerts all resolved
/// reads 0 rather than vanishing.
static OPEN_SERIES: LazyLock<Mutex<HashSet<OpenSeries>>> = LazyLock::new(Default::default);

/// Sets `acp_alerts_open` to these (activity label, project label, kind,
/// count) figures; every other series seen before reads 0.
pub fn set_open_alerts(
    counts: impl IntoIterator<Item = (String, String, acp_domain::alert::AlertKind, i64)>,
) {
    let mut totals: HashMap<OpenSeries, i64> = HashMap::new();
    for (activity, project, kind, n) in counts {
        *totals
            .entry((activity, kind.as_str().to_owned(), project))
            .or_default() += n;
    }
    let mut seen = OPEN_SERIES.lock().unwrap_or_else(|p| p.into_inner());
    for key in seen.iter() {
        if !totals.contains_key(key) {
            ALERTS_OPEN
                .with_label_values(&[&key.0, &key.1, &key.2])
                .set(0);
        }
    }
    for ((activity, kind, project), n) in totals {
        ALERTS_OPEN
            .with_label_values(&[&activity, &kind, &project])
            .set(n);
        seen.insert((activity, kind, project));
    }
}

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

/// Registers every family of the use cases. Those with known label values
/// then show each series at zero; the others (activities, activity types)
/// appear when first seen.
pub fn register_all() {
    LazyLock::force(&RUNS);
    LazyLock::force(&RUN_CANCELS);
    LazyLock::force(&DUTY_PASSES);
    LazyLock::force(&RUN_RETRIES);
    LazyLock::force(&SKIPPED_FIRES);
    LazyLock::force(&DISPATCHES);
    LazyLock::force(&EVENT_INGEST);
    LazyLock::force(&SYNC_FAILURES);
    LazyLock::force(&INGEST_STATEMENTS);
    LazyLock::force(&EVENT_CONFLICTS);
    LazyLock::force(&SOURCE_MESSAGES);
    LazyLock::force(&SOURCE_REJECTIONS);
    LazyLock::force(&RECONCILE_DURATION);
    LazyLock::force(&TASK_LATENCY);
    LazyLock::force(&ALERTS_OPEN);
    LazyLock::force(&FLOW_QUEUED);
    LazyLock::force(&FLOW_OLDEST_WAIT);
    LazyLock::force(&FLOW_SLOTS_RECOVERED);
    LazyLock::force(&DISPATCH_ALLOWANCE);
    LazyLock::force(&ALERTS_OPENED);
    LazyLock::force(&ALERTS_RESOLVED);
    LazyLock::force(&NOTIFICATION_DELIVERIES);
}
