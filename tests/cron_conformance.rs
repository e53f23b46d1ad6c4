//! Our cron times against croniter's (PyPI, pinned in scripts/lib/services.sh), for
//! Quartz's day forms and a few ordinary expressions, in six zones (one in
//! the southern hemisphere with midnight changes, Santiago, and Lord Howe
//! with its 30-minute change) over five years, under every DST policy.
//!
//! croniter has a DST behaviour of its own, which matches none of our
//! policies throughout (it runs a repeated wall time twice, for instance,
//! but not the way `repeated: both` does around every kind of change). The
//! policies only differ from each other next to an offset change, and away
//! from one every policy means the same times: so both lists are compared
//! without the times within two days of an offset change, and must then be
//! equal, for every policy. Those days are the engine's and policy's
//! business, held to the dev server by calendar_conformance.rs.
//!
//! Forms croniter lacks or reads otherwise are left out here and pinned by
//! the domain's table tests: `L-n` and `LW` (croniter refuses them), and
//! `nW` for n over 28 (croniter moves it to the month's last day, Quartz
//! and we fire nothing in a month without day n).

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use acp_domain::calendar::{DstPolicy, Repeated, Skipped, times_after, transitions};
use acp_domain::trigger::{Cadence, CronExpr, TimeZoneName};
use chrono::{DateTime, Duration, TimeZone, Utc};
use serde_json::json;

const ZONES: [&str; 6] = [
    "UTC",
    "Europe/Berlin",
    "America/New_York",
    "America/Santiago",
    "Australia/Lord_Howe",
    "Asia/Kolkata",
];

const EXPRESSIONS: [&str; 16] = [
    "0 9 L * *",
    "30 2 L * *",
    "0 0 L 2 *",
    "0 9 L * MON",
    "0 9 15W * *",
    "0 9 1W * *",
    "45 23 28W * *",
    "0 9 * * 5#5",
    "0 9 * * FRI#2",
    "0 0 * * 0#1",
    "30 1 * * 7#2",
    "0 9 * * 1L",
    "30 2 * * SUNL",
    "0 12 * * fril",
    "0 9 13 * FRI",
    "*/30 9-10 1,15 * MON",
];

fn python() -> PathBuf {
    if let Ok(path) = std::env::var("ACP_CRONITER_PYTHON") {
        return PathBuf::from(path);
    }
    let local = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tools/croniter/bin/python");
    assert!(
        local.exists(),
        "no croniter: run scripts/test, or set ACP_CRONITER_PYTHON to a Python with `croniter` installed"
    );
    local
}

/// croniter's times per (zone, expression), in the order of `cases`, from
/// one Python process.
fn croniter_times(cases: &[(&str, &str)], from: &str, to: &str) -> Vec<Vec<i64>> {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/croniter_times.py");
    let request = json!({
        "from": from,
        "to": to,
        "cases": cases.iter().map(|(zone, expr)| json!({"zone": zone, "expr": expr})).collect::<Vec<_>>(),
    });
    let mut child = Command::new(python())
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("python: {e}"));
    child
        .stdin
        .take()
        .unwrap()
        .write_all(request.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "croniter_times.py: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn our_cron_times_are_croniters_away_from_offset_changes() {
    let (from, to) = ("2026-01-01T00:00:00", "2031-01-01T00:00:00");
    let cases: Vec<(&str, &str)> = ZONES
        .iter()
        .flat_map(|zone| EXPRESSIONS.iter().map(move |expr| (*zone, *expr)))
        .collect();
    let theirs = croniter_times(&cases, from, to);
    assert_eq!(theirs.len(), cases.len());
    let mut compared = 0;
    let mut failures = Vec::new();
    for ((zone, expr), theirs) in cases.iter().zip(theirs) {
        let tz: chrono_tz::Tz = zone.parse().unwrap();
        let local = |s: &str| {
            tz.from_local_datetime(&s.parse().unwrap())
                .unwrap()
                .with_timezone(&Utc)
        };
        let (start, end) = (local(from), local(to));
        let changes = transitions(tz, start - Duration::days(3), end + Duration::days(3));
        let ordinary = |t: &DateTime<Utc>| {
            changes
                .iter()
                .all(|c| (*t - c.at).abs() > Duration::days(2))
        };
        let theirs: Vec<DateTime<Utc>> = theirs
            .iter()
            .map(|s| DateTime::from_timestamp(*s, 0).unwrap())
            .filter(ordinary)
            .collect();
        for repeated in Repeated::ALL {
            for skipped in Skipped::ALL {
                let cadence = Cadence::Cron {
                    cron: CronExpr::parse(expr).unwrap_or_else(|e| panic!("{expr}: {e}")),
                    timezone: TimeZoneName::parse(zone).unwrap(),
                    dst: DstPolicy { repeated, skipped },
                };
                let ours: Vec<DateTime<Utc>> = times_after(&cadence, start)
                    .map(|t| t.at)
                    .take_while(|t| *t <= end)
                    .filter(ordinary)
                    .collect();
                compared += ours.len();
                if ours != theirs {
                    let i = ours.iter().zip(&theirs).take_while(|(a, b)| a == b).count();
                    failures.push(format!(
                        "{zone} `{expr}` {repeated:?}/{skipped:?}: first difference at #{i}: \
                         ours {:?} vs croniter {:?}",
                        ours.get(i),
                        theirs.get(i)
                    ));
                }
            }
        }
    }
    eprintln!(
        "cron conformance: {} cases, {compared} times compared",
        cases.len()
    );
    assert!(compared > 10_000, "too little compared: {compared}");
    assert!(
        failures.is_empty(),
        "{} differences with croniter; first:\n{}",
        failures.len(),
        failures
            .iter()
            .take(10)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
