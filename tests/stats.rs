//! Run statistics (`GET /v1/stats/runs`) equal a count made here over the
//! same rows, for several windows, buckets and filters; their duration
//! percentiles lie within 1 % of the exact ones.

use crate::common;

use chrono::{DateTime, Duration, Utc};
use common::*;
use serde_json::{Value, json};
use sqlx::PgPool;

const STATUSES: [&str; 7] = [
    "queued",
    "running",
    "succeeded",
    "failed",
    "cancelled",
    "timed_out",
    "skipped",
];

/// A query, the window it is widened to, the bucket in seconds, and
/// which rows it counts.
type Case<'a> = (String, &'a str, i64, &'a dyn Fn(&Row) -> bool);

struct Row {
    activity: uuid::Uuid,
    trigger: &'static str,
    status: &'static str,
    created: DateTime<Utc>,
    duration: Option<f64>,
}

/// `percentile_cont`: linear interpolation between the closest ranks.
fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = p * (sorted.len() - 1) as f64;
    let (lo, hi) = (rank.floor() as usize, rank.ceil() as usize);
    Some(sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo as f64))
}

/// What the answer must be, counted here from the rows.
fn expected(
    rows: &[Row],
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    step: i64,
    keep: &dyn Fn(&Row) -> bool,
) -> Vec<Value> {
    let mut out = Vec::new();
    let mut start = from;
    while start < to {
        let end = start + Duration::seconds(step);
        let mine: Vec<&Row> = rows
            .iter()
            .filter(|r| keep(r) && r.created >= start && r.created < end)
            .collect();
        let mut counts = serde_json::Map::new();
        for s in STATUSES {
            counts.insert(
                s.into(),
                json!(mine.iter().filter(|r| r.status == s).count()),
            );
        }
        let mut durations: Vec<f64> = mine.iter().filter_map(|r| r.duration).collect();
        durations.sort_by(f64::total_cmp);
        out.push(json!({
            "start": start.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true),
            "total": mine.len(),
            "counts": counts,
            "p50": percentile(&durations, 0.5),
            "p95": percentile(&durations, 0.95),
            "p99": percentile(&durations, 0.99),
        }));
        start = end;
    }
    out
}

/// A bucket's counts, which must be equal.
fn comparable(bucket: &Value) -> Value {
    json!({
        "start": bucket["start"],
        "total": bucket["total"],
        "counts": bucket["counts"],
    })
}

/// The answer's percentiles are within 1 % of the exact ones (the bins'
/// bound; 1 µs more for the rounding of floats), and null exactly when
/// they are.
fn assert_percentiles_close(got: &Value, want: &Value, query: &str) {
    for p in ["p50", "p95", "p99"] {
        let g = got[format!("duration_{p}_seconds")].as_f64();
        let w = want[p].as_f64();
        let close = match (g, w) {
            (Some(g), Some(w)) => (g - w).abs() <= 0.01 * w + 1e-6,
            (None, None) => true,
            _ => false,
        };
        assert!(close, "{query} {p}: {got} vs {want}");
    }
}

