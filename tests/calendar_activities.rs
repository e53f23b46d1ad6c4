//! Activities whose trigger names a business calendar: the preview,
//! `next_fire_times` and the timeline apply it (a Friday holiday rolled to
//! the next or previous business day, or excluded), a missing calendar is a
//! 422, a calendar in use is not deleted (409), an edit of the calendar
//! moves the next fires; and against a dev server, the runs Temporal starts
//! over a blackout are the preview's, the others recorded skipped.

use crate::common;

use std::collections::HashSet;
use std::time::Duration;

use chrono::{DateTime, Utc};
use common::*;
use serde_json::{Value, json};
use sqlx::PgPool;

/// New York's 2026 with Independence Day on Friday 3 July.
fn nyse() -> Value {
    json!({
        "name": "us-nyse",
        "timezone": "America/New_York",
        "holidays": [{"date": "2026-07-03", "name": "Independence Day"}],
        "covered_until": "2027-12-31"
    })
}

async fn create_calendar(app: &TestApp, body: &Value) -> String {
    let (status, body) = json(app.post("/v1/calendars", body).await).await;
    assert_eq!(status, 201, "{body}");
    body["id"].as_str().unwrap_or_default().to_owned()
}

/// Fridays at 09:00 in New York, with `calendar`.
fn fridays(calendar: Value) -> Value {
    json!({
        "type": "cron",
        "cron": "0 9 * * 5",
        "timezone": "America/New_York",
        "calendar": calendar
    })
}

