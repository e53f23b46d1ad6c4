//! The OpenAPI document, built from the handlers' annotations.

use utoipa::OpenApi;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "activity-control-plane",
        description = "Activity definitions with trigger policies, turned into Temporal schedules and runs, with exact idempotency and full run history.",
        license(name = "Apache-2.0"),
    ),
    tags(
        (name = "activities", description = "Activity definitions and their schedules"),
        (name = "schedules", description = "Pause, resume, backfill, and what happened to every nominal time"),
        (name = "runs", description = "Run history: every execution and its task instances"),
        (name = "events", description = "External events, routed to event-triggered activities exactly once"),
        (name = "health", description = "Liveness and readiness"),
    )
)]
pub struct ApiDoc;

/// The document as served at `/openapi.json` and printed by `acp openapi`:
/// pretty JSON with a trailing newline, byte for byte what is committed in
/// `openapi/openapi.json`.
pub fn document_json() -> String {
    let (_, doc) = super::router().split_for_parts();
    let mut text = doc.to_pretty_json().unwrap_or_default();
    text.push('\n');
    text
}
