//! Benchmark 6, end to end: N events to N finished runs through `acp serve`
//! (API, dispatcher and worker in one process), with one `noop` task and
//! with three, against the raw-SDK baseline of the same shape (baseline.rs).

use std::time::{Duration, Instant};

use anyhow::Context;
use temporalio_client::grpc::WorkflowService;
use temporalio_common::protos::temporal::api::common::v1::{Payloads, WorkflowType};
use temporalio_common::protos::temporal::api::taskqueue::v1::TaskQueue;
use temporalio_common::protos::temporal::api::workflowservice::v1::StartWorkflowExecutionRequest;
use tonic::IntoRequest;

use crate::Bench;
use crate::baseline::{PARENT_TYPE, ParentInput, TABLE, spawn_worker};
use crate::cpu::{Cpu, CpuWatch};
use crate::history::print_cpu_row;
use crate::load::{measure, met};
use crate::service::{Database, Service, create_key};

/// How long one row may take before it is reported as unfinished.
const DEADLINE: Duration = Duration::from_secs(1200);
/// Events per `POST /v1/events:batch`.
const BATCH: usize = 100;

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

/// Polls `sql` (a count) until it reaches `want` or the deadline passes.
async fn count_until(
    pool: &sqlx::PgPool,
    sql: &str,
    want: usize,
    t0: Instant,
) -> anyhow::Result<(usize, Duration)> {
    loop {
        let (n,): (i64,) = sqlx::query_as(sql).fetch_one(pool).await?;
        let n = n as usize;
        if n >= want || t0.elapsed() > DEADLINE {
            return Ok((n, t0.elapsed()));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn service_row(bench: &Bench, n: usize, tasks: usize) -> anyhow::Result<Row> {
    let (db, pool) = Database::migrated(&bench.admin_url, &format!("e2e{tasks}")).await?;
    let token = create_key(&bench.bin, &db.url, "admin").await?;
    let queue = format!("bench-e2e-{tasks}-{}", std::process::id());
    let service = Service::start(
        &bench.bin,
        "serve",
        &[
            ("DATABASE_URL", &db.url),
            ("TEMPORAL_ADDRESS", &bench.temporal),
            ("TEMPORAL_NAMESPACE", "default"),
            ("ACP_TASK_QUEUE", &queue),
            ("ACP_CONSUME_SOURCES", "false"),
        ],
    )
    .await?;
    let http = reqwest::Client::new();
    let base = service.base.clone();
    let noop: Vec<serde_json::Value> = (0..tasks)
        .map(|_| serde_json::json!({"task_type": "noop"}))
        .collect();
    http.post(format!("{base}/v1/activities"))
        .bearer_auth(&token)
        .json(&serde_json::json!({
            "name": "bench-e2e", "trigger": {"type": "event", "event_types": ["bench.e2e"]}, "tasks": noop
        }))
        .send()
        .await?
        .error_for_status()?;

    let watch = CpuWatch::start(Some(service.pid()), Some(&db.name));
    let t0 = Instant::now();
    let (h, b, t) = (http.clone(), base.clone(), token.clone());
    measure(n.div_ceil(BATCH), 4, move |chunk| {
        let (h, b, t) = (h.clone(), b.clone(), t.clone());
        async move {
            let events: Vec<serde_json::Value> = (chunk * BATCH..((chunk + 1) * BATCH).min(n))
                .map(|i| serde_json::json!({"event_id": format!("e2e-{i}"), "event_type": "bench.e2e", "source": "bench", "payload": {"i": i}}))
                .collect();
            h.post(format!("{b}/v1/events:batch"))
                .bearer_auth(&t)
                .json(&serde_json::json!({"events": events}))
                .send()
                .await?
                .error_for_status()?;
            Ok(())
        }
    })
    .await?;
    let (done, elapsed) = count_until(
        &pool,
        "SELECT count(*) FROM activity_runs WHERE status = 'succeeded'",
        n,
        t0,
    )
    .await?;
    let cpu = watch.finish().await;
    service.stop().await?;
    pool.close().await;
    db.drop().await?;
    Ok(Row { done, elapsed, cpu })
}

async fn baseline_row(bench: &Bench, n: usize, tasks: usize) -> anyhow::Result<Row> {
    let db = Database::create(&bench.admin_url, &format!("e2ebase{tasks}")).await?;
    let pool = db.pool(16).await?;
    sqlx::query(TABLE).execute(&pool).await?;
    let gateway = acp_temporal::TemporalGateway::new(bench.temporal_settings());
    let client = gateway.client().await?;
    let queue = format!("bench-base-{tasks}-{}", std::process::id());
    let (stop, thread) = spawn_worker(client.clone(), pool.clone(), queue.clone())?;

    let watch = CpuWatch::start(None, Some(&db.name));
    let t0 = Instant::now();
    let run = format!("{}-{tasks}", std::process::id());
    measure(n, 32, move |i| {
        let (mut client, queue, run) = (client.clone(), queue.clone(), run.clone());
        async move {
            let mut request = StartWorkflowExecutionRequest {
                namespace: "default".into(),
                workflow_id: format!("bench-base-{run}-{i}"),
                workflow_type: Some(WorkflowType {
                    name: PARENT_TYPE.into(),
                }),
                task_queue: Some(TaskQueue {
                    name: queue,
                    ..Default::default()
                }),
                input: Some(Payloads {
                    payloads: vec![acp_temporal::translate::json_payload(&ParentInput {
                        tasks: tasks as u32,
                    })],
                }),
                identity: "acp-bench".into(),
                request_id: uuid::Uuid::new_v4().to_string(),
                ..Default::default()
            }
            .into_request();
            request.set_timeout(Duration::from_secs(10));
            WorkflowService::start_workflow_execution(&mut client, request).await?;
            Ok(())
        }
    })
    .await?;
    let (done, elapsed) = count_until(
        &pool,
        "SELECT count(*) FROM bench_rows WHERE workflow_id NOT LIKE '%:task-%'",
        n,
        t0,
    )
    .await?;
    let cpu = watch.finish().await;
    let _ = stop.send(());
    let _ = tokio::task::spawn_blocking(move || thread.join()).await;
    pool.close().await;
    db.drop().await?;
    Ok(Row { done, elapsed, cpu })
}

pub async fn run(bench: &Bench) -> anyhow::Result<()> {
    let n = bench.e2e_runs;
    let mut rows = Vec::new();
    for tasks in [1usize, 3] {
        let base = baseline_row(bench, n, tasks).await.context("baseline")?;
        let service = service_row(bench, n, tasks).await.context("acp serve")?;
        rows.push((tasks, service, base));
    }
    println!(
        "## 6. End to end: {n} events to {n} finished runs vs a raw-SDK baseline of the same shape\n"
    );
    println!(
        "`acp serve` (API, dispatcher and worker in one process, default settings): {n} events posted in batches of {BATCH} to `POST /v1/events:batch` for one activity, timed from the first post until {n} runs are `succeeded` in `activity_runs`. Baseline: {n} raw `StartWorkflowExecution` calls (32 in flight) of a parent workflow that starts one child workflow per task in turn and, like each child, writes one row through one activity, run by a worker in this harness with the SDK's default options, timed until {n} parent rows exist. Baseline first, then the service, each with its own task queue and database.\n"
    );
    println!(
        "| tasks per run | path | runs finished | seconds | runs/s | vs baseline | goal | met |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for (tasks, service, base) in &rows {
        let ratio = service.rate() / base.rate().max(f64::EPSILON);
        println!(
            "| {tasks} | `acp serve` | {} of {n} | {:.1} | {:.1} | {ratio:.2} | ≥ 0.80 | {} |",
            service.done,
            service.elapsed.as_secs_f64(),
            service.rate(),
            met(ratio >= 0.8 && service.done == n)
        );
        println!(
            "| {tasks} | raw SDK baseline | {} of {n} | {:.1} | {:.1} | 1.00 | | |",
            base.done,
            base.elapsed.as_secs_f64(),
            base.rate()
        );
    }
    println!();
    println!(
        "Where the CPU went, in ms per run (as in benchmark 2; the baseline's worker runs inside this harness, so its CPU is in the load generator column):\n"
    );
    println!("| row | service | PostgreSQL | Temporal | load generator | sum |");
    println!("|---|---|---|---|---|---|");
    for (tasks, service, base) in &rows {
        print_cpu_row(
            &format!("`acp serve`, {tasks} task(s)"),
            service.cpu.per_call(service.done),
        );
        print_cpu_row(
            &format!("baseline, {tasks} task(s)"),
            base.cpu.per_call(base.done),
        );
    }
    println!();
    Ok(())
}
