//! Business-day offsets in the cron's day-of-month (`BD3`, `BDL`,
//! `BDL-1`) on a calendar imported from iCalendar (US federal holidays
//! 2026-2027, with make-up Saturdays added): the preview, `next_fire_times`,
//! the timeline and the backfill's dry run name only the offset's day of
//! each month, across a holiday on a Friday and a make-up Saturday; the
//! forms that cannot work are 422s on `trigger.cron`; and against a dev
//! server, the runs Temporal starts when the schedule fires its plain
//! (daily) cadence over a month are exactly the preview's, once each.

use crate::common;

use std::collections::HashSet;
use std::time::Duration;

use chrono::{DateTime, Utc};
use common::*;
use serde_json::{Value, json};
use sqlx::PgPool;

const US_HOLIDAYS: &str = include_str!("fixtures/us-holidays-2026-2027.ics");

/// The imported calendar, with two make-up Saturdays: 11 July 2026 (after
/// Independence Day, observed on Friday the 3rd) and 31 October 2026.
async fn us_calendar(app: &TestApp) -> String {
    let response = app
        .http
        .post(app.url("/v1/calendars:import"))
        .header("content-type", "text/calendar; charset=utf-8")
        .body(US_HOLIDAYS.to_owned())
        .send()
        .await
        .unwrap_or_else(|e| panic!("import: {e}"));
    let (status, body) = json(response).await;
    assert_eq!(status, 201, "{body}");
    let id = body["calendar"]["id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let (status, body) = json(
        app.patch(
            &format!("/v1/calendars/{id}"),
            &json!({"working_days": [
                {"date": "2026-07-11", "name": "Make-up day"},
                {"date": "2026-10-31", "name": "Make-up day"}
            ]}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    id
}

fn trigger(cron: &str, calendar: &str) -> Value {
    json!({
        "type": "cron",
        "cron": cron,
        "timezone": "America/New_York",
        "calendar": {"id": calendar, "mode": "business_days"}
    })
}

fn instants(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap_or_else(|| panic!("not a list: {list}"))
        .iter()
        .map(|t| {
            t.get("at")
                .or_else(|| t.get("scheduled_for"))
                .unwrap_or(t)
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

async fn preview(app: &TestApp, trigger: &Value, around: &str, count: u32) -> Value {
    let (status, body) = json(
        app.post(
            "/v1/schedules/preview",
            &json!({"trigger": trigger, "around": around, "count": count}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    body
}

#[sqlx::test(migrations = "./migrations")]
async fn offsets_name_one_business_day_a_month(pool: PgPool) {
    let app = TestApp::without_temporal(pool).await;
    let calendar = us_calendar(&app).await;
    // (cron, around, the next times). 09:00 in New York is 13:00Z in
    // summer, 14:00Z in winter; 17:30 is 21:30Z or 22:30Z.
    let table = [
        // July 2026: Wednesday 1, Thursday 2, then the holiday Friday and
        // the weekend: the third business day is Monday the 6th. August
        // starts on a Saturday; September's Labor Day is after its 3rd.
        (
            "0 9 BD3 * *",
            "2026-06-30T00:00:00Z",
            vec![
                "2026-07-06T13:00:00Z",
                "2026-08-05T13:00:00Z",
                "2026-09-03T13:00:00Z",
            ],
        ),
        // The make-up Saturday is July's eighth business day (1, 2, 6-10,
        // 11); in 2027, with the 5th a holiday, the eighth is the 13th.
        (
            "0 9 BD8 7 *",
            "2026-06-30T00:00:00Z",
            vec!["2026-07-11T13:00:00Z", "2027-07-13T13:00:00Z"],
        ),
        // October 2026 ends on the make-up Saturday; November on a Monday;
        // December 2026 on a Thursday.
        (
            "30 17 BDL * *",
            "2026-10-01T00:00:00Z",
            vec![
                "2026-10-31T21:30:00Z",
                "2026-11-30T22:30:00Z",
                "2026-12-31T22:30:00Z",
            ],
        ),
        // December 2027 ends on Friday the 31st, a holiday (New Year's Day
        // 2028, observed): the last business day is Thursday the 30th.
        (
            "30 17 BDL 12 *",
            "2027-01-01T00:00:00Z",
            vec!["2027-12-30T22:30:00Z"],
        ),
        (
            "0 9 BDL-1 12 *",
            "2027-01-01T00:00:00Z",
            vec!["2027-12-29T14:00:00Z"],
        ),
        // Lower case is the same offset; the months field restricts.
        (
            "0 9 bdl-1 1-2 *",
            "2026-12-01T00:00:00Z",
            vec!["2027-01-28T14:00:00Z", "2027-02-25T14:00:00Z"],
        ),
    ];
    for (cron, around, want) in &table {
        let body = preview(&app, &trigger(cron, &calendar), around, want.len() as u32).await;
        assert_eq!(&instants(&body["around"]["after"]), want, "{cron}: {body}");
    }

    // An activity's next fires are the preview's.
    let bdl = trigger("30 17 BDL * *", &calendar);
    let created = app
        .create(&json!({"name": "month-end", "trigger": bdl, "tasks": [{"task_type": "noop"}]}))
        .await;
    assert_eq!(created["trigger"]["cron"], "30 17 BDL * *", "{created}");
    let (_, short) = json(
        app.post(
            "/v1/schedules/preview",
            &json!({"trigger": bdl, "count": 10}),
        )
        .await,
    )
    .await;
    assert_eq!(
        instants(&created["schedule"]["next_fire_times"]),
        instants(&short["next"]),
        "{created}"
    );

    // The timeline of July 2026 of a BD3 activity lists the one day.
    let bd3 = app
        .create(
            &json!({"name": "third-day", "trigger": trigger("0 9 BD3 * *", &calendar),
                        "tasks": [{"task_type": "noop"}]}),
        )
        .await;
    let id = bd3["id"].as_str().unwrap_or_default().to_owned();
    let (status, timeline) = json(
        app.get(&format!(
            "/v1/activities/{id}/timeline?from=2026-07-01T00:00:00Z&to=2026-08-01T00:00:00Z"
        ))
        .await,
    )
    .await;
    assert_eq!(status, 200, "{timeline}");
    assert_eq!(
        instants(&timeline["items"]),
        ["2026-07-06T13:00:00Z"],
        "{timeline}"
    );
    assert_eq!(timeline["items"][0]["calendar"], Value::Null);

    // A backfill's dry run of July and August: the two days, nothing else.
    let (status, dry) = json(
        app.post(
            &format!("/v1/activities/{id}/backfill"),
            &json!({"start": "2026-07-01T00:00:00Z", "end": "2026-09-01T00:00:00Z",
                    "dry_run": true}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 200, "{dry}");
    assert_eq!(
        instants(&dry["times"]),
        ["2026-07-06T13:00:00Z", "2026-08-05T13:00:00Z"],
        "{dry}"
    );
    assert!(
        dry["times"]
            .as_array()
            .into_iter()
            .flatten()
            .all(|t| t["action"] == "backfilled"),
        "{dry}"
    );
    assert_eq!(dry["paused"], Value::Null);

    // Editing the calendar moves the day: with 6 July a holiday too (the
    // list is replaced whole), BD3 is the 7th.
    let (status, _) = json(
        app.patch(
            &format!("/v1/calendars/{calendar}"),
            &json!({"holidays": [
                {"date": "2026-07-03", "name": "Independence Day (observed)"},
                {"date": "2026-07-06", "name": "Closed"}
            ]}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 200);
    let body = preview(
        &app,
        &trigger("0 9 BD3 * *", &calendar),
        "2026-06-30T00:00:00Z",
        1,
    )
    .await;
    assert_eq!(
        instants(&body["around"]["after"]),
        ["2026-07-07T13:00:00Z"],
        "{body}"
    );
}

#[sqlx::test(migrations = "./migrations")]
async fn offsets_that_cannot_work_are_422_on_the_cron(pool: PgPool) {
    let app = TestApp::without_temporal(pool).await;
    let calendar = us_calendar(&app).await;
    let no_calendar = json!({"type": "cron", "cron": "0 9 BD3 * *"});
    let exclude = json!({"type": "cron", "cron": "0 9 BD3 * *",
                         "calendar": {"id": calendar, "mode": "exclude"}});
    let table = [
        (no_calendar, "needs a calendar with mode business_days"),
        (exclude, "needs a calendar with mode business_days"),
        (trigger("0 9 BD3,15 * *", &calendar), "stands alone"),
        (trigger("0 9 BDL-1 * 1-6", &calendar), "must be `*`"),
        (trigger("0 9 BD32 * *", &calendar), "out of range"),
        (trigger("0 9 BD1-BD3 * *", &calendar), "not a business day"),
    ];
    for (trigger, says) in &table {
        for (path, body) in [
            (
                "/v1/activities",
                json!({"name": "offset", "trigger": trigger, "tasks": [{"task_type": "noop"}]}),
            ),
            ("/v1/schedules/preview", json!({"trigger": trigger})),
        ] {
            let (status, problem) = json(app.post(path, &body).await).await;
            assert_eq!(status, 422, "{path} {trigger}: {problem}");
            assert_eq!(problem["errors"][0]["field"], "trigger.cron", "{problem}");
            let detail = problem["errors"][0]["message"].as_str().unwrap_or_default();
            assert!(detail.contains(says), "{trigger}: {problem}");
        }
    }
}

/// Against a dev server: the schedule Temporal holds is the plain cadence
/// (09:00 every day), so Temporal fires every day of the month; the runs it
/// starts are exactly the preview's (the third business day), once, and no
/// other day leaves a run. The month is fired by backfilling the
/// schedule's own matching times for July 2026, so every fire is the
/// engine's.
#[sqlx::test(migrations = "./migrations")]
async fn over_a_month_temporal_starts_the_previews_runs_only(pool: PgPool) {
    let server = shared_temporal();
    let namespace = new_namespace(&server.address()).await;
    let app = TestApp::spawn(pool.clone(), &server.address(), &namespace).await;
    let _worker = app.worker(false, Default::default());
    let calendar = us_calendar(&app).await;
    let from: DateTime<Utc> = "2026-07-01T00:00:00Z".parse().unwrap_or_default();
    let to: DateTime<Utc> = "2026-08-01T00:00:00Z".parse().unwrap_or_default();
    let mut months = Vec::new();
    for (name, cron) in [("third", "0 9 BD3 * *"), ("last-but-one", "0 9 BDL-1 * *")] {
        let mut trigger = trigger(cron, &calendar);
        // The launcher decides with today's clock: a limit the months
        // since July do not reach lets the engine's old fires run.
        trigger["misfire_policy"] = json!("catchup");
        trigger["catchup_limit"] = json!(1000);
        let created = app
            .create(&json!({"name": name, "trigger": trigger, "tasks": [{"task_type": "noop"}]}))
            .await;
        assert_eq!(created["schedule"]["sync_state"], "synced", "{created}");
        let id = created["id"].as_str().unwrap_or_default().to_owned();
        let body = preview(&app, &trigger, &from.to_rfc3339(), 3).await;
        let wanted: Vec<String> = instants(&body["around"]["after"])
            .into_iter()
            .filter(|t| t.parse::<DateTime<Utc>>().is_ok_and(|t| t < to))
            .collect();
        months.push((id, wanted));
    }
    assert_eq!(months[0].1, ["2026-07-06T13:00:00Z"]);
    assert_eq!(months[1].1, ["2026-07-30T13:00:00Z"]);

    // Each run's window starts at the trigger's previous time, June's
    // offset day, not the day before.
    let windows = ["2026-06-03T13:00:00Z", "2026-06-29T13:00:00Z"];
    let gateway = app.state.services.activities.gateway();
    for ((id, wanted), window) in months.iter().zip(windows) {
        let uuid: uuid::Uuid = id.parse().unwrap_or_else(|e| panic!("{e}"));
        let schedule = acp_domain::ids::schedule_id(uuid);
        let fires = gateway
            .matching_times(&schedule, from, to)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        // The engine's cadence is every day at 09:00.
        assert_eq!(fires.len(), 31, "{fires:?}");
        gateway
            .backfill(&schedule, &fires)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        // Every fire taken and every launcher finished.
        eventually(Duration::from_secs(120), || async {
            let view = gateway.describe(&schedule).await.ok().flatten()?;
            (view.action_count >= 31 && view.running_workflow_ids.is_empty()).then_some(())
        })
        .await;
        let runs = eventually(Duration::from_secs(60), || async {
            let runs = app.runs_of(id).await;
            let settled = !runs.is_empty() && runs.iter().all(|r| r["status"] != "running");
            settled.then_some(runs)
        })
        .await;
        let mut seen = HashSet::new();
        for run in &runs {
            let at = run["scheduled_for"].as_str().unwrap_or_default().to_owned();
            assert!(seen.insert(at.clone()), "{at} twice: {runs:?}");
            assert_eq!(run["status"], "succeeded", "{run}");
            assert_eq!(run["window_start"], window, "{run}");
        }
        let want: HashSet<String> = wanted.iter().cloned().collect();
        assert_eq!(seen, want, "{runs:?}");
        // And in Temporal: one run workflow, the offset's day's.
        let started: Vec<String> =
            executions_matching(&app, "WorkflowType = 'RunActivityWorkflow'")
                .await
                .into_iter()
                .map(|e| e.workflow_id)
                .filter(|w| w.starts_with(&format!("activity-{id}:")))
                .collect();
        let contract: Vec<String> = wanted
            .iter()
            .filter_map(|t| t.parse::<DateTime<Utc>>().ok())
            .map(|t| acp_domain::ids::scheduled_run_workflow_id(uuid, t))
            .collect();
        assert_eq!(started, contract);
    }
}
