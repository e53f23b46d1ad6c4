//! The background duties: their loops.

pub mod alerting;
pub mod reconcile;
