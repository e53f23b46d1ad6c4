//! Isolation between projects, walked over every operation of the OpenAPI
//! document: with team-a's admin key against team-b's objects (by ID, in
//! lists, filters, the stream and statistics) nothing of team-b is seen or
//! changed, and another project's IDs answer the 404 of an ID that never
//! existed. Each module covers a group of operations and returns their
//! IDs; the walk fails when the document has an operation that no module
//! covers and no line below exempts. Temporal is not needed (a closed
//! port): what a key may reach does not depend on the engine.

use crate::common;

mod activities;
mod calendars;
mod events;
mod keys;
mod notifications;
mod runs;
mod stream;
mod world;

use std::collections::BTreeSet;

use serde_json::Value;
use sqlx::PgPool;

use world::World;

/// Operations that hold nothing of a project, with the reason.
const EXEMPT: &[(&str, &str)] = &[
    ("healthz", "the process is alive: no project's data"),
    ("readyz", "the dependencies answer: no project's data"),
    (
        "metrics",
        "the scrape: aggregates labelled by project, not objects",
    ),
];

#[sqlx::test(migrations = "./migrations")]
async fn a_projects_key_reaches_nothing_of_another_project(pool: PgPool) {
    let world = World::build(pool).await;
    let mut walked = BTreeSet::new();
    walked.extend(keys::walk(&world).await);
    // Events first: the activities' walk creates more of team-a's
    // activities on the shared type, which the events' routing would reach.
    walked.extend(events::walk(&world).await);
    walked.extend(activities::walk(&world).await);
    walked.extend(runs::walk(&world).await);
    walked.extend(notifications::walk(&world).await);
    walked.extend(calendars::walk(&world).await);
    walked.extend(stream::walk(&world).await);

    let document = openapi_document(&world).await;
    let missing = unwalked(&document, &walked);
    assert!(
        missing.is_empty(),
        "operations no isolation module walks (walk them, or exempt them with a reason): {missing:?}"
    );
}

async fn openapi_document(world: &World) -> Value {
    let (status, document) = common::json(world.app.get("/openapi.json").await).await;
    assert_eq!(status, 200, "{document}");
    document
}

/// The document's operation IDs that are neither walked nor exempt.
fn unwalked(document: &Value, walked: &BTreeSet<&'static str>) -> Vec<String> {
    let mut missing = Vec::new();
    let paths = document["paths"].as_object().into_iter().flatten();
    for (_, item) in paths {
        for (_, operation) in item.as_object().into_iter().flatten() {
            let Some(id) = operation["operationId"].as_str() else {
                continue;
            };
            let known = walked.contains(id) || EXEMPT.iter().any(|(exempt, _)| *exempt == id);
            if !known {
                missing.push(id.to_owned());
            }
        }
    }
    missing
}
