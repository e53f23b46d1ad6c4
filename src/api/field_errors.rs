//! Field errors gathered while a request body is parsed into the domain,
//! each named by its JSON path (`trigger.cron`, `tasks[1].name`).

use crate::domain::FieldError;

pub(super) struct Errors(pub(super) Vec<FieldError>);

impl Errors {
    pub(super) fn push(&mut self, field: impl Into<String>, message: impl Into<String>) {
        self.0.push(FieldError::new(field, message));
    }

    pub(super) fn take<T>(&mut self, field: &str, result: Result<T, String>) -> Option<T> {
        result.map_err(|m| self.push(field, m)).ok()
    }
}

pub(super) fn check_text(errors: &mut Errors, field: &str, text: &str, max: usize) {
    if text.trim().is_empty() {
        errors.push(field, "must not be blank");
    } else if text.chars().count() > max {
        errors.push(field, format!("must be at most {max} characters"));
    } else if text
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        errors.push(field, "must not contain control characters");
    }
}
