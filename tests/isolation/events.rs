//! Events and sources: team-a's key reads and lists its own project's
//! events and sources only; an event it posts is its project's (an ID team-b
//! used is a new event, not a duplicate) and reaches its activities only;
//! a broker source's messages become events of the source's project.

use reqwest::Method;
use serde_json::{Value, json};

use super::world::{SHARED_TYPE, World};
use acp_domain::project::ProjectId;
use acp_service::sources::{Delivered, Message};

pub async fn walk(world: &World) -> Vec<&'static str> {
    let (a, b) = (&world.a, &world.b);

    // Reads first: later A posts an event under B's event ID, which A then
    // owns.
    world
        .assert_listed_only_own("/v1/events?limit=200", "event_id", &a.event, &b.event)
        .await;
    world
        .assert_listed_only_own(
            &format!("/v1/events?limit=200&event_type={SHARED_TYPE}&source=shop"),
            "event_id",
            &a.event,
            &b.event,
        )
        .await;
    world
        .assert_hidden(Method::GET, &format!("/v1/events/{}", b.event), None)
        .await;

    // B's event ID, posted by A with other content: A's new event (over
    // one project it would be a 409 conflict), routed to A's activity only.
    let event = json!({"event_id": b.event, "event_type": SHARED_TYPE, "source": "till",
                       "payload": {"order": "a"}});
    let (status, ingested) = world
        .call(&a.token, Method::POST, "/v1/events", Some(&event))
        .await;
    assert_eq!(status, 202, "{ingested}");
    assert_eq!(routed_to(&ingested), vec![a.activity.clone()], "{ingested}");
    let (status, read) = world
        .call(
            &a.token,
            Method::GET,
            &format!("/v1/events/{}", b.event),
            None,
        )
        .await;
    assert_eq!(status, 200, "{read}");
    assert_eq!(read["payload"], json!({"order": "a"}), "{read}");
    assert_eq!(routed_to(&read), vec![a.activity.clone()], "{read}");
    let (status, again) = world
        .call(&a.token, Method::POST, "/v1/events", Some(&event))
        .await;
    assert_eq!(status, 202, "a re-delivery within A stays A's: {again}");

    let cloudevent = json!({"specversion": "1.0", "id": "c-1", "source": "shop",
                            "type": SHARED_TYPE, "data": {"order": 2}});
    let (status, ingested) = world
        .call_as(
            &a.token,
            "/v1/cloudevents",
            "application/cloudevents+json",
            &cloudevent,
        )
        .await;
    assert_eq!(status, 202, "{ingested}");
    assert_eq!(routed_to(&ingested), vec![a.activity.clone()], "{ingested}");

    let batch = json!({"events": [{"event_id": "batch-1", "event_type": SHARED_TYPE,
                                    "source": "shop", "payload": {}}]});
    let (status, answer) = world
        .call(&a.token, Method::POST, "/v1/events:batch", Some(&batch))
        .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        routed_to(&answer["items"][0]["result"]),
        vec![a.activity.clone()],
        "{answer}"
    );

    sources(world).await;
    broker_messages_stay_in_their_sources_project(world).await;
    b_is_unchanged(world).await;

    vec![
        "list_events",
        "get_event",
        "ingest_event",
        "ingest_cloudevent",
        "ingest_events_batch",
        "create_source",
        "list_sources",
        "get_source",
        "patch_source",
        "delete_source",
        "list_rejected",
    ]
}

async fn sources(world: &World) {
    let (a, b) = (&world.a, &world.b);
    world
        .assert_listed_only_own("/v1/sources?limit=200", "id", &a.source, &b.source)
        .await;
    let source = format!("/v1/sources/{}", b.source);
    world.assert_hidden(Method::GET, &source, None).await;
    world
        .assert_hidden(Method::PATCH, &source, Some(&json!({"enabled": true})))
        .await;
    world.assert_hidden(Method::DELETE, &source, None).await;
    world
        .assert_hidden(Method::GET, &format!("{source}/rejected"), None)
        .await;
    let (status, page) = world
        .call(
            &a.token,
            Method::GET,
            &format!("/v1/sources/{}/rejected", a.source),
            None,
        )
        .await;
    assert_eq!(status, 200, "A reads its own source's rejections: {page}");

    // B's source's name is free in A's project: taken there would tell A
    // that B's exists.
    let (status, created) = world
        .call(
            &a.token,
            Method::POST,
            "/v1/sources",
            Some(
                &json!({"name": "team-b-orders", "kind": "rabbitmq", "enabled": false,
                         "config": {"url": "amqp://guest@127.0.0.1:5672/%2f",
                                    "queue": "a-orders"}}),
            ),
        )
        .await;
    assert_eq!(status, 201, "{created}");
}

/// The same message from a source of each project becomes an event of
/// each project (the same ID, no conflict), routed to that project's
/// activity only.
async fn broker_messages_stay_in_their_sources_project(world: &World) {
    let message = |order: i64| Message {
        headers: Vec::new(),
        content_type: Some("application/json".into()),
        body: json!({"event_id": "broker-1", "event_type": SHARED_TYPE, "source": "queue",
                     "payload": {"order": order}})
        .to_string()
        .into_bytes(),
    };
    let sources = &world.app.state.services.sources;
    for (owner, order) in [(&world.a, 1), (&world.b, 2)] {
        let project = ProjectId::parse(&owner.project).unwrap_or_else(|e| panic!("{e}"));
        let id = owner.source.parse().unwrap_or_else(|e| panic!("{e}"));
        let delivered = sources
            .deliver(id, &project, &message(order), 64 * 1024)
            .await
            .unwrap_or_else(|e| panic!("deliver: {e}"));
        assert_eq!(
            delivered,
            Delivered::Accepted {
                event_id: "broker-1".into()
            }
        );
        let (status, read) = world
            .call(&owner.token, Method::GET, "/v1/events/broker-1", None)
            .await;
        assert_eq!(status, 200, "{read}");
        assert_eq!(read["payload"], json!({"order": order}), "{read}");
        assert_eq!(routed_to(&read), vec![owner.activity.clone()], "{read}");
    }
}

/// Nothing of B changed: its event keeps its content and its one dispatch
/// (to B's activity), its source its version.
async fn b_is_unchanged(world: &World) {
    let b = &world.b;
    let pool = &world.app.pool;
    let (payload, source): (Value, String) = sqlx::query_as(
        "SELECT payload, source FROM events WHERE project_id = $1 AND event_id = $2",
    )
    .bind(&b.project)
    .bind(&b.event)
    .fetch_one(pool)
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((payload, source.as_str()), (json!({"order": 1}), "shop"));
    let dispatched: Vec<String> = sqlx::query_scalar(
        "SELECT activity_id::text FROM event_dispatches WHERE project_id = $1 AND event_id = $2",
    )
    .bind(&b.project)
    .bind(&b.event)
    .fetch_all(pool)
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(dispatched, vec![b.activity.clone()]);
    let (name, version, enabled): (String, i64, bool) =
        sqlx::query_as("SELECT name, version, enabled FROM sources WHERE id = $1::uuid")
            .bind(&b.source)
            .fetch_one(pool)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (name.as_str(), version, enabled),
        ("team-b-orders", 1, false)
    );
}

/// The activities an ingest answer or an event read dispatched to.
fn routed_to(body: &Value) -> Vec<String> {
    body["dispatches"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|d| d["activity_id"].as_str().map(str::to_owned))
        .collect()
}
