//! A trigger as the document describes it: one schema per `type`, a `oneOf`
//! whose branches each list their own fields and require theirs, so that a
//! client generator pairs a type with its fields and a fuzzer builds
//! triggers this API takes. The wire type stays [`TriggerBody`], checked
//! field by field with an error naming each field.
//!
//! No branch is built with `#[serde(flatten)]` (the misfire fields are
//! repeated instead): utoipa writes a flattened struct as an `allOf` with
//! it, and an `allOf` member that refuses unknown fields refuses the other
//! members' fields too, which no value satisfies.
//!
//! [`TriggerBody`]: super::trigger_model::TriggerBody
#![allow(dead_code)]

use utoipa::ToSchema;
use utoipa::openapi::Object;
use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, SchemaFormat, SchemaType, Type};

use super::trigger_model::{CalendarBody, DstBody, EventTypeName};
use acp_domain::trigger::MisfirePolicy;

/// An ISO-8601 duration as `IsoDuration` reads it: days, hours, minutes and
/// (fractional) seconds, in that order, at least one of them.
const DURATION: &str =
    r"^P(?!$)(?:[0-9]+D)?(?:T(?=[0-9])(?:[0-9]+H)?(?:[0-9]+M)?(?:[0-9]+(?:[.,][0-9]+)?S)?)?$";

/// What `CronExpr` reads, but for the checks no pattern can make (ranges
/// that run backwards, days no month has, which day forms pair with which,
/// the 200-character limit).
const CRON: &str = concat!(
    r"^(?:@(?:yearly|annually|monthly|weekly|daily|midnight|hourly)|",
    r"(?:\*|(?:[0-5]?[0-9])(?:-(?:[0-5]?[0-9]))?)(?:/(?:0?[1-9]|[1-9][0-9]))?(?:,(?:\*|(?:[0-5]?[0-9])(?:-(?:[0-5]?[0-9]))?)(?:/(?:0?[1-9]|[1-9][0-9]))?)* +",
    r"(?:\*|(?:[01]?[0-9]|2[0-3])(?:-(?:[01]?[0-9]|2[0-3]))?)(?:/(?:0?[1-9]|[1-9][0-9]))?(?:,(?:\*|(?:[01]?[0-9]|2[0-3])(?:-(?:[01]?[0-9]|2[0-3]))?)(?:/(?:0?[1-9]|[1-9][0-9]))?)* +",
    r"(?:[Bb][Dd](?:0?[1-9]|[12][0-9]|3[01]|[Ll](?:-(?:0?[1-9]|[12][0-9]|30))?)|[Ll](?:-(?:0?[1-9]|[12][0-9]|30))?|[Ll][Ww]|(?:0?[1-9]|[12][0-9]|3[01])[Ww]|(?:\*|(?:0?[1-9]|[12][0-9]|3[01])(?:-(?:0?[1-9]|[12][0-9]|3[01]))?)(?:/(?:0?[1-9]|[1-9][0-9]))?(?:,(?:\*|(?:0?[1-9]|[12][0-9]|3[01])(?:-(?:0?[1-9]|[12][0-9]|3[01]))?)(?:/(?:0?[1-9]|[1-9][0-9]))?)*) +",
    r"(?:\*|(?:0?[1-9]|1[0-2]|[Jj][Aa][Nn]|[Ff][Ee][Bb]|[Mm][Aa][Rr]|[Aa][Pp][Rr]|[Mm][Aa][Yy]|[Jj][Uu][Nn]|[Jj][Uu][Ll]|[Aa][Uu][Gg]|[Ss][Ee][Pp]|[Oo][Cc][Tt]|[Nn][Oo][Vv]|[Dd][Ee][Cc])(?:-(?:0?[1-9]|1[0-2]|[Jj][Aa][Nn]|[Ff][Ee][Bb]|[Mm][Aa][Rr]|[Aa][Pp][Rr]|[Mm][Aa][Yy]|[Jj][Uu][Nn]|[Jj][Uu][Ll]|[Aa][Uu][Gg]|[Ss][Ee][Pp]|[Oo][Cc][Tt]|[Nn][Oo][Vv]|[Dd][Ee][Cc]))?)(?:/(?:0?[1-9]|[1-9][0-9]))?(?:,(?:\*|(?:0?[1-9]|1[0-2]|[Jj][Aa][Nn]|[Ff][Ee][Bb]|[Mm][Aa][Rr]|[Aa][Pp][Rr]|[Mm][Aa][Yy]|[Jj][Uu][Nn]|[Jj][Uu][Ll]|[Aa][Uu][Gg]|[Ss][Ee][Pp]|[Oo][Cc][Tt]|[Nn][Oo][Vv]|[Dd][Ee][Cc])(?:-(?:0?[1-9]|1[0-2]|[Jj][Aa][Nn]|[Ff][Ee][Bb]|[Mm][Aa][Rr]|[Aa][Pp][Rr]|[Mm][Aa][Yy]|[Jj][Uu][Nn]|[Jj][Uu][Ll]|[Aa][Uu][Gg]|[Ss][Ee][Pp]|[Oo][Cc][Tt]|[Nn][Oo][Vv]|[Dd][Ee][Cc]))?)(?:/(?:0?[1-9]|[1-9][0-9]))?)* +",
    r"(?:(?:0?[0-7]|[Ss][Uu][Nn]|[Mm][Oo][Nn]|[Tt][Uu][Ee]|[Ww][Ee][Dd]|[Tt][Hh][Uu]|[Ff][Rr][Ii]|[Ss][Aa][Tt])(?:#0?[1-5]|[Ll])|(?:\*|(?:0?[0-7]|[Ss][Uu][Nn]|[Mm][Oo][Nn]|[Tt][Uu][Ee]|[Ww][Ee][Dd]|[Tt][Hh][Uu]|[Ff][Rr][Ii]|[Ss][Aa][Tt])(?:-(?:0?[0-7]|[Ss][Uu][Nn]|[Mm][Oo][Nn]|[Tt][Uu][Ee]|[Ww][Ee][Dd]|[Tt][Hh][Uu]|[Ff][Rr][Ii]|[Ss][Aa][Tt]))?)(?:/(?:0?[1-9]|[1-9][0-9]))?(?:,(?:\*|(?:0?[0-7]|[Ss][Uu][Nn]|[Mm][Oo][Nn]|[Tt][Uu][Ee]|[Ww][Ee][Dd]|[Tt][Hh][Uu]|[Ff][Rr][Ii]|[Ss][Aa][Tt])(?:-(?:0?[0-7]|[Ss][Uu][Nn]|[Mm][Oo][Nn]|[Tt][Uu][Ee]|[Ww][Ee][Dd]|[Tt][Hh][Uu]|[Ff][Rr][Ii]|[Ss][Aa][Tt]))?)(?:/(?:0?[1-9]|[1-9][0-9]))?)*))$",
);

