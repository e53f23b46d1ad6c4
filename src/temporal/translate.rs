//! PURE: an activity definition -> the Temporal schedule that carries it.
//!
//! No client, no I/O: the gateway sends what this builds. Table-tested below
//! for every trigger kind and misfire policy (PRODUCT.md section 3).

use std::collections::HashMap;
use std::time::Duration;

use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};
use temporalio_common::protos::temporal::api::common::v1::{Memo, Payload, Payloads, WorkflowType};
use temporalio_common::protos::temporal::api::enums::v1::ScheduleOverlapPolicy;
use temporalio_common::protos::temporal::api::schedule::v1::{
    IntervalSpec, Range, Schedule, ScheduleAction, SchedulePolicies, ScheduleSpec, ScheduleState,
    StructuredCalendarSpec, schedule_action,
};
use temporalio_common::protos::temporal::api::taskqueue::v1::TaskQueue;
use temporalio_common::protos::temporal::api::workflow::v1::NewWorkflowExecutionInfo;
use uuid::Uuid;

use crate::domain::activity::Activity;
use crate::domain::calendar::{EngineCalendar, FieldSet, engine_calendars, times_after};
use crate::domain::trigger::{Cadence, MisfirePolicy, ScheduledTrigger};

/// The workflow type every schedule starts. It learns its nominal time and
/// starts `RunActivityWorkflow` under the contract ID.
pub const LAUNCHER_WORKFLOW_TYPE: &str = "LaunchScheduledRunWorkflow";

/// Temporal's smallest catch-up window.
pub const MIN_CATCHUP_WINDOW: Duration = Duration::from_secs(10);
const MAX_CATCHUP_WINDOW: Duration = Duration::from_secs(365 * 86_400);

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

/// Overlap policy per misfire policy.
pub fn overlap_policy(policy: MisfirePolicy) -> ScheduleOverlapPolicy {
    match policy {
        MisfirePolicy::Skip => ScheduleOverlapPolicy::Skip,
        MisfirePolicy::Catchup => ScheduleOverlapPolicy::BufferAll,
        MisfirePolicy::Compress => ScheduleOverlapPolicy::BufferOne,
    }
}

/// The longest gap between consecutive nominal times, sampled from a fixed
/// reference so the result (and the spec hash) is deterministic.
fn longest_gap(cadence: &Cadence, samples: usize) -> Duration {
    let reference = DateTime::from_timestamp(1_767_225_600, 0).unwrap_or_default(); // 2026-01-01T00:00:00Z
    let times: Vec<DateTime<Utc>> = times_after(cadence, reference)
        .take(samples + 1)
        .map(|t| t.at)
        .collect();
    let longest = times
        .windows(2)
        .filter_map(|w| (w[1] - w[0]).to_std().ok())
        .max()
        .unwrap_or(MAX_CATCHUP_WINDOW);
    if longest.is_zero() {
        MAX_CATCHUP_WINDOW
    } else {
        longest
    }
}

/// Catch-up window per misfire policy: wide enough for `catchup_limit`
/// intervals under `catchup`, Temporal's minimum otherwise (the launcher's
/// misfire rule decides the rest).
pub fn catchup_window(trigger: &ScheduledTrigger) -> Duration {
    match trigger.misfire_policy {
        MisfirePolicy::Skip | MisfirePolicy::Compress => MIN_CATCHUP_WINDOW,
        MisfirePolicy::Catchup => {
            let gap = longest_gap(&trigger.cadence, 48);
            let limit = trigger.catchup_limit.get();
            gap.checked_mul(limit)
                .unwrap_or(MAX_CATCHUP_WINDOW)
                .clamp(MIN_CATCHUP_WINDOW, MAX_CATCHUP_WINDOW)
        }
    }
}

fn proto_duration(d: Duration) -> prost_wkt_types::Duration {
    prost_wkt_types::Duration {
        seconds: d.as_secs() as i64,
        nanos: d.subsec_nanos() as i32,
    }
}

fn proto_timestamp(t: DateTime<Utc>) -> prost_wkt_types::Timestamp {
    prost_wkt_types::Timestamp {
        seconds: t.timestamp(),
        nanos: t.timestamp_subsec_nanos() as i32,
    }
}

/// A JSON payload as the SDK's default converter writes it.
pub fn json_payload(value: &impl serde::Serialize) -> Payload {
    Payload {
        metadata: HashMap::from([("encoding".to_owned(), b"json/plain".to_vec())]),
        data: serde_json::to_vec(value).unwrap_or_default(),
        ..Default::default()
    }
}

