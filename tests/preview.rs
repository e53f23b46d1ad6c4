//! `POST /v1/schedules/preview` answers the times an activity with that
//! trigger shows as `next_fire_times` and that the engine fires for the
//! schedule the service creates, DST changes included (PRODUCT.md 5a).

use crate::common;

use acp_domain::calendar::{DstPolicy, Repeated, Skipped, dst_exceptions};
use acp_domain::trigger::{Cadence, CronExpr, TimeZoneName};
use chrono::{DateTime, Utc};
use common::*;
use serde_json::{Value, json};
use sqlx::PgPool;

async fn app(pool: PgPool) -> TestApp {
    let server = shared_temporal();
    let namespace = new_namespace(&server.address()).await;
    TestApp::spawn(pool, &server.address(), &namespace).await
}

fn instants(list: &Value) -> Vec<DateTime<Utc>> {
    list.as_array()
        .unwrap_or_else(|| panic!("not a list: {list}"))
        .iter()
        .map(|t| {
            let text = t.get("at").unwrap_or(t).as_str().unwrap();
            DateTime::parse_from_rfc3339(text)
                .unwrap()
                .with_timezone(&Utc)
        })
        .collect()
}

/// The engine's times for a schedule in `(from, to]`, paged past its cap.
async fn engine_times(
    app: &TestApp,
    schedule_id: &str,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> Vec<DateTime<Utc>> {
    let gateway = app.state.services.activities.gateway();
    let mut out: Vec<DateTime<Utc>> = Vec::new();
    let mut start = from;
    loop {
        let mut attempt = 0;
        let page = loop {
            match gateway.matching_times(schedule_id, start, to).await {
                Ok(page) => break page,
                Err(e) if attempt < 50 => {
                    attempt += 1;
                    let _ = e;
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                }
                Err(e) => panic!("matching times of {schedule_id}: {e}"),
            }
        };
        let full = page.len() >= 1000;
        out.extend(page);
        match out.last() {
            Some(last) if full => start = *last,
            _ => return out,
        }
    }
}

fn policy(repeated: Repeated, skipped: Skipped) -> DstPolicy {
    DstPolicy { repeated, skipped }
}

#[sqlx::test(migrations = "./migrations")]
async fn preview_equals_next_fire_times_and_the_engine_across_dst(pool: PgPool) {
    let app = app(pool).await;
    // (zone, cron, policy). The first two are what the engine does by itself
    // (Berlin fires the second 02:30 and nothing in the gap; New York both
    // 01:30s), so its times must equal the preview's exactly; with the
    // default policy they must after the service's own corrections
    // (`extra` started by the service, `excluded` skipped by the launcher).
    let cases = [
        (
            "Europe/Berlin",
            "30 2 * * *",
            policy(Repeated::Last, Skipped::Skip),
        ),
        (
            "America/New_York",
            "30 1 * * *",
            policy(Repeated::Both, Skipped::Shift),
        ),
        ("Europe/Berlin", "30 2 * * *", DstPolicy::default()),
        ("America/New_York", "30 1 * * *", DstPolicy::default()),
        ("America/New_York", "0 2 * * *", DstPolicy::default()),
    ];
    for (zone, cron, dst) in cases {
        let trigger = json!({"type": "cron", "cron": cron, "timezone": zone,
            "dst": {"repeated": dst.repeated.as_str(), "skipped": dst.skipped.as_str()}});
        let case = format!("{zone} {cron} {dst:?}");

        let created = app.create(&activity_with(trigger.clone())).await;
        let id = created["id"].as_str().unwrap().to_owned();
        assert_eq!(created["schedule"]["sync_state"], "synced", "{created}");
        assert_eq!(created["trigger"]["dst"], trigger["dst"], "{case}");

        let (status, short) = json(
            app.post("/v1/schedules/preview", &json!({"trigger": trigger}))
                .await,
        )
        .await;
        assert_eq!(status, 200, "{case}: {short}");
        let (_, read) = json(app.get(&format!("/v1/activities/{id}")).await).await;
        let next = instants(&read["schedule"]["next_fire_times"]);
        assert_eq!(next.len(), 10, "{case}: {read}");
        assert_eq!(instants(&short["next"]), next, "{case}");
        assert_eq!(
            instants(&created["schedule"]["next_fire_times"]),
            next,
            "{case}: a create answers them too"
        );

        // 400 days from now cross both changes of 2027.
        let (status, long) = json(
            app.post(
                "/v1/schedules/preview?count=400",
                &json!({"trigger": trigger}),
            )
            .await,
        )
        .await;
        assert_eq!(status, 200, "{case}: {long}");
        let ours = instants(&long["next"]);
        assert_eq!(ours.len(), 400);
        let notes: Vec<&str> = long["next"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["note"].as_str().unwrap())
            .collect();
        assert!(
            notes.iter().any(|n| *n != "normal"),
            "{case}: no DST note in {notes:?}"
        );
        let (from, to) = (
            ours[0] - chrono::Duration::seconds(1),
            *ours.last().unwrap(),
        );
        let engine = engine_times(&app, &format!("activity-{id}"), from, to).await;
        let cadence = Cadence::Cron {
            cron: CronExpr::parse(cron).unwrap(),
            timezone: TimeZoneName::parse(zone).unwrap(),
            dst,
        };
        let exceptions = dst_exceptions(&cadence, from, to);
        let mut corrected: Vec<DateTime<Utc>> = engine
            .iter()
            .copied()
            .filter(|t| !exceptions.excluded.contains(t))
            .chain(exceptions.extra.iter().map(|t| t.at))
            .collect();
        corrected.sort();
        assert_eq!(corrected, ours, "{case}: engine {engine:?}");
        if dst != DstPolicy::default() {
            assert_eq!(engine, ours, "{case}: the engine alone");
        } else {
            assert!(
                !(exceptions.extra.is_empty() && exceptions.excluded.is_empty()),
                "{case}: the default policy should differ from the engine somewhere"
            );
        }
    }
}

#[sqlx::test(migrations = "./migrations")]
async fn preview_answers_around_an_instant_and_refuses_what_a_create_refuses(pool: PgPool) {
    let app = TestApp::without_temporal(pool).await;
    let berlin = json!({"type": "cron", "cron": "30 2 * * *", "timezone": "Europe/Berlin"});
    let (status, body) = json(
        app.post(
            "/v1/schedules/preview",
            &json!({"trigger": berlin, "count": 2, "around": "2027-03-28T00:00:00Z"}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["around"]["before"],
        json!([{"at": "2027-03-26T01:30:00Z", "note": "normal"},
               {"at": "2027-03-27T01:30:00Z", "note": "normal"}])
    );
    // 02:30 does not exist that day: shifted to 03:00 CEST.
    assert_eq!(
        body["around"]["after"],
        json!([{"at": "2027-03-28T01:00:00Z", "note": "dst_gap"},
               {"at": "2027-03-29T00:30:00Z", "note": "normal"}])
    );
    assert_eq!(body["next"].as_array().unwrap().len(), 2);

    for (request, field) in [
        (
            json!({"trigger": {"type": "cron", "cron": "0 0 30 2 *"}}),
            "trigger.cron",
        ),
        (
            json!({"trigger": {"type": "cron", "cron": "0 * * * *", "timezone": "Mars/Base"}}),
            "trigger.timezone",
        ),
        (
            json!({"trigger": {"type": "cron", "cron": "0 * * * *", "dst": {"repeated": "twice"}}}),
            "trigger.dst.repeated",
        ),
        (
            json!({"trigger": {"type": "cron", "cron": "0 * * * *", "dst": {"skipped": "never"}}}),
            "trigger.dst.skipped",
        ),
        (
            json!({"trigger": {"type": "interval", "every": "PT1M", "dst": {}}}),
            "trigger.dst",
        ),
        (
            json!({"trigger": {"type": "event", "event_types": ["a"]}}),
            "trigger.type",
        ),
        (
            json!({"trigger": {"type": "interval", "every": "PT1M"}, "count": 1001}),
            "count",
        ),
        (
            json!({"trigger": {"type": "interval", "every": "PT1M"}, "around": "soon"}),
            "around",
        ),
    ] {
        let (status, problem) = json(app.post("/v1/schedules/preview", &request).await).await;
        assert_eq!(status, 422, "{request} -> {problem}");
        let fields: Vec<&str> = problem["errors"]
            .as_array()
            .map(|e| e.iter().filter_map(|e| e["field"].as_str()).collect())
            .unwrap_or_default();
        assert!(fields.contains(&field), "{request}: {problem}");
    }
    // A count out of range in the query is refused even when the body has one.
    let (status, problem) = json(
        app.post(
            "/v1/schedules/preview?count=0",
            &json!({"trigger": {"type": "interval", "every": "PT1M"}, "count": 1}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 422, "{problem}");
    assert_eq!(problem["errors"][0]["field"], "count", "{problem}");
    // `dst` is an object: an array is refused (serde would read a struct
    // from one), and an unknown field in it is named.
    for (dst, field) in [
        (json!([null, null]), "trigger.dst"),
        (json!({"often": true}), "trigger.dst.often"),
    ] {
        let request = json!({"trigger": {"type": "cron", "cron": "0 * * * *", "dst": dst}});
        let (status, problem) = json(app.post("/v1/schedules/preview", &request).await).await;
        assert_eq!(status, 400, "{request} -> {problem}");
        assert_eq!(
            problem["errors"][0]["field"], field,
            "{request} -> {problem}"
        );
    }
    // A create refuses a DST policy on an interval trigger the same way.
    let (status, problem) = json(
        app.post(
            "/v1/activities",
            &activity_with(
                json!({"type": "interval", "every": "PT1M", "dst": {"repeated": "last"}}),
            ),
        )
        .await,
    )
    .await;
    assert_eq!(status, 422, "{problem}");
    assert_eq!(problem["errors"][0]["field"], "trigger.dst", "{problem}");
}

/// The last day of each month at 09:00 UTC, after `now`: counted here from
/// the calendar, not by the code under test.
fn last_days_at_nine(now: DateTime<Utc>, n: usize) -> Vec<DateTime<Utc>> {
    use chrono::{Datelike, NaiveDate};
    let mut out = Vec::new();
    let (mut y, mut m) = (now.year(), now.month());
    while out.len() < n {
        let (ny, nm) = if m == 12 { (y + 1, 1) } else { (y, m + 1) };
        let last = NaiveDate::from_ymd_opt(ny, nm, 1)
            .unwrap()
            .pred_opt()
            .unwrap();
        let at = last.and_hms_opt(9, 0, 0).unwrap().and_utc();
        if at > now {
            out.push(at);
        }
        (y, m) = (ny, nm);
    }
    out
}

#[sqlx::test(migrations = "./migrations")]
async fn the_last_day_of_the_month_previews_and_fires_as_counted(pool: PgPool) {
    let app = app(pool).await;
    let trigger = json!({"type": "cron", "cron": "0 9 L * *", "timezone": "UTC"});
    let before = Utc::now();
    let created = app.create(&activity_with(trigger.clone())).await;
    let id = created["id"].as_str().unwrap().to_owned();
    assert_eq!(created["schedule"]["sync_state"], "synced", "{created}");
    let next = instants(&created["schedule"]["next_fire_times"]);
    assert_eq!(next, last_days_at_nine(before, 10), "{created}");
    // The engine fires exactly those: February's 28th and 29th come from
    // calendars with years.
    let engine = engine_times(
        &app,
        &format!("activity-{id}"),
        next[0] - chrono::Duration::seconds(1),
        next[9],
    )
    .await;
    assert_eq!(engine, next);
    // Around a leap day.
    let (status, body) = json(
        app.post(
            "/v1/schedules/preview",
            &json!({"trigger": trigger, "count": 2, "around": "2028-02-15T00:00:00Z"}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["around"]["after"],
        json!([{"at": "2028-02-29T09:00:00Z", "note": "normal"},
               {"at": "2028-03-31T09:00:00Z", "note": "normal"}])
    );
    assert_eq!(
        body["around"]["before"],
        json!([{"at": "2027-12-31T09:00:00Z", "note": "normal"},
               {"at": "2028-01-31T09:00:00Z", "note": "normal"}])
    );

    // `#` in a range is refused on create and preview, naming the field.
    let nth_in_range = json!({"type": "cron", "cron": "0 9 * * 1-5#2"});
    let (status, problem) = json(
        app.post("/v1/activities", &activity_with(nth_in_range.clone()))
            .await,
    )
    .await;
    assert_eq!(status, 422, "{problem}");
    assert_eq!(problem["errors"][0]["field"], "trigger.cron", "{problem}");
    let detail = problem["errors"][0].to_string();
    assert!(detail.contains("1-5#2"), "{problem}");
    let (status, problem) = json(
        app.post("/v1/schedules/preview", &json!({"trigger": nth_in_range}))
            .await,
    )
    .await;
    assert_eq!(status, 422, "{problem}");
    assert_eq!(problem["errors"][0]["field"], "trigger.cron", "{problem}");
}
