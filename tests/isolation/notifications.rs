//! Subscriptions and their deliveries, alerts, the audit log and
//! retention: team-a's key sees and changes none of team-b's, and a
//! notification about team-b's activity reaches team-b's subscriptions
//! only.

use reqwest::Method;
use serde_json::json;
use uuid::Uuid;

use super::world::World;
use acp_store::NotificationStore;

pub async fn walk(world: &World) -> Vec<&'static str> {
    let (a, b) = (&world.a, &world.b);
    let pool = &world.app.pool;

    // Subscriptions: B's is neither listed, read, deleted nor its
    // deliveries listed.
    world
        .assert_listed_only_own(
            "/v1/subscriptions?limit=200",
            "id",
            &a.subscription,
            &b.subscription,
        )
        .await;
    let subscription = format!("/v1/subscriptions/{}", b.subscription);
    world.assert_hidden(Method::GET, &subscription, None).await;
    world
        .assert_hidden(Method::GET, &format!("{subscription}/deliveries"), None)
        .await;
    world
        .assert_hidden(Method::DELETE, &subscription, None)
        .await;
    let (live,): (bool,) =
        sqlx::query_as("SELECT deleted_at IS NULL FROM subscriptions WHERE id = $1::uuid")
            .bind(&b.subscription)
            .fetch_one(pool)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    assert!(live, "team-a's key deleted team-b's subscription");

    // A subscription A makes (to every type, every activity) is A's, and
    // a notification about B's activity is delivered to B's subscription
    // only.
    let (status, created) = world
        .call(
            &a.token,
            Method::POST,
            "/v1/subscriptions",
            Some(&json!({"url": "https://hooks.example.com/a-everything"})),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    let everything = created["id"].as_str().unwrap_or_default().to_owned();
    let (project,): (String,) =
        sqlx::query_as("SELECT project_id FROM subscriptions WHERE id = $1::uuid")
            .bind(&everything)
            .fetch_one(pool)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(project, a.project);
    let notification: Uuid = sqlx::query_scalar(
        "INSERT INTO notifications (type, activity_id, subject, data)
         VALUES ('run.failed', $1::uuid, $2, '{}') RETURNING id",
    )
    .bind(&b.activity)
    .bind(&b.run)
    .fetch_one(pool)
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    NotificationStore::new(pool.clone())
        .fan_out(100)
        .await
        .unwrap_or_else(|e| panic!("fan out: {e}"));
    let reached: Vec<Uuid> = sqlx::query_scalar(
        "SELECT subscription_id FROM notification_deliveries
          WHERE notification_id = $1 AND subscription_id IS NOT NULL",
    )
    .bind(notification)
    .fetch_all(pool)
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        reached.iter().map(Uuid::to_string).collect::<Vec<_>>(),
        vec![b.subscription.clone()],
        "a notification about team-b's activity goes to team-b's subscription alone"
    );
    let (status, page) = world
        .call(
            &b.token,
            Method::GET,
            &format!("{subscription}/deliveries"),
            None,
        )
        .await;
    assert_eq!(status, 200, "{page}");
    assert!(
        page["items"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|d| d["notification_id"] == json!(notification)),
        "team-b lists its delivery: {page}"
    );

    // Alerts: by ID, listed, and filtered by B's activity.
    world
        .assert_listed_only_own("/v1/alerts?limit=200", "id", &a.alert, &b.alert)
        .await;
    assert!(
        world
            .listed_by_a(&format!("/v1/alerts?activity_id={}", b.activity), "id")
            .await
            .is_empty(),
        "team-b's activity's alerts listed for team-a"
    );
    world
        .assert_hidden(Method::GET, &format!("/v1/alerts/{}", b.alert), None)
        .await;

    // The audit log: each project's entries to its own keys; the
    // operator acts (and reads) in `default`, like every other read.
    world
        .assert_listed_only_own(
            "/v1/audit?limit=200&subject_type=calendar",
            "subject_id",
            &a.calendar,
            &b.calendar,
        )
        .await;
    assert!(
        world
            .listed_by_a(
                &format!("/v1/audit?subject_id={}", b.calendar),
                "subject_id"
            )
            .await
            .is_empty(),
        "team-b's entries listed for team-a"
    );
    let (status, page) = world
        .call(
            &world.app.token,
            Method::GET,
            "/v1/audit?limit=200&subject_type=calendar",
            None,
        )
        .await;
    assert_eq!(status, 200, "{page}");
    let operator_sees: Vec<&str> = page["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["subject_id"].as_str())
        .collect();
    assert!(
        !operator_sees.contains(&b.calendar.as_str()),
        "the operator reads `default`'s entries: {operator_sees:?}"
    );

    // Retention lists the partitions of every project's history: the
    // operator's alone.
    let (status, problem) = world
        .call(&a.token, Method::GET, "/v1/retention", None)
        .await;
    assert_eq!(status, 403, "{problem}");

    vec![
        "list_subscriptions",
        "get_subscription",
        "delete_subscription",
        "list_deliveries",
        "create_subscription",
        "list_alerts",
        "get_alert",
        "list_audit",
        "get_retention",
    ]
}
