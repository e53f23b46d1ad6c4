//! The trigger as the API speaks it (`cron`, `interval`, `event`, with the
//! misfire and DST fields) and its parsing into the domain (`trigger_render`
//! renders it back); shared by activities and the schedule preview.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::trigger_schema::TriggerBodyDoc;
use crate::api::field_errors::Errors;
use acp_domain::FieldError;
use acp_domain::business_calendar::{BeyondCoverage, CalendarMode, CalendarRule, Roll};
use acp_domain::calendar::{DstPolicy, Repeated, Skipped};
use acp_domain::duration::IsoDuration;
use acp_domain::trigger::{
    Cadence, CatchupLimit, CronExpr, EventType, MisfirePolicy, ScheduledTrigger, TimeZoneName,
    Trigger, TriggerType,
};

/// The trigger kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum TriggerKind {
    Cron,
    Interval,
    Event,
}

/// When the activity runs. `cron` takes `cron` and `timezone`; `interval`
/// takes `every`; both take the misfire fields. `event` takes `event_types`
/// only. Its schema in the document is [`TriggerBodyDoc`]'s: one per type,
/// each with its own fields.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TriggerBody {
    #[serde(rename = "type")]
    pub kind: TriggerKind,
    /// Five-field cron expression (`cron` only): minute hour day-of-month
    /// month day-of-week (numbers, `*`, ranges `a-b`, steps `/n`, lists,
    /// month and day names; 0 or 7 is Sunday) or one of `@yearly @annually
    /// @monthly @weekly @daily @midnight @hourly`. Day-of-month also takes
    /// `L` (last day), `L-n`, `nW` (the weekday nearest day n) and `LW`;
    /// day-of-week `d#n` (nth weekday d) and `dL` (last weekday d), each
    /// alone in its field. With a `business_days` calendar, day-of-month may
    /// be a business-day offset (`BD3`, `BDL`, `BDL-1`), alone, with `*` in
    /// day-of-week. A range must not run backwards, the days must
    /// exist in some month, and the whole is at most 200 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cron: Option<String>,
    /// IANA time zone of the cron expression (`cron` only). Default `UTC`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timezone: Option<String>,
    /// ISO-8601 duration between runs, at least `PT1S` (`interval` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every: Option<String>,
    /// Event types the activity subscribes to (`event` only), 1 to 100.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_types: Option<Vec<String>>,
    /// `skip` (default), `catchup` or `compress`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub misfire_policy: Option<String>,
    /// How many missed fires `catchup` replays: 1 to 1000, default 10.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catchup_limit: Option<i64>,
    /// How late a fire may run under `skip`. ISO-8601, default `PT60S`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub misfire_grace: Option<String>,
    /// No fires before this instant (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_at: Option<String>,
    /// No fires after this instant (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_at: Option<String>,
    /// Random delay added to each fire, ISO-8601.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter: Option<String>,
    /// What a daylight-saving change does to the cron expression's times
    /// (`cron` only). Default `{"repeated": "first", "skipped": "shift"}`:
    /// a daily job runs exactly once on every calendar day.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::api::field_errors::object_only"
    )]
    pub dst: Option<DstBody>,
    /// The business calendar the times answer to (`cron` and `interval`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::api::field_errors::object_only"
    )]
    pub calendar: Option<CalendarBody>,
}

impl utoipa::PartialSchema for TriggerBody {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        TriggerBodyDoc::schema()
    }
}

impl ToSchema for TriggerBody {
    fn schemas(
        schemas: &mut Vec<(
            String,
            utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>,
        )>,
    ) {
        TriggerBodyDoc::schemas(schemas);
    }
}

/// A cron trigger's daylight-saving policy; left-out fields keep their
/// defaults. Exactly the policy's times run, whatever the engine would do by
/// itself (see docs/TIME.md).
#[derive(Debug, Clone, Default, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DstBody {
    /// A wall time that happens twice (clocks go back): run the `first`
    /// (default) occurrence, the `last`, or `both`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Repeated>, example = "first")]
    pub repeated: Option<String>,
    /// A wall time that does not exist (clocks go forward): `shift` (default)
    /// runs at the first instant after the gap, once; `skip` does not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Skipped>, example = "shift")]
    pub skipped: Option<String>,
}

