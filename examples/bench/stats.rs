//! Benchmark 9, run statistics: `GET /v1/stats/runs` over the seeded runs,
//! the last 24 hours by hour and the whole history by day, against pgbench
//! running the same statement (`RUN_STATS_SQL`, which reads the rollups)
//! with the same window, and beside them pgbench running the scan the
//! rollups replace ([`SCAN_STATS_SQL`]).

use std::time::{Duration, Instant};

use acp_domain::query::StatsFilter;
use acp_domain::stats::{Bucket, StatsWindow};
use acp_store::run_stats::RUN_STATS_SQL;
use acp_store::runs::RunStore;
use anyhow::{Context, bail};
use chrono::{DateTime, SecondsFormat, Utc};

use crate::Bench;
use crate::cpu::{Cpu, CpuWatch};
use crate::history::{print_cpu_row, thousands};
use crate::load::{Figures, measure_for, met, ms};
use crate::service::{Database, Service, create_key};

/// The goal: the API answers at least this share of pgbench's rate.
const GOAL: f64 = 0.5;

/// The statement statistics were counted with before the rollups: every
/// run of the window, read and sorted for exact percentiles. The same
/// parameters as `RUN_STATS_SQL`.
const SCAN_STATS_SQL: &str = r#"SELECT date_bin(make_interval(secs => $3), created_at, timestamptz '1970-01-01 00:00:00+00') AS bucket,
       count(*) FILTER (WHERE status = 'queued') AS queued,
       count(*) FILTER (WHERE status = 'running') AS running,
       count(*) FILTER (WHERE status = 'succeeded') AS succeeded,
       count(*) FILTER (WHERE status = 'failed') AS failed,
       count(*) FILTER (WHERE status = 'cancelled') AS cancelled,
       count(*) FILTER (WHERE status = 'timed_out') AS timed_out,
       count(*) FILTER (WHERE status = 'skipped') AS skipped,
       percentile_cont(ARRAY[0.5, 0.95, 0.99]) WITHIN GROUP (ORDER BY extract(epoch FROM finished_at - started_at))
           FILTER (WHERE finished_at IS NOT NULL AND started_at IS NOT NULL) AS percentiles
  FROM activity_runs
 WHERE created_at >= $1 AND created_at < $2
   AND ($4::uuid IS NULL OR activity_id = $4)
   AND ($5::text IS NULL OR trigger_type = $5)
 GROUP BY 1
 ORDER BY 1"#;

/// How long each window's URL is called before anything is timed.
const WARM_UP: Duration = Duration::from_secs(2);

/// One window asked for, with what it holds.
struct Window {
    label: String,
    window: StatsWindow,
    /// Runs whose `created_at` falls in it.
    runs: i64,
}

impl Window {
    async fn new(
        pool: &sqlx::PgPool,
        label: &str,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
        bucket: Bucket,
    ) -> anyhow::Result<Self> {
        let window = StatsWindow::new(Some(from), Some(to), bucket, Utc::now())
            .map_err(|e| anyhow::anyhow!("the window {from}..{to} is refused: {e:?}"))?;
        let runs: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM activity_runs WHERE created_at >= $1 AND created_at < $2",
        )
        .bind(window.from)
        .bind(window.to)
        .fetch_one(pool)
        .await?;
        Ok(Self {
            label: label.to_owned(),
            window,
            runs,
        })
    }

    fn buckets(&self) -> usize {
        self.window.starts().len()
    }

    fn query(&self) -> String {
        let at = |t: DateTime<Utc>| t.to_rfc3339_opts(SecondsFormat::Secs, true);
        format!(
            "from={}&to={}&bucket={}",
            at(self.window.from),
            at(self.window.to),
            self.window.bucket.as_str()
        )
    }

    /// pgbench's `-D` variables for `$1` to `$3`, bound as the store binds them.
    fn vars(&self) -> Vec<(&'static str, String)> {
        vec![
            ("p1", self.window.from.to_rfc3339()),
            ("p2", self.window.to.to_rfc3339()),
            ("p3", self.window.bucket.seconds().to_string()),
        ]
    }
}

