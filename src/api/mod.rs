//! HTTP handlers, one module per resource. Handlers are thin: extract, convert,
//! call, convert. No SQL and no protobuf types in here.

pub mod activities;
pub mod alerts;
pub mod audit;
pub mod auth;
pub mod calendars;
pub mod caller;
pub mod console;
pub mod error;
pub mod events;
pub mod extract;
mod field_errors;
pub mod health;
pub mod instant;
pub mod keys;
pub mod merge_patch;
pub mod openapi;
pub mod pagination;
pub mod problems;
pub mod project_header;
pub mod projects;
pub mod retention;
pub mod runs;
pub mod session;
pub mod sources;
pub mod stats;
pub mod stream;
pub mod subscriptions;

use std::sync::Arc;

use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use acp_service::{Keys, Services};
use acp_temporal::TemporalGateway;

/// What handlers reach: the use cases, and the keys the auth layer checks.
#[derive(Clone)]
pub struct AppState {
    /// Behind one `Arc`: every request and middleware clones the state.
    pub services: Arc<Services>,
    pub keys: Keys,
}

impl AppState {
    pub fn new(pool: sqlx::PgPool, gateway: Arc<TemporalGateway>, task_queue: &str) -> Self {
        Self {
            keys: Keys::new(pool.clone()),
            services: Arc::new(Services::new(pool, gateway, task_queue)),
        }
    }
}

/// Every documented route. The OpenAPI document comes from this same value,
/// so a route cannot be served without being documented.
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(openapi::ApiDoc::openapi())
        .routes(routes!(
            activities::handlers::create_activity,
            activities::handlers::list_activities
        ))
        .routes(routes!(
            activities::handlers::get_activity,
            activities::handlers::put_activity,
            activities::handlers::patch_activity,
            activities::handlers::delete_activity
        ))
        .routes(routes!(activities::handlers::trigger_activity))
        .routes(routes!(activities::schedule::pause_activity))
        .routes(routes!(activities::schedule::resume_activity))
        .routes(routes!(activities::schedule::backfill_activity))
        .routes(routes!(activities::schedule_view::get_schedule))
        .routes(routes!(activities::schedule_view::get_timeline))
        .routes(routes!(activities::preview::preview_schedule))
        .routes(routes!(runs::handlers::list_activity_runs))
        .routes(routes!(runs::handlers::list_runs))
        .routes(routes!(runs::handlers::get_run))
        .routes(routes!(stats::run_stats))
        .routes(routes!(stream::stream))
        .routes(routes!(stream::create_stream_token))
        .routes(routes!(runs::control::cancel_run))
        .routes(routes!(runs::control::retry_run))
        .routes(routes!(runs::bulk::retry_activity_runs))
        .routes(routes!(runs::bulk::cancel_activity_runs))
        .routes(routes!(
            events::handlers::ingest_event,
            events::history::list_events
        ))
        .routes(routes!(events::batch::ingest_events_batch))
        .routes(routes!(events::handlers::ingest_cloudevent))
        .routes(routes!(events::history::get_event))
        .routes(routes!(
            sources::handlers::create_source,
            sources::handlers::list_sources
        ))
        .routes(routes!(
            sources::handlers::get_source,
            sources::handlers::patch_source,
            sources::handlers::delete_source
        ))
        .routes(routes!(sources::handlers::list_rejected))
        .routes(routes!(
            calendars::handlers::create_calendar,
            calendars::handlers::list_calendars
        ))
        .routes(routes!(
            calendars::handlers::get_calendar,
            calendars::handlers::put_calendar,
            calendars::handlers::patch_calendar,
            calendars::handlers::delete_calendar
        ))
        .routes(routes!(calendars::import::import_calendar))
        .routes(routes!(calendars::import::list_days))
        .routes(routes!(alerts::handlers::list_alerts))
        .routes(routes!(alerts::handlers::get_alert))
        .routes(routes!(
            subscriptions::create_subscription,
            subscriptions::list_subscriptions
        ))
        .routes(routes!(
            subscriptions::get_subscription,
            subscriptions::delete_subscription
        ))
        .routes(routes!(subscriptions::list_deliveries))
        .routes(routes!(keys::create_key, keys::list_keys))
        .routes(routes!(keys::get_key))
        .routes(routes!(audit::list_audit))
        .routes(routes!(keys::revoke_key))
        .routes(routes!(
            projects::handlers::create_project,
            projects::handlers::list_projects
        ))
        .routes(routes!(
            projects::handlers::get_project,
            projects::handlers::put_project,
            projects::handlers::patch_project,
            projects::handlers::delete_project
        ))
        .routes(routes!(retention::get_retention))
        .routes(routes!(session::get_session))
        .routes(routes!(health::healthz))
        .routes(routes!(health::readyz))
        .routes(routes!(health::metrics))
}
