//! Benchmark 7, broker ingress: JetStream messages to committed events through
//! an `acp serve` source, against a bare `async-nats` consumer on the same
//! stream that only acknowledges, in the same run. NATS must answer on
//! 127.0.0.1:4222 with JetStream (`scripts/bench` starts it as the test
//! command does).

use std::time::{Duration, Instant};

use anyhow::Context;
use async_nats::jetstream::{self, consumer::pull};
use futures::StreamExt;

use crate::Bench;
use crate::cpu::{Cpu, CpuWatch};
use crate::history::print_cpu_row;
use crate::service::{Database, Service, create_key};

const NATS: &str = "nats://127.0.0.1:4222";
const DEADLINE: Duration = Duration::from_secs(900);

struct Row {
    done: usize,
    elapsed: Duration,
    cpu: Cpu,
}

impl Row {
    fn rate(&self) -> f64 {
        self.done as f64 / self.elapsed.as_secs_f64().max(f64::EPSILON)
    }
}

/// Acknowledges `n` messages from a durable pull consumer of its own, as
/// fast as the client allows (the same consumer settings as acp's).
async fn bare(js: &jetstream::Context, stream: &str, n: usize) -> anyhow::Result<Row> {
    let consumer = js
        .get_stream(stream)
        .await?
        .create_consumer(pull::Config {
            durable_name: Some("bare".into()),
            ack_policy: jetstream::consumer::AckPolicy::Explicit,
            max_ack_pending: 1000,
            ..Default::default()
        })
        .await?;
    let watch = CpuWatch::start(None, None);
    let t0 = Instant::now();
    let mut messages = consumer.messages().await?;
    let mut done = 0;
    while done < n && t0.elapsed() < DEADLINE {
        let Ok(Some(message)) =
            tokio::time::timeout(Duration::from_secs(30), messages.next()).await
        else {
            break;
        };
        message
            .map_err(|e| anyhow::anyhow!(e))?
            .ack()
            .await
            .map_err(|e| anyhow::anyhow!(e))?;
        done += 1;
    }
    let elapsed = t0.elapsed();
    Ok(Row {
        done,
        elapsed,
        cpu: watch.finish().await,
    })
}

async fn through_acp(bench: &Bench, stream: &str, subject: &str, n: usize) -> anyhow::Result<Row> {
    let (db, pool) = Database::migrated(&bench.admin_url, "jetstream").await?;
    let token = create_key(&bench.bin, &db.url, "admin").await?;
    let queue = format!("bench-js-{}", std::process::id());
    let service = Service::start(
        &bench.bin,
        "serve",
        &[
            ("DATABASE_URL", &db.url),
            ("TEMPORAL_ADDRESS", &bench.temporal),
            ("TEMPORAL_NAMESPACE", "default"),
            ("ACP_TASK_QUEUE", &queue),
            ("ACP_SOURCE_REFRESH_SECS", "1"),
        ],
    )
    .await?;
    let watch = CpuWatch::start(Some(service.pid()), Some(&db.name));
    let t0 = Instant::now();
    reqwest::Client::new()
        .post(format!("{}/v1/sources", service.base))
        .bearer_auth(&token)
        .json(&serde_json::json!({
            "name": "bench", "kind": "nats",
            "config": {"url": NATS, "stream": stream, "subject": format!("{subject}.>"), "durable": "acp"}
        }))
        .send()
        .await?
        .error_for_status()?;
    let mut done = 0;
    while t0.elapsed() < DEADLINE {
        let (count,): (i64,) = sqlx::query_as("SELECT count(*) FROM events")
            .fetch_one(&pool)
            .await?;
        done = count as usize;
        if done >= n {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let elapsed = t0.elapsed();
    let cpu = watch.finish().await;
    service.stop().await?;
    pool.close().await;
    db.drop().await?;
    Ok(Row { done, elapsed, cpu })
}

pub async fn run(bench: &Bench) -> anyhow::Result<()> {
    let n = bench.e2e_runs.max(1000) * 5;
    let client = async_nats::connect(NATS)
        .await
        .with_context(|| format!("NATS on {NATS}"))?;
    let js = jetstream::new(client);
    let tag = format!("{}", std::process::id());
    let stream = format!("ACPBENCH_{tag}");
    let subject = format!("acpbench.{tag}");
    js.create_stream(jetstream::stream::Config {
        name: stream.clone(),
        subjects: vec![format!("{subject}.>")],
        ..Default::default()
    })
    .await?;
    for i in 0..n {
        let body = serde_json::json!({"event_id": format!("js-{i}"), "event_type": "bench.js", "source": "bench", "payload": {"i": i}});
        js.publish(format!("{subject}.e"), serde_json::to_vec(&body)?.into())
            .await?
            .await?;
    }
    let base = bare(&js, &stream, n).await.context("bare consumer")?;
    let acp = through_acp(bench, &stream, &subject, n)
        .await
        .context("acp source")?;
    let _ = js.delete_stream(&stream).await;

    let ratio = acp.rate() / base.rate().max(f64::EPSILON);
    println!("## 7. Broker ingress: JetStream messages to committed events vs a bare consumer\n");
    println!(
        "{n} messages (this API's event JSON, no subscribed activity) published to one stream, then read twice through two durable pull consumers with explicit acknowledgement (max 1000 unacknowledged): a bare `async-nats` consumer in this harness that only acknowledges, then an `acp serve` NATS source, timed from `POST /v1/sources` until {n} events are committed. The bare consumer acknowledges one message after the other; acp handles up to its consumer concurrency at once.\n"
    );
    println!("| path | messages | seconds | messages/s | acp / bare |");
    println!("|---|---|---|---|---|");
    println!(
        "| `acp serve` source, to committed events | {} of {n} | {:.1} | {:.0} | {ratio:.2} |",
        acp.done,
        acp.elapsed.as_secs_f64(),
        acp.rate()
    );
    println!(
        "| bare `async-nats` consumer, acknowledge only | {} of {n} | {:.1} | {:.0} | 1.00 |",
        base.done,
        base.elapsed.as_secs_f64(),
        base.rate()
    );
    println!();
    println!(
        "Where the CPU went, in ms per message (as in benchmark 2; nats-server's own CPU is not counted):\n"
    );
    println!("| row | service | PostgreSQL | Temporal | load generator | sum |");
    println!("|---|---|---|---|---|---|");
    print_cpu_row("`acp serve` source", acp.cpu.per_call(acp.done));
    print_cpu_row("bare consumer", base.cpu.per_call(base.done));
    println!();
    Ok(())
}
