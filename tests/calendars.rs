//! Business calendars over HTTP: create, read, list, replace and patch with
//! ETag/If-Match, delete, validation naming the fields, iCalendar import,
//! and the day-by-day listing. Temporal is not needed (a closed port).

use crate::common;

use common::*;
use serde_json::{Value, json};
use sqlx::PgPool;

const US_HOLIDAYS: &str = include_str!("fixtures/us-holidays-2026-2027.ics");

fn header(response: &reqwest::Response, name: &str) -> String {
    response
        .headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

async fn with_if_match(request: reqwest::RequestBuilder, tag: &str) -> (u16, Value) {
    json(
        request
            .header("if-match", tag)
            .send()
            .await
            .unwrap_or_else(|e| panic!("request: {e}")),
    )
    .await
}

async fn import(app: &TestApp, query: &str, body: &str) -> reqwest::Response {
    app.http
        .post(app.url(&format!("/v1/calendars:import{query}")))
        .header("content-type", "text/calendar; charset=utf-8")
        .body(body.to_owned())
        .send()
        .await
        .unwrap_or_else(|e| panic!("import: {e}"))
}

fn ops_calendar() -> Value {
    json!({
        "name": "ops",
        "timezone": "Europe/Berlin",
        "holidays": [{"date": "2026-12-25", "name": "Christmas Day"}],
        "blackouts": [{"from": "2026-12-24T18:00", "to": "2026-12-27T06:00", "name": "freeze"}],
        "covered_until": "2026-12-31"
    })
}

#[sqlx::test(migrations = "./migrations")]
async fn calendars_are_versioned_with_etags(pool: PgPool) {
    let app = TestApp::without_temporal(pool.clone()).await;
    let created = app.post("/v1/calendars", &ops_calendar()).await;
    assert_eq!(created.status(), 201);
    assert_eq!(header(&created, "etag"), "\"1\"");
    let location = header(&created, "location");
    let (_, body) = json(created).await;
    let id = body["id"].as_str().unwrap_or_default().to_owned();
    assert_eq!(location, format!("/v1/calendars/{id}"));
    assert_eq!(body["weekend_days"], json!([0, 6]));
    assert_eq!(body["blackouts"][0]["from"], "2026-12-24T18:00:00");
    assert_eq!(body["blackouts"][0]["starts_at"], "2026-12-24T17:00:00Z");
    assert_eq!(body["covered_until"], "2026-12-31");

    let got = app.get(&location).await;
    assert_eq!(header(&got, "etag"), "\"1\"");
    let (_, list) = json(app.get("/v1/calendars?limit=10").await).await;
    assert_eq!(list["items"][0]["id"], id.as_str(), "{list}");

    // Replace at version 1; the same If-Match again is stale.
    let mut replaced = ops_calendar();
    replaced["weekend_days"] = json!([5, 6]);
    let url = app.url(&location);
    let (status, body) = with_if_match(app.http.put(&url).json(&replaced), "\"1\"").await;
    assert_eq!((status, body["version"].as_i64()), (200, Some(2)), "{body}");
    assert_eq!(body["weekend_days"], json!([5, 6]));
    let (status, body) = with_if_match(app.http.put(&url).json(&replaced), "\"1\"").await;
    assert_eq!(status, 412, "{body}");
    assert_eq!(body["errors"][0]["field"], "If-Match");

    // A merge patch changes one field and keeps the rest.
    let patch = |tag: &'static str| {
        with_if_match(
            app.http
                .patch(&url)
                .header("content-type", "application/merge-patch+json")
                .body(json!({"covered_until": "2027-06-30"}).to_string()),
            tag,
        )
    };
    let (status, body) = patch("\"2\"").await;
    assert_eq!((status, body["version"].as_i64()), (200, Some(3)), "{body}");
    assert_eq!(body["covered_until"], "2027-06-30");
    assert_eq!(body["weekend_days"], json!([5, 6]));
    assert_eq!(body["holidays"][0]["name"], "Christmas Day");
    assert_eq!(patch("\"2\"").await.0, 412);

    // PUT under a new ID creates; with If-Match it must exist.
    let fresh = app.url(&format!("/v1/calendars/{}", uuid::Uuid::new_v4()));
    let mut other = ops_calendar();
    other["name"] = json!("other");
    let (status, _) = with_if_match(app.http.put(&fresh).json(&other), "*").await;
    assert_eq!(status, 412);
    let response = app
        .http
        .put(&fresh)
        .json(&other)
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(response.status(), 201);
    assert_eq!(header(&response, "etag"), "\"1\"");

    // Delete: stale, then at the version, then gone.
    assert_eq!(with_if_match(app.http.delete(&url), "\"1\"").await.0, 412);
    assert_eq!(with_if_match(app.http.delete(&url), "\"3\"").await.0, 204);
    assert_eq!(app.get(&location).await.status(), 404);
    assert_eq!(app.delete(&location).await.status(), 404);

    // Every write is on the change log, in order.
    let kinds: Vec<(String, i64)> = sqlx::query_as(
        "SELECT kind, (data->>'version')::bigint FROM change_inbox WHERE subject = $1
         UNION ALL SELECT kind, (data->>'version')::bigint FROM change_log WHERE subject = $1
         ORDER BY 2, 1 DESC",
    )
    .bind(&id)
    .fetch_all(&pool)
    .await
    .unwrap_or_default();
    let expected = [
        ("calendar.created", 1),
        ("calendar.updated", 2),
        ("calendar.updated", 3),
        ("calendar.deleted", 3),
    ];
    let kinds: Vec<(&str, i64)> = kinds.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(kinds, expected);
}

