//! The integration tests, one binary with a module per area: the shared
//! `common` module and the link of the whole dependency tree once, not
//! once per file. cargo-nextest runs each test in a process of its own,
//! as .config/nextest.toml declares (heavy tests, groups that must not run
//! together); see docs/TESTING.md.

mod common;

mod acting_project;
mod activities;
#[path = "alerts/main.rs"]
mod alerts;
mod architecture;
mod audit;
mod auth;
#[path = "brokers/main.rs"]
mod brokers;
mod calendar_activities;
mod calendar_backfill;
mod calendar_conformance;
mod calendar_coverage;
mod calendar_offsets;
mod calendars;
mod checks;
mod cloudevents;
mod console_assets;
mod cron_conformance;
#[path = "dst_backfill/main.rs"]
mod dst_backfill;
mod duties;
mod dynamic_sql;
mod event_rate;
#[path = "events/main.rs"]
mod events;
mod execution;
mod execution_faults;
mod fair_share;
mod fairness;
#[path = "fleet/main.rs"]
mod fleet;
#[path = "flow/main.rs"]
mod flow;
mod hostile;
mod http;
#[path = "ingest/main.rs"]
mod ingest;
#[path = "isolation/main.rs"]
mod isolation;
mod key_revocation;
mod logs;
mod metrics;
#[path = "misfire/main.rs"]
mod misfire;
mod notifications;
mod openapi;
mod preview;
mod projects;
mod quotas;
mod reconcile;
mod replay;
#[path = "resume/main.rs"]
mod resume;
mod retention;
#[path = "rollups/main.rs"]
mod rollups;
mod run_bulk;
mod run_control;
mod run_retry;
mod runs;
mod schedules;
mod shutdown;
mod stats;
mod stream;
mod swagger_ui;
mod task_policies;
mod temporal_outage;
#[path = "validation/main.rs"]
mod validation;
