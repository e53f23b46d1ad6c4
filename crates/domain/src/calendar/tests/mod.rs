//! Table tests of the clock changes and the properties of the two clocks:
//! helpers here, the engine model in `engine`, the policy's times in
//! `policy`.

use chrono::{DateTime, Duration, Utc};

use super::*;
use crate::duration::IsoDuration;
use crate::trigger::{Cadence, CronExpr, TimeZoneName};

fn utc(s: &str) -> DateTime<Utc> {
    s.parse().unwrap()
}

fn cron(text: &str, zone: &str, dst: DstPolicy) -> Cadence {
    Cadence::Cron {
        cron: CronExpr::parse(text).unwrap(),
        timezone: TimeZoneName::parse(zone).unwrap(),
        dst,
    }
}

fn policy(repeated: Repeated, skipped: Skipped) -> DstPolicy {
    DstPolicy { repeated, skipped }
}

/// Policy times in `(from, to]` as RFC 3339 strings.
fn policy_in(cadence: &Cadence, from: &str, to: &str) -> Vec<String> {
    times_after(cadence, utc(from))
        .take_while(|t| t.at <= utc(to))
        .map(|t| t.at.to_rfc3339())
        .collect()
}

fn engine_in(cadence: &Cadence, from: &str, to: &str) -> Vec<String> {
    engine_times(cadence, utc(from))
        .take_while(|t| *t <= utc(to))
        .map(|t| t.to_rfc3339())
        .collect()
}

const DEFAULT: DstPolicy = DstPolicy {
    repeated: Repeated::First,
    skipped: Skipped::Shift,
};

mod cron;
mod days;
mod engine;
mod policy;
