//! Backfills over DST days in Berlin and New York run exactly the
//! policy's times, and a long one is cut and says where to continue.

use super::*;

#[sqlx::test(migrations = "./migrations")]
async fn berlin_backfills_run_exactly_the_policys_times(pool: PgPool) {
    let app = app(pool).await;
    let worker = app.worker(false, Default::default());
    let cases = [
        // 02:30 does not exist on 2026-03-29: shifted to 03:00 CEST (01:00Z),
        // which the engine does not fire, or not run at all.
        Case {
            cron: "30 2 * * *",
            zone: "Europe/Berlin",
            repeated: "first",
            skipped: "shift",
            range: BERLIN_SPRING,
            runs: &["2026-03-29T01:00:00Z"],
            declined: &[],
        },
        Case {
            cron: "30 2 * * *",
            zone: "Europe/Berlin",
            repeated: "first",
            skipped: "skip",
            range: BERLIN_SPRING,
            runs: &[],
            declined: &[("2026-03-29T01:00:00Z", "dst_gap")],
        },
        // 02:30 happens twice on 2026-10-25: 00:30Z (CEST) and 01:30Z (CET);
        // the engine by itself fires only the second.
        Case {
            cron: "30 2 * * *",
            zone: "Europe/Berlin",
            repeated: "first",
            skipped: "shift",
            range: BERLIN_AUTUMN,
            runs: &["2026-10-25T00:30:00Z"],
            declined: &[("2026-10-25T01:30:00Z", "dst_repeat")],
        },
        Case {
            cron: "30 2 * * *",
            zone: "Europe/Berlin",
            repeated: "last",
            skipped: "shift",
            range: BERLIN_AUTUMN,
            runs: &["2026-10-25T01:30:00Z"],
            declined: &[("2026-10-25T00:30:00Z", "dst_repeat")],
        },
        Case {
            cron: "30 2 * * *",
            zone: "Europe/Berlin",
            repeated: "both",
            skipped: "shift",
            range: BERLIN_AUTUMN,
            runs: &["2026-10-25T00:30:00Z", "2026-10-25T01:30:00Z"],
            declined: &[],
        },
        // 01:30 happens once; but the engine, whose walk re-tries the hour
        // before a repeat one hour later, fires it again at 00:30Z (02:30
        // CEST, a repeated wall time). Once a day, whatever the policy.
        Case {
            cron: "30 1 * * *",
            zone: "Europe/Berlin",
            repeated: "both",
            skipped: "skip",
            range: BERLIN_AUTUMN,
            runs: &["2026-10-24T23:30:00Z"],
            declined: &[("2026-10-25T00:30:00Z", "dst_repeat")],
        },
    ];
    for case in &cases {
        check(&app, case).await;
    }
    worker.stop().await;
}

#[sqlx::test(migrations = "./migrations")]
async fn new_york_backfills_run_exactly_the_policys_times(pool: PgPool) {
    let app = app(pool).await;
    let worker = app.worker(false, Default::default());
    let cases = [
        // 02:30 does not exist on 2026-03-08: 03:00 EDT is 07:00Z.
        Case {
            cron: "30 2 * * *",
            zone: "America/New_York",
            repeated: "first",
            skipped: "shift",
            range: NEW_YORK_SPRING,
            runs: &["2026-03-08T07:00:00Z"],
            declined: &[],
        },
        Case {
            cron: "30 2 * * *",
            zone: "America/New_York",
            repeated: "first",
            skipped: "skip",
            range: NEW_YORK_SPRING,
            runs: &[],
            declined: &[("2026-03-08T07:00:00Z", "dst_gap")],
        },
        // 01:30 happens twice on 2026-11-01: 05:30Z (EDT) and 06:30Z (EST);
        // the engine by itself fires both.
        Case {
            cron: "30 1 * * *",
            zone: "America/New_York",
            repeated: "first",
            skipped: "shift",
            range: NEW_YORK_AUTUMN,
            runs: &["2026-11-01T05:30:00Z"],
            declined: &[("2026-11-01T06:30:00Z", "dst_repeat")],
        },
        Case {
            cron: "30 1 * * *",
            zone: "America/New_York",
            repeated: "last",
            skipped: "shift",
            range: NEW_YORK_AUTUMN,
            runs: &["2026-11-01T06:30:00Z"],
            declined: &[("2026-11-01T05:30:00Z", "dst_repeat")],
        },
        Case {
            cron: "30 1 * * *",
            zone: "America/New_York",
            repeated: "both",
            skipped: "shift",
            range: NEW_YORK_AUTUMN,
            runs: &["2026-11-01T05:30:00Z", "2026-11-01T06:30:00Z"],
            declined: &[],
        },
    ];
    for case in &cases {
        check(&app, case).await;
    }
    worker.stop().await;
}

/// A range holding more than 1000 nominal times is cut, and the answer says
/// where to continue; continuing from there covers the rest.
#[sqlx::test(migrations = "./migrations")]
async fn a_long_backfill_is_cut_and_says_where_to_continue(pool: PgPool) {
    let app = app(pool).await;
    let created = app
        .create(&json!({
            "name": "every-minute",
            "enabled": false,
            "trigger": {"type": "cron", "cron": "* * * * *", "timezone": "Europe/Berlin"},
            "tasks": [{"task_type": "noop"}]
        }))
        .await;
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    // 2026-10-25 in Berlin has 25 hours: 1500 minutes from 22:00Z the day
    // before to 23:00Z; the repeated hour's first copy runs (default
    // `first`), its second copy is declined.
    let range = ("2026-10-24T22:00:00Z", "2026-10-25T23:00:00Z");
    let (status, first) = backfill(&app, &id, range, true).await;
    assert_eq!(status, 200, "{first}");
    let first_times = answer(&first);
    let would_run = |a: &[(DateTime<Utc>, String, Option<String>)]| {
        a.iter()
            .filter(|(_, action, _)| action == "backfilled")
            .count()
    };
    assert_eq!(would_run(&first_times), 1000, "{first}");
    let next = first["next_start"].as_str().unwrap_or_default().to_owned();
    assert!(!next.is_empty(), "{first}");
    assert!(
        first_times.iter().all(|(t, _, _)| *t < utc(&next)),
        "{first}"
    );
    let (status, rest) = backfill(&app, &id, (&next, range.1), true).await;
    assert_eq!(status, 200, "{rest}");
    assert_eq!(rest["next_start"], Value::Null, "{rest}");
    let rest_times = answer(&rest);
    // 1500 minutes of the day, of which the 60 of the repeated hour's
    // second copy are declined: 1440 run, 60 dst_repeat.
    assert_eq!(would_run(&first_times) + would_run(&rest_times), 1440);
    let declined: Vec<&(DateTime<Utc>, String, Option<String>)> = first_times
        .iter()
        .chain(&rest_times)
        .filter(|(_, action, _)| action == "skipped")
        .collect();
    assert_eq!(declined.len(), 60);
    assert!(
        declined
            .iter()
            .all(|(t, _, r)| r.as_deref() == Some("dst_repeat")
                && *t >= utc("2026-10-25T01:00:00Z")
                && *t < utc("2026-10-25T02:00:00Z"))
    );
    // Nothing ran (the activity is disabled: its schedule fires nothing).
    assert!(app.runs_of(&id).await.is_empty());
}
