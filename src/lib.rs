//! activity-control-plane: activity definitions with trigger policies, turned
//! into Temporal schedules and runs, with exact idempotency.

pub mod api;
pub mod app;
pub mod auth;
pub mod cli;
pub mod config;
pub mod domain;
pub mod error;
pub mod metrics;
pub mod reconcile;
pub mod router;
pub mod store;
pub mod temporal;
