//! `/v1/alerts`, and the alert policies an activity carries.

pub mod handlers;
pub mod model;