pub async fn run(bench: &Bench) -> anyhow::Result<()> {
    let (db, pool) = Database::migrated(&bench.admin_url, "stats").await?;
    let seeding = Instant::now();
    crate::seed::seed(&pool, bench.runs, bench.activities).await?;
    let seeded_in = seeding.elapsed();
    // The seed's inserts went through the change triggers: left in the
    // inbox, they would have the service's sequencer numbering a million
    // changes while the rows are timed.
    let inbox: i64 = sqlx::query_scalar("SELECT count(*) FROM change_inbox")
        .fetch_one(&pool)
        .await?;
    sqlx::query("TRUNCATE change_inbox").execute(&pool).await?;

    let (oldest, newest): (Option<DateTime<Utc>>, Option<DateTime<Utc>>) =
        sqlx::query_as("SELECT min(created_at), max(created_at) FROM activity_runs")
            .fetch_one(&pool)
            .await?;
    let (Some(oldest), Some(newest)) = (oldest, newest) else {
        bail!("no runs were seeded: raise ACP_BENCH_RUNS");
    };
    let hour = chrono::Duration::hours(1);
    let day = chrono::Duration::days(1);
    // 24 hourly buckets, the last one holding the newest run; every day of
    // the history, the first one holding the oldest run.
    let day_end = Bucket::Hour.floor(newest) + hour;
    let windows = [
        Window::new(&pool, "last 24 hours", day_end - day, day_end, Bucket::Hour).await?,
        Window::new(
            &pool,
            "every run",
            Bucket::Day.floor(oldest),
            Bucket::Day.floor(newest) + day,
            Bucket::Day,
        )
        .await?,
    ];

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
    let http = reqwest::Client::new();
    let base = service.base.clone();
    for w in &windows {
        check_same_counts(&http, &token, &pool, &base, w).await?;
    }

    let concurrency = bench.concurrency;
    let duration = Duration::from_secs(bench.seconds);
    let script = pgbench_script(RUN_STATS_SQL);
    let scan_script = pgbench_script(SCAN_STATS_SQL);
    let pid = service.pid();
    let mut rows = Vec::new();
    for w in &windows {
        let url = format!("{base}/v1/stats/runs?{}", w.query());
        // Warms the pool's connections and the caches.
        measure_for(WARM_UP, concurrency, get(&http, &url, &token)).await?;
        let watch = CpuWatch::start(Some(pid), Some(&db.name));
        let api = measure_for(duration, concurrency, get(&http, &url, &token)).await?;
        let api_cpu = watch.finish().await;
        let watch = CpuWatch::start(None, Some(&db.name));
        let pg =
            crate::pgbench::run(&db.url, &script, &w.vars(), concurrency, bench.seconds).await?;
        let pg_cpu = watch.finish().await;
        let watch = CpuWatch::start(None, Some(&db.name));
        let scan =
            crate::pgbench::run(&db.url, &scan_script, &w.vars(), concurrency, bench.seconds)
                .await?;
        let scan_cpu = watch.finish().await;
        rows.push(((api, api_cpu), (pg, pg_cpu), (scan, scan_cpu)));
    }
    service.stop().await?;

    println!("## 9. Run statistics: `GET /v1/stats/runs` vs the same SQL in pgbench\n");
    println!(
        "{} runs across {} activities, seeded with SQL in {:.0} s, one a second going back from \
         the seed's start (created {} to {}); the {} `run.created` changes the seed's inserts \
         left in the change inbox were deleted before `acp api` started, so that its sequencer \
         does not number them while the rows are timed. Concurrency {concurrency}, {} s per row. \
         The API is `acp api` in its own process, called with a read key; pgbench runs \
         `RUN_STATS_SQL`, the statement `RunStore::run_stats` sends (`-M prepared`; it reads \
         the run rollups), with the same window and bucket and `$4`..`$6` (activity, trigger \
         type, project: no filter) written as literal `NULL`s, since pgbench cannot bind a NULL. The \
         last columns are pgbench running the scan of every run of the window that the \
         rollups replace, on the same window. The API's answer was checked to count, bucket \
         by bucket, what the statement counts.\n",
        thousands(bench.runs),
        thousands(bench.activities),
        seeded_in.as_secs_f64(),
        oldest.format("%Y-%m-%d %H:%M"),
        newest.format("%Y-%m-%d %H:%M"),
        thousands(inbox as usize),
        bench.seconds,
    );
    println!(
        "| window | bucket | buckets | runs in window | API req/s | API p50 ms | API p99 ms | pgbench tps | pgbench p50 ms | pgbench p99 ms | API / pgbench | goal | met | scan tps | scan p50 ms | scan p99 ms |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for (w, ((api, _), (pg, _), (scan, _))) in windows.iter().zip(&rows) {
        let ratio = api.rate / pg.rate.max(f64::EPSILON);
        println!(
            "| {} ({} to {}) | {} | {} | {} | {:.1} | {} | {} | {:.1} | {} | {} | {ratio:.2} | ≥ {GOAL:.2} | {} | {:.1} | {} | {} |",
            w.label,
            w.window.from.format("%Y-%m-%d %H:%M"),
            w.window.to.format("%Y-%m-%d %H:%M"),
            w.window.bucket.as_str(),
            w.buckets(),
            thousands(w.runs as usize),
            api.rate,
            ms(api.p50),
            ms(api.p99),
            pg.rate,
            ms(pg.p50),
            ms(pg.p99),
            met(ratio >= GOAL),
            scan.rate,
            ms(scan.p50),
            ms(scan.p99),
        );
    }
    println!();
    println!(
        "Where the CPU went, in ms per request (user + system from /proc: the `acp` process, the \
         PostgreSQL backends of this database, the Temporal dev server, and the load generator, \
         which is this harness for API rows and pgbench for pgbench rows):\n"
    );
    println!("| row | service | PostgreSQL | Temporal | load generator | sum |");
    println!("|---|---|---|---|---|---|");
    for (w, ((api, api_cpu), (pg, pg_cpu), (scan, scan_cpu))) in windows.iter().zip(&rows) {
        let label = format!("{}, {}", w.label, w.window.bucket.as_str());
        print_cpu(&format!("API, {label}"), api, *api_cpu);
        print_cpu(&format!("pgbench, {label}"), pg, *pg_cpu);
        print_cpu(&format!("pgbench scan, {label}"), scan, *scan_cpu);
    }
    println!();

    pool.close().await;
    db.drop().await?;
    Ok(())
}

