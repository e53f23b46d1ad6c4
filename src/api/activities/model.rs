//! The activity resource as the API speaks it, and its parsing into the domain.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use super::flow::{FlowBody, FlowStateResponse, flow_body, parse_flow};
use super::trigger_model::{TriggerBody, TriggerKind, parse_trigger};
use super::trigger_render::trigger_body;
use crate::api::alerts::handlers::AlertResponse;
use crate::api::alerts::model::{
    AlertsBody, NotifyBody, alerts_body, notify_body, parse_alerts, parse_notify,
};
use crate::api::field_errors::{Errors, check_text};
use acp_domain::FieldError;
use acp_domain::activity::{Activity, ActivityDefinition, SyncState, TaskSpec};
use acp_domain::ids;

mod task;
mod task_schema;

pub use task::TaskBody;
use task::parse_task;

const MAX_TASKS: usize = 50;
const MAX_LABELS: usize = 64;

/// An activity definition: one trigger and an ordered list of tasks.
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ActivityRequest {
    /// Human-readable name, 1 to 200 characters.
    #[schema(example = "hourly-inbox-sweep", min_length = 1, max_length = 200)]
    pub name: String,
    /// Free text, up to 2000 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(max_length = 2000)]
    pub description: Option<String>,
    /// Disabled activities keep their schedule, paused. Default `true`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Key/value labels for filtering (`label=key=value`): at most 64; keys
    /// are 1 to 63 of letters, digits, `. _ - /`; values at most 255 characters.
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    pub trigger: TriggerBody,
    /// The tasks of each run, executed in order. 1 to 50.
    #[schema(min_items = 1, max_items = 50)]
    pub tasks: Vec<TaskBody>,
    /// Legacy compatibility metadata: stored and returned, read by no
    /// execution path. It does NOT deduplicate runs by content; configure
    /// `trigger.misfire_policy` instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(deprecated, example = "skip", min_length = 1, max_length = 100)]
    pub dedupe_key_strategy: Option<String>,
    /// Expectations whose breach opens an alert.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::api::field_errors::object_only"
    )]
    pub alerts: Option<AlertsBody>,
    /// Where run and alert notifications of this activity go, at most 10.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(max_items = 10)]
    pub notify: Option<Vec<NotifyBody>>,
    /// The longest a run may take, ISO-8601 (`PT30M`); a run that takes
    /// longer is cancelled and recorded `timed_out`. None by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(example = "PT30M")]
    pub run_timeout: Option<String>,
    /// Flow control: how many runs may run at once, per key.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::api::field_errors::object_only"
    )]
    pub flow: Option<FlowBody>,
}

/// Whether Temporal holds the schedule the database describes.
#[derive(Debug, Serialize, ToSchema)]
pub struct ScheduleStatus {
    /// `activity-{id}`, or null for event triggers.
    pub schedule_id: Option<String>,
    /// `synced`, `pending` (waiting for Temporal), `error` (Temporal refused)
    /// or `not_applicable` (event triggers).
    pub sync_state: SyncState,
    pub last_synced_at: Option<DateTime<Utc>>,
    pub last_error: Option<String>,
    /// The next 10 nominal fire times, from the service's own definition of
    /// the trigger's times (the one Temporal is made to honour, DST policy
    /// included), within `start_at`/`end_at`. Empty for event triggers and
    /// while the activity is paused or disabled (nothing fires then).
    pub next_fire_times: Vec<DateTime<Utc>>,
}

/// A stored activity.
#[derive(Debug, Serialize, ToSchema)]
pub struct ActivityResponse {
    pub id: Uuid,
    /// Increases with every change; the ETag.
    pub version: i64,
    pub name: String,
    pub description: Option<String>,
    pub enabled: bool,
    pub labels: BTreeMap<String, String>,
    pub trigger: TriggerBody,
    pub tasks: Vec<TaskBody>,
    /// Legacy compatibility metadata, read by no execution path.
    #[schema(deprecated)]
    pub dedupe_key_strategy: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alerts: Option<AlertsBody>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notify: Option<Vec<NotifyBody>>,
    /// The longest a run may take (ISO-8601).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_timeout: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flow: Option<FlowBody>,
    /// Open alerts of this activity (in `GET /v1/activities/{id}` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_alerts: Option<Vec<AlertResponse>>,
    /// Concurrency slots in use and runs queued, per key (in
    /// `GET /v1/activities/{id}` of a flow-controlled activity only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flow_state: Option<FlowStateResponse>,
    /// The activity at a glance (with `?include=summary` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<crate::api::stats::ActivitySummaryResponse>,
    /// Paused by `POST /v1/activities/{id}/pause`, or by a fire after its
    /// calendar's `covered_until` under `beyond_coverage: pause`.
    pub paused: bool,
    pub pause_note: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub schedule: ScheduleStatus,
}

