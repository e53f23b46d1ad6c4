//! Triggers: when an activity runs, and what happens to fires that come late.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

use super::business_calendar::{BusinessDayRule, CalendarRule, split_cron};
use super::calendar::{CronSchedule, DstPolicy};
use super::duration::IsoDuration;

/// A five-field cron expression (`minute hour day-of-month month day-of-week`)
/// or one of the `@hourly`-style shorthands, with POSIX/Vixie semantics; see
/// `calendar::CronSchedule` for what is accepted and why the rest is not.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct CronExpr {
    /// The user's text, kept as written: it is what the API shows back.
    text: String,
    #[serde(skip)]
    schedule: CronSchedule,
    /// A business-day offset in day-of-month (`BD3`, `BDL`, `BDL-1`): then
    /// `schedule` has `*` there, and the trigger's business calendar picks
    /// the day of each month.
    #[serde(skip)]
    business_day: Option<BusinessDayRule>,
}

impl CronExpr {
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        if text.is_empty() {
            return Err("must not be empty".into());
        }
        if text.len() > 200 {
            return Err("must be at most 200 characters".into());
        }
        let (schedule, business_day) = match split_cron(text)? {
            Some((plain, rule)) => (CronSchedule::parse(&plain)?, Some(rule)),
            None => (CronSchedule::parse(text)?, None),
        };
        Ok(Self {
            text: text.to_owned(),
            schedule,
            business_day,
        })
    }

    /// The business-day offset of its day-of-month, if it has one.
    pub fn business_day(&self) -> Option<BusinessDayRule> {
        self.business_day
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The parsed sets; `calendar` computes times from them. With a
    /// business-day offset, every day of the allowed months.
    pub fn schedule(&self) -> &CronSchedule {
        &self.schedule
    }
}

impl PartialEq for CronExpr {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Eq for CronExpr {}

impl TryFrom<String> for CronExpr {
    type Error = String;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

impl From<CronExpr> for String {
    fn from(value: CronExpr) -> Self {
        value.text
    }
}

/// An IANA time zone name such as `Europe/Berlin` or `UTC`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct TimeZoneName(chrono_tz::Tz);

impl TimeZoneName {
    pub fn parse(text: &str) -> Result<Self, String> {
        chrono_tz::Tz::from_str(text).map(Self).map_err(|_| {
            format!("`{text}` is not an IANA time zone name (e.g. Europe/Berlin, UTC)")
        })
    }

    pub fn tz(self) -> chrono_tz::Tz {
        self.0
    }

    pub fn name(self) -> &'static str {
        self.0.name()
    }
}

impl Default for TimeZoneName {
    fn default() -> Self {
        Self(chrono_tz::UTC)
    }
}

impl TryFrom<String> for TimeZoneName {
    type Error = String;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

impl From<TimeZoneName> for String {
    fn from(value: TimeZoneName) -> Self {
        value.name().to_owned()
    }
}

/// What happens to a scheduled fire that runs late (PRODUCT.md section 3).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default, utoipa::ToSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum MisfirePolicy {
    /// Late fires beyond `misfire_grace` are dropped.
    #[default]
    Skip,
    /// Missed fires are replayed, up to `catchup_limit` of them.
    Catchup,
    /// Missed fires collapse into one run with a widened window.
    Compress,
}

impl MisfirePolicy {
    pub const ALL: [MisfirePolicy; 3] = [Self::Skip, Self::Catchup, Self::Compress];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Skip => "skip",
            Self::Catchup => "catchup",
            Self::Compress => "compress",
        }
    }
}

impl FromStr for MisfirePolicy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| {
                format!("`{s}` is not a misfire policy; expected one of skip, catchup, compress")
            })
    }
}

impl fmt::Display for MisfirePolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How many missed fires `catchup` replays: 1..=1000, default 10.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "u32", into = "u32")]
pub struct CatchupLimit(u32);

impl CatchupLimit {
    pub const MAX: u32 = 1000;

    pub fn new(value: i64) -> Result<Self, String> {
        if (1..=i64::from(Self::MAX)).contains(&value) {
            Ok(Self(value as u32))
        } else {
            Err(format!("must be between 1 and {}, got {value}", Self::MAX))
        }
    }

    pub fn get(self) -> u32 {
        self.0
    }
}

impl Default for CatchupLimit {
    fn default() -> Self {
        Self(10)
    }
}

impl TryFrom<u32> for CatchupLimit {
    type Error = String;
    fn try_from(value: u32) -> Result<Self, Self::Error> {
        Self::new(i64::from(value))
    }
}

impl From<CatchupLimit> for u32 {
    fn from(value: CatchupLimit) -> Self {
        value.0
    }
}