pub fn spec(trigger: &ScheduledTrigger) -> ScheduleSpec {
    let mut spec = ScheduleSpec {
        start_time: trigger.start_at.map(proto_timestamp),
        end_time: trigger.end_at.map(proto_timestamp),
        jitter: trigger.jitter.map(|j| proto_duration(j.as_std())),
        ..Default::default()
    };
    match &trigger.cadence {
        Cadence::Cron { cron, timezone, .. } => {
            // Structured calendars, not the cron string: the engine would read
            // day-of-month and day-of-week with AND; these make it fire the
            // POSIX set (see `calendar::engine_calendars`). The DST policy is
            // not the engine's business: the service makes up the difference.
            spec.structured_calendar = engine_calendars(cron.schedule())
                .iter()
                .map(structured_calendar)
                .collect();
            spec.timezone_name = timezone.name().to_owned();
        }
        Cadence::Interval { every } => {
            spec.interval = vec![IntervalSpec {
                interval: Some(proto_duration(every.as_std())),
                phase: None,
            }];
        }
    }
    spec
}

/// One engine calendar as Temporal's proto: every field explicit (an empty
/// list matches nothing), each set as the fewest arithmetic runs.
pub fn structured_calendar(cal: &EngineCalendar) -> StructuredCalendarSpec {
    StructuredCalendarSpec {
        second: ranges(cal.seconds),
        minute: ranges(cal.minutes),
        hour: ranges(cal.hours),
        day_of_month: ranges(cal.days_of_month),
        month: ranges(cal.months),
        // Empty means every year to the engine.
        year: Vec::new(),
        day_of_week: ranges(cal.days_of_week),
        comment: String::new(),
    }
}