impl ActivityRequest {
    /// Parses the request into a valid definition, or every field error found.
    pub fn into_definition(self) -> Result<ActivityDefinition, Vec<FieldError>> {
        let mut errors = Errors(Vec::new());
        check_text(&mut errors, "name", &self.name, 200);
        if let Some(d) = &self.description
            && d.chars().count() > 2000
        {
            errors.push("description", "must be at most 2000 characters");
        }
        if self.labels.len() > MAX_LABELS {
            errors.push("labels", format!("at most {MAX_LABELS} labels"));
        }
        for (key, value) in &self.labels {
            let field = format!("labels.{key}");
            if key.is_empty()
                || key.len() > 63
                || !key
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/'))
            {
                errors.push(
                    &field,
                    "label keys are 1 to 63 of: letters, digits, . _ - /",
                );
            }
            if value.chars().count() > 255 || value.chars().any(char::is_control) {
                errors.push(
                    &field,
                    "label values are at most 255 characters, no control characters",
                );
            }
        }
        let scheduled = self.trigger.kind != TriggerKind::Event;
        let alerts = parse_alerts(&mut errors.0, self.alerts, scheduled);
        let notify = parse_notify(&mut errors.0, self.notify);
        let flow = parse_flow(&mut errors.0, self.flow);
        if scheduled && flow.as_ref().is_some_and(|f| f.debounce.is_some()) {
            errors.push(
                "flow.debounce",
                "applies to event triggers only: a schedule has no bursts of events to collapse",
            );
        }
        let trigger = parse_trigger(&mut errors, self.trigger);
        if self.tasks.is_empty() {
            errors.push("tasks", "must contain at least one task");
        } else if self.tasks.len() > MAX_TASKS {
            errors.push("tasks", format!("at most {MAX_TASKS} tasks"));
        }
        let tasks: Vec<TaskSpec> = self
            .tasks
            .into_iter()
            .enumerate()
            .filter_map(|(i, t)| parse_task(&mut errors, i, t))
            .collect();
        if let Some(d) = &self.dedupe_key_strategy
            && (d.is_empty() || d.len() > 100)
        {
            errors.push("dedupe_key_strategy", "must be 1 to 100 characters");
        }
        if let Some(text) = &self.run_timeout {
            match acp_domain::duration::IsoDuration::parse(text) {
                Ok(d) if d.as_std().is_zero() => {
                    errors.push("run_timeout", "must be longer than zero")
                }
                Ok(_) => {}
                Err(m) => errors.push("run_timeout", m),
            }
        }
        match (trigger, errors.0.is_empty()) {
            (Some(trigger), true) => Ok(ActivityDefinition {
                name: self.name.trim().to_owned(),
                description: self.description,
                enabled: self.enabled.unwrap_or(true),
                labels: self.labels,
                trigger,
                tasks,
                dedupe_key_strategy: self.dedupe_key_strategy,
                alerts,
                notify,
                run_timeout: self.run_timeout,
                flow,
            }),
            _ => Err(errors.0),
        }
    }
}

/// The request form of a stored definition: what a client would PUT to get
/// it, and the document a merge patch applies to.
pub fn request_of(def: &ActivityDefinition) -> ActivityRequest {
    ActivityRequest {
        name: def.name.clone(),
        description: def.description.clone(),
        enabled: Some(def.enabled),
        labels: def.labels.clone(),
        trigger: trigger_body(&def.trigger),
        tasks: def
            .tasks
            .iter()
            .map(|t| TaskBody {
                task_type: t.task_type.as_str().to_owned(),
                name: t.name.clone(),
                config: t.config.clone(),
                timeout: t.timeout.clone(),
                retry: t.retry.clone(),
            })
            .collect(),
        dedupe_key_strategy: def.dedupe_key_strategy.clone(),
        alerts: def.alerts.as_ref().map(alerts_body),
        notify: (!def.notify.is_empty()).then(|| def.notify.iter().map(notify_body).collect()),
        run_timeout: def.run_timeout.clone(),
        flow: def.flow.as_ref().map(flow_body),
    }
}

