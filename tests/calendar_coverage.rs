//! The `calendar_coverage` alert: it opens the configured notice before the
//! trigger's calendar's coverage ends, stays open while the calendar is not
//! extended, and resolves once it is. A bad notice is a 422 naming the
//! field.

use crate::common;

use chrono::{Duration, Utc};
use common::*;
use serde_json::{Value, json};
use sqlx::PgPool;

#[sqlx::test(migrations = "./migrations")]
async fn coverage_ending_opens_an_alert_that_extending_resolves(pool: PgPool) {
    let app = TestApp::without_temporal(pool).await;
    let today = Utc::now().date_naive();
    let (status, calendar) = json(
        app.post(
            "/v1/calendars",
            &json!({"name": "desk", "timezone": "UTC",
                    "covered_until": (today + Duration::days(10)).to_string()}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 201, "{calendar}");
    let calendar_id = calendar["id"].as_str().unwrap_or_default().to_owned();
    let body = |notice: &str| {
        json!({
            "name": format!("daily-{}", notice.to_lowercase()),
            "trigger": {"type": "cron", "cron": "0 9 * * *", "timezone": "UTC",
                        "calendar": {"id": calendar_id}},
            "tasks": [{"task_type": "noop"}],
            "alerts": {"calendar_coverage": notice}
        })
    };
    let (status, problem) = json(app.post("/v1/activities", &body("PT0S")).await).await;
    assert_eq!(status, 422, "{problem}");
    assert_eq!(problem["errors"][0]["field"], "alerts.calendar_coverage");

    let activity = app.create(&body("P30D")).await;
    assert_eq!(
        activity["alerts"]["calendar_coverage"], "P30D",
        "{activity}"
    );
    let id = activity["id"].as_str().unwrap_or_default().to_owned();
    let uuid = uuid::Uuid::parse_str(&id).unwrap_or_default();
    let alerts = app.state.services.alerts.clone();
    let alerts_of = |state: &'static str| {
        let path = format!("/v1/alerts?activity_id={id}&state={state}");
        let app = &app;
        async move {
            let (status, page) = json(app.get(&path).await).await;
            assert_eq!(status, 200, "{page}");
            page["items"].as_array().cloned().unwrap_or_default()
        }
    };

    // Ten days of coverage left, thirty days' notice: open, once.
    for _ in 0..2 {
        let evaluated = alerts.evaluate(uuid, Utc::now()).await;
        assert!(evaluated.is_ok(), "{evaluated:?}");
    }
    let open = alerts_of("open").await;
    assert_eq!(open.len(), 1, "{open:?}");
    assert_eq!(open[0]["kind"], "calendar_coverage");
    assert_eq!(open[0]["detail"]["calendar_name"], "desk", "{open:?}");
    assert!(
        open[0]["summary"]
            .as_str()
            .is_some_and(|s| s.contains("extend its coverage")),
        "{open:?}"
    );

    // Extended by a year: resolved.
    let (status, body) = json(
        app.patch(
            &format!("/v1/calendars/{calendar_id}"),
            &json!({"covered_until": (today + Duration::days(400)).to_string()}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let evaluated = alerts.evaluate(uuid, Utc::now()).await;
    assert!(evaluated.is_ok(), "{evaluated:?}");
    assert_eq!(alerts_of("open").await, Vec::<Value>::new());
    let resolved = alerts_of("resolved").await;
    assert_eq!(resolved.len(), 1, "{resolved:?}");
    assert_eq!(resolved[0]["kind"], "calendar_coverage");
}
