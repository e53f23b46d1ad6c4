//! `/v1/events`: ingestion (JSON, CloudEvents, batches) and the event history.

pub mod batch;
pub mod cloudevents;
pub mod handlers;
pub mod history;
mod rate;