/// Renders a stored activity with its next fire times.
pub fn render(activity: Activity, next_fire_times: Vec<DateTime<Utc>>) -> ActivityResponse {
    let request = request_of(&activity.definition);
    let schedule_id = activity
        .wants_schedule()
        .then(|| ids::schedule_id(activity.id));
    ActivityResponse {
        id: activity.id,
        version: activity.version,
        name: request.name,
        description: request.description,
        enabled: activity.definition.enabled,
        labels: request.labels,
        trigger: request.trigger,
        tasks: request.tasks,
        dedupe_key_strategy: request.dedupe_key_strategy,
        alerts: request.alerts,
        notify: request.notify,
        run_timeout: request.run_timeout,
        flow: request.flow,
        open_alerts: None,
        flow_state: None,
        summary: None,
        paused: activity.paused,
        pause_note: activity.pause_note,
        created_at: activity.created_at,
        updated_at: activity.updated_at,
        schedule: ScheduleStatus {
            schedule_id,
            sync_state: activity.sync.state,
            last_synced_at: activity.sync.last_synced_at,
            last_error: activity.sync.last_error,
            next_fire_times,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use acp_domain::calendar::{DstPolicy, Repeated, Skipped};
    use acp_domain::trigger::{Cadence, ScheduledTrigger, Trigger};
    use serde_json::json;

    fn parse(value: serde_json::Value) -> Result<ActivityDefinition, Vec<FieldError>> {
        let request: ActivityRequest = serde_json::from_value(value).unwrap();
        request.into_definition()
    }

    fn fields(value: serde_json::Value) -> Vec<String> {
        parse(value)
            .unwrap_err()
            .into_iter()
            .map(|e| e.field)
            .collect()
    }

    #[test]
    fn full_example_parses_and_round_trips() {
        let body = json!({
            "name": "hourly-inbox-sweep",
            "description": "Look for unread messages every hour",
            "enabled": true,
            "labels": {"team": "support"},
            "trigger": {"type": "cron", "cron": "0 * * * *", "timezone": "Europe/Berlin",
                        "misfire_policy": "catchup", "catchup_limit": 10, "misfire_grace": "PT60S",
                        "start_at": null, "end_at": null, "jitter": null},
            "tasks": [
                {"task_type": "webhook", "name": "notify", "config": {"url": "https://hooks.example.com/x", "secret_ref": "HOOK_SECRET"}},
                {"task_type": "webhook", "config": {"url": "https://hooks.example.com/y"},
                 "timeout": "PT5S", "retry": {"max_attempts": 2, "non_retryable": [503]}},
                {"task_type": "noop"}
            ],
            "dedupe_key_strategy": "skip"
        });
        let def = parse(body).unwrap();
        assert_eq!(def.dedupe_key_strategy.as_deref(), Some("skip"));
        assert_eq!(def.tasks[1].timeout.as_deref(), Some("PT5S"));
        assert_eq!(
            def.tasks[1].retry,
            Some(json!({"max_attempts": 2, "non_retryable": [503]}))
        );
        let again = request_of(&def).into_definition().unwrap();
        assert_eq!(again, def);
    }

    #[test]
    fn collects_every_field_error() {
        let got = fields(json!({
            "name": " ",
            "trigger": {"type": "cron", "cron": "nope", "timezone": "Mars/Base", "misfire_policy": "later", "catchup_limit": 0},
            "tasks": [{"task_type": "webhook", "config": {}}, {"task_type": "custom", "config": {}}]
        }));
        for field in [
            "name",
            "trigger.cron",
            "trigger.timezone",
            "trigger.misfire_policy",
            "trigger.catchup_limit",
            "tasks[0].config.url",
            "tasks[1].config.task_queue",
        ] {
            assert!(
                got.contains(&field.to_owned()),
                "{field} missing from {got:?}"
            );
        }
    }

    #[test]
    fn fields_belong_to_their_trigger_kind() {
        assert_eq!(
            fields(
                json!({"name": "x", "trigger": {"type": "event", "event_types": ["a"], "cron": "0 * * * *"}, "tasks": [{"task_type": "noop"}]})
            ),
            vec!["trigger.cron"]
        );
        assert_eq!(
            fields(
                json!({"name": "x", "trigger": {"type": "interval", "every": "PT0.5S"}, "tasks": [{"task_type": "noop"}]})
            ),
            vec!["trigger.every"]
        );
        assert_eq!(
            fields(
                json!({"name": "x", "trigger": {"type": "interval"}, "tasks": [{"task_type": "noop"}]})
            ),
            vec!["trigger.every"]
        );
        assert_eq!(
            fields(
                json!({"name": "x", "trigger": {"type": "interval", "every": "PT1M", "dst": {}}, "tasks": [{"task_type": "noop"}]})
            ),
            vec!["trigger.dst"]
        );
        assert_eq!(
            fields(
                json!({"name": "x", "trigger": {"type": "event", "event_types": ["a"], "dst": {}}, "tasks": [{"task_type": "noop"}]})
            ),
            vec!["trigger.dst"]
        );
    }

    #[test]
    fn dst_policy_parses_defaults_and_round_trips() {
        let cron = |dst: serde_json::Value| {
            json!({"name": "x", "trigger": {"type": "cron", "cron": "30 2 * * *",
                   "timezone": "Europe/Berlin", "dst": dst}, "tasks": [{"task_type": "noop"}]})
        };
        let policy = |def: &ActivityDefinition| match &def.trigger {
            Trigger::Scheduled(ScheduledTrigger {
                cadence: Cadence::Cron { dst, .. },
                ..
            }) => *dst,
            other => panic!("{other:?}"),
        };
        let def = parse(cron(json!({"repeated": "both"}))).unwrap();
        assert_eq!(
            policy(&def),
            DstPolicy {
                repeated: Repeated::Both,
                skipped: Skipped::Shift
            }
        );
        assert_eq!(request_of(&def).into_definition().unwrap(), def);
        let body = request_of(&def).trigger.dst.unwrap();
        assert_eq!(
            (body.repeated.as_deref(), body.skipped.as_deref()),
            (Some("both"), Some("shift"))
        );
        assert_eq!(
            policy(&parse(cron(json!(null))).unwrap()),
            DstPolicy::default()
        );
        assert_eq!(
            fields(cron(json!({"repeated": "twice", "skipped": "never"}))),
            vec!["trigger.dst.repeated", "trigger.dst.skipped"]
        );
    }
}
