//! Benchmark 8, stream fan-out: N clients on `GET /v1/stream` of one `acp
//! api` while runs are written straight into PostgreSQL at a steady rate,
//! each in its own transaction, by the statement the service writes a run
//! with. Every client must receive every change once, in commit order; the
//! latency is from a write's commit to each client's reading of its event.
//! Also the memory one idle stream costs the service.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use acp_domain::ids::{event_run_workflow_id, run_id};
use acp_domain::run::RunTrigger;
use acp_store::runs::{NewRun, RunStore};
use anyhow::{Context, bail, ensure};
use uuid::Uuid;

use crate::Bench;
use crate::cpu::CpuWatch;
use crate::history::print_cpu_row;
use crate::history::thousands;
use crate::load::{Figures, met, ms};
use crate::service::{Database, Service, create_key, mib};

/// How long the clients may take, after the last commit, to receive it.
const DRAIN: Duration = Duration::from_secs(30);

/// The latency goal, commit to client, at the 99th percentile.
const P99_GOAL: Duration = Duration::from_millis(250);

/// The memory goal of one idle stream, in bytes.
const PER_STREAM_GOAL: u64 = 64 * 1024;

/// Connections the writer may use at once.
const WRITERS: u32 = 8;

/// One written change: the run it creates.
struct Write {
    event_id: String,
    workflow_id: String,
    run_id: Uuid,
}

/// What one client read: for each of the benchmark's changes it received,
/// (the change's index, its `seq`, when its event was read), in order of
/// arrival; how many other events it saw; a closing event, if any.
#[derive(Default)]
struct ClientLog {
    got: Vec<(usize, i64, Instant)>,
    other: usize,
    closing: Option<String>,
    ended: bool,
}

