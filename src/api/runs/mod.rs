//! `/v1/runs` and an activity's runs: history, cancel and retry, one by one or in bulk.

pub mod bulk;
pub mod control;
pub mod handlers;