fn instants(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap_or_else(|| panic!("not a list: {list}"))
        .iter()
        .map(|t| {
            t.get("at")
                .unwrap_or(t)
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

async fn preview_after(app: &TestApp, trigger: Value, around: &str) -> (u16, Value) {
    json(
        app.post(
            "/v1/schedules/preview",
            &json!({"trigger": trigger, "around": around, "count": 3}),
        )
        .await,
    )
    .await
}

#[sqlx::test(migrations = "./migrations")]
async fn a_friday_holiday_rolls_or_is_excluded_in_preview_and_timeline(pool: PgPool) {
    let app = TestApp::without_temporal(pool).await;
    let id = create_calendar(&app, &nyse()).await;
    let around = "2026-06-30T00:00:00Z";
    let table = [
        (
            json!({"id": id, "mode": "business_days", "roll": "next"}),
            [
                "2026-07-06T13:00:00Z",
                "2026-07-10T13:00:00Z",
                "2026-07-17T13:00:00Z",
            ],
        ),
        (
            json!({"id": id, "roll": "previous"}),
            [
                "2026-07-02T13:00:00Z",
                "2026-07-10T13:00:00Z",
                "2026-07-17T13:00:00Z",
            ],
        ),
        (
            json!({"id": id, "mode": "exclude"}),
            [
                "2026-07-10T13:00:00Z",
                "2026-07-17T13:00:00Z",
                "2026-07-24T13:00:00Z",
            ],
        ),
    ];
    for (calendar, want) in &table {
        let (status, body) = preview_after(&app, fridays(calendar.clone()), around).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(instants(&body["around"]["after"]), want, "{calendar}");
    }
    // Without the calendar the holiday is an ordinary Friday.
    let mut plain = fridays(json!(null));
    plain.as_object_mut().map(|o| o.remove("calendar"));
    let (_, body) = preview_after(&app, plain, around).await;
    assert_eq!(
        instants(&body["around"]["after"])[0],
        "2026-07-03T13:00:00Z"
    );

    // The timeline of an activity that rolls to the next business day.
    let rolled = app
        .create(&json!({
            "name": "friday-report",
            "trigger": fridays(table[0].0.clone()),
            "tasks": [{"task_type": "noop"}]
        }))
        .await;
    assert_eq!(rolled["trigger"]["calendar"]["roll"], "next", "{rolled}");
    assert_eq!(rolled["trigger"]["calendar"]["beyond_coverage"], "run");
    let timeline = |activity: &str| {
        let path = format!(
            "/v1/activities/{activity}/timeline?from=2026-07-01T00:00:00Z&to=2026-07-11T00:00:00Z"
        );
        let app = &app;
        async move {
            let (status, body) = json(app.get(&path).await).await;
            assert_eq!(status, 200, "{body}");
            body["items"].as_array().cloned().unwrap_or_default()
        }
    };
    let items = timeline(rolled["id"].as_str().unwrap_or_default()).await;
    let seen: Vec<(&str, &Value, &Value)> = items
        .iter()
        .map(|i| {
            (
                i["scheduled_for"].as_str().unwrap_or_default(),
                &i["reason"],
                &i["calendar"],
            )
        })
        .collect();
    let why = r#"rolled from 2026-07-03T09:00 to 2026-07-06T09:00 (holiday: "Independence Day" in us-nyse v1)"#;
    assert_eq!(seen.len(), 3, "{items:?}");
    assert_eq!(
        seen[0],
        ("2026-07-03T13:00:00Z", &json!("rolled"), &json!(why))
    );
    assert_eq!(
        (seen[1].0, seen[1].2),
        ("2026-07-06T13:00:00Z", &json!(why))
    );
    assert_eq!(
        (seen[2].0, seen[2].2),
        ("2026-07-10T13:00:00Z", &Value::Null)
    );

    // Excluded: the holiday says so.
    let excluded = app
        .create(&json!({
            "name": "friday-excluded",
            "trigger": fridays(table[2].0.clone()),
            "tasks": [{"task_type": "noop"}]
        }))
        .await;
    let items = timeline(excluded["id"].as_str().unwrap_or_default()).await;
    assert_eq!(items.len(), 2, "{items:?}");
    assert_eq!(items[0]["reason"], "holiday");
    assert_eq!(
        items[0]["calendar"],
        r#"holiday: "Independence Day" in us-nyse v1"#
    );
}

#[sqlx::test(migrations = "./migrations")]
async fn a_missing_calendar_is_422_and_one_in_use_is_not_deleted(pool: PgPool) {
    let app = TestApp::without_temporal(pool).await;
    let missing = uuid::Uuid::new_v4().to_string();
    let body = json!({
        "name": "no-such-calendar",
        "trigger": fridays(json!({"id": missing})),
        "tasks": [{"task_type": "noop"}]
    });
    let (status, problem) = json(app.post("/v1/activities", &body).await).await;
    assert_eq!(status, 422, "{problem}");
    assert_eq!(
        problem["errors"][0]["field"], "trigger.calendar.id",
        "{problem}"
    );
    let (status, problem) = preview_after(
        &app,
        fridays(json!({"id": missing})),
        "2026-06-30T00:00:00Z",
    )
    .await;
    assert_eq!(status, 422, "{problem}");
    assert_eq!(
        problem["errors"][0]["field"], "trigger.calendar.id",
        "{problem}"
    );
    // A roll is for business days only.
    let id = create_calendar(&app, &nyse()).await;
    let bad = fridays(json!({"id": id, "mode": "exclude", "roll": "next"}));
    let (status, problem) = preview_after(&app, bad, "2026-06-30T00:00:00Z").await;
    assert_eq!(status, 422, "{problem}");
    assert_eq!(
        problem["errors"][0]["field"], "trigger.calendar.roll",
        "{problem}"
    );

    let activity = app
        .create(&json!({
            "name": "uses-nyse",
            "trigger": fridays(json!({"id": id})),
            "tasks": [{"task_type": "noop"}]
        }))
        .await;
    let (status, problem) = json(app.delete(&format!("/v1/calendars/{id}")).await).await;
    assert_eq!(status, 409, "{problem}");
    let detail = problem["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("\"uses-nyse\""), "{problem}");
    assert!(
        detail.contains(activity["id"].as_str().unwrap_or("-")),
        "{problem}"
    );
    let deleted = app
        .delete(&format!(
            "/v1/activities/{}",
            activity["id"].as_str().unwrap_or_default()
        ))
        .await;
    assert_eq!(deleted.status(), 204);
    let deleted = app.delete(&format!("/v1/calendars/{id}")).await;
    assert_eq!(deleted.status(), 204);
}

#[sqlx::test(migrations = "./migrations")]
async fn a_calendar_edit_moves_the_next_fires(pool: PgPool) {
    let app = TestApp::without_temporal(pool).await;
    let id = create_calendar(
        &app,
        &json!({"name": "utc-desk", "timezone": "UTC", "weekend_days": []}),
    )
    .await;
    let activity = app
        .create(&json!({
            "name": "daily-desk",
            "trigger": {"type": "cron", "cron": "0 9 * * *", "timezone": "UTC",
                        "calendar": {"id": id, "mode": "exclude"}},
            "tasks": [{"task_type": "noop"}]
        }))
        .await;
    let path = format!(
        "/v1/activities/{}",
        activity["id"].as_str().unwrap_or_default()
    );
    let next = |body: &Value| instants(&body["schedule"]["next_fire_times"]);
    let before = next(&activity);
    assert_eq!(before.len(), 10, "{activity}");
    // The first fire's day becomes a holiday: the next fires move on a day.
    let day = &before[0][..10];
    let (status, body) = json(
        app.patch(
            &format!("/v1/calendars/{id}"),
            &json!({"holidays": [{"date": day, "name": "Desk closed"}]}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (_, after) = json(app.get(&path).await).await;
    let after = next(&after);
    assert_eq!(after[..9], before[1..], "{after:?}");
    // The list says the same.
    let (_, list) = json(app.get("/v1/activities?limit=10").await).await;
    assert_eq!(next(&list["items"][0]), after);
}

/// Against a dev server: a two-second interval over a six-second blackout.
/// The times Temporal fired in the blackout are recorded skipped with reason
/// `blackout` and run nothing; the ones that ran are the preview's; no time
/// has two runs. `catchup` buffers a fire that comes while a run is still
/// going, so every time the preview lists runs.
#[sqlx::test(migrations = "./migrations")]
async fn runs_over_a_blackout_are_the_preview(pool: PgPool) {
    let server = shared_temporal();
    let namespace = new_namespace(&server.address()).await;
    let app = TestApp::spawn(pool.clone(), &server.address(), &namespace).await;
    let _worker = app.worker(false, Default::default());

    // An even second (the interval's phase) far enough ahead for the
    // schedule to be in place two fires before it.
    let now = Utc::now().timestamp();
    let start = DateTime::from_timestamp(now + 10 + (now % 2), 0).unwrap_or_default();
    let end = start + chrono::Duration::seconds(6);
    let local = |t: DateTime<Utc>| t.format("%Y-%m-%dT%H:%M:%S").to_string();
    let id = create_calendar(
        &app,
        &json!({"name": "freeze", "timezone": "UTC", "weekend_days": [],
                "blackouts": [{"from": local(start), "to": local(end), "name": "deploy"}]}),
    )
    .await;
    let trigger = json!({"type": "interval", "every": "PT2S", "misfire_policy": "catchup",
                         "calendar": {"id": id, "mode": "exclude"}});
    let activity = app
        .create(&json!({"name": "every-two-seconds", "trigger": trigger, "tasks": [{"task_type": "noop"}]}))
        .await;
    let activity_id = activity["id"].as_str().unwrap_or_default().to_owned();

    // Observe from just before the blackout to just after it.
    let from = start - chrono::Duration::seconds(4);
    let to = end + chrono::Duration::seconds(4);
    let settled = eventually(Duration::from_secs(60), || async {
        let runs = app.runs_of(&activity_id).await;
        let done = runs.iter().any(|r| {
            r["scheduled_for"]
                .as_str()
                .and_then(|t| t.parse::<DateTime<Utc>>().ok())
                > Some(to)
        });
        done.then_some(runs)
    })
    .await;
    let (status, _) = json(
        app.patch(
            &format!("/v1/activities/{activity_id}"),
            &json!({"enabled": false}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 200);

    let (_, preview) = json(
        app.post(
            "/v1/schedules/preview",
            &json!({"trigger": trigger, "around": from.to_rfc3339(), "count": 20}),
        )
        .await,
    )
    .await;
    let wanted: HashSet<DateTime<Utc>> = instants(&preview["around"]["after"])
        .iter()
        .filter_map(|t| t.parse::<DateTime<Utc>>().ok())
        .filter(|t| *t < to)
        .collect();
    // The preview leaves out exactly the blackout's seconds.
    assert_eq!(wanted.len(), 4, "{preview}");
    assert!(wanted.iter().all(|t| *t < start || *t >= end), "{wanted:?}");

    let mut seen = HashSet::new();
    let mut ran = HashSet::new();
    let mut skipped = HashSet::new();
    for run in &settled {
        let Some(at) = run["scheduled_for"]
            .as_str()
            .and_then(|t| t.parse::<DateTime<Utc>>().ok())
        else {
            continue;
        };
        assert!(seen.insert(at), "{at} has two runs: {settled:?}");
        if at < from || at >= to {
            continue;
        }
        if run["status"] == "skipped" && run["skip_reason"] == "blackout" {
            skipped.insert(at);
        } else if run["status"] != "skipped" {
            ran.insert(at);
        }
    }
    let blackout: HashSet<DateTime<Utc>> = (0..3)
        .map(|s| start + chrono::Duration::seconds(2 * s))
        .collect();
    assert_eq!(skipped, blackout, "{settled:?}");
    assert_eq!(ran, wanted, "{settled:?}");
}

/// Against a dev server: a Friday holiday rolled to Monday, which a Friday
/// cron never fires. The reconciler's pass starts Monday's time once it is
/// due, once; the engine's fire of the Friday is recorded skipped with
/// reason `rolled`. Driven with the clock of that week (the activity's
/// creation moved back before it, as `dst_backfill::extras` does); the
/// launcher decides with today's clock, so the trigger is `catchup` with a
/// limit the months since do not reach.
#[sqlx::test(migrations = "./migrations")]
async fn a_rolled_time_runs_once_and_its_friday_is_skipped(pool: PgPool) {
    let server = shared_temporal();
    let namespace = new_namespace(&server.address()).await;
    let app = TestApp::spawn(pool.clone(), &server.address(), &namespace).await;
    let _worker = app.worker(false, Default::default());
    let calendar = create_calendar(&app, &nyse()).await;
    let mut trigger = fridays(json!({"id": calendar, "roll": "next"}));
    trigger["misfire_policy"] = json!("catchup");
    trigger["catchup_limit"] = json!(1000);
    let created = app
        .create(
            &json!({"name": "friday-close", "trigger": trigger, "tasks": [{"task_type": "noop"}]}),
        )
        .await;
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    let uuid: uuid::Uuid = id.parse().unwrap_or_else(|e| panic!("{e}"));
    sqlx::query("UPDATE activities SET created_at = '2026-06-01T00:00:00Z' WHERE id = $1")
        .bind(uuid)
        .execute(&pool)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let services = &app.state.services;
    let activity = services
        .activities
        .get(uuid)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let at = |t: &str| {
        t.parse::<DateTime<Utc>>()
            .unwrap_or_else(|e| panic!("{t}: {e}"))
    };
    let pass = |now: &'static str| {
        let activity = activity.clone();
        async move {
            services
                .schedules
                .start_due_dst_extras(&[activity], at(now))
                .await
        }
    };
    let (friday, monday) = ("2026-07-03T13:00:00Z", "2026-07-06T13:00:00Z");
    assert_eq!(pass("2026-07-06T12:59:59Z").await, 0, "not due yet");
    assert_eq!(pass("2026-07-06T13:00:05Z").await, 1);
    assert_eq!(pass("2026-07-06T13:00:10Z").await, 0, "started already");
    // The engine's fire of the holiday, as the schedule would start it.
    services
        .activities
        .gateway()
        .start_launcher(uuid, at(friday), services.activities.task_queue(), false)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let runs = eventually(Duration::from_secs(60), || async {
        let runs = app.runs_of(&id).await;
        let settled = runs.len() == 2 && runs.iter().all(|r| r["status"] != "running");
        settled.then_some(runs)
    })
    .await;
    let mut seen: Vec<(String, String, Value)> = runs
        .iter()
        .map(|r| {
            (
                r["scheduled_for"].as_str().unwrap_or_default().to_owned(),
                r["status"].as_str().unwrap_or_default().to_owned(),
                r["skip_reason"].clone(),
            )
        })
        .collect();
    seen.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        seen,
        vec![
            (friday.to_owned(), "skipped".to_owned(), json!("rolled")),
            (monday.to_owned(), "succeeded".to_owned(), Value::Null),
        ]
    );
    assert_eq!(pass("2026-07-06T13:30:00Z").await, 0, "ran already");
    let (_, timeline) = json(
        app.get(&format!(
            "/v1/activities/{id}/timeline?from=2026-07-03T00:00:00Z&to=2026-07-07T00:00:00Z"
        ))
        .await,
    )
    .await;
    let items: Vec<(Value, Value, Value)> = timeline["items"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|i| {
            (
                i["scheduled_for"].clone(),
                i["status"].clone(),
                i["reason"].clone(),
            )
        })
        .collect();
    assert_eq!(
        items,
        vec![
            (json!(friday), json!("skipped"), json!("rolled")),
            (json!(monday), json!("succeeded"), Value::Null),
        ],
        "{timeline}"
    );
}

/// Against a dev server: `beyond_coverage: pause`. The engine's fire of a
/// time after `covered_until` is recorded skipped with reason
/// `beyond_coverage`, and the activity is paused.
#[sqlx::test(migrations = "./migrations")]
async fn a_fire_beyond_coverage_pauses_the_activity(pool: PgPool) {
    let server = shared_temporal();
    let namespace = new_namespace(&server.address()).await;
    let app = TestApp::spawn(pool.clone(), &server.address(), &namespace).await;
    let _worker = app.worker(false, Default::default());
    let mut short = nyse();
    short["covered_until"] = json!("2026-07-05");
    let calendar = create_calendar(&app, &short).await;
    let trigger = fridays(json!({"id": calendar, "beyond_coverage": "pause"}));
    let created = app
        .create(&json!({"name": "friday-uncovered", "trigger": trigger, "tasks": [{"task_type": "noop"}]}))
        .await;
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    assert_eq!(created["paused"], false, "{created}");
    // Every next fire is past the coverage: none is shown.
    assert_eq!(
        created["schedule"]["next_fire_times"],
        json!([]),
        "{created}"
    );
    let uuid: uuid::Uuid = id.parse().unwrap_or_else(|e| panic!("{e}"));
    let services = &app.state.services;
    services
        .activities
        .gateway()
        .start_launcher(
            uuid,
            "2026-07-10T13:00:00Z".parse().unwrap_or_default(),
            services.activities.task_queue(),
            false,
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let run = eventually(Duration::from_secs(60), || async {
        app.runs_of(&id).await.into_iter().next()
    })
    .await;
    assert_eq!(
        (&run["status"], &run["skip_reason"]),
        (&json!("skipped"), &json!("beyond_coverage")),
        "{run}"
    );
    let (_, activity) = json(app.get(&format!("/v1/activities/{id}")).await).await;
    assert_eq!(activity["paused"], true, "{activity}");
}