pub async fn run(bench: &Bench) -> anyhow::Result<()> {
    let clients = bench.stream_clients.max(1);
    let rate = bench.stream_rate.max(1);
    let total = (rate * bench.stream_seconds).max(1) as usize;

    let (db, pool) = Database::migrated(&bench.admin_url, "stream").await?;
    // Two activities and no runs: the runs come during the measurement.
    let activity = crate::seed::seed(&pool, 0, 2).await?;
    let token = create_key(&bench.bin, &db.url, "read").await?;
    let service = Service::start(
        &bench.bin,
        "api",
        &[
            ("DATABASE_URL", &db.url),
            ("TEMPORAL_ADDRESS", &bench.temporal),
            ("TEMPORAL_NAMESPACE", "default"),
        ],
    )
    .await?;
    // The seed's own changes (the activities) are numbered before any
    // stream opens, so that the streams start after them.
    quiet_log(&pool).await?;
    let base = service.base.clone();
    // One authenticated call first, on a connection closed after it: the
    // key is known to the process and its pool has a connection before the
    // idle RSS is read.
    reqwest::Client::new()
        .get(format!("{base}/v1/activities?limit=1"))
        .bearer_auth(&token)
        .send()
        .await?
        .error_for_status()?;
    let http = reqwest::Client::new();
    tokio::time::sleep(crate::SETTLE).await;
    let rss_none = service.rss()?;

    let writes: Vec<Write> = (0..total)
        .map(|i| {
            let event_id = format!("bench-stream-{i}");
            let workflow_id = event_run_workflow_id(activity, &event_id);
            let run_id = run_id(&workflow_id);
            Write {
                event_id,
                workflow_id,
                run_id,
            }
        })
        .collect();
    let ours: Arc<HashMap<Uuid, usize>> = Arc::new(
        writes
            .iter()
            .enumerate()
            .map(|(i, w)| (w.run_id, i))
            .collect(),
    );

    let (stop, stopped) = tokio::sync::watch::channel(false);
    let mut readers = tokio::task::JoinSet::new();
    for _ in 0..clients {
        let response = http
            .get(format!("{base}/v1/stream"))
            .bearer_auth(&token)
            .send()
            .await?
            .error_for_status()?;
        let kind = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        ensure!(
            kind.starts_with("text/event-stream"),
            "GET /v1/stream answered {kind}, not an event stream"
        );
        // The answer comes once the stream is subscribed: every change
        // committed from here on reaches it.
        readers.spawn(read_stream(response, ours.clone(), total, stopped.clone()));
    }
    tokio::time::sleep(crate::SETTLE).await;
    let rss_open = service.rss()?;

    // The writer has a thread and a runtime of its own: the readers' work
    // does not delay its commits nor the instant each is taken.
    let watch = CpuWatch::start(Some(service.pid()), Some(&db.name));
    let url = db.url.clone();
    let (done, written) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let result = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(anyhow::Error::from)
            .and_then(|runtime| runtime.block_on(write(&url, activity, writes, rate)));
        let _ = done.send(result);
    });
    let (committed, write_time) = written.await.context("the writer thread died")??;
    let last_commit = committed.iter().max().copied().unwrap_or_else(Instant::now);

    // Every client ends once it has every change; the rest are stopped
    // when the drain time is up.
    let deadline = tokio::time::Instant::from_std(last_commit + DRAIN);
    let mut logs = Vec::with_capacity(clients);
    let mut stopping = false;
    loop {
        tokio::select! {
            joined = readers.join_next() => match joined {
                Some(log) => logs.push(log??),
                None => break,
            },
            _ = tokio::time::sleep_until(deadline), if !stopping => {
                let _ = stop.send(true);
                stopping = true;
            }
        }
    }
    let drained_in = last_commit.elapsed();
    let cpu = watch.finish().await;
    service.stop().await?;
    // Diagnostic: what an idle HTTP connection costs without a stream.
    let (plain_none, plain_open) = idle_connections(bench, &db.url, &token, clients).await?;
    let per_connection = plain_open.saturating_sub(plain_none) / clients as u64;

    // The order every client must see: the log's, by `seq`.
    let logged: Vec<(i64, String)> = sqlx::query_as(
        "SELECT seq, subject FROM change_log WHERE kind = 'run.created' AND activity_id = $1
          ORDER BY seq",
    )
    .bind(activity)
    .fetch_all(&pool)
    .await?;
    let expected: Vec<(usize, i64)> = logged
        .iter()
        .filter_map(|(seq, subject)| {
            let index = ours.get(&Uuid::try_parse(subject).ok()?)?;
            Some((*index, *seq))
        })
        .collect();
    ensure!(
        expected.len() == total && logged.len() == total,
        "the change log holds {} of the {total} runs written",
        expected.len()
    );

    // Exactly once, in order: client k read the log's changes, each once,
    // in the log's order (which is commit order).
    let mut faults = Vec::new();
    let mut latencies = Vec::with_capacity(clients * total);
    for (k, log) in logs.iter().enumerate() {
        let exact = log.got.len() == total
            && log
                .got
                .iter()
                .zip(&expected)
                .all(|((index, seq, _), (i, s))| index == i && seq == s);
        if !exact {
            let mut seen = vec![0usize; total];
            for (index, _, _) in &log.got {
                seen[*index] += 1;
            }
            let in_order = log.got.windows(2).all(|w| w[0].1 < w[1].1);
            faults.push(format!(
                "client {k}: {} events of {total} changes, {} missing, {} duplicated, {}{}",
                log.got.len(),
                seen.iter().filter(|n| **n == 0).count(),
                seen.iter().filter(|n| **n > 1).count(),
                if in_order {
                    "seq growing"
                } else {
                    "seq out of order"
                },
                match (&log.closing, log.ended) {
                    (Some(closing), _) => format!(", closed with `{closing}`"),
                    (None, true) => ", the stream ended".to_owned(),
                    (None, false) => String::new(),
                },
            ));
        }
        for (index, _, at) in &log.got {
            latencies.push(at.saturating_duration_since(committed[*index]));
        }
    }
    let other: usize = logs.iter().map(|l| l.other).sum();
    let complete = logs.len() - faults.len();
    let latency = Figures::from_latencies(latencies, write_time);
    let max = logs
        .iter()
        .flat_map(|l| {
            l.got
                .iter()
                .map(|(i, _, at)| at.saturating_duration_since(committed[*i]))
        })
        .max()
        .unwrap_or_default();
    let per_stream = rss_open.saturating_sub(rss_none) / clients as u64;

    println!("## 8. Stream fan-out: `GET /v1/stream` to {clients} clients\n");
    println!(
        "`acp api` on a fresh database, {clients} streams opened with a read key and read by this \
         harness (reqwest, one connection each, events parsed from the chunks as they come). \
         {} runs were then written straight into `activity_runs` by `RunStore::insert_run` (the \
         statement a run is logged with), one transaction each, paced at {rate}/s on a thread \
         of their own (up to {WRITERS} in flight): achieved {:.0}/s over {:.1} s. Each write's \
         trigger logs a `run.created` change; the service's sequencer numbers it and its fan-out \
         hands it to every stream. Latency: from the instant the write's statement returned \
         (committed) to the instant a client read the chunk holding its event, over every \
         client × change ({} samples); the last client was done {:.2} s after the last commit. \
         {other} other events seen. Every client must read the log's changes each once, in the \
         log's `seq` order (commit order).\n",
        thousands(total),
        total as f64 / write_time.as_secs_f64().max(f64::EPSILON),
        write_time.as_secs_f64(),
        thousands(latency.requests),
        drained_in.as_secs_f64(),
    );
    println!("| figure | measured | goal | met |");
    println!("|---|---|---|---|");
    println!("| commit to client, p50 | {} ms | | |", ms(latency.p50));
    println!(
        "| commit to client, p99 | {} ms (max {} ms) | ≤ {} ms | {} |",
        ms(latency.p99),
        ms(max),
        P99_GOAL.as_millis(),
        met(latency.requests > 0 && latency.p99 <= P99_GOAL)
    );
    println!(
        "| clients that received every change once, in order | {complete} of {clients} ({} changes each) | all | {} |",
        thousands(total),
        met(faults.is_empty())
    );
    println!(
        "| RSS per idle stream | {:.1} KiB ({} MiB with no stream, {} MiB with {clients} idle, {} s after opening) | ≤ {} KiB | {} |",
        per_stream as f64 / 1024.0,
        mib(rss_none),
        mib(rss_open),
        crate::SETTLE.as_secs(),
        PER_STREAM_GOAL / 1024,
        met(per_stream <= PER_STREAM_GOAL)
    );
    println!(
        "| RSS per idle keep-alive connection after a plain `GET /v1/activities` (diagnostic, another `acp api`) | {:.1} KiB ({} MiB with none, {} MiB with {clients}) | | |",
        per_connection as f64 / 1024.0,
        mib(plain_none),
        mib(plain_open),
    );
    println!();
    println!(
        "Where the CPU went from the first write until every client had every change, in ms per \
         change (each delivered to {clients} clients; user + system from /proc: the `acp` process, \
         the PostgreSQL backends of this database, the Temporal dev server, and this harness, which \
         writes the runs and reads the streams):\n"
    );
    println!("| row | service | PostgreSQL | Temporal | load generator | sum |");
    println!("|---|---|---|---|---|---|");
    print_cpu_row("per change", cpu.per_call(total));
    println!();

    pool.close().await;
    db.drop().await?;
    if !faults.is_empty() {
        bail!(
            "benchmark 8: {} of {clients} clients did not receive every change exactly once in order:\n{}",
            faults.len(),
            faults.join("\n")
        );
    }
    Ok(())
}

