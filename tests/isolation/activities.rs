//! Activities and their schedules: team-a's key neither reads nor changes
//! team-b's activities, by ID, in the list and its filters, through a
//! trigger that names team-b's calendar, or by a PUT of team-b's ID.

use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;

use super::world::{SHARED_TYPE, World};

pub async fn walk(world: &World) -> Vec<&'static str> {
    let (a, b) = (&world.a, &world.b);
    let gone = deleted_activity_of_b(world).await;
    let before = b_activities(world).await;

    // Lists: A's activities, never B's, whatever the filter.
    for path in [
        "/v1/activities?limit=200",
        "/v1/activities?limit=200&include=summary",
        "/v1/activities?limit=200&trigger_type=event",
        "/v1/activities?limit=200&enabled=true",
        "/v1/activities?limit=200&q=orders",
    ] {
        world
            .assert_listed_only_own(path, "id", &a.activity, &b.activity)
            .await;
    }
    let named_b = world
        .listed_by_a("/v1/activities?limit=200&q=team-b", "id")
        .await;
    assert!(named_b.is_empty(), "B's activities by name: {named_b:?}");

    // By ID: every read and write of B's activity is the 404 of an ID that
    // never existed.
    let activity = format!("/v1/activities/{}", b.activity);
    let scheduled = format!("/v1/activities/{}", b.scheduled);
    let definition = json!({"name": "taken over",
        "trigger": {"type": "event", "event_types": [SHARED_TYPE]},
        "tasks": [{"task_type": "noop"}]});
    let now = chrono::Utc::now();
    let instant =
        |t: chrono::DateTime<chrono::Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let (start, end) = (instant(now - chrono::Duration::hours(1)), instant(now));
    let range = json!({"start": start, "end": end});
    let timeline = format!("{scheduled}/timeline?from={start}&to={end}");
    let cases: Vec<(Method, String, Option<Value>)> = vec![
        (Method::GET, activity.clone(), None),
        (Method::GET, format!("{activity}?include=summary"), None),
        (Method::PUT, activity.clone(), Some(definition.clone())),
        (
            Method::PATCH,
            activity.clone(),
            Some(json!({"name": "renamed"})),
        ),
        (Method::DELETE, activity.clone(), None),
        (Method::POST, format!("{activity}/trigger"), None),
        (Method::POST, format!("{scheduled}/pause"), Some(json!({}))),
        (Method::POST, format!("{scheduled}/resume"), Some(json!({}))),
        (
            Method::POST,
            format!("{scheduled}/resume"),
            Some(json!({"dry_run": true})),
        ),
        (
            Method::POST,
            format!("{scheduled}/backfill"),
            Some(range.clone()),
        ),
        (
            Method::POST,
            format!("{scheduled}/backfill"),
            Some(json!({"start": start, "end": end, "dry_run": true})),
        ),
        (Method::GET, format!("{scheduled}/schedule"), None),
        (Method::GET, timeline, None),
    ];
    for (method, path, body) in &cases {
        world
            .assert_hidden(method.clone(), path, body.as_ref())
            .await;
    }

    // A PUT of a fresh ID still creates, in A's project; B's deleted
    // activity is not brought back into A's.
    let fresh = Uuid::new_v4();
    let (status, created) = world
        .call(
            &a.token,
            Method::PUT,
            &format!("/v1/activities/{fresh}"),
            Some(&definition),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(project_of(world, fresh).await, a.project);
    world
        .assert_hidden(
            Method::PUT,
            &format!("/v1/activities/{gone}"),
            Some(&definition),
        )
        .await;
    let revived: (String, bool) = sqlx::query_as(
        "SELECT project_id, deleted_at IS NOT NULL FROM activities WHERE id = $1::uuid",
    )
    .bind(gone)
    .fetch_one(&world.app.pool)
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(revived, (b.project.clone(), true));

    // A trigger may not name B's calendar: the same 422 as a calendar that
    // does not exist, the ID aside.
    let naming = |calendar: &str| {
        json!({"name": "on b's days",
               "trigger": {"type": "interval", "every": "PT1H", "calendar": {"id": calendar}},
               "tasks": [{"task_type": "noop"}]})
    };
    let unknown = Uuid::new_v4().to_string();
    let mut answers = Vec::new();
    for calendar in [b.calendar.as_str(), unknown.as_str()] {
        let (status, problem) = world
            .call(
                &a.token,
                Method::POST,
                "/v1/activities",
                Some(&naming(calendar)),
            )
            .await;
        assert_eq!(status, 422, "{problem}");
        answers.push(problem.to_string().replace(calendar, "<id>"));
    }
    assert_eq!(answers[0], answers[1]);

    assert_eq!(b_activities(world).await, before, "B's activities changed");
    let requested: i64 =
        sqlx::query_scalar("SELECT count(*) FROM backfill_requests WHERE activity_id = $1::uuid")
            .bind(&b.scheduled)
            .fetch_one(&world.app.pool)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(requested, 0, "a backfill of B's was recorded");

    vec![
        "create_activity",
        "list_activities",
        "get_activity",
        "put_activity",
        "patch_activity",
        "delete_activity",
        "backfill_activity",
        "pause_activity",
        "resume_activity",
        "get_schedule",
        "get_timeline",
        "trigger_activity",
    ]
}

/// What of B's activities a write could change: name, version, paused,
/// deleted, project.
async fn b_activities(world: &World) -> Vec<(String, i64, bool, bool)> {
    sqlx::query_as(
        "SELECT name, version, paused, deleted_at IS NOT NULL FROM activities \
         WHERE project_id = $1 ORDER BY id",
    )
    .bind(&world.b.project)
    .fetch_all(&world.app.pool)
    .await
    .unwrap_or_else(|e| panic!("{e}"))
}

async fn project_of(world: &World, id: Uuid) -> String {
    sqlx::query_scalar("SELECT project_id FROM activities WHERE id = $1::uuid")
        .bind(id)
        .fetch_one(&world.app.pool)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// An activity B created and deleted with its own key.
async fn deleted_activity_of_b(world: &World) -> String {
    let b = &world.b;
    let body = json!({"name": "team-b retired",
        "trigger": {"type": "event", "event_types": ["order.retired"]},
        "tasks": [{"task_type": "noop"}]});
    let (status, created) = world
        .call(&b.token, Method::POST, "/v1/activities", Some(&body))
        .await;
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    let (status, answer) = world
        .call(
            &b.token,
            Method::DELETE,
            &format!("/v1/activities/{id}"),
            None,
        )
        .await;
    assert_eq!(status, 204, "{answer}");
    id
}
