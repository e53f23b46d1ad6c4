//! A trigger as Temporal's `ScheduleSpec`: structured calendars in the
//! cron's zone, or an interval, with its bounds and jitter.

use std::time::Duration;

use chrono::{DateTime, Utc};
use temporalio_common::protos::temporal::api::schedule::v1::{
    IntervalSpec, Range, ScheduleSpec, StructuredCalendarSpec,
};

use acp_domain::calendar::{EngineCalendar, FieldSet, YearSet, engine_calendars};
use acp_domain::trigger::{Cadence, ScheduledTrigger};

pub(super) fn proto_duration(d: Duration) -> prost_wkt_types::Duration {
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
        year: years(cal.years),
        day_of_week: ranges(cal.days_of_week),
        comment: String::new(),
    }
}

/// Empty means every year to the engine.
fn years(set: YearSet) -> Vec<Range> {
    if set.is_all() {
        return Vec::new();
    }
    runs(&set.values().collect::<Vec<_>>())
}

fn ranges(set: FieldSet) -> Vec<Range> {
    runs(&set.values().map(i32::from).collect::<Vec<_>>())
}

/// Ascending values as ranges with steps, greedily over neighbours:
/// `0,15,30,45` is one range, step 15. A run is kept when it is contiguous
/// or has three values or more, so `0,5,6` reads `0,5-6` rather than
/// `0-5/5,6`.
fn runs(values: &[i32]) -> Vec<Range> {
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