#[sqlx::test(migrations = "./migrations")]
async fn statistics_equal_a_count_of_the_same_rows(pool: PgPool) {
    let app = TestApp::without_temporal(pool.clone()).await;
    let mut activities = Vec::new();
    for name in ["stats-a", "stats-b"] {
        let created = app.create(&interval_activity("PT1H")).await;
        let id: uuid::Uuid = created["id"]
            .as_str()
            .unwrap_or_default()
            .parse()
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        activities.push(id);
    }
    // 600 runs over three days, of every status and trigger type, with
    // durations where they started and finished.
    let base: DateTime<Utc> = "2026-11-01T00:00:00Z".parse().unwrap_or_default();
    let triggers = ["cron", "interval", "event", "manual"];
    let mut rows = Vec::new();
    for n in 0..600_i64 {
        let status = STATUSES[(n * 7 % 11 % 7) as usize];
        let finished = !matches!(status, "queued" | "running" | "skipped");
        rows.push(Row {
            activity: activities[(n % 3 == 0) as usize],
            trigger: triggers[(n % 4) as usize],
            status,
            created: base + Duration::seconds(n * 431 + n * n % 977),
            duration: finished.then(|| ((n * 37) % 500) as f64 / 4.0 + 0.25),
        });
    }
    for (n, r) in rows.iter().enumerate() {
        let started = r.duration.map(|_| r.created + Duration::seconds(1));
        let finished = r.duration.map(|d| {
            r.created + Duration::seconds(1) + Duration::milliseconds((d * 1000.0) as i64)
        });
        sqlx::query(
            "INSERT INTO activity_runs (run_id, activity_id, workflow_id, trigger_type, status, \
             created_at, started_at, finished_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(uuid::Uuid::new_v4())
        .bind(r.activity)
        .bind(format!("stats-{n}"))
        .bind(r.trigger)
        .bind(r.status)
        .bind(r.created)
        .bind(started)
        .bind(finished)
        .execute(&pool)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    }

    let all = |_: &Row| true;
    let only_a = |r: &Row| r.activity == activities[0];
    let only_event = |r: &Row| r.trigger == "event";
    let a = activities[0].to_string();
    let cases: [Case; 6] = [
        (
            "from=2026-11-01T00:00:00Z&to=2026-11-02T00:00:00Z".into(),
            "2026-11-01T00:00:00Z/2026-11-02T00:00:00Z",
            3600,
            &all,
        ),
        (
            "from=2026-11-01T00:00:00Z&to=2026-11-04T00:00:00Z&bucket=P1D".into(),
            "2026-11-01T00:00:00Z/2026-11-04T00:00:00Z",
            86400,
            &all,
        ),
        // Minutes, widened to whole minutes.
        (
            "from=2026-11-01T09:00:30Z&to=2026-11-01T13:59:10Z&bucket=PT1M".into(),
            "2026-11-01T09:00:00Z/2026-11-01T14:00:00Z",
            60,
            &all,
        ),
        // Widened to whole hours.
        (
            "from=2026-11-01T05:30:00Z&to=2026-11-01T20:10:00Z&bucket=PT1H".into(),
            "2026-11-01T05:00:00Z/2026-11-01T21:00:00Z",
            3600,
            &all,
        ),
        (
            format!(
                "from=2026-11-01T00:00:00Z&to=2026-11-04T00:00:00Z&bucket=PT1H&activity_id={a}"
            ),
            "2026-11-01T00:00:00Z/2026-11-04T00:00:00Z",
            3600,
            &only_a,
        ),
        (
            "from=2026-11-01T00:00:00Z&to=2026-11-04T00:00:00Z&bucket=P1D&trigger_type=event"
                .into(),
            "2026-11-01T00:00:00Z/2026-11-04T00:00:00Z",
            86400,
            &only_event,
        ),
    ];
    for (query, window, step, keep) in cases {
        let (status, body) = json(app.get(&format!("/v1/stats/runs?{query}")).await).await;
        assert_eq!(status, 200, "{query}: {body}");
        let (from, to) = window.split_once('/').unwrap_or_default();
        let (from, to): (DateTime<Utc>, DateTime<Utc>) = (
            from.parse().unwrap_or_default(),
            to.parse().unwrap_or_default(),
        );
        assert_eq!(
            (body["from"].clone(), body["to"].clone()),
            (json!(from), json!(to)),
            "{query}"
        );
        let answer: Vec<Value> = body["buckets"].as_array().cloned().unwrap_or_default();
        let exact = expected(&rows, from, to, step, keep);
        for (g, w) in answer.iter().zip(&exact) {
            assert_percentiles_close(g, w, &query);
        }
        let got: Vec<Value> = answer.iter().map(comparable).collect();
        let want: Vec<Value> = exact.iter().map(comparable).collect();
        assert_eq!(got.len(), want.len(), "{query}");
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(g, w, "{query}");
        }
        assert!(
            got.iter().any(|b| b["total"].as_i64() > Some(0)),
            "{query}: nothing counted"
        );
    }

    // Bad parameters are 400s naming the field; an unknown activity, 404.
    for (query, field) in [
        ("bucket=PT5M", "bucket"),
        // A day of minutes is too many: hours would do.
        ("bucket=PT1M", "bucket"),
        ("from=yesterday", "from"),
        ("from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z", "from"),
        ("from=2020-01-01T00:00:00Z&to=2026-01-01T00:00:00Z", "from"),
        ("trigger_type=sometimes", "trigger_type"),
        ("activity_id=nope", "activity_id"),
    ] {
        let (status, problem) = json(app.get(&format!("/v1/stats/runs?{query}")).await).await;
        assert_eq!(status, 400, "{query}: {problem}");
        assert_eq!(problem["errors"][0]["field"], field, "{query}: {problem}");
    }
    let (status, _) = json(
        app.get(&format!(
            "/v1/stats/runs?activity_id={}",
            uuid::Uuid::new_v4()
        ))
        .await,
    )
    .await;
    assert_eq!(status, 404);
}