/// RSS of a fresh `acp api` with no connection, then with `n` idle
/// keep-alive connections, each left after one authenticated GET (raw
/// HTTP/1.1 over TCP, so that every one is a connection of its own).
async fn idle_connections(
    bench: &Bench,
    url: &str,
    token: &str,
    n: usize,
) -> anyhow::Result<(u64, u64)> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let service = Service::start(
        &bench.bin,
        "api",
        &[
            ("DATABASE_URL", url),
            ("TEMPORAL_ADDRESS", &bench.temporal),
            ("TEMPORAL_NAMESPACE", "default"),
        ],
    )
    .await?;
    let address = service
        .base
        .strip_prefix("http://")
        .context("the service's base is not http://")?
        .to_owned();
    let request = format!(
        "GET /v1/activities?limit=1 HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {token}\r\n\r\n"
    );
    let get = || async {
        let mut socket = tokio::net::TcpStream::connect(&address).await?;
        socket.write_all(request.as_bytes()).await?;
        let mut head = vec![0u8; 4096];
        let read = socket.read(&mut head).await?;
        let status = String::from_utf8_lossy(&head[..read]);
        ensure!(
            status.starts_with("HTTP/1.1 200"),
            "GET /v1/activities answered {}",
            status.lines().next().unwrap_or_default()
        );
        anyhow::Ok(socket)
    };
    // As before the streams: the key known, the pool connected.
    drop(get().await?);
    tokio::time::sleep(crate::SETTLE).await;
    let none = service.rss()?;
    let mut sockets = Vec::with_capacity(n);
    for _ in 0..n {
        sockets.push(get().await?);
    }
    tokio::time::sleep(crate::SETTLE).await;
    let open = service.rss()?;
    drop(sockets);
    service.stop().await?;
    Ok((none, open))
}

