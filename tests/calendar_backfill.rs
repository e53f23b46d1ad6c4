//! Backfill, resume and edits under a business calendar, without
//! Temporal: the times the calendar keeps from running are answered
//! `skipped` with its reason and text and recorded as skipped runs, never
//! asked of Temporal; a time rolled to a business day runs there, once; the
//! dry runs answer the same and record nothing; an edit of the calendar
//! re-plans the activities that name it.

use crate::common;

use chrono::{Datelike, Duration, Utc};
use common::*;
use serde_json::{Value, json};
use sqlx::PgPool;

async fn create_calendar(app: &TestApp, body: &Value) -> String {
    let (status, body) = json(app.post("/v1/calendars", body).await).await;
    assert_eq!(status, 201, "{body}");
    body["id"].as_str().unwrap_or_default().to_owned()
}

/// (scheduled_for, action, reason, calendar text) of each answered time.
fn decided(times: &Value) -> Vec<(String, String, Value, Value)> {
    times
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {times}"))
        .iter()
        .map(|t| {
            (
                t["scheduled_for"].as_str().unwrap_or_default().to_owned(),
                t["action"].as_str().unwrap_or_default().to_owned(),
                t["reason"].clone(),
                t["calendar"].clone(),
            )
        })
        .collect()
}

async fn skip_rows(pool: &PgPool, activity: &str) -> Vec<(String, Option<String>)> {
    let id = uuid::Uuid::parse_str(activity).unwrap_or_default();
    sqlx::query_as::<_, (chrono::DateTime<Utc>, Option<String>)>(
        "SELECT scheduled_for, skip_reason FROM activity_runs
          WHERE activity_id = $1 AND status = 'skipped' ORDER BY scheduled_for",
    )
    .bind(id)
    .fetch_all(pool)
    .await
    .unwrap_or_default()
    .into_iter()
    .map(|(t, r)| (t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true), r))
    .collect()
}

