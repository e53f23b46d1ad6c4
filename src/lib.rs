//! activity-control-plane: activity definitions with trigger policies, turned
//! into Temporal schedules and runs, with exact idempotency.

pub mod api;
pub mod app;
pub mod brokers;
pub mod cli;
pub mod config;
pub mod duties;
pub mod metrics;
pub mod worker;
