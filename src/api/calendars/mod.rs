//! `/v1/calendars`: business calendars (weekend days, holidays, added
//! working days, blackouts, coverage), versioned like activities, imported
//! from iCalendar files, and listed day by day.

pub mod handlers;
pub mod import;
pub mod model;