/// When a scheduled trigger fires.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Cadence {
    Cron {
        cron: CronExpr,
        timezone: TimeZoneName,
        /// Absent in rows and workflow payloads written before it existed.
        #[serde(default)]
        dst: DstPolicy,
    },
    Interval {
        every: IsoDuration,
    },
}

/// The settings shared by both scheduled kinds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScheduledTrigger {
    pub cadence: Cadence,
    pub misfire_policy: MisfirePolicy,
    pub catchup_limit: CatchupLimit,
    pub misfire_grace: IsoDuration,
    pub start_at: Option<DateTime<Utc>>,
    pub end_at: Option<DateTime<Utc>>,
    pub jitter: Option<IsoDuration>,
    /// The business calendar its times answer to, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calendar: Option<CalendarRule>,
}

/// An event type name such as `message.received`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct EventType(String);

impl EventType {
    pub fn parse(text: &str) -> Result<Self, String> {
        if text.is_empty() || text.len() > 200 {
            return Err("must be 1 to 200 characters".into());
        }
        if !text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | ':' | '/'))
        {
            return Err(format!(
                "`{text}` may contain only letters, digits and . _ - : /"
            ));
        }
        Ok(Self(text.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for EventType {
    type Error = String;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

impl From<EventType> for String {
    fn from(value: EventType) -> Self {
        value.0
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Trigger {
    Scheduled(ScheduledTrigger),
    Event { event_types: Vec<EventType> },
}

/// The trigger kind as the API and the database name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TriggerType {
    Cron,
    Interval,
    Event,
}

impl TriggerType {
    pub const ALL: [TriggerType; 3] = [Self::Cron, Self::Interval, Self::Event];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Cron => "cron",
            Self::Interval => "interval",
            Self::Event => "event",
        }
    }
}

impl FromStr for TriggerType {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|t| t.as_str() == s)
            .ok_or_else(|| {
                format!("`{s}` is not a trigger type; expected one of cron, interval, event")
            })
    }
}

impl Trigger {
    pub fn trigger_type(&self) -> TriggerType {
        match self {
            Trigger::Scheduled(s) => match s.cadence {
                Cadence::Cron { .. } => TriggerType::Cron,
                Cadence::Interval { .. } => TriggerType::Interval,
            },
            Trigger::Event { .. } => TriggerType::Event,
        }
    }

    pub fn as_scheduled(&self) -> Option<&ScheduledTrigger> {
        match self {
            Trigger::Scheduled(s) => Some(s),
            Trigger::Event { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cron_accepts_five_fields_and_shorthands() {
        for ok in [
            "0 * * * *",
            "*/5 9-17 * * MON-FRI",
            "@hourly",
            "@daily",
            "30 2 1 * *",
        ] {
            CronExpr::parse(ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
        }
    }

    #[test]
    fn cron_refuses_garbage() {
        for bad in [
            "",
            "* * * *",
            "0 0 * * * *",
            "61 * * * *",
            "0 25 * * *",
            "hello world",
            "@every 5m",
            "CRON_TZ=UTC 0 * * * *",
            "0 0 32 * *",
        ] {
            assert!(CronExpr::parse(bad).is_err(), "{bad} should fail");
        }
    }

    #[test]
    fn cadence_without_dst_still_reads() {
        let stored =
            serde_json::json!({"kind": "cron", "cron": "0 9 * * *", "timezone": "Europe/Berlin"});
        let cadence: Cadence = serde_json::from_value(stored).unwrap();
        let Cadence::Cron { dst, .. } = cadence else {
            panic!("not cron");
        };
        assert_eq!(dst, DstPolicy::default());
    }

    #[test]
    fn time_zones() {
        assert_eq!(
            TimeZoneName::parse("Europe/Berlin").unwrap().name(),
            "Europe/Berlin"
        );
        assert!(TimeZoneName::parse("Mars/Olympus").is_err());
        assert!(TimeZoneName::parse("").is_err());
    }

    #[test]
    fn catchup_limit_bounds() {
        assert!(CatchupLimit::new(0).is_err());
        assert!(CatchupLimit::new(1001).is_err());
        assert_eq!(CatchupLimit::new(1000).unwrap().get(), 1000);
        assert_eq!(CatchupLimit::default().get(), 10);
    }

    #[test]
    fn policies_parse() {
        assert_eq!(
            "catchup".parse::<MisfirePolicy>().unwrap(),
            MisfirePolicy::Catchup
        );
        assert!("Skip".parse::<MisfirePolicy>().is_err());
    }

    #[test]
    fn event_types() {
        assert!(EventType::parse("message.received").is_ok());
        assert!(EventType::parse("bad type").is_err());
        assert!(EventType::parse("").is_err());
    }
}