/// `?include=summary` on the list and on one activity matches its runs:
/// the newest run, the last 24 hours by outcome, the open alerts.
#[sqlx::test(migrations = "./migrations")]
async fn summaries_match_the_runs(pool: PgPool) {
    let app = TestApp::without_temporal(pool.clone()).await;
    let created = app.create(&interval_activity("PT1H")).await;
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    let uuid: uuid::Uuid = id.parse().unwrap_or_else(|e| panic!("{e}"));
    let now = Utc::now();
    let runs = [
        ("running", Duration::minutes(10)),
        ("succeeded", Duration::hours(1)),
        ("failed", Duration::hours(2)),
        ("timed_out", Duration::hours(3)),
        ("succeeded", Duration::hours(30)),
    ];
    let mut newest = None;
    for (n, (status, ago)) in runs.iter().enumerate() {
        let run_id = uuid::Uuid::new_v4();
        newest.get_or_insert(run_id);
        sqlx::query(
            "INSERT INTO activity_runs (run_id, activity_id, workflow_id, trigger_type, status, created_at) \
             VALUES ($1, $2, $3, 'interval', $4, $5)",
        )
        .bind(run_id)
        .bind(uuid)
        .bind(format!("summary-{n}"))
        .bind(status)
        .bind(now - *ago)
        .execute(&pool)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    }
    sqlx::query(
        "INSERT INTO alerts (id, activity_id, kind, summary) VALUES ($1, $2, 'stuck', 'a run is stuck')",
    )
    .bind(uuid::Uuid::new_v4())
    .bind(uuid)
    .execute(&pool)
    .await
    .unwrap_or_else(|e| panic!("{e}"));

    let (status, list) = json(app.get("/v1/activities?include=summary").await).await;
    assert_eq!(status, 200, "{list}");
    let (status, one) = json(
        app.get(&format!("/v1/activities/{id}?include=summary"))
            .await,
    )
    .await;
    assert_eq!(status, 200, "{one}");
    for summary in [&list["items"][0]["summary"], &one["summary"]] {
        assert_eq!(summary["last_run"]["run_id"], json!(newest), "{summary}");
        assert_eq!(summary["last_run"]["status"], "running");
        assert_eq!(
            (
                summary["runs_24h"].clone(),
                summary["succeeded_24h"].clone(),
                summary["failed_24h"].clone(),
                summary["open_alerts"].clone()
            ),
            (json!(4), json!(1), json!(1), json!(1)),
            "{summary}"
        );
        let rate = summary["success_rate_24h"].as_f64().unwrap_or_default();
        assert!((rate - 1.0 / 3.0).abs() < 1e-9, "{summary}");
        assert!(summary["next_fire"].is_string(), "{summary}");
    }
    // Only when asked; anything else is a 400 naming the parameter.
    let (_, plain) = json(app.get("/v1/activities").await).await;
    assert!(plain["items"][0].get("summary").is_none());
    let (status, problem) = json(app.get("/v1/activities?include=everything").await).await;
    assert_eq!(
        (status, problem["errors"][0]["field"].clone()),
        (400, json!("include"))
    );
}