#[sqlx::test(migrations = "./migrations")]
async fn bad_calendars_are_refused_naming_the_fields(pool: PgPool) {
    let app = TestApp::without_temporal(pool).await;
    let body = json!({
        "name": "bad",
        "timezone": "Mars/Olympus",
        "weekend_days": [0, 6, 6],
        "holidays": [
            {"date": "2026-07-03", "name": "Independence Day (observed)"},
            {"date": "2026-07-03", "name": "again"},
            {"date": "2026-02-30", "name": "no such day"}
        ],
        "working_days": [{"date": "2026-07-07"}],
        "blackouts": [{"from": "2026-07-03T10:00", "to": "2026-07-03T09:00"}],
        "covered_until": "2026-07-01"
    });
    let (status, problem) = json(app.post("/v1/calendars", &body).await).await;
    assert_eq!(status, 422, "{problem}");
    let mut fields: Vec<&str> = problem["errors"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["field"].as_str())
        .collect();
    fields.sort_unstable();
    assert_eq!(
        fields,
        [
            "blackouts[0].to",
            "covered_until",
            "holidays[1].date",
            "holidays[2].date",
            "timezone",
            "weekend_days[2]",
            "working_days[0].date",
        ],
        "{problem}"
    );
    let (status, problem) = json(
        app.post("/v1/calendars", &json!({"name": "x", "holiday": []}))
            .await,
    )
    .await;
    assert_eq!(
        (status, problem["errors"][0]["field"].as_str()),
        (400, Some("holiday"))
    );
    assert_eq!(
        app.post("/v1/calendars", &ops_calendar()).await.status(),
        201
    );
    let (status, problem) = json(app.post("/v1/calendars", &ops_calendar()).await).await;
    assert_eq!(status, 409, "{problem}");
    assert_eq!(problem["detail"], "a calendar with this name exists");
}

