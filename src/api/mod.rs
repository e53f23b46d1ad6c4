//! HTTP handlers, one file per resource. Handlers are thin: extract, convert,
//! call, convert. No SQL and no protobuf types in here.

pub mod activities;
pub mod activity_model;
pub mod alert_model;
pub mod alerts;
pub mod auth;
pub mod cloudevents;
pub mod console;
pub mod error;
pub mod event_batch;
pub mod event_history;
pub mod events;
pub mod extract;
mod field_errors;
pub mod flow_model;
pub mod health;
pub mod instant;
pub mod keys;
pub mod merge_patch;
pub mod openapi;
pub mod pagination;
pub mod preview;
pub mod problems;
pub mod run_bulk;
pub mod run_control;
pub mod runs;
pub mod schedule;
pub mod schedule_view;
pub mod session;
mod source_schema;
pub mod sources;
pub mod stats;
pub mod stream;
pub mod subscriptions;
pub mod trigger_model;
mod trigger_schema;

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
            activities::create_activity,
            activities::list_activities
        ))
        .routes(routes!(
            activities::get_activity,
            activities::put_activity,
            activities::patch_activity,
            activities::delete_activity
        ))
        .routes(routes!(activities::trigger_activity))
        .routes(routes!(schedule::pause_activity))
        .routes(routes!(schedule::resume_activity))
        .routes(routes!(schedule::backfill_activity))
        .routes(routes!(schedule_view::get_schedule))
        .routes(routes!(schedule_view::get_timeline))
        .routes(routes!(preview::preview_schedule))
        .routes(routes!(runs::list_activity_runs))
        .routes(routes!(runs::list_runs))
        .routes(routes!(runs::get_run))
        .routes(routes!(stats::run_stats))
        .routes(routes!(stream::stream))
        .routes(routes!(stream::create_stream_token))
        .routes(routes!(run_control::cancel_run))
        .routes(routes!(run_control::retry_run))
        .routes(routes!(run_bulk::retry_activity_runs))
        .routes(routes!(run_bulk::cancel_activity_runs))
        .routes(routes!(events::ingest_event, event_history::list_events))
        .routes(routes!(event_batch::ingest_events_batch))
        .routes(routes!(events::ingest_cloudevent))
        .routes(routes!(event_history::get_event))
        .routes(routes!(sources::create_source, sources::list_sources))
        .routes(routes!(
            sources::get_source,
            sources::patch_source,
            sources::delete_source
        ))
        .routes(routes!(sources::list_rejected))
        .routes(routes!(alerts::list_alerts))
        .routes(routes!(alerts::get_alert))
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
        .routes(routes!(keys::revoke_key))
        .routes(routes!(session::get_session))
        .routes(routes!(health::healthz))
        .routes(routes!(health::readyz))
        .routes(routes!(health::metrics))
}