/// The business calendar a scheduled trigger's times answer to. Dates are
/// the calendar's, in its time zone; a rolled time keeps its wall time
/// there. Left-out fields keep their defaults.
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CalendarBody {
    /// The calendar's ID (`/v1/calendars/{id}`); it must exist, and while
    /// a trigger names it, it cannot be deleted.
    #[schema(value_type = uuid::Uuid)]
    pub id: String,
    /// `business_days` (default): a time on a non-business day is skipped
    /// or rolled as `roll` says. `exclude`: no time on a non-business day
    /// runs (`roll` stays `skip`). In both, no time inside a blackout runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<CalendarMode>, example = "business_days")]
    pub mode: Option<String>,
    /// A time on a non-business day: `skip` (default) does not run it;
    /// `next` or `previous` runs it on the nearest business day after or
    /// before, at the same wall time (several times that land on one
    /// instant run once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Roll>, example = "next")]
    pub roll: Option<String>,
    /// A time after the calendar's `covered_until`: `run` (default) judges
    /// it by what the calendar knows (its weekend days and listed dates);
    /// `skip` records it skipped (`beyond_coverage`); `pause` does that and
    /// pauses the activity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<BeyondCoverage>, example = "run")]
    pub beyond_coverage: Option<String>,
}

/// An event type name: 1 to 200 of letters, digits and `. _ - : /`.
#[derive(ToSchema)]
#[schema(pattern = r"^[A-Za-z0-9._:/-]{1,200}$", example = "message.received")]
pub struct EventTypeName(#[allow(dead_code)] String);

fn parse_instant(text: &str) -> Result<DateTime<Utc>, String> {
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|_| format!("`{text}` is not an RFC 3339 timestamp (e.g. 2026-03-01T09:00:00Z)"))
}

/// Parses a trigger on its own (a preview), with the same field errors as
/// in a create (`trigger.cron`, ...).
pub fn parse_trigger_body(body: TriggerBody) -> Result<Trigger, Vec<FieldError>> {
    let mut errors = Errors(Vec::new());
    match parse_trigger(&mut errors, body) {
        Some(trigger) if errors.0.is_empty() => Ok(trigger),
        _ => Err(errors.0),
    }
}

pub(super) fn parse_trigger(errors: &mut Errors, body: TriggerBody) -> Option<Trigger> {
    let kind = body.kind;
    let not_for = |errors: &mut Errors, field: &str, present: bool, what: &str| {
        if present {
            errors.push(
                format!("trigger.{field}"),
                format!("is not allowed for {what} triggers"),
            );
        }
    };
    if kind == TriggerKind::Event {
        for (field, present) in [
            ("cron", body.cron.is_some()),
            ("timezone", body.timezone.is_some()),
            ("every", body.every.is_some()),
            ("misfire_policy", body.misfire_policy.is_some()),
            ("catchup_limit", body.catchup_limit.is_some()),
            ("misfire_grace", body.misfire_grace.is_some()),
            ("start_at", body.start_at.is_some()),
            ("end_at", body.end_at.is_some()),
            ("jitter", body.jitter.is_some()),
            ("dst", body.dst.is_some()),
            ("calendar", body.calendar.is_some()),
        ] {
            not_for(errors, field, present, "event");
        }
        let Some(types) = body.event_types else {
            errors.push("trigger.event_types", "is required for event triggers");
            return None;
        };
        if types.is_empty() || types.len() > 100 {
            errors.push("trigger.event_types", "must list 1 to 100 event types");
        }
        let mut parsed: Vec<EventType> = types
            .iter()
            .enumerate()
            .filter_map(|(i, t)| {
                errors.take(&format!("trigger.event_types[{i}]"), EventType::parse(t))
            })
            .collect();
        parsed.sort();
        parsed.dedup();
        return Some(Trigger::Event {
            event_types: parsed,
        });
    }

    not_for(
        errors,
        "event_types",
        body.event_types.is_some(),
        "scheduled",
    );
    let cadence = match kind {
        TriggerKind::Cron => {
            not_for(errors, "every", body.every.is_some(), "cron");
            let cron = match &body.cron {
                Some(text) => errors.take("trigger.cron", CronExpr::parse(text)),
                None => {
                    errors.push("trigger.cron", "is required for cron triggers");
                    None
                }
            };
            let timezone = match &body.timezone {
                Some(text) => errors.take("trigger.timezone", TimeZoneName::parse(text)),
                None => Some(TimeZoneName::default()),
            };
            let dst = parse_dst(errors, body.dst.as_ref());
            match (cron, timezone, dst) {
                (Some(cron), Some(timezone), Some(dst)) => Some(Cadence::Cron {
                    cron,
                    timezone,
                    dst,
                }),
                _ => None,
            }
        }
        TriggerKind::Interval => {
            not_for(errors, "cron", body.cron.is_some(), "interval");
            not_for(errors, "timezone", body.timezone.is_some(), "interval");
            not_for(errors, "dst", body.dst.is_some(), "interval");
            match &body.every {
                Some(text) => match IsoDuration::parse(text) {
                    Ok(every) if every.as_std() < std::time::Duration::from_secs(1) => {
                        errors.push("trigger.every", "must be at least PT1S");
                        None
                    }
                    Ok(every) if every.as_std().subsec_nanos() != 0 => {
                        errors.push("trigger.every", "must be a whole number of seconds");
                        None
                    }
                    Ok(every) => Some(Cadence::Interval { every }),
                    Err(m) => {
                        errors.push("trigger.every", m);
                        None
                    }
                },
                None => {
                    errors.push("trigger.every", "is required for interval triggers");
                    None
                }
            }
        }
        TriggerKind::Event => unreachable!("handled above"),
    };
    let misfire_policy = match &body.misfire_policy {
        Some(text) => errors.take("trigger.misfire_policy", text.parse::<MisfirePolicy>()),
        None => Some(MisfirePolicy::default()),
    };
    let catchup_limit = match body.catchup_limit {
        Some(n) => errors.take("trigger.catchup_limit", CatchupLimit::new(n)),
        None => Some(CatchupLimit::default()),
    };
    let misfire_grace = match &body.misfire_grace {
        Some(text) => errors.take("trigger.misfire_grace", IsoDuration::parse(text)),
        None => Some(IsoDuration::from_secs(60)),
    };
    let start_at = body
        .start_at
        .as_deref()
        .map(|t| errors.take("trigger.start_at", parse_instant(t)));
    let end_at = body
        .end_at
        .as_deref()
        .map(|t| errors.take("trigger.end_at", parse_instant(t)));
    if let (Some(Some(start)), Some(Some(end))) = (start_at, end_at)
        && end <= start
    {
        errors.push("trigger.end_at", "must be after start_at");
    }
    let jitter = body
        .jitter
        .as_deref()
        .map(|t| errors.take("trigger.jitter", IsoDuration::parse(t)));
    let mut calendar = body.calendar.as_ref().map(|c| parse_calendar(errors, c));
    if let Some(Cadence::Cron { cron, .. }) = &cadence
        && let Some(offset) = cron.business_day()
    {
        match &mut calendar {
            Some(Some(rule)) if rule.mode == CalendarMode::BusinessDays => {
                rule.business_day = Some(offset);
            }
            Some(None) => {}
            _ => errors.push(
                "trigger.cron",
                format!(
                    "the business-day offset `{offset}` needs a calendar with mode \
                     business_days (`trigger.calendar`): its business days say which day \
                     of the month it is"
                ),
            ),
        }
    }
    Some(Trigger::Scheduled(ScheduledTrigger {
        cadence: cadence?,
        misfire_policy: misfire_policy?,
        catchup_limit: catchup_limit?,
        misfire_grace: misfire_grace?,
        start_at: start_at.map_or(Some(None), |v| v.map(Some))?,
        end_at: end_at.map_or(Some(None), |v| v.map(Some))?,
        jitter: jitter.map_or(Some(None), |v| v.map(Some))?,
        calendar: calendar.map_or(Some(None), |v| v.map(Some))?,
    }))
}

