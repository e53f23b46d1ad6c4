//! `/v1/activities`: definitions, their triggers, schedules and previews.

pub mod flow;
pub mod handlers;
pub mod model;
pub mod preview;
pub mod schedule;
pub mod schedule_view;
pub mod trigger_model;
mod trigger_render;
mod trigger_schema;
