//! The identities of the idempotency contract (seed-idempotency-contract.txt).
//!
//! Every ID here is derived, never random, so that a retry, a replay or a
//! re-delivery of the same trigger lands on the same workflow and the same rows.

use chrono::{DateTime, Timelike, Utc};
use uuid::Uuid;

/// The project's fixed namespace for UUIDv5 derivations. Changing it would
/// re-key every run and task row: never change it.
pub const ID_NAMESPACE: Uuid = Uuid::from_u128(0x6bd4a1ec_ddf1_4e10_812d_d5d21868893a);

/// The Temporal schedule that carries a scheduled activity.
pub fn schedule_id(activity_id: Uuid) -> String {
    format!("activity-{activity_id}")
}

/// Parses `activity-{uuid}` back into the activity it belongs to.
pub fn activity_of_schedule(schedule_id: &str) -> Option<Uuid> {
    schedule_id
        .strip_prefix("activity-")
        .and_then(|rest| Uuid::try_parse(rest).ok())
}

/// Python's `datetime.isoformat()` of an aware UTC datetime:
/// `2026-03-01T09:00:00+00:00`, with `.ffffff` only when microseconds are non-zero.
pub fn isoformat_utc(at: DateTime<Utc>) -> String {
    let micros = at.nanosecond() / 1_000 % 1_000_000;
    if micros == 0 {
        at.format("%Y-%m-%dT%H:%M:%S+00:00").to_string()
    } else {
        format!("{}.{micros:06}+00:00", at.format("%Y-%m-%dT%H:%M:%S"))
    }
}

/// `activity-{activity_id}:{scheduled_for.isoformat()}`
pub fn scheduled_run_workflow_id(activity_id: Uuid, scheduled_for: DateTime<Utc>) -> String {
    format!("activity-{activity_id}:{}", isoformat_utc(scheduled_for))
}

/// `activity-{activity_id}:{event_id}`
pub fn event_run_workflow_id(activity_id: Uuid, event_id: &str) -> String {
    format!("activity-{activity_id}:{event_id}")
}

/// `task-{run_id}:{task_type}:{index}`
pub fn task_workflow_id(run_id: Uuid, task_type: &str, index: usize) -> String {
    format!("task-{run_id}:{task_type}:{index}")
}

/// The Temporal request ID of the start of a run's `attempt`: the same for
/// every repetition of that start, so Temporal takes it as one.
pub fn retry_request_id(run_id: Uuid, attempt: i32) -> Uuid {
    Uuid::new_v5(
        &ID_NAMESPACE,
        format!("retry:{run_id}:{attempt}").as_bytes(),
    )
}

/// The `run_id` of a run: UUIDv5 over its workflow ID.
pub fn run_id(workflow_id: &str) -> Uuid {
    Uuid::new_v5(&ID_NAMESPACE, workflow_id.as_bytes())
}

/// The `id` of a task instance: UUIDv5 over its workflow ID.
pub fn task_instance_id(task_workflow_id: &str) -> Uuid {
    Uuid::new_v5(&ID_NAMESPACE, task_workflow_id.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn isoformat_matches_python() {
        let at = Utc.with_ymd_and_hms(2026, 3, 1, 9, 0, 0).unwrap();
        assert_eq!(isoformat_utc(at), "2026-03-01T09:00:00+00:00");
        let with_micros = at + chrono::Duration::microseconds(1_500);
        assert_eq!(
            isoformat_utc(with_micros),
            "2026-03-01T09:00:00.001500+00:00"
        );
        // Python drops sub-microsecond precision entirely.
        let nanos_only = at + chrono::Duration::nanoseconds(999);
        assert_eq!(isoformat_utc(nanos_only), "2026-03-01T09:00:00+00:00");
    }

    #[test]
    fn contract_examples() {
        let activity = Uuid::parse_str("550e8400-e29b-41d4-a716-446655440000").unwrap();
        let at = Utc.with_ymd_and_hms(2026, 3, 1, 9, 0, 0).unwrap();
        assert_eq!(
            scheduled_run_workflow_id(activity, at),
            "activity-550e8400-e29b-41d4-a716-446655440000:2026-03-01T09:00:00+00:00"
        );
        assert_eq!(
            event_run_workflow_id(activity, "evt_abc123"),
            "activity-550e8400-e29b-41d4-a716-446655440000:evt_abc123"
        );
        let run = run_id("activity-550e8400-e29b-41d4-a716-446655440000:evt_abc123");
        assert_eq!(run.get_version_num(), 5);
        assert_eq!(
            run,
            run_id("activity-550e8400-e29b-41d4-a716-446655440000:evt_abc123")
        );
        assert_eq!(
            task_workflow_id(run, "webhook", 0),
            format!("task-{run}:webhook:0")
        );
    }

    #[test]
    fn schedule_ids_round_trip() {
        let activity = Uuid::new_v4();
        assert_eq!(activity_of_schedule(&schedule_id(activity)), Some(activity));
        assert_eq!(activity_of_schedule("activity-not-a-uuid"), None);
        assert_eq!(activity_of_schedule("other-thing"), None);
    }
}