fn print_cpu(label: &str, figures: &Figures, cpu: Cpu) {
    print_cpu_row(label, cpu.per_call(figures.requests));
}

/// `statement` with `$1`..`$3` turned into pgbench's `:p1`..`:p3` and the
/// filters `$4`..`$6` into `NULL`.
fn pgbench_script(statement: &str) -> String {
    let mut sql = statement.to_owned();
    for (param, text) in [
        ("$6", "NULL"),
        ("$5", "NULL"),
        ("$4", "NULL"),
        ("$3", ":p3"),
        ("$2", ":p2"),
        ("$1", ":p1"),
    ] {
        sql = sql.replace(param, text);
    }
    format!("{sql};\n")
}

/// Fails unless the API's buckets are the window's, with the totals the
/// statement counts, adding up to every run of the window.
async fn check_same_counts(
    http: &reqwest::Client,
    token: &str,
    pool: &sqlx::PgPool,
    base: &str,
    w: &Window,
) -> anyhow::Result<()> {
    let url = format!("{base}/v1/stats/runs?{}", w.query());
    let answer: serde_json::Value = http
        .get(&url)
        .bearer_auth(token)
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?;
    let from_api: Vec<(String, i64)> = answer["buckets"]
        .as_array()
        .context("no buckets")?
        .iter()
        .filter_map(|b| Some((b["start"].as_str()?.to_owned(), b["total"].as_i64()?)))
        .filter(|(_, total)| *total > 0)
        .map(|(start, total)| {
            let start = DateTime::parse_from_rfc3339(&start)
                .map(|t| t.with_timezone(&Utc).to_rfc3339())
                .unwrap_or(start);
            (start, total)
        })
        .collect();
    let from_sql: Vec<(String, i64)> = RunStore::new(pool.clone())
        .run_stats(&w.window, &StatsFilter::default())
        .await?
        .into_iter()
        .map(|b| (b.start.to_rfc3339(), b.total()))
        .collect();
    let buckets = answer["buckets"].as_array().map_or(0, Vec::len);
    let counted: i64 = from_api.iter().map(|(_, n)| n).sum();
    if from_api != from_sql || buckets != w.buckets() || counted != w.runs {
        bail!(
            "the API's statistics for {url} ({buckets} buckets, {counted} runs) differ from the \
             statement's ({} buckets, {} runs)",
            w.buckets(),
            w.runs
        );
    }
    Ok(())
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
