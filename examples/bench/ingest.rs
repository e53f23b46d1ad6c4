//! Benchmark 1, event ingest: `POST /v1/events` against raw `start_workflow` calls.

use std::sync::Arc;

use acp_temporal::messages::RunInput;
use acp_temporal::{TemporalGateway, TemporalSettings};
use anyhow::Context;

use crate::Bench;
use crate::load::{measure, ms};
use crate::service::{Database, create_key};

pub async fn run(bench: &Bench) -> anyhow::Result<()> {
    let total = bench.requests;
    let (db, pool) = Database::migrated(&bench.admin_url, "ingest").await?;
    let token = create_key(&bench.bin, &db.url, "admin").await?;

    let settings = TemporalSettings {
        namespace: "default".into(),
        ..bench.temporal_settings()
    };
    let gateway = Arc::new(TemporalGateway::new(settings));
    let task_queue = format!("bench-{}", std::process::id());
    let state = acp::api::AppState::new(pool.clone(), gateway.clone(), &task_queue);
    let router = acp::app::build_router(state, 1024 * 1024);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", listener.local_addr()?);
    tokio::spawn(async move {
        let _ = acp::app::serve(listener, router, std::future::pending()).await;
    });

    let http = reqwest::Client::new();
    let activity: serde_json::Value = http
        .post(format!("{base}/v1/activities"))
        .bearer_auth(&token)
        .json(&serde_json::json!({
            "name": "bench", "trigger": {"type": "event", "event_types": ["bench.event"]},
            "tasks": [{"task_type": "noop"}]
        }))
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?;
    let activity_id: uuid::Uuid = activity["id"]
        .as_str()
        .context("the created activity has no id")?
        .parse()?;
    gateway.ping().await?;

    println!(
        "## 1. Event ingest vs raw start_workflow ({total} calls per row, Temporal dev server, no worker)\n"
    );
    println!(
        "| concurrency | ingest req/s | ingest p50 ms | ingest p99 ms | raw starts/s | raw p50 ms | raw p99 ms | ingest / raw |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for concurrency in [1usize, 8, 32] {
        let run = format!("c{concurrency}");
        let (http2, base2, run2, token2) = (http.clone(), base.clone(), run.clone(), token.clone());
        let ingest = measure(total, concurrency, move |i| {
            let request = http2
                .post(format!("{base2}/v1/events"))
                .bearer_auth(&token2)
                .json(&serde_json::json!({
                    "event_id": format!("bench-{run2}-{i}"), "event_type": "bench.event", "source": "bench", "payload": {"i": i}
                }));
            async move {
                request.send().await?.error_for_status()?;
                Ok(())
            }
        })
        .await?;
        let (gw, queue) = (gateway.clone(), task_queue.clone());
        let raw = measure(total, concurrency, move |i| {
            let (gw, queue, run) = (gw.clone(), queue.clone(), run.clone());
            async move {
                let input = RunInput {
                    activity_id,
                    trigger: acp_domain::run::RunTrigger::Event,
                    scheduled_for: None,
                    event_id: Some(format!("raw-{run}-{i}")),
                    event: None,
                    window_start: None,
                    window_end: None,
                    definition_version: 1,
                };
                gw.start_run(&format!("raw-{activity_id}:{run}-{i}"), &queue, &input)
                    .await?;
                Ok(())
            }
        })
        .await?;
        println!(
            "| {concurrency} | {:.0} | {} | {} | {:.0} | {} | {} | {:.2} |",
            ingest.rate,
            ms(ingest.p50),
            ms(ingest.p99),
            raw.rate,
            ms(raw.p50),
            ms(raw.p99),
            ingest.rate / raw.rate
        );
    }
    println!();

    pool.close().await;
    db.drop().await
}
