//! Benchmark 3, schedule sync: cron activities created through the API until they are
//! `synced`, against the same schedules created with raw `CreateSchedule`
//! calls, once before the API and once after it. Each side has a fresh
//! namespace of its own.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use acp::api::activities::model::ActivityRequest;
use acp_domain::activity::{Activity, SyncState, SyncStatus};
use acp_temporal::TemporalGateway;
use acp_temporal::translate::desired_schedule;
use anyhow::{Context, bail};
use temporalio_client::grpc::WorkflowService;
use temporalio_common::protos::temporal::api::workflowservice::v1::{
    CreateScheduleRequest, ListSchedulesRequest, RegisterNamespaceRequest,
};
use tonic::IntoRequest;
use uuid::Uuid;

use crate::Bench;
use crate::cpu::CpuWatch;
use crate::history::print_cpu_row;
use crate::load::{measure, met, ms};
use crate::service::{Database, Service, create_key};

/// A cron activity that fires once a year (1 January), so nothing runs meanwhile.
fn body(i: usize) -> serde_json::Value {
    serde_json::json!({
        "name": format!("bench-sync-{i}"),
        "trigger": {"type": "cron", "cron": format!("{} {} 1 1 *", i % 60, (i / 60) % 24), "timezone": "UTC"},
        "tasks": [{"task_type": "noop"}]
    })
}

/// The activity the API would store for `body`, as the translation sees it.
fn activity_of(body: serde_json::Value) -> anyhow::Result<Activity> {
    let request: ActivityRequest = serde_json::from_value(body)?;
    let definition = request
        .into_definition()
        .map_err(|e| anyhow::anyhow!("bench definition is invalid: {e:?}"))?;
    let now = chrono::Utc::now();
    Ok(Activity {
        id: Uuid::new_v4(),
        version: 1,
        definition,
        paused: false,
        pause_note: None,
        created_at: now,
        updated_at: now,
        sync: SyncStatus {
            state: SyncState::Pending,
            last_synced_at: None,
            last_error: None,
            synced_version: None,
            conflict_token: None,
        },
        deleted: false,
    })
}

