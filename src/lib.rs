//! activity-control-plane: activity definitions with trigger policies, turned
//! into Temporal schedules and runs, with exact idempotency.

pub mod alerting;
pub mod api;
pub mod app;
pub mod auth;
pub mod brokers;
pub mod cli;
pub mod config;
pub mod domain;
#[cfg(feature = "fault-injection")]
pub mod faults;
pub mod metrics;
pub mod reconcile;
pub mod service;
pub mod store;
pub mod temporal;
pub mod worker;
