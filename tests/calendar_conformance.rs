//! The one clock against the real engine (PRODUCT.md section 5a).
//!
//! For every zone below and every offset change of 2026-2030 (found here
//! from chrono-tz by hourly sampling, independently of the code under test),
//! and for a table of cron features over long ranges, a paused schedule is
//! created with exactly the spec `translate::spec` builds, and the dev
//! server's `ListScheduleMatchingTimes` (paged past its 1000 cap) must equal
//! our model of the engine (intervals too, and Quartz's day forms, whose
//! calendars carry years). Then, for every DST policy, the engine's times
//! less `excluded` plus `extra` must equal the policy's times.

use crate::common;

use std::sync::Arc;
use std::time::Instant;

use acp_domain::calendar::{
    DstPolicy, Repeated, Skipped, dst_exceptions, engine_times, times_after,
};
use acp_domain::duration::IsoDuration;
use acp_domain::trigger::{
    Cadence, CatchupLimit, CronExpr, MisfirePolicy, ScheduledTrigger, TimeZoneName,
};
use acp_temporal::TemporalGateway;
use acp_temporal::translate;
use chrono::{DateTime, Duration, Offset, TimeZone, Utc};
use futures::StreamExt;
use temporalio_client::grpc::WorkflowService;
use temporalio_common::protos::temporal::api::common::v1::WorkflowType;
use temporalio_common::protos::temporal::api::schedule::v1::{
    Schedule, ScheduleAction, ScheduleState, schedule_action,
};
use temporalio_common::protos::temporal::api::taskqueue::v1::TaskQueue;
use temporalio_common::protos::temporal::api::workflow::v1::NewWorkflowExecutionInfo;
use temporalio_common::protos::temporal::api::workflowservice::v1::CreateScheduleRequest;
use tonic::IntoRequest;

const ZONES: [&str; 11] = [
    "Europe/Berlin",
    "America/New_York",
    "Australia/Lord_Howe",
    "Asia/Kolkata",
    "America/Santiago",
    "UTC",
    "Europe/London",
    "Australia/Sydney",
    "America/Sao_Paulo",
    "Pacific/Chatham",
    "America/Havana",
];

/// Expressions that meet the clock changes: daily times in and beside the
/// changing hour, hourly and quarter-hourly walks, midnight (Santiago and
/// Havana change at midnight), Chatham's 02:45, weekdays next to a midnight
/// gap.
const DST_EXPRESSIONS: [&str; 14] = [
    "0 * * * *",
    "*/15 * * * *",
    "30 2 * * *",
    "0 2 * * *",
    "30 1 * * *",
    "15 2 * * *",
    "45 1 * * *",
    "45 2 * * *",
    "0 0 * * *",
    "30 0 * * *",
    "59 23 * * *",
    "0 0 * * SUN",
    "0,30 0-3 * * 0,6",
    "0 0 1 * SAT",
];

/// Cron features over long ranges: (expression, days of range from 2026-01-01).
const FEATURES: [(&str, i64); 27] = [
    ("0 0 13 * FRI", 1826),
    ("0 0 1,15 * MON", 1826),
    ("0 0 */2 * MON", 1826),
    ("*/5 9-17 * * MON-FRI", 60),
    ("5,35 */3 1-7,20-25 JAN,JUN-AUG,dec *", 730),
    ("1-59/7 * * * *", 10),
    ("0 12 * * 5-7", 1826),
    ("0 6 * * 7", 1826),
    ("0 0 * * 1-5/2", 1826),
    ("0 0 29 2 *", 1826),
    ("0 0 31 2 MON", 1826),
    ("@yearly", 1826),
    ("@annually", 1826),
    ("@monthly", 1826),
    ("@weekly", 1826),
    ("@daily", 1826),
    ("@midnight", 1826),
    ("@hourly", 400),
    // Quartz's day forms, several calendars each (years for February),
    // over three years and a leap day; Europe changes on a last Sunday.
    ("0 9 L * *", 1190),
    ("30 2 L-1 * *", 1190),
    ("0 9 15W * *", 1190),
    ("0 0 1W * *", 1190),
    ("0 9 LW * *", 1190),
    ("0 9 * * 5#5", 1190),
    ("0 0 * * 0#1", 1190),
    ("30 2 * * 0L", 1190),
    ("0 9 L * MON", 1190),
];

const FEATURE_ZONES: [&str; 4] = [
    "UTC",
    "Europe/Berlin",
    "America/New_York",
    "Australia/Lord_Howe",
];

const PAGE: usize = 1000;

fn policies() -> Vec<DstPolicy> {
    let mut out = Vec::new();
    for repeated in [Repeated::First, Repeated::Last, Repeated::Both] {
        for skipped in [Skipped::Shift, Skipped::Skip] {
            out.push(DstPolicy { repeated, skipped });
        }
    }
    out
}

fn utc(s: &str) -> DateTime<Utc> {
    s.parse().unwrap()
}

