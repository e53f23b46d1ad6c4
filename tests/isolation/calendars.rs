//! Calendars and the schedule preview: team-a's key reads, replaces,
//! patches and deletes none of team-b's calendars, and a trigger naming
//! one is answered as if it named no calendar at all.

use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;

use super::world::World;

pub async fn walk(world: &World) -> Vec<&'static str> {
    let (a, b) = (&world.a, &world.b);

    world
        .assert_listed_only_own("/v1/calendars?limit=200", "id", &a.calendar, &b.calendar)
        .await;
    let calendar = format!("/v1/calendars/{}", b.calendar);
    world.assert_hidden(Method::GET, &calendar, None).await;
    world
        .assert_hidden(
            Method::GET,
            &format!("{calendar}/days?from=2030-12-01&to=2030-12-31"),
            None,
        )
        .await;
    let replacement = json!({"name": "taken over", "timezone": "UTC"});
    // PUT creates under a new ID; under B's it must neither replace B's
    // calendar nor say more than that there is none of A's.
    world
        .assert_hidden(Method::PUT, &calendar, Some(&replacement))
        .await;
    world
        .assert_hidden(
            Method::PATCH,
            &calendar,
            Some(&json!({"name": "taken over"})),
        )
        .await;
    world.assert_hidden(Method::DELETE, &calendar, None).await;
    let (name, version): (String, i64) =
        sqlx::query_as("SELECT name, version FROM calendars WHERE id = $1::uuid")
            .bind(&b.calendar)
            .fetch_one(&world.app.pool)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((name.as_str(), version), ("team-b holidays", 1));

    // Names are the project's own: B's name is free in A (a refusal would
    // tell A that B has it), and what A makes or imports is A's.
    let (status, created) = world
        .call(
            &a.token,
            Method::POST,
            "/v1/calendars",
            Some(&json!({"name": "team-b holidays", "timezone": "UTC"})),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    let response = world
        .app
        .http
        .post(
            world
                .app
                .url("/v1/calendars:import?name=team-b%20holidays%202"),
        )
        .bearer_auth(&a.token)
        .header("content-type", "text/calendar")
        .body(ICS)
        .send()
        .await
        .unwrap_or_else(|e| panic!("import: {e}"));
    let (status, imported) = crate::common::json(response).await;
    assert_eq!(status, 201, "{imported}");
    for made in [&created, &imported] {
        let id = made["id"]
            .as_str()
            .or_else(|| made["calendar"]["id"].as_str())
            .unwrap_or_default();
        let (project,): (String,) =
            sqlx::query_as("SELECT project_id FROM calendars WHERE id = $1::uuid")
                .bind(id)
                .fetch_one(&world.app.pool)
                .await
                .unwrap_or_else(|e| panic!("{id}: {e}"));
        assert_eq!(project, a.project, "{made}");
    }

    // The preview: B's calendar is the field error of a calendar that
    // does not exist; A's own previews.
    let own = preview(world, &a.calendar).await;
    assert_eq!(own.0, 200, "{}", own.1);
    let foreign = preview(world, &b.calendar).await;
    let nowhere_id = Uuid::new_v4().to_string();
    let nowhere = preview(world, &nowhere_id).await;
    assert_eq!(foreign.0, 422, "{}", foreign.1);
    assert_eq!(
        foreign.1.to_string().replace(&b.calendar, "ID"),
        nowhere.1.to_string().replace(&nowhere_id, "ID"),
        "team-b's calendar answers otherwise than one that does not exist"
    );

    vec![
        "list_calendars",
        "get_calendar",
        "list_days",
        "put_calendar",
        "patch_calendar",
        "delete_calendar",
        "create_calendar",
        "import_calendar",
        "preview_schedule",
    ]
}

const ICS: &str = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//acp tests//EN\r\n\
BEGIN:VEVENT\r\nUID:xmas@acp\r\nDTSTART;VALUE=DATE:20261225\r\nSUMMARY:Christmas\r\n\
END:VEVENT\r\nEND:VCALENDAR\r\n";

/// A's key previews a daily trigger that skips the calendar's holidays.
async fn preview(world: &World, calendar: &str) -> (u16, Value) {
    world
        .call(
            &world.a.token,
            Method::POST,
            "/v1/schedules/preview",
            Some(
                &json!({"trigger": {"type": "cron", "cron": "0 9 * * *", "timezone": "UTC",
                                     "calendar": {"id": calendar, "mode": "exclude"}},
                         "count": 2}),
            ),
        )
        .await
}
