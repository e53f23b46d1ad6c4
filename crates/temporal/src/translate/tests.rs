use super::*;
use acp_domain::activity::{ActivityDefinition, SyncState, SyncStatus, TaskSpec, TaskType};
use acp_domain::duration::IsoDuration;
use acp_domain::trigger::{
    Cadence, CatchupLimit, CronExpr, EventType, MisfirePolicy, TimeZoneName, Trigger,
};
use chrono::TimeZone;
use temporalio_common::protos::temporal::api::enums::v1::ScheduleOverlapPolicy;
use temporalio_common::protos::temporal::api::schedule::v1::Range;

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
        calendar: None,
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
    let table: [(&str, &[&str]); 12] = [
        ("0 * * * *", &["0 0 0-23 1-31 1-12 0-6"]),
        // Quartz's forms as the days they can be, with the weekday.
        ("0 9 * * 5#2", &["0 0 9 8-14 1-12 5"]),
        (
            "0 9 15W * *",
            &["0 0 9 15 1-12 1-5", "0 0 9 14 1-12 5", "0 0 9 16 1-12 1"],
        ),
        (
            "0 9 L 4-12 *",
            &["0 0 9 31 5,7-8,10,12 0-6", "0 0 9 30 4,6,9,11 0-6"],
        ),
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
            calendar: None,
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
fn februarys_last_day_by_leap_year() {
    let spec = spec(&ScheduledTrigger {
        cadence: cron("0 9 L * *"),
        misfire_policy: MisfirePolicy::Skip,
        catchup_limit: CatchupLimit::default(),
        misfire_grace: IsoDuration::from_secs(60),
        start_at: None,
        end_at: None,
        jitter: None,
        calendar: None,
    });
    let calendars = &spec.structured_calendar;
    assert_eq!(calendars.len(), 4);
    let years = |i: usize| -> Vec<i32> {
        calendars[i]
            .year
            .iter()
            .flat_map(|r| (r.start..=r.end.max(r.start)).step_by(r.step.max(1) as usize))
            .collect()
    };
    assert!(years(0).is_empty() && years(1).is_empty(), "every year");
    assert_eq!(show(&calendars[2].day_of_month), "29");
    assert_eq!(show(&calendars[2].year), "2000-2096/4");
    assert_eq!(show(&calendars[3].day_of_month), "28");
    let leap = |y: i32| y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let others: Vec<i32> = (2000..=2100).filter(|y| !leap(*y)).collect();
    assert_eq!(years(3), others);
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
