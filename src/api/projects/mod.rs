//! `/v1/projects`: the teams sharing the service, for `operator` keys:
//! create, list, read, replace, patch and delete, each write at a new
//! version (`ETag`, `If-Match` as for calendars), each answer with the
//! project's quotas and what it uses now.

pub mod handlers;
pub mod model;