/// When the activity runs: a `cron` trigger (`cron`, `timezone`, `dst`),
/// an `interval` trigger (`every`), both with the misfire fields, or an
/// `event` trigger (`event_types` only).
#[derive(ToSchema, serde::Deserialize)]
#[serde(untagged)]
pub enum TriggerBodyDoc {
    Cron(CronTrigger),
    Interval(IntervalTrigger),
    Event(EventTrigger),
}

/// A `cron` or `interval` trigger (an `event` trigger has no nominal times).
#[derive(ToSchema, serde::Deserialize)]
#[serde(untagged)]
pub enum ScheduledTriggerBody {
    Cron(CronTrigger),
    Interval(IntervalTrigger),
}

/// The type of a cron trigger.
#[derive(ToSchema, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CronTriggerType {
    Cron,
}

/// The type of an interval trigger.
#[derive(ToSchema, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IntervalTriggerType {
    Interval,
}

/// The type of an event trigger.
#[derive(ToSchema, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EventTriggerType {
    Event,
}

fn text(description: &str, pattern: &str, example: &str, required: bool) -> Object {
    let kind = if required {
        SchemaType::Type(Type::String)
    } else {
        SchemaType::from_iter([Type::String, Type::Null])
    };
    ObjectBuilder::new()
        .schema_type(kind)
        .description(Some(description))
        .pattern(Some(pattern))
        .examples([serde_json::json!(example)])
        .build()
}

fn cron() -> Object {
    text(
        "Five-field cron expression: minute hour day-of-month month\n\
         day-of-week (numbers, `*`, ranges `a-b`, steps `/n`, lists, month and\n\
         day names; 0 or 7 is Sunday) or one of `@yearly @annually @monthly\n\
         @weekly @daily @midnight @hourly`. Day-of-month also takes `L` (last\n\
         day), `L-n`, `nW` (the weekday nearest day n) and `LW`; day-of-week\n\
         `d#n` (nth weekday d, `5#2`) and `dL` (last weekday d, `5L`), each\n\
         alone in its field. With a `business_days` calendar, day-of-month may\n\
         be a business-day offset: `BD1`..`BD31` (the nth business day of the\n\
         month), `BDL` (the last), `BDL-1`..`BDL-30`, alone in its field, with\n\
         `*` in day-of-week. A range must not run backwards, the days must\n\
         exist in some month, and the whole is at most 200 characters.",
        CRON,
        "0 * * * *",
        true,
    )
}

