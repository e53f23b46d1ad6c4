//! The problem answers an operation documents, each written once here. A
//! path names them in its `responses(...)` beside its own success tuple,
//! `responses((status = 200, …), problems::BadId, problems::NoSuchActivity)`,
//! and each becomes an `application/problem+json` [`Problem`] response with
//! its status and words. The answers every operation can give (401, 403,
//! and 400, 413 and 415 for parameters and bodies) are added by
//! `openapi::document` where an operation does not name its own.
//!
//! [`Problem`]: super::error::Problem

use std::collections::BTreeMap;

use utoipa::openapi::{RefOr, Response};

macro_rules! problems {
    ($($name:ident = $status:literal, $description:literal;)*) => {$(
        #[doc = concat!("`", stringify!($status), "`: ", $description, ".")]
        pub struct $name;

        impl utoipa::IntoResponses for $name {
            fn responses() -> BTreeMap<String, RefOr<Response>> {
                BTreeMap::from([(
                    stringify!($status).to_owned(),
                    RefOr::T(super::openapi::problem($description)),
                )])
            }
        }
    )*};
}

problems! {
    BadId = 400, "Bad ID";
    BadIdOrKey = 400, "Bad ID or key";
    BadParameter = 400, "Bad parameter";
    BadNamedParameter = 400, "Bad parameter (named)";
    BadRequest = 400, "Bad request";
    MalformedEventId = 400, "Malformed event ID";
    MalformedRequest = 400, "Malformed request";
    UnreadableBody = 400, "Unreadable body";
    UnreadableBodyOrId = 400, "Unreadable body or bad ID";
    UnreadableBodyOrIdempotencyKey = 400, "Unreadable body, or an Idempotency-Key header";
    UnreadablePatchOrId = 400, "Unreadable patch or bad ID";
    NoSuchActivity = 404, "No such activity";
    NoSuchActivityOrSchedule = 404, "No such activity or schedule";
    NoSuchAlert = 404, "No such alert";
    NoSuchCalendar = 404, "No such calendar";
    NoSuchEvent = 404, "No such event";
    NoSuchKey = 404, "No such key";
    NoSuchProject = 404, "No such project";
    NoSuchRun = 404, "No such run";
    NoSuchSource = 404, "No such source";
    NoSuchSubscription = 404, "No such subscription";
    SourceNameTaken = 409, "A source with this name exists";
    CalendarNameTaken = 409, "A calendar with this name exists";
    ProjectIdTaken = 409, "A project with this ID exists, or a deleted one had it";
    ProjectNotEmpty = 409, "The project still owns something (the problem counts what), or is `default`";
    CalendarInUse = 409, "Activities' triggers name the calendar; the problem's detail names them";
    AuthenticationDisabled = 409, "Authentication is disabled: the stream needs no token";
    IdempotencyKeyReused = 409, "Idempotency-Key reused with another body";
    NotScheduled = 409, "Not a scheduled activity";
    StartRefused = 409, "Temporal refused the start";
    EventConflict = 409, "The event ID was seen before with other content";
    RunNotFailedOrCancelled = 409, "The run is not failed or cancelled; the problem names its status";
    RunNotRunning = 409, "The run is not running; the problem names its status";
    ChangesPruned = 410, "The changes after `since` were pruned from the log: reload, then connect without it";
    ChangedSinceIfMatch = 412, "Changed since If-Match";
    StaleIfMatch = 412, "Stale If-Match";
    BodyTooLarge = 413, "Body too large";
    NotJson = 415, "Not JSON";
    NotCloudEvent = 415, "Not a CloudEvent";
    NotICalendar = 415, "Not text/calendar";
    InvalidTimelineRange = 422, "Empty range, or more than 1000 nominal times";
    InvalidFields = 422, "Invalid fields";
    InvalidFilter = 422, "Invalid filter";
    InvalidFilterOrReason = 422, "Invalid filter or reason";
    InvalidNote = 422, "Invalid note";
    InvalidRange = 422, "Invalid range";
    InvalidReason = 422, "Invalid reason";
    InvalidPreview = 422, "Invalid trigger, count or around";
    InvalidBatch = 422, "No events, more than 1000, or none of them valid";
    PostgresOrTemporalUnavailable = 503, "PostgreSQL or Temporal unavailable";
    PostgresUnavailable = 503, "PostgreSQL unavailable";
}

/// `429`: the project's quota of what the operation creates is reached, or
/// its events-per-second quota; the problem (`quota-exceeded`) names the
/// quota, its `limit` and the `usage`, and `Retry-After` paces a client that
/// waits for a delete (or says when the rate has refilled a token).
pub struct QuotaExceeded;

impl utoipa::IntoResponses for QuotaExceeded {
    fn responses() -> BTreeMap<String, RefOr<Response>> {
        BTreeMap::from([(
            "429".to_owned(),
            RefOr::T(super::openapi::problem_retry_after(
                "The project's quota is reached (the problem names the quota, its limit and the usage)",
            )),
        )])
    }
}