/// Waits until the change inbox is empty and the log has stopped growing.
async fn quiet_log(pool: &sqlx::PgPool) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut last = -1;
    loop {
        let (inbox, newest): (i64, Option<i64>) = sqlx::query_as(
            "SELECT (SELECT count(*) FROM change_inbox), (SELECT max(seq) FROM change_log)",
        )
        .fetch_one(pool)
        .await?;
        let newest = newest.unwrap_or(0);
        if inbox == 0 && newest == last {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!("the change inbox still holds {inbox} rows: is the sequencer running?");
        }
        last = newest;
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Writes every run, one transaction each, the i-th started at `i / rate`
/// s after the start on one of [`WRITERS`] connections (so that one slow
/// commit does not hold the next back); returns when each committed, and
/// how long the writing took.
async fn write(
    url: &str,
    activity: Uuid,
    writes: Vec<Write>,
    rate: u64,
) -> anyhow::Result<(Vec<Instant>, Duration)> {
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(WRITERS)
        .connect(url)
        .await?;
    // Every connection open before the first write.
    let mut warm = Vec::new();
    for _ in 0..WRITERS {
        warm.push(pool.acquire().await?);
    }
    drop(warm);
    let store = RunStore::new(pool.clone());
    let total = writes.len();
    let mut tasks = tokio::task::JoinSet::new();
    let started = Instant::now();
    for (i, w) in writes.into_iter().enumerate() {
        tokio::time::sleep_until(tokio::time::Instant::from_std(
            started + Duration::from_secs_f64(i as f64 / rate as f64),
        ))
        .await;
        let store = store.clone();
        tasks.spawn(async move {
            let context = serde_json::json!({});
            let wrote = store
                .insert_run(&NewRun {
                    run_id: w.run_id,
                    activity_id: activity,
                    workflow_id: &w.workflow_id,
                    trigger: RunTrigger::Event,
                    scheduled_for: None,
                    event_id: Some(&w.event_id),
                    window_start: None,
                    window_end: None,
                    definition_version: 1,
                    context: &context,
                    tasks_total: 1,
                    queued: false,
                })
                .await?;
            let committed = Instant::now();
            ensure!(wrote, "run {} was not written", w.run_id);
            anyhow::Ok((i, committed))
        });
    }
    let mut committed = vec![started; total];
    while let Some(result) = tasks.join_next().await {
        let (i, at) = result??;
        committed[i] = at;
    }
    let elapsed = started.elapsed();
    pool.close().await;
    Ok((committed, elapsed))
}

/// Reads one stream until it has every one of the `total` changes, it
/// ends, or `stop`. Events are split on blank lines (`\n` or `\r\n`).
async fn read_stream(
    mut response: reqwest::Response,
    ours: Arc<HashMap<Uuid, usize>>,
    total: usize,
    mut stop: tokio::sync::watch::Receiver<bool>,
) -> anyhow::Result<ClientLog> {
    let mut log = ClientLog::default();
    let mut buffer: Vec<u8> = Vec::new();
    let mut event = String::new();
    let mut data = String::new();
    while log.got.len() < total && log.closing.is_none() {
        let chunk = tokio::select! {
            _ = stop.wait_for(|s| *s) => break,
            chunk = response.chunk() => chunk?,
        };
        let Some(chunk) = chunk else {
            log.ended = true;
            break;
        };
        let arrived = Instant::now();
        buffer.extend_from_slice(&chunk);
        let mut start = 0;
        while let Some(end) = buffer[start..].iter().position(|b| *b == b'\n') {
            let line = std::str::from_utf8(&buffer[start..start + end])
                .context("the stream is not UTF-8")?
                .trim_end_matches('\r');
            start += end + 1;
            if line.is_empty() {
                if !data.is_empty() {
                    dispatch(&mut log, &ours, &event, &data, arrived)?;
                }
                event.clear();
                data.clear();
            } else if let Some(value) = line.strip_prefix("data:") {
                if !data.is_empty() {
                    data.push('\n');
                }
                data.push_str(value.strip_prefix(' ').unwrap_or(value));
            } else if let Some(value) = line.strip_prefix("event:") {
                event = value.trim_start().to_owned();
            }
            // `id:` repeats the data's `seq`; `:` lines are heartbeats.
        }
        buffer.drain(..start);
    }
    Ok(log)
}

/// The fields of a `ChangeEvent` this benchmark reads.
#[derive(serde::Deserialize)]
struct EventData<'a> {
    seq: i64,
    #[serde(borrow)]
    kind: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    subject: std::borrow::Cow<'a, str>,
}

fn dispatch(
    log: &mut ClientLog,
    ours: &HashMap<Uuid, usize>,
    event: &str,
    data: &str,
    arrived: Instant,
) -> anyhow::Result<()> {
    if matches!(event, "resync" | "revoked" | "error") {
        log.closing = Some(format!("{event}: {data}"));
        return Ok(());
    }
    let body: EventData = serde_json::from_str(data)
        .with_context(|| format!("an event's data is not a change: {data}"))?;
    let index = Uuid::try_parse(&body.subject)
        .ok()
        .and_then(|id| ours.get(&id).copied());
    match index {
        Some(index) if body.kind == "run.created" => log.got.push((index, body.seq, arrived)),
        _ => log.other += 1,
    }
    Ok(())
}
