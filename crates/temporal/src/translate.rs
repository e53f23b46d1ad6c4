//! PURE: an activity definition -> the Temporal schedule that carries it.
//!
//! No client, no I/O: the gateway sends what this builds. Table-tested in
//! `translate/tests.rs` for every trigger kind and misfire policy (PRODUCT.md
//! section 3). The policies a misfire policy asks of Temporal are in
//! `policy.rs`, the trigger's `ScheduleSpec` in `schedule_spec.rs`.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};
use temporalio_common::protos::temporal::api::common::v1::{Memo, Payload, Payloads, WorkflowType};
use temporalio_common::protos::temporal::api::schedule::v1::{
    Schedule, ScheduleAction, SchedulePolicies, ScheduleState, schedule_action,
};
use temporalio_common::protos::temporal::api::taskqueue::v1::TaskQueue;
use temporalio_common::protos::temporal::api::workflow::v1::NewWorkflowExecutionInfo;
use uuid::Uuid;

use acp_domain::activity::Activity;
use acp_domain::trigger::ScheduledTrigger;

mod policy;
mod schedule_spec;

pub use policy::{MIN_CATCHUP_WINDOW, catchup_window, overlap_policy};
use schedule_spec::proto_duration;
pub use schedule_spec::{spec, structured_calendar};

/// The workflow type every schedule starts. It learns its nominal time and
/// starts `RunActivityWorkflow` under the contract ID.
pub const LAUNCHER_WORKFLOW_TYPE: &str = "LaunchScheduledRunWorkflow";

/// Bumped whenever this translation changes, so every schedule counts as
/// drifted and the reconciler rewrites it.
/// 2: structured calendars instead of cron strings (POSIX day matching).
const TRANSLATION_REVISION: u32 = 2;

pub const MEMO_SPEC_HASH: &str = "acp_spec_hash";
pub const MEMO_ACTIVITY_ID: &str = "acp_activity_id";
pub const MEMO_VERSION: &str = "acp_version";

/// The input the launcher workflow receives from the schedule.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LauncherInput {
    pub activity_id: Uuid,
}

#[derive(Debug, Clone, PartialEq)]
pub struct DesiredSchedule {
    pub schedule: Schedule,
    /// The schedule's own memo, set once at creation: Temporal 1.32 refuses
    /// memo updates on workflow-backed schedules.
    pub memo: Memo,
    /// Hash of everything but the paused state and note. It travels in the
    /// memo of the start-workflow action, which updates do replace.
    pub spec_hash: String,
    pub paused: bool,
}

/// A JSON payload as the SDK's default converter writes it.
pub fn json_payload(value: &impl serde::Serialize) -> Payload {
    Payload {
        metadata: HashMap::from([("encoding".to_owned(), b"json/plain".to_vec())]),
        data: serde_json::to_vec(value).unwrap_or_default(),
        ..Default::default()
    }
}

/// The launcher's workflow ID prefix; Temporal appends `-{nominal time}`.
pub fn launcher_workflow_id_prefix(activity_id: Uuid) -> String {
    format!("launcher-{activity_id}")
}

/// The workflow ID the schedule gives the launcher of `scheduled_for`: the
/// action's ID, a dash, and the nominal time in UTC, RFC 3339, whole seconds.
pub fn launcher_workflow_id(activity_id: Uuid, scheduled_for: DateTime<Utc>) -> String {
    format!(
        "{}-{}",
        launcher_workflow_id_prefix(activity_id),
        scheduled_for.format("%Y-%m-%dT%H:%M:%SZ")
    )
}

/// The schedule for an activity, or `None` when it should have none
/// (event triggers, deleted activities).
pub fn desired_schedule(activity: &Activity, task_queue: &str) -> Option<DesiredSchedule> {
    if activity.deleted {
        return None;
    }
    let trigger = activity.definition.trigger.as_scheduled()?;
    let spec_hash = spec_hash(activity.id, trigger, task_queue);
    let schedule = Schedule {
        spec: Some(spec(trigger)),
        action: Some(ScheduleAction {
            action: Some(schedule_action::Action::StartWorkflow(
                NewWorkflowExecutionInfo {
                    workflow_id: launcher_workflow_id_prefix(activity.id),
                    workflow_type: Some(WorkflowType {
                        name: LAUNCHER_WORKFLOW_TYPE.to_owned(),
                    }),
                    task_queue: Some(TaskQueue {
                        name: task_queue.to_owned(),
                        ..Default::default()
                    }),
                    input: Some(Payloads {
                        payloads: vec![json_payload(&LauncherInput {
                            activity_id: activity.id,
                        })],
                    }),
                    memo: Some(Memo {
                        fields: HashMap::from([
                            (MEMO_SPEC_HASH.to_owned(), json_payload(&spec_hash)),
                            (MEMO_VERSION.to_owned(), json_payload(&activity.version)),
                        ]),
                    }),
                    ..Default::default()
                },
            )),
        }),
        policies: Some(SchedulePolicies {
            overlap_policy: overlap_policy(trigger.misfire_policy) as i32,
            catchup_window: Some(proto_duration(catchup_window(trigger))),
            pause_on_failure: false,
            keep_original_workflow_id: false,
        }),
        state: Some(ScheduleState {
            notes: activity.pause_note.clone().unwrap_or_default(),
            paused: activity.schedule_paused(),
            limited_actions: false,
            remaining_actions: 0,
        }),
    };
    let memo = Memo {
        fields: HashMap::from([(MEMO_ACTIVITY_ID.to_owned(), json_payload(&activity.id))]),
    };
    Some(DesiredSchedule {
        paused: activity.schedule_paused(),
        schedule,
        memo,
        spec_hash,
    })
}

/// A stable hash of what the schedule does (not whether it is paused).
pub fn spec_hash(activity_id: Uuid, trigger: &ScheduledTrigger, task_queue: &str) -> String {
    let canonical = serde_json::json!({
        "revision": TRANSLATION_REVISION,
        "activity_id": activity_id,
        "trigger": trigger,
        "task_queue": task_queue,
        "launcher": LAUNCHER_WORKFLOW_TYPE,
    });
    let digest = Sha256::digest(canonical.to_string().as_bytes());
    hex::encode(digest)
}

/// Reads the spec hash back out of a schedule's start-workflow action.
pub fn action_spec_hash(schedule: Option<&Schedule>) -> Option<String> {
    let action = schedule?.action.as_ref()?.action.as_ref()?;
    let schedule_action::Action::StartWorkflow(start) = action;
    let payload = start.memo.as_ref()?.fields.get(MEMO_SPEC_HASH)?;
    serde_json::from_slice(&payload.data).ok()
}

#[cfg(test)]
mod tests;