fn every() -> Object {
    text(
        "ISO-8601 duration between runs, a whole number of seconds, at least `PT1S`.",
        DURATION,
        "PT30S",
        true,
    )
}

fn misfire_grace() -> Object {
    text(
        "How late a fire may run under `skip`. ISO-8601, default `PT60S`.",
        DURATION,
        "PT60S",
        false,
    )
}

fn jitter() -> Object {
    text(
        "Random delay added to each fire, ISO-8601.",
        DURATION,
        "PT10S",
        false,
    )
}

fn instant(description: &str, example: &str) -> Object {
    ObjectBuilder::new()
        .schema_type(SchemaType::from_iter([Type::String, Type::Null]))
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime)))
        .description(Some(description))
        .examples([serde_json::json!(example)])
        .build()
}

fn start_at() -> Object {
    instant(
        "No fires before this instant (RFC 3339).",
        "2026-01-01T00:00:00Z",
    )
}

fn end_at() -> Object {
    instant(
        "No fires after this instant (RFC 3339); after `start_at`.",
        "2036-01-01T00:00:00Z",
    )
}

/// Runs at the times of a cron expression in a time zone.
#[derive(ToSchema, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CronTrigger {
    #[serde(rename = "type")]
    #[schema(inline)]
    kind: CronTriggerType,
    #[schema(schema_with = cron)]
    cron: String,
    /// IANA time zone of the cron expression. Default `UTC`.
    #[schema(example = "Europe/Berlin", pattern = r"^[A-Za-z0-9_+/-]{1,64}$")]
    timezone: Option<String>,
    /// What a daylight-saving change does to the cron expression's times.
    /// Default `{"repeated": "first", "skipped": "shift"}`: a daily job runs
    /// exactly once on every calendar day.
    dst: Option<DstBody>,
    /// `skip` (default), `catchup` or `compress`.
    #[schema(example = "catchup", value_type = Option<MisfirePolicy>)]
    misfire_policy: Option<String>,
    /// How many missed fires `catchup` replays: 1 to 1000, default 10.
    #[schema(minimum = 1, maximum = 1000)]
    catchup_limit: Option<i64>,
    #[schema(schema_with = misfire_grace)]
    misfire_grace: Option<String>,
    #[schema(schema_with = start_at)]
    start_at: Option<String>,
    #[schema(schema_with = end_at)]
    end_at: Option<String>,
    #[schema(schema_with = jitter)]
    jitter: Option<String>,
    /// The business calendar the times answer to: which of them run on
    /// non-business days and in blackouts.
    calendar: Option<CalendarBody>,
}

/// Runs at the multiples of `every` since the Unix epoch (1970-01-01T00:00Z),
/// as Temporal aligns intervals, not counted from when the activity is
/// created: `PT1H` runs on the hour.
#[derive(ToSchema, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IntervalTrigger {
    #[serde(rename = "type")]
    #[schema(inline)]
    kind: IntervalTriggerType,
    #[schema(schema_with = every)]
    every: String,
    /// `skip` (default), `catchup` or `compress`.
    #[schema(example = "catchup", value_type = Option<MisfirePolicy>)]
    misfire_policy: Option<String>,
    /// How many missed fires `catchup` replays: 1 to 1000, default 10.
    #[schema(minimum = 1, maximum = 1000)]
    catchup_limit: Option<i64>,
    #[schema(schema_with = misfire_grace)]
    misfire_grace: Option<String>,
    #[schema(schema_with = start_at)]
    start_at: Option<String>,
    #[schema(schema_with = end_at)]
    end_at: Option<String>,
    #[schema(schema_with = jitter)]
    jitter: Option<String>,
    /// The business calendar the times answer to: which of them run on
    /// non-business days and in blackouts.
    calendar: Option<CalendarBody>,
}

/// Runs once per accepted event of one of `event_types`.
#[derive(ToSchema, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventTrigger {
    #[serde(rename = "type")]
    #[schema(inline)]
    kind: EventTriggerType,
    /// Event types the activity subscribes to, 1 to 100.
    #[schema(min_items = 1, max_items = 100, inline, value_type = Vec<EventTypeName>)]
    event_types: Vec<String>,
}
