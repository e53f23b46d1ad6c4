//! Alerts against real Temporal: a stopped worker and a stopped Temporal
//! open `late_start` (the evaluator reads PostgreSQL only), a blocking
//! webhook opens `stuck`, three failures open `failure_streak`; each opens
//! once per incident and resolves when the expectation holds again.
//!
//! The tests of this binary run one at a time (`SERIAL`): the
//! `acp_alerts_open` gauge is process-wide, and each test's evaluator sets
//! it from its own database.

use crate::common;
mod late_start;
mod runs;

use std::time::Duration;

use chrono::{DateTime, Utc};
use common::*;
use serde_json::{Value, json};
use sqlx::PgPool;

static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The evaluation period of these tests.
const PERIOD: Duration = Duration::from_secs(1);

/// The alert evaluator as `acp api` runs it, until dropped or stopped.
struct Evaluating {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
}

impl Evaluating {
    fn start(app: &TestApp) -> Self {
        let evaluator = acp::duties::alerting::Evaluator::new(&app.state.services);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            evaluator
                .run(PERIOD, async {
                    let _ = stopped.await;
                })
                .await
        });
        Self {
            stop: Some(stop),
            task,
        }
    }

    async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let _ = (&mut self.task).await;
    }
}

async fn alerts_of(app: &TestApp, id: &str, state: Option<&str>) -> Vec<Value> {
    let filter = state.map(|s| format!("&state={s}")).unwrap_or_default();
    let (status, page) = json(
        app.get(&format!("/v1/alerts?activity_id={id}{filter}"))
            .await,
    )
    .await;
    assert_eq!(status, 200, "{page}");
    page["items"].as_array().cloned().unwrap_or_default()
}

/// The value of one Prometheus series, 0 when it is absent.
async fn metric(app: &TestApp, series: &str) -> f64 {
    let text = app.get("/metrics").await.text().await.unwrap_or_default();
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
        .unwrap_or(0.0)
}

/// Waits (up to 10 s) for `series` to read `value`: an evaluation pass
/// commits its alerts first and sets the gauge after, so an alert can be
/// visible a moment before the figure.
async fn gauge_reads(app: &TestApp, series: &str, value: f64) {
    eventually(Duration::from_secs(10), || async {
        (metric(app, series).await == value).then_some(())
    })
    .await;
}

async fn open_alert_of_kind(app: &TestApp, id: &str, kind: &str, deadline: Duration) -> Value {
    eventually(deadline, || async {
        alerts_of(app, id, Some("open"))
            .await
            .into_iter()
            .find(|a| a["kind"] == kind)
    })
    .await
}

async fn resolved(app: &TestApp, alert_id: &str, deadline: Duration) -> Value {
    eventually(deadline, || async {
        let (_, alert) = json(app.get(&format!("/v1/alerts/{alert_id}")).await).await;
        (alert["state"] == "resolved").then_some(alert)
    })
    .await
}

fn every_two_seconds(name: &str) -> Value {
    json!({
        "name": name,
        "trigger": {"type": "interval", "every": "PT2S"},
        "tasks": [{"task_type": "noop"}],
        "alerts": {"start_within": "PT5S"}
    })
}

async fn first_success(app: &TestApp, id: &str) {
    // Generous: on a loaded machine the first success of a two-second
    // schedule on the test's own new dev server can take over a minute.
    eventually(Duration::from_secs(120), || async {
        app.runs_of(id)
            .await
            .iter()
            .any(|r| r["status"] == "succeeded")
            .then_some(())
    })
    .await;
}
