//! Runs: a manual trigger, and the run history.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::activities::Activities;
use super::{Error, Result, found};
use acp_domain::audit::{Actor, Note, Subject};
use acp_domain::auth::UnconfirmedKey;
use acp_domain::ids;
use acp_domain::project::ProjectId;
use acp_domain::query::{RunFilter, StatsFilter};
use acp_domain::retry::RunAttempt;
use acp_domain::run::{Run, RunInput, StartOutcome, TaskInstance};
use acp_domain::stats::{ActivitySummary, BucketCounts, SummarySpan};
use acp_store::{AuditStore, RunStore};

/// What a manual trigger did.
#[derive(Debug, Clone)]
pub struct Triggered {
    /// `activity-{id}:manual-{key}`
    pub workflow_id: String,
    pub run_id: Uuid,
    pub key: String,
    pub outcome: StartOutcome,
}

#[derive(Clone)]
pub struct Runs {
    pub(super) activities: Activities,
    pub(super) runs: RunStore,
    /// For the entries of the actions that write nothing else to
    /// PostgreSQL in their request (a trigger) or many things (bulk).
    pub(super) audit: AuditStore,
}

impl Runs {
    pub fn new(activities: Activities, runs: RunStore, audit: AuditStore) -> Self {
        Self {
            activities,
            runs,
            audit,
        }
    }

    /// Runs the activity once, now, under `activity-{id}:manual-{key}`, so a
    /// retried request with the same key starts nothing new.
    /// The start is Temporal's alone (the run's row is written by its
    /// workflow), so the entry is appended in its own transaction once
    /// Temporal has answered, a duplicate included.
    pub async fn trigger(&self, id: Uuid, key: Option<String>, actor: &Actor) -> Result<Triggered> {
        let key = key.unwrap_or_else(|| Uuid::new_v4().to_string());
        let activity = self.activities.get_in(id, &actor.project).await?;
        let workflow_id = ids::event_run_workflow_id(id, &format!("manual-{key}"));
        let input = RunInput::manual(id, activity.version);
        let outcome = self
            .activities
            .gateway()
            .start_run(&workflow_id, self.activities.task_queue(), &input)
            .await?;
        let note = Note::action(
            Subject::activity(id),
            serde_json::json!({
                "workflow_id": workflow_id,
                "run_id": ids::run_id(&workflow_id),
                "key": key,
                "outcome": outcome.as_str(),
            }),
        );
        self.audit.record(actor, &note).await?;
        Ok(Triggered {
            run_id: ids::run_id(&workflow_id),
            workflow_id,
            key,
            outcome,
        })
    }

    /// Runs matching `filter`, newest first, after the keyset `after`
    /// (another project's activity named by the filter matches nothing of
    /// the filter's project). `key`, when given, is confirmed live in the
    /// same statement.
    pub async fn list(
        &self,
        filter: &RunFilter,
        after: Option<(DateTime<Utc>, Uuid)>,
        limit: i64,
        key: Option<&UnconfirmedKey>,
    ) -> Result<Vec<Run>> {
        Ok(self.runs.list_runs(filter, after, limit, key).await?)
    }

    /// One activity's runs; the activity may have been deleted since, and
    /// must be of the filter's project.
    pub async fn list_of_activity(
        &self,
        filter: &RunFilter,
        after: Option<(DateTime<Utc>, Uuid)>,
        limit: i64,
        key: Option<&UnconfirmedKey>,
    ) -> Result<Vec<Run>> {
        if let Some(id) = filter.activity_id {
            match &filter.project {
                Some(project) => self.activities.get_any_in(id, project).await?,
                None => self.activities.get_any(id).await?,
            };
        }
        self.list(filter, after, limit, key).await
    }

    /// Every attempt of a run, oldest first.
    pub async fn attempts(&self, run: &Run) -> Result<Vec<RunAttempt>> {
        let recorded = self.runs.attempts(run.run_id).await?;
        Ok(acp_domain::retry::attempts_of(run, recorded))
    }

    /// One run of `project` with its task instances.
    pub async fn get(&self, run_id: Uuid, project: &ProjectId) -> Result<(Run, Vec<TaskInstance>)> {
        self.check_run_owner(run_id, project).await?;
        found(self.runs.get_run(run_id).await, "run")
    }

    /// The run belongs to an activity of `project`; another project's is
    /// not found, the same answer as an ID that never existed.
    pub async fn check_run_owner(&self, run_id: Uuid, project: &ProjectId) -> Result<()> {
        if self.runs.run_owned_by(run_id, project).await? {
            Ok(())
        } else {
            Err(Error::NotFound("run"))
        }
    }
}

impl Runs {
    /// Runs of `window` per bucket and status (every bucket, empty ones
    /// zero), with duration percentiles. An unknown activity is not found,
    /// and so is another project's.
    pub async fn stats(
        &self,
        window: &acp_domain::stats::StatsWindow,
        filter: &StatsFilter,
    ) -> Result<Vec<BucketCounts>> {
        if let Some(id) = filter.activity_id {
            // A deleted activity's history still counts.
            match &filter.project {
                Some(project) => self.activities.get_any_in(id, project).await?,
                None => self.activities.get_any(id).await?,
            };
        }
        let mut found = self
            .runs
            .run_stats(window, filter)
            .await?
            .into_iter()
            .peekable();
        let mut out = Vec::new();
        for start in window.starts() {
            match found.peek() {
                Some(b) if b.start == start => out.extend(found.next()),
                _ => out.push(BucketCounts {
                    start,
                    ..Default::default()
                }),
            }
        }
        Ok(out)
    }
}

impl Runs {
    /// Each activity at a glance over the last 24 hours (from the start of
    /// the minute 24 hours ago).
    pub async fn summaries(
        &self,
        activities: &[Uuid],
        now: DateTime<Utc>,
    ) -> Result<std::collections::HashMap<Uuid, ActivitySummary>> {
        Ok(self
            .runs
            .summaries(activities, SummarySpan::last_24_hours(now))
            .await?)
    }
}
