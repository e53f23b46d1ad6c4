//! Projects' wire models. A request is the domain's `ProjectInput` with its
//! schema; a response adds the ID, the version and the usage.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use acp_domain::project::{ProjectInput, ProjectRecord, Quotas, QuotasInput, Usage};

/// A project's limits: each absent (or `null`) is unlimited.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ProjectQuotas {
    /// Live activities.
    #[serde(default)]
    #[schema(minimum = 0, maximum = 2147483647)]
    pub activities: Option<i64>,
    /// Events accepted per second, sustained.
    #[serde(default)]
    #[schema(minimum = 0, maximum = 2147483647)]
    pub events_per_second: Option<i64>,
    /// Events accepted at once above the sustained rate; only with
    /// `events_per_second` (absent: one second's worth).
    #[serde(default)]
    #[schema(minimum = 1, maximum = 2147483647)]
    pub events_burst: Option<i64>,
    /// Runs started by an event or by hand running at once: what the
    /// project may burst to when others are idle. Event runs beyond it wait
    /// pending (never dropped); manual runs count toward it.
    #[serde(default)]
    #[schema(minimum = 0, maximum = 2147483647)]
    pub runs_running: Option<i64>,
    /// Runs running at once the project keeps under contention: its runs
    /// up to this count are started before any project's runs beyond its
    /// own guarantee, whatever the weights; at most `runs_running`.
    #[serde(default)]
    #[schema(minimum = 0, maximum = 2147483647)]
    pub runs_guaranteed: Option<i64>,
    #[serde(default)]
    #[schema(minimum = 0, maximum = 2147483647)]
    pub sources: Option<i64>,
    #[serde(default)]
    #[schema(minimum = 0, maximum = 2147483647)]
    pub subscriptions: Option<i64>,
}

impl ProjectQuotas {
    fn into_input(self) -> QuotasInput {
        QuotasInput {
            activities: self.activities,
            events_per_second: self.events_per_second,
            events_burst: self.events_burst,
            runs_running: self.runs_running,
            sources: self.sources,
            subscriptions: self.subscriptions,
            runs_guaranteed: self.runs_guaranteed,
        }
    }

    fn of(q: Quotas) -> Self {
        Self {
            activities: q.activities.map(Into::into),
            events_per_second: q.events_per_second.map(Into::into),
            events_burst: q.events_burst.map(Into::into),
            runs_running: q.runs_running.map(Into::into),
            sources: q.sources.map(Into::into),
            subscriptions: q.subscriptions.map(Into::into),
            runs_guaranteed: q.runs_guaranteed.map(Into::into),
        }
    }
}

/// A project as a client writes it (`PUT`; the form `PATCH` applies to).
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ProjectRequest {
    /// 1 to 200 characters.
    #[schema(min_length = 1, max_length = 200, example = "Payments team")]
    pub name: String,
    /// Its share of the workers against other projects' (default 1).
    #[serde(default)]
    #[schema(minimum = 1, maximum = 1000)]
    pub weight: Option<i64>,
    #[serde(default)]
    pub quotas: Option<ProjectQuotas>,
}

impl ProjectRequest {
    pub fn into_input(self) -> ProjectInput {
        ProjectInput {
            name: self.name,
            weight: self.weight,
            quotas: self.quotas.unwrap_or_default().into_input(),
        }
    }
}

/// A new project with the ID it is to have (`POST`).
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateProjectRequest {
    /// A slug, never reused once the project is deleted.
    #[schema(pattern = "^[a-z][a-z0-9-]{0,62}$", example = "payments")]
    pub id: String,
    #[schema(min_length = 1, max_length = 200, example = "Payments team")]
    pub name: String,
    #[serde(default)]
    #[schema(minimum = 1, maximum = 1000)]
    pub weight: Option<i64>,
    #[serde(default)]
    pub quotas: Option<ProjectQuotas>,
}

impl CreateProjectRequest {
    pub fn split(self) -> (String, ProjectRequest) {
        (
            self.id,
            ProjectRequest {
                name: self.name,
                weight: self.weight,
                quotas: self.quotas,
            },
        )
    }
}

/// What a project uses now.
#[derive(Debug, Serialize, ToSchema)]
pub struct ProjectUsage {
    /// Live (not deleted) activities.
    pub activities: i64,
    pub sources: i64,
    /// Live subscriptions.
    pub subscriptions: i64,
    /// Runs of its activities running now.
    pub runs_running: i64,
    /// Events received for it in the last 60 seconds.
    pub events_last_minute: i64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ProjectResponse {
    #[schema(pattern = "^[a-z][a-z0-9-]{0,62}$")]
    pub id: String,
    pub name: String,
    pub weight: i32,
    /// Every quota, `null` where unlimited.
    pub quotas: ProjectQuotas,
    pub usage: ProjectUsage,
    pub version: i64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

pub fn render(record: ProjectRecord, usage: Usage) -> ProjectResponse {
    ProjectResponse {
        id: record.id.to_string(),
        name: record.project.name,
        weight: record.project.weight,
        quotas: ProjectQuotas::of(record.project.quotas),
        usage: ProjectUsage {
            activities: usage.activities,
            sources: usage.sources,
            subscriptions: usage.subscriptions,
            runs_running: usage.runs_running,
            events_last_minute: usage.events_last_minute,
        },
        version: record.version,
        created_at: record.created_at,
        updated_at: record.updated_at,
    }
}
