//! A resume whose unpause is slowed across nominal times runs each once.

use super::*;

#[sqlx::test(migrations = "./migrations")]
async fn a_time_that_falls_while_the_unpause_is_in_flight_runs_once(pool: PgPool) {
    let app = app(pool).await;
    let worker = app.worker(false, Default::default());
    let body = json!({"name": "slow-unpause", "tasks": [{"task_type": "noop"}],
        "trigger": {"type": "interval", "every": "PT5S", "misfire_policy": "skip", "misfire_grace": "PT1S"}});
    let id = app.create(&body).await["id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let (status, paused) = post(&app, &format!("/v1/activities/{id}/pause"), json!({})).await;
    assert_eq!(status, 200, "{paused}");
    // The unpause takes 7 s to reach Temporal (a nominal time falls while
    // the engine is still paused), then 6 s pass before the resume decides
    // (the unpaused engine fires a time itself).
    let faults = &app.state.services.schedules.faults;
    faults
        .delay_before_unpause_ms
        .store(7_000, Ordering::SeqCst);
    faults.delay_after_unpause_ms.store(6_000, Ordering::SeqCst);
    let asked = Utc::now();
    let (status, resumed) = post(&app, &format!("/v1/activities/{id}/resume"), json!({})).await;
    assert_eq!(status, 200, "{resumed}");
    let until = at(&resumed["missed"]["unpaused_at"]);
    assert!(until - asked >= chrono::Duration::seconds(13), "{resumed}");
    // Every nominal time after the resume was asked for (a second's margin
    // for the request to arrive) up to the unpause is due, whatever the
    // policy.
    let mut listed: Vec<DateTime<Utc>> = times(&resumed["missed"]["runs"]);
    listed.extend(times(&resumed["missed"]["in_flight"]));
    let five = chrono::Duration::seconds(5);
    let first = (asked + chrono::Duration::seconds(1))
        .duration_trunc(five)
        .unwrap_or(asked)
        + five;
    let due: Vec<DateTime<Utc>> = std::iter::successors(Some(first), |t| Some(*t + five))
        .take_while(|t| *t <= until)
        .collect();
    assert!(due.len() >= 2, "{due:?}");
    // Those that fell while the engine was still paused were asked for by
    // the resume; the engine may have fired the later ones itself.
    let while_paused = asked + chrono::Duration::seconds(6);
    assert!(due[0] <= while_paused, "{due:?}");
    for t in due.iter().filter(|t| **t <= while_paused) {
        assert!(listed.contains(t), "{t} not asked for: {resumed}");
    }
    // Each runs, once: one run row, one execution of its contract ID.
    wait_succeeded(&app, &id, &due).await;
    let runs = app.runs_of(&id).await;
    for t in &due {
        let workflow_id = acp_domain::ids::scheduled_run_workflow_id(
            id.parse().unwrap_or_else(|e| panic!("{e}")),
            *t,
        );
        let rows = runs
            .iter()
            .filter(|r| r["workflow_id"] == workflow_id.as_str())
            .count();
        assert_eq!(rows, 1, "{t}: {runs:?}");
        assert_eq!(executions(&app, &workflow_id).await.len(), 1, "{t}");
    }
    worker.stop().await;
}