#[sqlx::test(migrations = "./migrations")]
async fn a_backfill_over_a_holiday_skips_it_and_runs_the_rolled_day(pool: PgPool) {
    let app = TestApp::without_temporal(pool.clone()).await;
    let calendar = create_calendar(
        &app,
        &json!({
            "name": "us-nyse",
            "timezone": "America/New_York",
            "holidays": [{"date": "2026-07-03", "name": "Independence Day"}],
            "covered_until": "2027-12-31"
        }),
    )
    .await;
    let holiday = r#"holiday: "Independence Day" in us-nyse v1"#;
    let rolled = format!("rolled from 2026-07-03T09:00 to 2026-07-06T09:00 ({holiday})");
    let range = json!({"start": "2026-07-01T00:00:00Z", "end": "2026-07-11T00:00:00Z"});
    let table = [
        (
            json!({"id": calendar, "mode": "business_days", "roll": "next"}),
            vec![
                (
                    "2026-07-03T13:00:00Z",
                    "skipped",
                    json!("rolled"),
                    json!(rolled),
                ),
                (
                    "2026-07-06T13:00:00Z",
                    "pending",
                    Value::Null,
                    json!(rolled),
                ),
                ("2026-07-10T13:00:00Z", "pending", Value::Null, Value::Null),
            ],
            "rolled",
        ),
        (
            json!({"id": calendar, "mode": "exclude"}),
            vec![
                (
                    "2026-07-03T13:00:00Z",
                    "skipped",
                    json!("holiday"),
                    json!(holiday),
                ),
                ("2026-07-10T13:00:00Z", "pending", Value::Null, Value::Null),
            ],
            "holiday",
        ),
    ];
    for (rule, want, reason) in table {
        let activity = app
            .create(&json!({
                "name": format!("fridays-{reason}"),
                "trigger": {"type": "cron", "cron": "0 9 * * 5",
                            "timezone": "America/New_York", "calendar": rule},
                "tasks": [{"task_type": "noop"}]
            }))
            .await;
        let id = activity["id"].as_str().unwrap_or_default().to_owned();
        let path = format!("/v1/activities/{id}/backfill");
        let as_wanted = |dry: bool| -> Vec<(String, String, Value, Value)> {
            want.iter()
                .map(|(t, a, r, c)| {
                    let a = if dry && *a == "pending" {
                        "backfilled"
                    } else {
                        a
                    };
                    (t.to_string(), a.to_string(), r.clone(), c.clone())
                })
                .collect()
        };

        // The dry run says each time's fate and records nothing.
        let mut dry = range.clone();
        dry["dry_run"] = json!(true);
        let (status, body) = json(app.post(&path, &dry).await).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(decided(&body["times"]), as_wanted(true), "{rule}");
        assert!(skip_rows(&pool, &id).await.is_empty());

        // The backfill: Temporal is unreachable, so the times that run are
        // recorded as asked for (`pending`); the holiday's is recorded
        // skipped and never asked for.
        for _ in 0..2 {
            let (status, body) = json(app.post(&path, &range).await).await;
            assert_eq!(status, 202, "{body}");
            assert_eq!(decided(&body["times"]), as_wanted(false), "{rule}");
        }
        assert_eq!(
            skip_rows(&pool, &id).await,
            [("2026-07-03T13:00:00Z".to_owned(), Some(reason.to_owned()))]
        );
        let requested: Vec<String> = want
            .iter()
            .filter(|w| w.1 == "pending")
            .map(|w| w.0.to_owned())
            .collect();
        let asked: Vec<(chrono::DateTime<Utc>,)> = sqlx::query_as(
            "SELECT scheduled_for FROM backfill_requests WHERE activity_id = $1 ORDER BY 1",
        )
        .bind(uuid::Uuid::parse_str(&id).unwrap_or_default())
        .fetch_all(&pool)
        .await
        .unwrap_or_default();
        let asked: Vec<String> = asked
            .into_iter()
            .map(|(t,)| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
            .collect();
        assert_eq!(asked, requested, "{rule}");

        // The timeline shows the recorded skip with the calendar's words.
        let (_, timeline) = json(
            app.get(&format!(
                "/v1/activities/{id}/timeline?from=2026-07-03T00:00:00Z&to=2026-07-04T00:00:00Z"
            ))
            .await,
        )
        .await;
        let item = &timeline["items"][0];
        assert_eq!(
            (&item["status"], &item["reason"], &item["calendar"]),
            (&json!("skipped"), &json!(reason), &want[0].3),
            "{timeline}"
        );
    }
}

/// A resume's catch-up over a holiday: the holiday's time is recorded
/// skipped with its reason, the others are asked for.
#[sqlx::test(migrations = "./migrations")]
async fn a_resume_over_a_holiday_skips_it(pool: PgPool) {
    let app = TestApp::without_temporal(pool.clone()).await;
    // Three days ago (UTC) is a holiday; the pause began five days ago.
    let today = Utc::now().date_naive();
    let holiday_day = today - Duration::days(3);
    let calendar = create_calendar(
        &app,
        &json!({
            "name": "desk",
            "timezone": "UTC",
            "weekend_days": [],
            "holidays": [{"date": holiday_day.to_string(), "name": "Desk closed"}],
            "covered_until": format!("{}-12-31", today.year() + 1)
        }),
    )
    .await;
    let activity = app
        .create(&json!({
            "name": "daily-desk",
            "trigger": {"type": "cron", "cron": "0 9 * * *", "timezone": "UTC",
                        "misfire_policy": "catchup", "catchup_limit": 10,
                        "calendar": {"id": calendar, "mode": "exclude"}},
            "tasks": [{"task_type": "noop"}]
        }))
        .await;
    let id = activity["id"].as_str().unwrap_or_default().to_owned();
    let (status, body) = json(
        app.post(&format!("/v1/activities/{id}/pause"), &json!({}))
            .await,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let since = (today - Duration::days(5))
        .and_hms_opt(0, 0, 0)
        .unwrap_or_default()
        .and_utc();
    for backdate in [
        "UPDATE activities SET paused_at = $2, created_at = $2 - interval '1 day' WHERE id = $1",
        "UPDATE activity_pauses SET paused_at = $2 WHERE activity_id = $1",
    ] {
        let done = sqlx::query(backdate)
            .bind(uuid::Uuid::parse_str(&id).unwrap_or_default())
            .bind(since)
            .execute(&pool)
            .await;
        assert!(done.is_ok_and(|d| d.rows_affected() == 1), "{backdate}");
    }
    let holiday_at = holiday_day
        .and_hms_opt(9, 0, 0)
        .unwrap_or_default()
        .and_utc();
    let holiday_at = holiday_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let path = format!("/v1/activities/{id}/resume");
    for dry_run in [true, false] {
        let (status, body) = json(app.post(&path, &json!({"dry_run": dry_run})).await).await;
        assert_eq!(status, 200, "{body}");
        let missed = &body["missed"];
        assert_eq!(
            decided(&missed["calendar_skipped"]),
            [(
                holiday_at.clone(),
                "skipped".to_owned(),
                json!("holiday"),
                json!(r#"holiday: "Desk closed" in desk v1"#)
            )],
            "{body}"
        );
        let runs: Vec<String> = decided(&missed["runs"]).into_iter().map(|r| r.0).collect();
        assert!(!runs.contains(&holiday_at), "{body}");
        assert!(runs.len() >= 4, "{body}");
        let rows = skip_rows(&pool, &id).await;
        if dry_run {
            assert!(rows.is_empty(), "{rows:?}");
        } else {
            assert_eq!(rows, [(holiday_at.clone(), Some("holiday".to_owned()))]);
        }
    }
}

/// An edit of a calendar re-plans the activities that name it: their next
/// fires move and each gets one `activity.replanned` change; an activity
/// on another calendar or none gets none.
#[sqlx::test(migrations = "./migrations")]
async fn a_calendar_edit_replans_its_activities(pool: PgPool) {
    let app = TestApp::without_temporal(pool.clone()).await;
    let desk = |name: &str| json!({"name": name, "timezone": "UTC", "weekend_days": []});
    let edited = create_calendar(&app, &desk("edited")).await;
    let other = create_calendar(&app, &desk("other")).await;
    let daily = |name: &str, calendar: &str| {
        json!({
            "name": name,
            "trigger": {"type": "cron", "cron": "0 9 * * *", "timezone": "UTC",
                        "calendar": {"id": calendar, "mode": "exclude"}},
            "tasks": [{"task_type": "noop"}]
        })
    };
    let users = [
        app.create(&daily("uses-edited-1", &edited)).await,
        app.create(&daily("uses-edited-2", &edited)).await,
    ];
    let bystander = app.create(&daily("uses-other", &other)).await;
    let next = |body: &Value| -> Vec<String> {
        body["schedule"]["next_fire_times"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .map(|t| t.as_str().unwrap_or_default().to_owned())
            .collect()
    };
    let before = next(&users[0]);
    assert_eq!(before.len(), 10, "{}", users[0]);
    let day = &before[0][..10];
    let (status, body) = json(
        app.patch(
            &format!("/v1/calendars/{edited}"),
            &json!({"holidays": [{"date": day, "name": "Desk closed"}]}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 200, "{body}");

    for activity in users.iter().chain([&bystander]) {
        let id = activity["id"].as_str().unwrap_or_default();
        let (_, now) = json(app.get(&format!("/v1/activities/{id}")).await).await;
        let replans: Vec<(Value, Value)> = sqlx::query_as::<_, (sqlx::types::Json<Value>,)>(
            "SELECT data FROM change_inbox WHERE kind = 'activity.replanned' AND subject = $1
             UNION ALL
             SELECT data FROM change_log WHERE kind = 'activity.replanned' AND subject = $1",
        )
        .bind(id)
        .fetch_all(&pool)
        .await
        .unwrap_or_default()
        .into_iter()
        .map(|(d,)| {
            (
                d.0["calendar_version"].clone(),
                d.0["previous_calendar_version"].clone(),
            )
        })
        .collect();
        if activity == &bystander {
            assert_eq!(next(&now), before, "{now}");
            assert!(replans.is_empty(), "{replans:?}");
        } else {
            assert_eq!(next(&now)[..9], before[1..], "{now}");
            assert_eq!(replans, [(json!(2), json!(1))], "{id}");
        }
    }
}

/// `beyond_coverage: pause`: a backfill whose range reaches past the
/// calendar's coverage records those times skipped, runs the others and
/// pauses the activity, saying so (its dry run only says it would); a
/// resume whose catch-up reaches past it pauses the activity again.
#[sqlx::test(migrations = "./migrations")]
async fn past_the_coverage_a_backfill_or_resume_pauses_the_activity(pool: PgPool) {
    let app = TestApp::without_temporal(pool.clone()).await;
    let today = Utc::now().date_naive();
    let covered = today - Duration::days(3);
    let calendar = create_calendar(
        &app,
        &json!({"name": "desk", "timezone": "UTC", "weekend_days": [],
                "covered_until": covered.to_string()}),
    )
    .await;
    let activity = app
        .create(&json!({
            "name": "daily-uncovered",
            "trigger": {"type": "cron", "cron": "0 9 * * *", "timezone": "UTC",
                        "misfire_policy": "catchup", "catchup_limit": 10,
                        "calendar": {"id": calendar, "beyond_coverage": "pause"}},
            "tasks": [{"task_type": "noop"}]
        }))
        .await;
    let id = activity["id"].as_str().unwrap_or_default().to_owned();
    let nine = |d: chrono::NaiveDate| {
        d.and_hms_opt(9, 0, 0)
            .unwrap_or_default()
            .and_utc()
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    };
    let note = format!("paused: desk is not covered past {covered}");
    let range = json!({
        "start": format!("{}T00:00:00Z", covered - Duration::days(1)),
        "end": format!("{}T00:00:00Z", covered + Duration::days(2)),
    });
    let want = vec![
        (nine(covered - Duration::days(1)), Value::Null),
        (nine(covered), Value::Null),
        (nine(covered + Duration::days(1)), json!("beyond_coverage")),
    ];
    let path = format!("/v1/activities/{id}/backfill");
    let seen = |body: &Value| -> Vec<(String, Value)> {
        decided(&body["times"])
            .into_iter()
            .map(|(t, _, reason, _)| (t, reason))
            .collect()
    };
    let mut dry = range.clone();
    dry["dry_run"] = json!(true);
    let (status, body) = json(app.post(&path, &dry).await).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(seen(&body), want, "{body}");
    assert_eq!(body["paused"], json!(note), "{body}");
    let (_, read) = json(app.get(&format!("/v1/activities/{id}")).await).await;
    assert_eq!(read["paused"], false, "the dry run pauses nothing: {read}");

    let (status, body) = json(app.post(&path, &range).await).await;
    assert_eq!(status, 202, "{body}");
    assert_eq!(seen(&body), want, "{body}");
    assert_eq!(body["paused"], json!(note), "{body}");
    let (_, read) = json(app.get(&format!("/v1/activities/{id}")).await).await;
    assert_eq!(read["paused"], true, "{read}");
    assert_eq!(
        skip_rows(&pool, &id).await,
        [(
            nine(covered + Duration::days(1)),
            Some("beyond_coverage".to_owned())
        )]
    );

    // Paused since five days ago; resumed without extending the calendar:
    // the catch-up's times past the coverage are skipped and it pauses
    // again.
    let since = (today - Duration::days(5))
        .and_hms_opt(0, 0, 0)
        .unwrap_or_default()
        .and_utc();
    for backdate in [
        "UPDATE activities SET paused_at = $2, created_at = $2 - interval '1 day' WHERE id = $1",
        "UPDATE activity_pauses SET paused_at = $2 WHERE activity_id = $1",
    ] {
        let done = sqlx::query(backdate)
            .bind(uuid::Uuid::parse_str(&id).unwrap_or_default())
            .bind(since)
            .execute(&pool)
            .await;
        assert!(done.is_ok_and(|d| d.rows_affected() == 1), "{backdate}");
    }
    let (status, body) = json(
        app.post(&format!("/v1/activities/{id}/resume"), &json!({}))
            .await,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let reasons: Vec<Value> = decided(&body["missed"]["calendar_skipped"])
        .into_iter()
        .map(|(_, _, reason, _)| reason)
        .collect();
    assert!(!reasons.is_empty(), "{body}");
    assert!(reasons.iter().all(|r| r == "beyond_coverage"), "{body}");
    assert_eq!(
        (&body["paused"], &body["note"]),
        (&json!(true), &json!(note)),
        "{body}"
    );
    let (_, read) = json(app.get(&format!("/v1/activities/{id}")).await).await;
    assert_eq!(read["paused"], true, "{read}");
}
