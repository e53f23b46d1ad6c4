//! activity-control-plane: activity definitions with trigger policies, turned
//! into Temporal schedules and runs, with exact idempotency.

pub mod alerting;
pub mod api;
pub mod app;
pub mod brokers;
pub mod cli;
pub mod config;
pub mod metrics;
pub mod reconcile;
pub mod worker;