/// A set as ranges with steps, greedily over neighbours: `0,15,30,45` is
/// one range, step 15. A run is kept when it is contiguous or has three
/// values or more, so `0,5,6` reads `0,5-6` rather than `0-5/5,6`.
fn ranges(set: FieldSet) -> Vec<Range> {
    let values: Vec<i32> = set.values().map(i32::from).collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < values.len() {
        let step = values.get(i + 1).map_or(1, |next| next - values[i]);
        let mut end = i;
        while values.get(end + 1).is_some_and(|v| v - values[end] == step) {
            end += 1;
        }
        if step != 1 && end - i < 2 {
            end = i;
        }
        out.push(Range {
            start: values[i],
            end: values[end],
            step: if end == i { 1 } else { step },
        });
        i = end + 1;
    }
    out
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
mod tests {
    use super::*;
    use crate::domain::activity::{ActivityDefinition, SyncState, SyncStatus, TaskSpec, TaskType};
    use crate::domain::duration::IsoDuration;
    use crate::domain::trigger::{CatchupLimit, CronExpr, EventType, TimeZoneName, Trigger};
    use chrono::TimeZone;

    fn activity(trigger: Trigger) -> Activity {
        Activity {
            id: Uuid::from_u128(42),
            version: 3,
            definition: ActivityDefinition {
                name: "t".into(),
                description: None,
                enabled: true,
                labels: Default::default(),
                trigger,
                tasks: vec![TaskSpec {
                    task_type: TaskType::parse("noop").unwrap(),
                    name: None,
                    config: Default::default(),
                    timeout: None,
                    retry: None,
                }],
                dedupe_key_strategy: None,
                alerts: None,
                notify: vec![],
                run_timeout: None,
                flow: None,
            },
            paused: false,
            pause_note: None,
            created_at: Utc::now(),
            updated_at: Utc::now(),
            sync: SyncStatus {
                state: SyncState::Pending,
                last_synced_at: None,
                last_error: None,
                synced_version: None,
                conflict_token: None,
            },
            deleted: false,
        }
    }

    fn scheduled(cadence: Cadence, policy: MisfirePolicy, limit: i64) -> Trigger {
        Trigger::Scheduled(ScheduledTrigger {
            cadence,
            misfire_policy: policy,
            catchup_limit: CatchupLimit::new(limit).unwrap(),
            misfire_grace: IsoDuration::from_secs(60),
            start_at: None,
            end_at: None,
            jitter: None,
        })
    }

    fn hourly_berlin() -> Cadence {
        Cadence::Cron {
            cron: CronExpr::parse("0 * * * *").unwrap(),
            timezone: TimeZoneName::parse("Europe/Berlin").unwrap(),
            dst: Default::default(),
        }
    }

    fn cron(text: &str) -> Cadence {
        Cadence::Cron {
            cron: CronExpr::parse(text).unwrap(),
            timezone: TimeZoneName::default(),
            dst: Default::default(),
        }
    }

    fn every(secs: u64) -> Cadence {
        Cadence::Interval {
            every: IsoDuration::from_secs(secs),
        }
    }

    #[test]
    fn policy_table() {
        // (cadence, policy, limit, overlap, catch-up window)
        let table = [
            (
                every(30),
                MisfirePolicy::Skip,
                10,
                ScheduleOverlapPolicy::Skip,
                10,
            ),
            (
                every(30),
                MisfirePolicy::Compress,
                10,
                ScheduleOverlapPolicy::BufferOne,
                10,
            ),
            (
                every(30),
                MisfirePolicy::Catchup,
                10,
                ScheduleOverlapPolicy::BufferAll,
                300,
            ),
            (
                every(2),
                MisfirePolicy::Catchup,
                3,
                ScheduleOverlapPolicy::BufferAll,
                10,
            ),
            (
                every(86_400),
                MisfirePolicy::Catchup,
                1000,
                ScheduleOverlapPolicy::BufferAll,
                365 * 86_400,
            ),
            (
                every(3600),
                MisfirePolicy::Catchup,
                1000,
                ScheduleOverlapPolicy::BufferAll,
                3_600_000,
            ),
            (
                hourly_berlin(),
                MisfirePolicy::Skip,
                10,
                ScheduleOverlapPolicy::Skip,
                10,
            ),
            (
                hourly_berlin(),
                MisfirePolicy::Compress,
                5,
                ScheduleOverlapPolicy::BufferOne,
                10,
            ),
            (
                hourly_berlin(),
                MisfirePolicy::Catchup,
                10,
                ScheduleOverlapPolicy::BufferAll,
                36_000,
            ),
        ];
        for (cadence, policy, limit, overlap, window) in table {
            let a = activity(scheduled(cadence.clone(), policy, limit));
            let desired = desired_schedule(&a, "q").unwrap();
            let policies = desired.schedule.policies.unwrap();
            assert_eq!(
                policies.overlap_policy, overlap as i32,
                "{cadence:?} {policy}"
            );
            assert_eq!(
                policies.catchup_window.unwrap().seconds,
                window,
                "{cadence:?} {policy} {limit}"
            );
        }
    }

    #[test]
    fn cron_spec_is_structured_in_the_zone() {
        let a = activity(scheduled(hourly_berlin(), MisfirePolicy::Skip, 10));
        let spec = desired_schedule(&a, "q").unwrap().schedule.spec.unwrap();
        assert!(spec.cron_string.is_empty());
        assert_eq!(spec.timezone_name, "Europe/Berlin");
        assert!(spec.interval.is_empty());
        assert_eq!(spec.structured_calendar.len(), 1);
    }

    /// A field as `start-end/step` runs, for compact table rows.
    fn show(ranges: &[Range]) -> String {
        ranges
            .iter()
            .map(|r| match (r.end == r.start, r.step) {
                (true, _) => r.start.to_string(),
                (false, 1) => format!("{}-{}", r.start, r.end),
                (false, step) => format!("{}-{}/{step}", r.start, r.end),
            })
            .collect::<Vec<_>>()
            .join(",")
    }

    #[test]
    fn cron_calendar_table() {
        // expression -> per calendar: "second minute hour dom month dow"
        let table: [(&str, &[&str]); 9] = [
            ("0 * * * *", &["0 0 0-23 1-31 1-12 0-6"]),
            ("*/15 9-17 * * MON-FRI", &["0 0-45/15 9-17 1-31 1-12 1-5"]),
            ("0 0 13 * FRI", &["0 0 0 13 1-12 0-6", "0 0 0 1-31 1-12 5"]),
            (
                "0 0 1,15 * 1",
                &["0 0 0 1,15 1-12 0-6", "0 0 0 1-31 1-12 1"],
            ),
            ("0 0 */2 * MON", &["0 0 0 1-31/2 1-12 1"]),
            ("@weekly", &["0 0 0 1-31 1-12 0"]),
            ("0 12 * * 5-7", &["0 0 12 1-31 1-12 0,5-6"]),
            ("5,7,9,20 0 * JAN,dec *", &["0 5-9/2,20 0 1-31 1,12 0-6"]),
            // Feb 31 never comes: only the weekday calendar is sent.
            ("0 0 31 2 MON", &["0 0 0 1-31 2 1"]),
        ];
        for (text, want) in table {
            let spec = spec(&ScheduledTrigger {
                cadence: cron(text),
                misfire_policy: MisfirePolicy::Skip,
                catchup_limit: CatchupLimit::default(),
                misfire_grace: IsoDuration::from_secs(60),
                start_at: None,
                end_at: None,
                jitter: None,
            });
            let got: Vec<String> = spec
                .structured_calendar
                .iter()
                .map(|c| {
                    assert!(c.year.is_empty(), "{text}");
                    [
                        &c.second,
                        &c.minute,
                        &c.hour,
                        &c.day_of_month,
                        &c.month,
                        &c.day_of_week,
                    ]
                    .map(|f| show(f))
                    .join(" ")
                })
                .collect();
            assert_eq!(got, want, "{text}");
        }
    }

    #[test]
    fn interval_spec_and_bounds() {
        let mut trigger = scheduled(every(30), MisfirePolicy::Skip, 10);
        if let Trigger::Scheduled(s) = &mut trigger {
            s.start_at = Some(Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap());
            s.end_at = Some(Utc.with_ymd_and_hms(2027, 1, 1, 0, 0, 0).unwrap());
            s.jitter = Some(IsoDuration::from_secs(5));
        }
        let spec = desired_schedule(&activity(trigger), "q")
            .unwrap()
            .schedule
            .spec
            .unwrap();
        assert_eq!(spec.interval[0].interval.as_ref().unwrap().seconds, 30);
        assert_eq!(spec.start_time.unwrap().seconds, 1_767_225_600);
        assert_eq!(spec.end_time.unwrap().seconds, 1_798_761_600);
        assert_eq!(spec.jitter.unwrap().seconds, 5);
        assert!(spec.cron_string.is_empty());
    }

    #[test]
    fn action_starts_the_launcher_on_the_task_queue() {
        let a = activity(scheduled(every(30), MisfirePolicy::Skip, 10));
        let desired = desired_schedule(&a, "my-queue").unwrap();
        let Some(schedule_action::Action::StartWorkflow(start)) =
            desired.schedule.action.unwrap().action
        else {
            panic!("no start action");
        };
        assert_eq!(start.workflow_type.unwrap().name, LAUNCHER_WORKFLOW_TYPE);
        assert_eq!(start.task_queue.unwrap().name, "my-queue");
        assert_eq!(start.workflow_id, format!("launcher-{}", a.id));
        let input: LauncherInput =
            serde_json::from_slice(&start.input.unwrap().payloads[0].data).unwrap();
        assert_eq!(input.activity_id, a.id);
    }

    #[test]
    fn paused_when_disabled_or_paused() {
        let mut a = activity(scheduled(every(30), MisfirePolicy::Skip, 10));
        assert!(!desired_schedule(&a, "q").unwrap().paused);
        a.definition.enabled = false;
        assert!(
            desired_schedule(&a, "q")
                .unwrap()
                .schedule
                .state
                .unwrap()
                .paused
        );
        a.definition.enabled = true;
        a.paused = true;
        a.pause_note = Some("maintenance".into());
        let state = desired_schedule(&a, "q").unwrap().schedule.state.unwrap();
        assert!(state.paused);
        assert_eq!(state.notes, "maintenance");
    }

    #[test]
    fn no_schedule_for_events_or_deleted() {
        let event = Trigger::Event {
            event_types: vec![EventType::parse("x.y").unwrap()],
        };
        assert!(desired_schedule(&activity(event), "q").is_none());
        let mut a = activity(scheduled(every(30), MisfirePolicy::Skip, 10));
        a.deleted = true;
        assert!(desired_schedule(&a, "q").is_none());
    }

    #[test]
    fn hash_tracks_spec_not_pause() {
        let a = activity(scheduled(every(30), MisfirePolicy::Skip, 10));
        let base = desired_schedule(&a, "q").unwrap();
        let mut paused = a.clone();
        paused.definition.enabled = false;
        assert_eq!(
            desired_schedule(&paused, "q").unwrap().spec_hash,
            base.spec_hash
        );
        let changed = activity(scheduled(every(31), MisfirePolicy::Skip, 10));
        assert_ne!(
            desired_schedule(&changed, "q").unwrap().spec_hash,
            base.spec_hash
        );
        assert_ne!(
            desired_schedule(&a, "other").unwrap().spec_hash,
            base.spec_hash
        );
        assert_eq!(action_spec_hash(Some(&base.schedule)), Some(base.spec_hash));
    }
}
