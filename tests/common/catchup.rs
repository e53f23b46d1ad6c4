//! What a catch-up after an outage must leave behind.

use serde_json::Value;

/// An RFC 3339 timestamp of a JSON response.
pub fn at(v: &Value) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::parse_from_rfc3339(v.as_str().unwrap_or_default())
        .map(|t| t.with_timezone(&chrono::Utc))
        .unwrap_or_else(|e| panic!("{e}: {v}"))
}

/// What a catch-up after an outage must leave, for runs keyed by nominal
/// time from `from` on, at a cadence of `every`: the backlog's older times
/// are skipped (`catchup_limit`) as one unbroken stretch, and exactly the
/// `limit` nominal times right after it ran, each with its own window.
/// Anything skipped after those is a later backlog of its own (a loaded
/// machine can drain the caught-up runs slower than the cadence, and a fire
/// that waited `limit` intervals behind them is behind again), so it too is
/// `catchup_limit`. Returns the outage's skipped times and the caught-up ones.
pub fn assert_caught_up(
    runs: &std::collections::BTreeMap<chrono::DateTime<chrono::Utc>, Value>,
    from: chrono::DateTime<chrono::Utc>,
    limit: usize,
    every: chrono::Duration,
) -> (
    Vec<chrono::DateTime<chrono::Utc>>,
    Vec<chrono::DateTime<chrono::Utc>>,
) {
    let after: Vec<(&chrono::DateTime<chrono::Utc>, &Value)> = runs.range(from..).collect();
    let summary: Vec<String> = runs
        .iter()
        .map(|(t, r)| {
            format!(
                "{} {} {} (recorded {})",
                t.format("%H:%M:%S"),
                r["status"].as_str().unwrap_or("-"),
                r["skip_reason"].as_str().unwrap_or(""),
                r["created_at"].as_str().unwrap_or("-"),
            )
        })
        .collect();
    let after_summary = format!("from {from}: {summary:#?}");
    let skipped: Vec<usize> = after
        .iter()
        .enumerate()
        .filter(|(_, (_, r))| r["status"] == "skipped")
        .map(|(i, _)| i)
        .collect();
    for (t, r) in &after {
        let activity: uuid::Uuid = r["activity_id"]
            .as_str()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("no activity_id: {r}"));
        assert_eq!(
            r["workflow_id"],
            acp_domain::ids::scheduled_run_workflow_id(activity, **t),
            "{t}: {r}"
        );
    }
    let Some(&first) = skipped.first() else {
        panic!("the outage left nothing to skip: {after_summary}");
    };
    let last = first
        + after[first..]
            .iter()
            .take_while(|(_, r)| r["status"] == "skipped")
            .count()
        - 1;
    for (t, r) in after.iter().filter(|(_, r)| r["status"] == "skipped") {
        assert_eq!(r["skip_reason"], "catchup_limit", "{t}: {r}");
    }
    let caught_up = &after[last + 1..];
    assert!(
        caught_up.len() >= limit,
        "fewer than {limit} times after the skipped ones: {after_summary}"
    );
    let mut expected = *after[last].0;
    for (t, r) in &caught_up[..limit] {
        expected += every;
        assert_eq!(
            **t, expected,
            "the caught-up times are not the next ones: {after_summary}"
        );
        assert_eq!(r["status"], "succeeded", "{t}: {r}\n{after_summary}");
        assert_eq!(at(&r["window_start"]), **t - every, "{t}: {r}");
    }
    (
        after[first..=last].iter().map(|(t, _)| **t).collect(),
        caught_up[..limit].iter().map(|(t, _)| **t).collect(),
    )
}

/// Whether a backlog of buffered fires has been worked through: some run
/// succeeded for a nominal time after the moment the last skipped fire was
/// decided. Buffered fires run one at a time, oldest first, so every fire
/// decided before it, and every time a catch-up chose, has run by then.
pub fn backlog_drained(
    runs: &std::collections::BTreeMap<chrono::DateTime<chrono::Utc>, Value>,
) -> bool {
    let last_decided = runs
        .values()
        .filter(|r| r["status"] == "skipped")
        .map(|r| at(&r["created_at"]))
        .max();
    match last_decided {
        None => true,
        Some(decided) => runs
            .iter()
            .any(|(t, r)| *t > decided && r["status"] == "succeeded"),
    }
}