fn parse_calendar(errors: &mut Errors, body: &CalendarBody) -> Option<CalendarRule> {
    let id = errors.take(
        "trigger.calendar.id",
        uuid::Uuid::parse_str(&body.id).map_err(|_| format!("`{}` is not a UUID", body.id)),
    );
    let mode = match &body.mode {
        Some(text) => errors.take("trigger.calendar.mode", CalendarMode::parse(text)),
        None => Some(CalendarMode::BusinessDays),
    };
    let roll = match &body.roll {
        Some(text) => errors.take("trigger.calendar.roll", Roll::parse(text)),
        None => Some(Roll::Skip),
    };
    if mode == Some(CalendarMode::Exclude) && roll.is_some_and(|r| r != Roll::Skip) {
        errors.push(
            "trigger.calendar.roll",
            "rolls only in mode business_days; mode exclude does not run a non-business day's times",
        );
    }
    let beyond_coverage = match &body.beyond_coverage {
        Some(text) => errors.take(
            "trigger.calendar.beyond_coverage",
            BeyondCoverage::parse(text),
        ),
        None => Some(BeyondCoverage::Run),
    };
    Some(CalendarRule {
        id: id?,
        mode: mode?,
        roll: roll?,
        beyond_coverage: beyond_coverage?,
        business_day: None,
    })
}

pub(super) fn parse_dst(errors: &mut Errors, body: Option<&DstBody>) -> Option<DstPolicy> {
    let Some(body) = body else {
        return Some(DstPolicy::default());
    };
    let repeated = match &body.repeated {
        Some(text) => errors.take("trigger.dst.repeated", text.parse::<Repeated>()),
        None => Some(Repeated::default()),
    };
    let skipped = match &body.skipped {
        Some(text) => errors.take("trigger.dst.skipped", text.parse::<Skipped>()),
        None => Some(Skipped::default()),
    };
    Some(DstPolicy {
        repeated: repeated?,
        skipped: skipped?,
    })
}

pub fn parse_trigger_type(text: &str) -> Result<TriggerType, String> {
    text.parse()
}