/// Offset changes of a zone in 2026-2030, to the hour, from chrono-tz.
fn changes(zone: chrono_tz::Tz) -> Vec<DateTime<Utc>> {
    let offset = |t: DateTime<Utc>| zone.offset_from_utc_datetime(&t.naive_utc()).fix();
    let mut out = Vec::new();
    let mut t = utc("2026-01-01T00:00:00Z");
    while t < utc("2031-01-01T00:00:00Z") {
        let next = t + Duration::hours(1);
        if offset(t) != offset(next) {
            out.push(t);
        }
        t = next;
    }
    out
}

struct Case {
    zone: &'static str,
    expr: &'static str,
    /// `(from, to]` ranges to compare.
    windows: Vec<(DateTime<Utc>, DateTime<Utc>)>,
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    for zone in ZONES {
        let tz: chrono_tz::Tz = zone.parse().unwrap();
        let mut windows: Vec<_> = changes(tz)
            .into_iter()
            .map(|t| (t - Duration::hours(36), t + Duration::hours(36)))
            .collect();
        if windows.is_empty() {
            // No clock changes: a few ordinary stretches still must agree.
            windows = [
                "2026-03-01T00:00:00Z",
                "2028-02-28T00:00:00Z",
                "2030-10-30T00:00:00Z",
            ]
            .map(|s| (utc(s), utc(s) + Duration::days(3)))
            .to_vec();
        }
        for expr in DST_EXPRESSIONS {
            out.push(Case {
                zone,
                expr,
                windows: windows.clone(),
            });
        }
    }
    for every in INTERVALS {
        let from = utc("2027-03-27T00:00:00Z");
        out.push(Case {
            zone: INTERVAL,
            expr: every,
            windows: vec![(from, from + Duration::days(2))],
        });
    }
    for zone in FEATURE_ZONES {
        for (expr, days) in FEATURES {
            let from = utc("2026-01-01T00:00:00Z");
            out.push(Case {
                zone,
                expr,
                windows: vec![(from, from + Duration::days(days))],
            });
        }
    }
    out
}

/// The zone label of interval cases, whose `expr` is an ISO 8601 duration.
const INTERVAL: &str = "(interval)";

/// Intervals, epoch-aligned in whole seconds, over two days each.
const INTERVALS: [&str; 6] = ["PT30S", "PT90S", "PT7M", "PT1H", "PT7H13S", "P1D"];

fn cadence(zone: &str, expr: &str, dst: DstPolicy) -> Cadence {
    if zone == INTERVAL {
        let every = IsoDuration::parse(expr).unwrap_or_else(|e| panic!("{expr}: {e}"));
        return Cadence::Interval { every };
    }
    Cadence::Cron {
        cron: CronExpr::parse(expr).unwrap_or_else(|e| panic!("{expr}: {e}")),
        timezone: TimeZoneName::parse(zone).unwrap(),
        dst,
    }
}

fn trigger(cadence: Cadence) -> ScheduledTrigger {
    ScheduledTrigger {
        cadence,
        misfire_policy: MisfirePolicy::Skip,
        catchup_limit: CatchupLimit::default(),
        misfire_grace: IsoDuration::from_secs(60),
        start_at: None,
        end_at: None,
        jitter: None,
        calendar: None,
    }
}

/// A paused schedule with the spec the service would send.
async fn create(gateway: &TemporalGateway, id: &str, trigger: &ScheduledTrigger) {
    let schedule = Schedule {
        spec: Some(translate::spec(trigger)),
        action: Some(ScheduleAction {
            action: Some(schedule_action::Action::StartWorkflow(
                NewWorkflowExecutionInfo {
                    workflow_id: format!("never-{id}"),
                    workflow_type: Some(WorkflowType {
                        name: "Never".into(),
                    }),
                    task_queue: Some(TaskQueue {
                        name: "nobody".into(),
                        ..Default::default()
                    }),
                    ..Default::default()
                },
            )),
        }),
        state: Some(ScheduleState {
            paused: true,
            ..Default::default()
        }),
        ..Default::default()
    };
    let mut client = gateway.client().await.unwrap();
    let request = CreateScheduleRequest {
        namespace: gateway.settings().namespace.clone(),
        schedule_id: id.to_owned(),
        schedule: Some(schedule),
        identity: "conformance".into(),
        request_id: uuid::Uuid::new_v4().to_string(),
        ..Default::default()
    };
    WorkflowService::create_schedule(&mut client, request.into_request())
        .await
        .unwrap_or_else(|e| panic!("create {id}: {e}"));
}

