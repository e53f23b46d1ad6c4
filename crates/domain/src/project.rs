//! Projects: the teams sharing the service. A project owns activities,
//! sources, subscriptions, calendars and API keys; runs, events and the
//! rest belong to it through those. Its weight and quotas are kept here for
//! the fair share and the limits that read them.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::FieldError;

pub mod rate;

/// The largest weight: a hundredfold share against a weight of 1 is
/// already more than a fair-share scheduler can honour at these rates.
pub const MAX_WEIGHT: i64 = 1000;
/// The largest value of any quota (they are `integer` columns).
pub const MAX_QUOTA: i64 = i32::MAX as i64;

/// A project's ID: a slug, `^[a-z][a-z0-9-]{0,62}$`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ProjectId(String);

impl ProjectId {
    /// The project everything belongs to unless said otherwise; it cannot be
    /// deleted.
    pub const DEFAULT: &'static str = "default";
    pub const PATTERN: &'static str = "^[a-z][a-z0-9-]{0,62}$";

    pub fn parse(text: &str) -> Result<Self, String> {
        let mut chars = text.chars();
        let first_ok = chars.next().is_some_and(|c| c.is_ascii_lowercase());
        let rest_ok = chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        if first_ok && rest_ok && text.len() <= 63 {
            Ok(Self(text.to_owned()))
        } else {
            Err(format!(
                "`{text}` is not a project ID: 1 to 63 characters, lowercase letters, digits \
                 and `-`, starting with a letter"
            ))
        }
    }

    pub fn default_project() -> Self {
        Self(Self::DEFAULT.to_owned())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn is_default(&self) -> bool {
        self.0 == Self::DEFAULT
    }
}

impl std::fmt::Display for ProjectId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A project's limits; `None` is unlimited.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Quotas {
    /// Live activities.
    pub activities: Option<i32>,
    /// Events accepted per second, sustained.
    pub events_per_second: Option<i32>,
    /// Events accepted at once above the sustained rate; with
    /// `events_per_second` only (it defaults to one second's worth).
    pub events_burst: Option<i32>,
    /// Runs started by an event or by hand running at once: what the
    /// project may burst to when others are idle (event runs beyond it wait
    /// pending).
    pub runs_running: Option<i32>,
    pub sources: Option<i32>,
    pub subscriptions: Option<i32>,
    /// Runs running at once that the project keeps under contention, before
    /// the weights share the rest; at most `runs_running`.
    pub runs_guaranteed: Option<i32>,
}

/// Quotas as a client writes them: any integers, checked by [`Project::parse`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuotasInput {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activities: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events_per_second: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events_burst: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs_running: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sources: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscriptions: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs_guaranteed: Option<i64>,
}

/// A project as a client writes it (the request form a merge patch applies to).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProjectInput {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<i64>,
    #[serde(default)]
    pub quotas: QuotasInput,
}

/// A valid project definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Project {
    pub name: String,
    pub weight: i32,
    pub quotas: Quotas,
}

