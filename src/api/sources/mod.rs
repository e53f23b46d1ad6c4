//! `/v1/sources`: the brokers consumed for events.

pub mod handlers;
mod schema;