#[sqlx::test(migrations = "./migrations")]
async fn an_icalendar_file_becomes_a_calendar_listed_day_by_day(pool: PgPool) {
    let app = TestApp::without_temporal(pool).await;
    let response = import(&app, "", US_HOLIDAYS).await;
    assert_eq!(response.status(), 201);
    let location = header(&response, "location");
    let (_, body) = json(response).await;
    assert_eq!(body["events"], 23, "{body}");
    assert_eq!(body["warnings"], json!([]));
    let calendar = &body["calendar"];
    assert_eq!(calendar["name"], "US federal holidays");
    assert_eq!(calendar["timezone"], "America/New_York");
    assert_eq!(calendar["covered_until"], "2027-12-31");
    assert_eq!(calendar["holidays"].as_array().map(Vec::len), Some(25));
    assert_eq!(
        location,
        format!(
            "/v1/calendars/{}",
            calendar["id"].as_str().unwrap_or_default()
        )
    );

    // A make-up Saturday, added by a merge patch.
    let patched = app
        .patch(
            &location,
            &json!({"working_days": [{"date": "2026-07-11", "name": "Make-up day"}]}),
        )
        .await;
    assert_eq!(patched.status(), 200);

    let (status, days) = json(
        app.get(&format!("{location}/days?from=2026-07-02&to=2026-07-12"))
            .await,
    )
    .await;
    assert_eq!(status, 200, "{days}");
    let day = |date: &str| {
        days["days"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|d| d["date"] == date)
            .cloned()
            .unwrap_or_default()
    };
    assert_eq!(days["days"].as_array().map(Vec::len), Some(11));
    assert_eq!(day("2026-07-02")["kind"], "business");
    let holiday = day("2026-07-03");
    assert_eq!(
        (holiday["kind"].as_str(), holiday["business_day"].as_bool()),
        (Some("holiday"), Some(false))
    );
    assert_eq!(holiday["name"], "Independence Day (observed)");
    assert_eq!(day("2026-07-04")["kind"], "weekend");
    let saturday = day("2026-07-11");
    assert_eq!(saturday["kind"], "working_day");
    assert_eq!(saturday["business_day"], true);
    assert_eq!(saturday["name"], "Make-up day");
    let (_, later) = json(
        app.get(&format!("{location}/days?from=2027-12-31&to=2028-01-01"))
            .await,
    )
    .await;
    assert_eq!(later["days"][0]["name"], "New Year's Day 2028 (observed)");
    assert_eq!(later["days"][1]["beyond_coverage"], true);
    let (status, problem) = json(
        app.get(&format!("{location}/days?from=2026-07-02&to=2026-07-01"))
            .await,
    )
    .await;
    assert_eq!(
        (status, problem["errors"][0]["field"].as_str()),
        (422, Some("to"))
    );
    let (status, problem) = json(
        app.get(&format!("{location}/days?from=July&to=2026-07-01"))
            .await,
    )
    .await;
    assert_eq!(
        (status, problem["errors"][0]["field"].as_str()),
        (400, Some("from"))
    );

    // The same file again: its name is taken. With options, a second one.
    assert_eq!(import(&app, "", US_HOLIDAYS).await.status(), 409);
    let (status, body) = json(
        import(
            &app,
            "?name=US%202026&covered_until=2026-12-31&weekend_days=0",
            US_HOLIDAYS,
        )
        .await,
    )
    .await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(
        body["calendar"]["holidays"].as_array().map(Vec::len),
        Some(12)
    );
    assert_eq!(body["calendar"]["weekend_days"], json!([0]));
    assert_eq!(
        body["warnings"][0]["message"],
        "13 dates after covered_until left out"
    );
}

#[sqlx::test(migrations = "./migrations")]
async fn a_file_that_would_make_holidays_wrong_is_refused_by_line(pool: PgPool) {
    let app = TestApp::without_temporal(pool).await;
    let timed = US_HOLIDAYS.replacen("DTSTART;VALUE=DATE:20260703", "DTSTART:20260703T090000Z", 1);
    let (status, problem) = json(import(&app, "", &timed).await).await;
    assert_eq!(status, 422, "{problem}");
    assert_eq!(problem["errors"][0]["field"], "body");
    let line = US_HOLIDAYS
        .lines()
        .position(|l| l == "DTSTART;VALUE=DATE:20260703")
        .map(|i| i + 1)
        .unwrap_or_default();
    let message = problem["errors"][0]["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with(&format!("line {line} (DTSTART): ")),
        "{message}"
    );
    let (status, problem) = json(import(&app, "", "not a calendar").await).await;
    assert_eq!(
        (status, problem["errors"][0]["field"].as_str()),
        (422, Some("body")),
        "{problem}"
    );
    let wrong_type = app
        .http
        .post(app.url("/v1/calendars:import"))
        .header("content-type", "application/json")
        .body("{}")
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(wrong_type.status(), 415);
    let (status, problem) = json(import(&app, "?weekend_days=sat", US_HOLIDAYS).await).await;
    assert_eq!(
        (status, problem["errors"][0]["field"].as_str()),
        (400, Some("weekend_days"))
    );
}