impl Project {
    pub fn parse(input: &ProjectInput) -> Result<Self, Vec<FieldError>> {
        let mut errors = Vec::new();
        let name = input.name.trim();
        if name.is_empty() || name.chars().count() > 200 || name.chars().any(char::is_control) {
            errors.push(FieldError::new(
                "name",
                "must be 1 to 200 characters, no control characters",
            ));
        }
        let weight = input.weight.unwrap_or(1);
        if !(1..=MAX_WEIGHT).contains(&weight) {
            errors.push(FieldError::new(
                "weight",
                format!("must be an integer from 1 to {MAX_WEIGHT}"),
            ));
        }
        let q = &input.quotas;
        let mut quota = |field: &str, value: Option<i64>, min: i64| -> Option<i32> {
            let value = value?;
            match i32::try_from(value) {
                Ok(v) if value >= min => Some(v),
                _ => {
                    errors.push(FieldError::new(
                        format!("quotas.{field}"),
                        format!(
                            "must be an integer from {min} to {MAX_QUOTA}, or absent for no limit"
                        ),
                    ));
                    None
                }
            }
        };
        let quotas = Quotas {
            activities: quota("activities", q.activities, 0),
            events_per_second: quota("events_per_second", q.events_per_second, 0),
            events_burst: quota("events_burst", q.events_burst, 1),
            runs_running: quota("runs_running", q.runs_running, 0),
            sources: quota("sources", q.sources, 0),
            subscriptions: quota("subscriptions", q.subscriptions, 0),
            runs_guaranteed: quota("runs_guaranteed", q.runs_guaranteed, 0),
        };
        if let (Some(guaranteed), Some(running)) = (q.runs_guaranteed, q.runs_running)
            && guaranteed > running
        {
            errors.push(FieldError::new(
                "quotas.runs_guaranteed",
                format!("must be at most `runs_running` ({running}): a guarantee within the cap"),
            ));
        }
        if q.events_burst.is_some() && q.events_per_second.is_none() {
            errors.push(FieldError::new(
                "quotas.events_burst",
                "needs `events_per_second`: a burst is above a sustained rate",
            ));
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(Self {
            name: name.to_owned(),
            weight: weight as i32,
            quotas,
        })
    }

    pub fn to_input(&self) -> ProjectInput {
        let q = self.quotas;
        ProjectInput {
            name: self.name.clone(),
            weight: Some(self.weight.into()),
            quotas: QuotasInput {
                activities: q.activities.map(Into::into),
                events_per_second: q.events_per_second.map(Into::into),
                events_burst: q.events_burst.map(Into::into),
                runs_running: q.runs_running.map(Into::into),
                sources: q.sources.map(Into::into),
                subscriptions: q.subscriptions.map(Into::into),
                runs_guaranteed: q.runs_guaranteed.map(Into::into),
            },
        }
    }
}

/// A stored project at a version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectRecord {
    pub id: ProjectId,
    pub project: Project,
    pub version: i64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// What a project uses now, to set beside its quotas.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub activities: i64,
    pub sources: i64,
    pub subscriptions: i64,
    pub runs_running: i64,
    /// Events received in the last 60 seconds.
    pub events_last_minute: i64,
}

/// A quota on how many of something a project owns, checked when one is
/// created (nothing frees on its own: a delete does).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CountQuota {
    Activities,
    Sources,
    Subscriptions,
}

impl CountQuota {
    /// Its name in `quotas` and in the problem that refuses a create.
    pub fn name(self) -> &'static str {
        match self {
            Self::Activities => "activities",
            Self::Sources => "sources",
            Self::Subscriptions => "subscriptions",
        }
    }

    /// Its limit in `quotas`; `None` is unlimited.
    pub fn limit(self, quotas: &Quotas) -> Option<i32> {
        match self {
            Self::Activities => quotas.activities,
            Self::Sources => quotas.sources,
            Self::Subscriptions => quotas.subscriptions,
        }
    }

    /// Whether one more fits beside `usage`: refused with what the problem
    /// names when the project already uses its limit (or more, after the
    /// quota was lowered).
    pub fn admit(self, quotas: &Quotas, usage: i64) -> Result<(), QuotaExceeded> {
        match self.limit(quotas) {
            Some(limit) if usage >= i64::from(limit) => Err(QuotaExceeded {
                quota: self,
                limit: limit.into(),
                usage,
            }),
            _ => Ok(()),
        }
    }
}

/// A create refused by a [`CountQuota`]: the project uses `usage` of `limit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuotaExceeded {
    pub quota: CountQuota,
    pub limit: i64,
    pub usage: i64,
}

/// What a project still owns: while any is not zero it cannot be deleted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Owned {
    pub activities: i64,
    pub sources: i64,
    pub subscriptions: i64,
    pub calendars: i64,
    /// Keys not revoked.
    pub keys: i64,
}

impl Owned {
    pub fn is_empty(&self) -> bool {
        self.parts().iter().all(|(_, n)| *n == 0)
    }

    pub fn parts(&self) -> [(&'static str, i64); 5] {
        [
            ("activities", self.activities),
            ("sources", self.sources),
            ("subscriptions", self.subscriptions),
            ("calendars", self.calendars),
            ("keys", self.keys),
        ]
    }

    /// `2 activities, 1 key`: what is not zero.
    pub fn describe(&self) -> String {
        self.parts()
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(what, n)| {
                let what = if *n == 1 {
                    what.strip_suffix("ies")
                        .map(|s| format!("{s}y"))
                        .unwrap_or_else(|| what.trim_end_matches('s').to_owned())
                } else {
                    (*what).to_owned()
                };
                format!("{n} {what}")
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

#[cfg(test)]
mod tests;
