//! Benchmark 2, run-history read: `GET /v1/runs?activity_id=…&limit=50`, the first
//! page and a deep one, against the same keyset SQL run by pgbench. The
//! service runs as `acp api` in its own process, whose RSS is sampled
//! meanwhile for benchmark 4.

use std::time::{Duration, Instant};

use acp::api::pagination::encode_cursor;
use acp_domain::query::RunFilter;
use acp_store::run_history::list_runs_query;
use anyhow::{Context, bail};
use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::Bench;
use crate::cpu::CpuWatch;
use crate::load::{Figures, measure, measure_for, met, ms};
use crate::service::{Database, RssPeak, Service, create_key};

/// `CURSOR_SCOPE` of `src/api/runs/handlers.rs`. A wrong value is caught below: the
/// built cursor is compared with the one the API hands out.
const CURSOR_SCOPE: &str = "runs";

/// Page size asked for; `list_runs` fetches one row more.
const LIMIT: i64 = 50;

/// RSS of the `acp api` process that served this benchmark.
pub struct Memory {
    pub idle: u64,
    pub peak: u64,
    pub after: u64,
}

pub async fn run(bench: &Bench) -> anyhow::Result<Memory> {
    let (db, pool) = Database::migrated(&bench.admin_url, "history").await?;
    let seeding = Instant::now();
    let hot = crate::seed::seed(&pool, bench.runs, bench.activities).await?;
    let seeded_in = seeding.elapsed();
    let hot_runs: i64 =
        sqlx::query_scalar("SELECT count(*) FROM activity_runs WHERE activity_id = $1")
            .bind(hot)
            .fetch_one(&pool)
            .await?;
    if hot_runs < bench.deep as i64 + LIMIT + 1 {
        bail!(
            "the activity read has {hot_runs} runs, too few for a page {} deep: raise ACP_BENCH_RUNS",
            bench.deep
        );
    }

    let token = create_key(&bench.bin, &db.url, "read").await?;
    let key_id = acp_domain::auth::parse(&token)
        .map(|(id, _)| id)
        .context("the key's token does not parse")?;
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
    tokio::time::sleep(crate::SETTLE).await;
    let idle = service.rss()?;
    let peak = RssPeak::start(service.pid(), Duration::from_millis(100));

    let http = reqwest::Client::new();
    let base = service.base.clone();
    let first_url = format!("{base}/v1/runs?activity_id={hot}&limit={LIMIT}");
    // The cursor after the row at offset `deep`, built as the API builds it…
    let (created_at, run_id): (DateTime<Utc>, Uuid) = sqlx::query_as(
        "SELECT created_at, run_id FROM activity_runs WHERE activity_id = $1
         ORDER BY created_at DESC, run_id DESC OFFSET $2 LIMIT 1",
    )
    .bind(hot)
    .bind(bench.deep as i64 - 1)
    .fetch_one(&pool)
    .await?;
    let cursor = encode_cursor(CURSOR_SCOPE, &(created_at, run_id));
    // …and checked against the one reached by paging.
    let paged = page_through(&http, &first_url, &token, bench.deep / LIMIT as usize).await?;
    if paged != cursor {
        bail!("the built cursor {cursor} differs from the API's {paged}");
    }
    let deep_url = format!("{first_url}&cursor={cursor}");
    // pgbench's SQL answers with the rows the API renders.
    check_same_rows(&http, &token, &pool, hot, &first_url, key_id, None).await?;
    check_same_rows(
        &http,
        &token,
        &pool,
        hot,
        &deep_url,
        key_id,
        Some((created_at, run_id)),
    )
    .await?;

    let concurrency = bench.concurrency;
    let duration = Duration::from_secs(bench.seconds);
    let first_sql = pgbench_script(&page_query(hot, key_id, None));
    let deep_sql = pgbench_script(&page_query(hot, key_id, Some((created_at, run_id))));
    let mut vars = vec![("p1", key_id.to_string()), ("p2", hot.to_string())];
    let limit_var = |n: usize| (PARAMS[n], (LIMIT + 1).to_string());

    // Warm the pool's connections and the caches before anything is timed.
    for url in [&first_url, &deep_url] {
        measure(500, concurrency, get(&http, url, &token)).await?;
    }
    let pid = service.pid();
    let api_row = |url: String, pid: u32| {
        let op = get(&http, &url, &token);
        let watch = CpuWatch::start(Some(pid), Some(&db.name));
        async move {
            let figures = measure_for(duration, concurrency, op).await?;
            anyhow::Ok((figures, watch.finish().await))
        }
    };
    let pg_row = |sql: String, vars: Vec<(&'static str, String)>| {
        let url = db.url.clone();
        let watch = CpuWatch::start(None, Some(&db.name));
        async move {
            let figures =
                crate::pgbench::run(&url, &sql, &vars, concurrency, bench.seconds).await?;
            anyhow::Ok((figures, watch.finish().await))
        }
    };
    let api_first = api_row(first_url.clone(), pid).await?;
    let mut first_vars = vars.clone();
    first_vars.push(limit_var(2));
    let pg_first = pg_row(first_sql, first_vars).await?;
    vars.push(("p3", created_at.to_rfc3339()));
    vars.push(("p4", run_id.to_string()));
    vars.push(limit_var(4));
    let api_deep = api_row(deep_url.clone(), pid).await?;
    let pg_deep = pg_row(deep_sql, vars).await?;
    // The latency goal compares the two pages under the same conditions:
    // every worker alternates between them, so drift over the run (caches,
    // other work on the machine) falls on both alike.
    let (mixed_first, mixed_deep) =
        interleaved(&http, &first_url, &deep_url, &token, duration, concurrency).await?;
    let peak = peak.finish().await;
    tokio::time::sleep(crate::SETTLE).await;
    let after = service.rss()?;
    service.stop().await?;

    // Diagnostic: the same first page without the key lookup.
    let open = Service::start(
        &bench.bin,
        "api",
        &[
            ("DATABASE_URL", &db.url),
            ("TEMPORAL_ADDRESS", &bench.temporal),
            ("TEMPORAL_NAMESPACE", "default"),
            ("ACP_AUTH_DISABLED", "true"),
        ],
    )
    .await?;
    let open_url = first_url.replace(&base, &open.base);
    measure(500, concurrency, get(&http, &open_url, &token)).await?;
    let api_open = api_row(open_url, open.pid()).await?;
    open.stop().await?;

    println!(
        "## 2. Run-history read: `GET /v1/runs?activity_id=…&limit={LIMIT}` vs the same keyset SQL in pgbench\n"
    );
    println!(
        "{} runs across {} activities, seeded with SQL in {:.0} s; the activity read holds {} of them. \
         Concurrency {concurrency}, {} s per row. The API is `acp api` in its own process, called with an \
         API key (known to the process after its first request, and confirmed live by the page's own statement: no lookup of its own); pgbench runs the statement `list_runs` sends, built by the same function, \
         the key's liveness check included (`-M prepared`, {} rows: the page and one more that says \
         there is a next page), with as many threads as the \
         load generator has. The deep page's cursor is built from the row at offset {} and checked \
         against the one reached by paging.\n",
        thousands(bench.runs),
        thousands(bench.activities),
        seeded_in.as_secs_f64(),
        thousands(hot_runs as usize),
        bench.seconds,
        LIMIT + 1,
        thousands(bench.deep),
    );
    println!(
        "| page | API req/s | API p50 ms | API p99 ms | pgbench tps | pgbench p50 ms | pgbench p99 ms | API / pgbench | goal | met |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let deep_label = format!("{} rows deep", thousands(bench.deep));
    for (label, (api, _), (pg, _)) in [
        ("first", &api_first, &pg_first),
        (deep_label.as_str(), &api_deep, &pg_deep),
    ] {
        let ratio = api.rate / pg.rate;
        println!(
            "| {label} | {:.0} | {} | {} | {:.0} | {} | {} | {ratio:.2} | ≥ 0.60 | {} |",
            api.rate,
            ms(api.p50),
            ms(api.p99),
            pg.rate,
            ms(pg.p50),
            ms(pg.p99),
            met(ratio >= 0.6)
        );
    }
    let (open_figures, _) = &api_open;
    println!(
        "| first, auth off (diagnostic) | {:.0} | {} | {} | | | | {:.2} | | |",
        open_figures.rate,
        ms(open_figures.p50),
        ms(open_figures.p99),
        open_figures.rate / pg_first.0.rate
    );
    println!();
    println!(
        "API latency with the two pages interleaved ({} s, concurrency {concurrency}, each worker \
         alternating first and deep page; {} and {} calls):\n",
        bench.seconds, mixed_first.requests, mixed_deep.requests
    );
    println!("| API latency | first page ms | deep page ms | deep / first | goal | met |");
    println!("|---|---|---|---|---|---|");
    let (first, deep) = (&mixed_first, &mixed_deep);
    let p50 = latency_ratio(first, deep, |f| f.p50);
    let p99 = latency_ratio(first, deep, |f| f.p99);
    println!(
        "| p50 | {} | {} | {p50:.2} | ≤ 1.20 | {} |",
        ms(first.p50),
        ms(deep.p50),
        met(p50 <= 1.2)
    );
    println!(
        "| p99 | {} | {} | {p99:.2} | (not a goal) | |",
        ms(first.p99),
        ms(deep.p99)
    );
    println!();
    println!(
        "Where the CPU went, in ms per request (user + system from /proc: the `acp` process, the \
         PostgreSQL backends of this database, the Temporal dev server, and the load generator, \
         which is this harness for API rows and pgbench for pgbench rows):\n"
    );
    println!("| row | service | PostgreSQL | Temporal | load generator | sum |");
    println!("|---|---|---|---|---|---|");
    let rows = [
        ("API, first page", &api_first),
        ("pgbench, first page", &pg_first),
        ("API, deep page", &api_deep),
        ("pgbench, deep page", &pg_deep),
        ("API, first page, auth off", &api_open),
    ];
    for (label, (figures, cpu)) in rows {
        print_cpu_row(label, cpu.per_call(figures.requests));
    }
    println!();

    pool.close().await;
    db.drop().await?;
    Ok(Memory { idle, peak, after })
}

/// One row of a "where the CPU went" table.
pub fn print_cpu_row(label: &str, [service, postgres, temporal, client, sum]: [f64; 5]) {
    println!("| {label} | {service:.2} | {postgres:.2} | {temporal:.2} | {client:.2} | {sum:.2} |");
}

fn latency_ratio(first: &Figures, deep: &Figures, pick: impl Fn(&Figures) -> Duration) -> f64 {
    pick(deep).as_secs_f64() / pick(first).as_secs_f64().max(f64::EPSILON)
}

/// First and deep page in turn from every worker, for `duration`: the
/// latencies of each, measured side by side.
async fn interleaved(
    http: &reqwest::Client,
    first_url: &str,
    deep_url: &str,
    token: &str,
    duration: Duration,
    concurrency: usize,
) -> anyhow::Result<(Figures, Figures)> {
    let stop = std::time::Instant::now() + duration;
    let mut workers = tokio::task::JoinSet::new();
    for worker in 0..concurrency.max(1) {
        let (http, token) = (http.clone(), token.to_owned());
        let urls = [first_url.to_owned(), deep_url.to_owned()];
        workers.spawn(async move {
            let mut latencies: [Vec<Duration>; 2] = [Vec::new(), Vec::new()];
            let mut turn = worker % 2;
            while std::time::Instant::now() < stop {
                let started = std::time::Instant::now();
                http.get(&urls[turn])
                    .bearer_auth(&token)
                    .send()
                    .await?
                    .error_for_status()?
                    .bytes()
                    .await?;
                latencies[turn].push(started.elapsed());
                turn = 1 - turn;
            }
            anyhow::Ok(latencies)
        });
    }
    let (mut first, mut deep) = (Vec::new(), Vec::new());
    while let Some(result) = workers.join_next().await {
        let [f, d] = result??;
        first.extend(f);
        deep.extend(d);
    }
    Ok((
        Figures::from_latencies(first, duration),
        Figures::from_latencies(deep, duration),
    ))
}

/// A GET that must succeed; the body is read in full and dropped.
fn get(
    http: &reqwest::Client,
    url: &str,
    token: &str,
) -> impl Fn(usize) -> std::pin::Pin<Box<dyn Future<Output = anyhow::Result<()>> + Send>>
+ Send
+ Sync
+ use<> {
    let (http, url, token) = (http.clone(), url.to_owned(), token.to_owned());
    move |_| {
        let request = http.get(&url).bearer_auth(&token);
        Box::pin(async move {
            request.send().await?.error_for_status()?.bytes().await?;
            Ok(())
        })
    }
}

async fn fetch_page(
    http: &reqwest::Client,
    url: &str,
    token: &str,
) -> anyhow::Result<serde_json::Value> {
    Ok(http
        .get(url)
        .bearer_auth(token)
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?)
}

/// Follows `next_cursor` for `pages` pages; returns the last cursor.
async fn page_through(
    http: &reqwest::Client,
    first_url: &str,
    token: &str,
    pages: usize,
) -> anyhow::Result<String> {
    let mut cursor: Option<String> = None;
    for _ in 0..pages {
        let url = match &cursor {
            Some(c) => format!("{first_url}&cursor={c}"),
            None => first_url.to_owned(),
        };
        let page = fetch_page(http, &url, token).await?;
        cursor = Some(
            page["next_cursor"]
                .as_str()
                .context("a page ended the listing early")?
                .to_owned(),
        );
    }
    cursor.context("no pages read")
}

/// Fails unless the API's page lists the runs the pgbench query returns.
async fn check_same_rows(
    http: &reqwest::Client,
    token: &str,
    pool: &sqlx::PgPool,
    activity: Uuid,
    url: &str,
    key_id: Uuid,
    after: Option<(DateTime<Utc>, Uuid)>,
) -> anyhow::Result<()> {
    let page = fetch_page(http, url, token).await?;
    let from_api: Vec<String> = page["items"]
        .as_array()
        .context("no items")?
        .iter()
        .filter_map(|r| r["run_id"].as_str().map(str::to_owned))
        .collect();
    let mut page = page_query(activity, key_id, after);
    let query = page.build_query_scalar::<Uuid>();
    let from_sql: Vec<String> = query
        .fetch_all(pool)
        .await?
        .iter()
        .take(LIMIT as usize)
        .map(Uuid::to_string)
        .collect();
    if from_api != from_sql || from_api.len() != LIMIT as usize {
        bail!("the API's page and the SQL's rows differ for {url}");
    }
    Ok(())
}

/// pgbench variables for the statement's parameters, in order.
const PARAMS: [&str; 5] = ["p1", "p2", "p3", "p4", "p5"];

/// The statement `list_runs` sends for a page of `activity`'s runs, read
/// with the key `key_id` (bound: key, activity, then the cursor, the limit).
fn page_query(
    activity: Uuid,
    key_id: Uuid,
    after: Option<(DateTime<Utc>, Uuid)>,
) -> sqlx::QueryBuilder<'static, sqlx::Postgres> {
    let filter = RunFilter {
        activity_id: Some(activity),
        ..Default::default()
    };
    list_runs_query(&filter, after, LIMIT + 1, Some(key_id))
}

/// The statement's text with `$n` turned into pgbench's `:pn`.
fn pgbench_script(query: &sqlx::QueryBuilder<'static, sqlx::Postgres>) -> String {
    let mut sql = query.sql().to_owned();
    // Highest first, so that `$1` does not eat into `$10`.
    for n in (1..=PARAMS.len()).rev() {
        sql = sql.replace(&format!("${n}"), &format!(":{}", PARAMS[n - 1]));
    }
    format!("{sql};\n")
}

/// 1000000 -> "1,000,000".
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}