/// The engine's own times in `(from, to]`, a page of at most 1000 at a time.
async fn server_times(
    gateway: &TemporalGateway,
    id: &str,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> (Vec<DateTime<Utc>>, usize) {
    let mut out: Vec<DateTime<Utc>> = Vec::new();
    let mut start = from;
    let mut pages = 0;
    loop {
        // The schedule's workflow answers once it runs: retry briefly.
        let mut attempt = 0;
        let page = loop {
            match gateway.matching_times(id, start, to).await {
                Ok(page) => break page,
                Err(e) if attempt < 50 => {
                    attempt += 1;
                    let _ = e;
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                }
                Err(e) => panic!("matching times of {id}: {e}"),
            }
        };
        pages += 1;
        let full = page.len() >= PAGE;
        out.extend(page);
        match out.last() {
            Some(last) if full => start = *last,
            _ => return (out, pages),
        }
    }
}

/// The first difference of two sorted lists, for a readable failure.
fn first_difference(ours: &[DateTime<Utc>], theirs: &[DateTime<Utc>]) -> Option<String> {
    let i = ours.iter().zip(theirs).take_while(|(a, b)| a == b).count();
    if i == ours.len() && i == theirs.len() {
        return None;
    }
    let show = |v: Option<&DateTime<Utc>>| v.map_or("nothing".to_owned(), |t| t.to_rfc3339());
    Some(format!(
        "first difference at #{i}: ours {} vs theirs {} (ours {} times, theirs {})",
        show(ours.get(i)),
        show(theirs.get(i)),
        ours.len(),
        theirs.len()
    ))
}

#[derive(Default)]
struct Tally {
    compared: usize,
    pages: usize,
    policy_checks: usize,
    failures: Vec<String>,
}

/// Compares one case: the dev server's answers are fetched first, then the
/// CPU work runs off the async threads so that it cannot starve the RPCs.
async fn check(gateway: Arc<TemporalGateway>, n: usize, case: Case) -> Tally {
    let id = format!("conf-{n}");
    let base = cadence(case.zone, case.expr, DstPolicy::default());
    create(&gateway, &id, &trigger(base)).await;
    let mut answers = Vec::new();
    let mut pages = 0;
    for (from, to) in case.windows {
        let (theirs, p) = server_times(&gateway, &id, from, to).await;
        pages += p;
        answers.push((from, to, theirs));
    }
    let mut tally = tokio::task::spawn_blocking(move || compare(case.zone, case.expr, answers))
        .await
        .unwrap();
    tally.pages = pages;
    tally
}

type Answers = Vec<(DateTime<Utc>, DateTime<Utc>, Vec<DateTime<Utc>>)>;

fn compare(zone: &str, expr: &str, answers: Answers) -> Tally {
    let mut tally = Tally::default();
    let base = cadence(zone, expr, DstPolicy::default());
    for (from, to, theirs) in answers {
        let ours: Vec<DateTime<Utc>> = engine_times(&base, from).take_while(|t| *t <= to).collect();
        tally.compared += theirs.len();
        if let Some(diff) = first_difference(&ours, &theirs) {
            tally.failures.push(format!(
                "engine model, {zone} `{expr}` in ({from}, {to}]: {diff}"
            ));
            continue;
        }
        for dst in policies() {
            let c = cadence(zone, expr, dst);
            let want: Vec<DateTime<Utc>> = times_after(&c, from)
                .map(|t| t.at)
                .take_while(|t| *t <= to)
                .collect();
            let x = dst_exceptions(&c, from, to);
            let mut got: Vec<DateTime<Utc>> = theirs
                .iter()
                .copied()
                .filter(|t| !x.excluded.contains(t))
                .chain(x.extra.iter().map(|t| t.at))
                .collect();
            got.sort();
            tally.policy_checks += 1;
            if let Some(diff) = first_difference(&want, &got) {
                tally.failures.push(format!(
                    "policy {dst:?}, {zone} `{expr}` in ({from}, {to}]: \
                     (engine − excluded) ∪ extra vs policy: {diff}"
                ));
            }
        }
    }
    tally
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_clock_is_the_engines_clock() {
    let started = Instant::now();
    let server = common::shared_temporal();
    let namespace = common::new_namespace(&server.address()).await;
    let mut settings = common::temporal_settings(&server.address(), &namespace);
    // Hundreds of schedules on a 2-core machine: give the server time.
    settings.rpc_timeout = std::time::Duration::from_secs(20);
    let gateway = Arc::new(TemporalGateway::new(settings));
    let cases = cases();
    let schedules = cases.len();
    let total = futures::stream::iter(cases.into_iter().enumerate())
        .map(|(n, case)| {
            let gateway = gateway.clone();
            tokio::spawn(check(gateway, n, case))
        })
        .buffer_unordered(8)
        .fold(Tally::default(), |mut total, tally| async move {
            let tally = tally.unwrap();
            total.compared += tally.compared;
            total.pages += tally.pages;
            total.policy_checks += tally.policy_checks;
            total.failures.extend(tally.failures);
            total
        })
        .await;
    eprintln!(
        "calendar conformance: {schedules} schedules, {} engine times compared over {} pages, \
         {} policy checks, {:?}",
        total.compared,
        total.pages,
        total.policy_checks,
        started.elapsed()
    );
    assert!(
        total.failures.is_empty(),
        "{} failures; first:\n{}",
        total.failures.len(),
        total
            .failures
            .iter()
            .take(10)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn a_range_past_the_cap_pages() {
    // Guards the paging itself: a dense feature range must need several pages.
    let c = cadence("UTC", "@hourly", DstPolicy::default());
    let n = times_after(&c, utc("2026-01-01T00:00:00Z"))
        .take_while(|t| t.at <= utc("2026-01-01T00:00:00Z") + Duration::days(400))
        .count();
    assert!(n > 9 * PAGE);
}
