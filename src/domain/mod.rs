//! Plain domain types. Each is parsed once at the boundary; inside, it is valid.

pub mod activity;
pub mod calendar;
pub mod duration;
pub mod event;
pub mod ids;
pub mod misfire;
pub mod run;
pub mod trigger;
pub mod window;

/// One problem with one field of a request, named by its JSON path.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
pub struct FieldError {
    /// JSON path of the offending field, e.g. `trigger.cron` or `tasks[1].config.url`.
    pub field: String,
    /// What is wrong and what would be accepted.
    pub message: String,
}

impl FieldError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            message: message.into(),
        }
    }
}