pub async fn run(bench: &Bench) -> anyhow::Result<()> {
    let n = bench.schedules;
    let concurrency = bench.concurrency;
    let pid = std::process::id();
    let task_queue = format!("bench-sync-{pid}");
    let raw_ns = format!("bench-sync-raw-{pid}");
    let api_ns = format!("bench-sync-api-{pid}");
    let gateway = |namespace: &str| {
        Arc::new(TemporalGateway::new(acp_temporal::TemporalSettings {
            namespace: namespace.to_owned(),
            ..bench.temporal_settings()
        }))
    };
    let raw_after_ns = format!("bench-sync-raw-after-{pid}");
    let raw_gateway = gateway(&raw_ns);
    let raw_after_gateway = gateway(&raw_after_ns);
    let api_gateway = gateway(&api_ns);
    for (gw, ns) in [
        (&raw_gateway, &raw_ns),
        (&raw_after_gateway, &raw_after_ns),
        (&api_gateway, &api_ns),
    ] {
        register_namespace(gw, ns).await?;
    }

    // Raw before and after the API: the scheduler workflows each side leaves
    // on the server slow down whatever comes next, so the raw rate is the
    // mean of one run with none and one with twice the API's backlog. The
    // schedules are those the API would send, built beforehand, one
    // CreateSchedule each.
    let raw_before = raw_phase(&raw_gateway, &raw_ns, &task_queue, n, concurrency).await?;
    // Through the API, until the database says every one is synced.
    let (db, pool) = Database::migrated(&bench.admin_url, "sync").await?;
    let token = create_key(&bench.bin, &db.url, "write").await?;
    let service = Service::start(
        &bench.bin,
        "api",
        &[
            ("DATABASE_URL", &db.url),
            ("TEMPORAL_ADDRESS", &bench.temporal),
            ("TEMPORAL_NAMESPACE", &api_ns),
            ("ACP_TASK_QUEUE", &task_queue),
        ],
    )
    .await?;
    let http = reqwest::Client::new();
    // Connects the service's Temporal client, as the raw side's is connected.
    http.get(format!("{}/readyz", service.base))
        .send()
        .await?
        .error_for_status()
        .context("the service is not ready")?;
    let answered_synced = Arc::new(AtomicUsize::new(0));
    let api_watch = CpuWatch::start(Some(service.pid()), Some(&db.name));
    let started = Instant::now();
    let (http2, url, token2, counter) = (
        http.clone(),
        format!("{}/v1/activities", service.base),
        token.clone(),
        answered_synced.clone(),
    );
    let api = measure(n, concurrency, move |i| {
        let request = http2.post(&url).bearer_auth(&token2).json(&body(i));
        let counter = counter.clone();
        async move {
            let created: serde_json::Value =
                request.send().await?.error_for_status()?.json().await?;
            if created["schedule"]["sync_state"] == "synced" {
                counter.fetch_add(1, Ordering::Relaxed);
            }
            Ok(())
        }
    })
    .await?;
    let deadline = Instant::now() + Duration::from_secs(60);
    let synced = loop {
        let synced: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM activities WHERE sync_state = 'synced' AND deleted_at IS NULL",
        )
        .fetch_one(&pool)
        .await?;
        if synced as usize >= n || Instant::now() > deadline {
            break synced as usize;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let until_synced = started.elapsed();
    let api_cpu = api_watch.finish().await;
    let raw_after = raw_phase(
        &raw_after_gateway,
        &raw_after_ns,
        &task_queue,
        n,
        concurrency,
    )
    .await?;
    let api_rate = synced as f64 / until_synced.as_secs_f64();
    let raw_rate = (raw_before.0.rate + raw_after.0.rate) / 2.0;
    let ratio = api_rate / raw_rate;

    println!(
        "## 3. Schedule sync: {n} cron activities through the API vs {n} raw CreateSchedule calls\n"
    );
    println!(
        "Concurrency {concurrency} on both sides, each in a fresh namespace of the Temporal dev server. \
         API: `POST /v1/activities` to `acp api` (which syncs the schedule within the request), timed \
         until the `activities` table holds every row as `synced`. Raw: `WorkflowService::create_schedule` \
         with the schedule the translation builds, from the Rust client, once before the API and once \
         after it (the scheduler workflows a side leaves behind slow down the next): the API is \
         compared with the mean of the two.\n"
    );
    println!("| path | schedules/s | p50 ms | p99 ms | synced | vs raw | goal | met |");
    println!("|---|---|---|---|---|---|---|---|");
    println!(
        "| API, until `synced` | {api_rate:.0} | {} | {} | {synced} of {n} ({} in the response) | {ratio:.2} | ≥ 0.80 | {} |",
        ms(api.p50),
        ms(api.p99),
        answered_synced.load(Ordering::Relaxed),
        met(ratio >= 0.8 && synced == n)
    );
    println!("| raw CreateSchedule, mean of the two below | {raw_rate:.0} | | | | 1.00 | | |");
    for (label, (raw, _)) in [("before", &raw_before), ("after", &raw_after)] {
        println!(
            "| raw CreateSchedule, {label} the API | {:.0} | {} | {} | {n} of {n} created | {:.2} | | |",
            raw.rate,
            ms(raw.p50),
            ms(raw.p99),
            raw.rate / raw_rate,
        );
    }
    println!();
    println!(
        "Where the CPU went, in ms per schedule (user + system from /proc: the `acp` process, the \
         PostgreSQL backends of its database, the Temporal dev server, and this harness):\n"
    );
    println!("| path | service | PostgreSQL | Temporal | load generator | sum |");
    println!("|---|---|---|---|---|---|");
    print_cpu_row("API, until `synced`", api_cpu.per_call(n));
    print_cpu_row("raw CreateSchedule, before", raw_before.1.per_call(n));
    print_cpu_row("raw CreateSchedule, after", raw_after.1.per_call(n));
    println!();

    service.stop().await?;
    pool.close().await;
    db.drop().await
}

/// `n` raw CreateSchedule calls of the schedules the API would send, built
/// beforehand, in `namespace`.
async fn raw_phase(
    gateway: &TemporalGateway,
    namespace: &str,
    task_queue: &str,
    n: usize,
    concurrency: usize,
) -> anyhow::Result<(crate::load::Figures, crate::cpu::Cpu)> {
    let schedules = (0..n)
        .map(|i| {
            let activity = activity_of(body(i))?;
            let desired = desired_schedule(&activity, task_queue)
                .context("a cron activity has a schedule")?;
            Ok((acp_domain::ids::schedule_id(activity.id), desired))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let schedules = Arc::new(schedules);
    let client = gateway.client().await?;
    let namespace = namespace.to_owned();
    let watch = CpuWatch::start(None, None);
    let figures = measure(n, concurrency, move |i| {
        let (mut client, schedules, namespace) =
            (client.clone(), schedules.clone(), namespace.clone());
        async move {
            let (schedule_id, desired) = &schedules[i];
            let mut request = CreateScheduleRequest {
                namespace,
                schedule_id: schedule_id.clone(),
                schedule: Some(desired.schedule.clone()),
                identity: "acp-bench".into(),
                request_id: Uuid::new_v4().to_string(),
                memo: Some(desired.memo.clone()),
                ..Default::default()
            }
            .into_request();
            request.set_timeout(Duration::from_secs(10));
            WorkflowService::create_schedule(&mut client, request).await?;
            Ok(())
        }
    })
    .await?;
    Ok((figures, watch.finish().await))
}

/// Registers `namespace` and waits until the frontend serves it.
async fn register_namespace(gateway: &TemporalGateway, namespace: &str) -> anyhow::Result<()> {
    let mut client = gateway.client().await?;
    WorkflowService::register_namespace(
        &mut client,
        RegisterNamespaceRequest {
            namespace: namespace.to_owned(),
            workflow_execution_retention_period: Some(prost_wkt_types::Duration {
                seconds: 86_400,
                nanos: 0,
            }),
            ..Default::default()
        }
        .into_request(),
    )
    .await
    .with_context(|| format!("registering namespace {namespace}"))?;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let probe = WorkflowService::list_schedules(
            &mut client,
            ListSchedulesRequest {
                namespace: namespace.to_owned(),
                maximum_page_size: 1,
                ..Default::default()
            }
            .into_request(),
        )
        .await;
        match probe {
            Ok(_) => return Ok(()),
            Err(status) if Instant::now() > deadline => {
                bail!("namespace {namespace} not served after 60 s: {status}")
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    }
}
