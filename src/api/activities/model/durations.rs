//! An activity's durations: `run_timeout` (kept as written) and
//! `history_retention` (kept canonical, as the database reads it).

use crate::api::field_errors::Errors;
use acp_domain::duration::IsoDuration;

/// Checks `run_timeout` and returns the canonical `history_retention`.
pub(super) fn parse(
    errors: &mut Errors,
    run_timeout: &Option<String>,
    history_retention: Option<String>,
) -> Option<String> {
    if let Some(text) = run_timeout {
        match IsoDuration::parse(text) {
            Ok(d) if d.as_std().is_zero() => errors.push("run_timeout", "must be longer than zero"),
            Ok(_) => {}
            Err(m) => errors.push("run_timeout", m),
        }
    }
    let text = history_retention?;
    acp_domain::retention::parse_history_retention(&text)
        .map_err(|m| errors.push("history_retention", m))
        .ok()
}
