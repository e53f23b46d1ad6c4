//! A rolling restart under a burst runs every event once; the deployment
//! examples are the fleet tested here.

use super::*;

/// The deployment examples describe the shape the fleet tests run: API and
/// worker processes and no `serve`, probes on `/readyz` and `/healthz`, and
/// only settings the binary knows.
#[test]
fn the_deployment_examples_are_the_tested_fleet() {
    let help = std::process::Command::new(acp_bin())
        .arg("--help")
        .output()
        .unwrap_or_else(|e| panic!("acp --help: {e}"));
    let help = String::from_utf8_lossy(&help.stdout).into_owned();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for file in ["deploy/kubernetes.yaml", "deploy/docker-compose.fleet.yml"] {
        let text = std::fs::read_to_string(root.join(file)).unwrap_or_else(|e| panic!("{e}"));
        let commands: Vec<&str> = ["\"api\"", "\"worker\"", "\"serve\"", "\"migrate\""]
            .into_iter()
            .filter(|c| text.contains(&format!("[{c}]")))
            .collect();
        assert_eq!(
            commands,
            ["\"api\"", "\"worker\"", "\"migrate\""],
            "{file} runs other processes"
        );
        assert!(text.contains("/readyz"), "{file} has no readiness probe");
        for word in text.split(|c: char| !(c.is_ascii_uppercase() || c == '_')) {
            let setting =
                word.starts_with("ACP_") || word.starts_with("TEMPORAL_") || word == "DATABASE_URL";
            if setting {
                assert!(
                    help.contains(&format!("env: {word}="))
                        || help.contains(&format!("env: {word}]")),
                    "{file} sets {word}, which acp does not read"
                );
            }
        }
    }
}

/// A count from the test's database, for one activity (`$1`).
async fn count(pool: &PgPool, sql: &str, activity: &str) -> i64 {
    let id: uuid::Uuid = activity.parse().unwrap_or_else(|e| panic!("{e}"));
    sqlx::query_as::<_, (i64,)>(sql)
        .bind(id)
        .fetch_one(pool)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .0
}

async fn create_in(http: &reqwest::Client, base: &str, body: Value) -> String {
    let (_, created) = send_set_up(|| http.post(format!("{base}/v1/activities")).json(&body)).await;
    created["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{created}"))
        .to_owned()
}

/// The fleet rolled under a burst: 400 events posted to two API processes
/// and a PT1S schedule firing, while a worker is killed -9, an API is
/// killed -9 (its unanswered posts re-sent to the other) and the other
/// worker is stopped with SIGTERM, each restarted. Every event has exactly
/// one run and one execution, no nominal time runs twice, nothing is stuck.
#[sqlx::test(migrations = "./migrations")]
async fn a_rolling_restart_under_a_burst_runs_every_event_once(pool: PgPool) {
    const EVENTS: usize = 400;
    let temporal = shared_temporal();
    let address = temporal.address();
    let namespace = new_namespace(&address).await;
    let start_api = || ServeProcess::start_command("api", &pool, &address, &namespace, &FLEET_ENV);
    let start_worker =
        || ServeProcess::spawn_command("worker", &pool, &address, &namespace, &FLEET_ENV);
    let mut apis = [start_api().await, start_api().await];
    let mut workers = [start_worker(), start_worker()];
    let http = reqwest::Client::new();
    let events_id = create_in(
        &http,
        &apis[0].base,
        json!({
            "name": "fleet-burst",
            "trigger": {"type": "event", "event_types": ["fleet.burst"]},
            "tasks": [{"task_type": "noop"}]
        }),
    )
    .await;
    let ticking_id = create_in(&http, &apis[1].base, interval_activity("PT1S")).await;

    // Each event goes to one API and, unanswered there, to the other, until
    // one accepts it.
    let bases = Arc::new(std::sync::Mutex::new(
        apis.iter().map(|a| a.base.clone()).collect::<Vec<_>>(),
    ));
    let burst = {
        let bases = bases.clone();
        let events = (0..EVENTS)
            .map(|n| json!({"event_id": format!("e-{n}"), "event_type": "fleet.burst", "source": "fleet", "payload": {"n": n}}))
            .collect();
        post_events_until_accepted(http.clone(), events, move |n, attempt| {
            let bases = bases.lock().unwrap_or_else(|p| p.into_inner());
            bases[(n + attempt) % bases.len()].clone()
        })
    };
    let events_in = |at_least: i64| {
        let pool = pool.clone();
        async move {
            eventually(Duration::from_secs(120), || async {
                let (n,): (i64,) = sqlx::query_as("SELECT count(*) FROM events")
                    .fetch_one(&pool)
                    .await
                    .ok()?;
                (n >= at_least).then_some(())
            })
            .await
        }
    };

    // The roll: a worker killed -9, an API killed -9, the other worker
    // stopped; each comes back.
    events_in(80).await;
    workers[0].kill9();
    workers[0] = start_worker();
    events_in(160).await;
    apis[0].kill9();
    apis[0] = start_api().await;
    bases.lock().unwrap_or_else(|p| p.into_inner())[0] = apis[0].base.clone();
    events_in(240).await;
    workers[1].sigterm();
    let exit = workers[1].wait_exit(Duration::from_secs(60)).await;
    assert!(exit.success(), "worker stopped with {exit}");
    workers[1] = start_worker();

    let answered = burst.await.unwrap_or_else(|e| panic!("{e}"));
    assert!(
        answered.iter().all(|a| *a),
        "some events were never accepted"
    );

    // Every event exactly one run, succeeded.
    eventually(Duration::from_secs(240), || async {
        let done = count(
            &pool,
            "SELECT count(*) FROM activity_runs WHERE activity_id = $1 AND status = 'succeeded'",
            &events_id,
        )
        .await;
        (done == EVENTS as i64).then_some(())
    })
    .await;
    // The schedule stops firing; whatever it started ends.
    let deleted = http
        .delete(format!("{}/v1/activities/{ticking_id}", apis[1].base))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(deleted.status(), 204);
    eventually(Duration::from_secs(120), || async {
        let open = count(
            &pool,
            "SELECT count(*) FROM activity_runs WHERE activity_id = $1 AND status IN ('queued', 'running')",
            &ticking_id,
        )
        .await;
        (open == 0).then_some(())
    })
    .await;

    let runs = count(
        &pool,
        "SELECT count(*) FROM activity_runs WHERE activity_id = $1",
        &events_id,
    )
    .await;
    let workflows = count(
        &pool,
        "SELECT count(DISTINCT workflow_id) FROM activity_runs WHERE activity_id = $1",
        &events_id,
    )
    .await;
    assert_eq!((runs, workflows), (EVENTS as i64, EVENTS as i64));
    let executions = list_executions(
        &address,
        &namespace,
        &format!("WorkflowType = 'RunActivityWorkflow' AND WorkflowId STARTS_WITH 'activity-{events_id}:'"),
    )
    .await;
    let distinct: std::collections::HashSet<&str> =
        executions.iter().map(|e| e.workflow_id.as_str()).collect();
    assert_eq!((executions.len(), distinct.len()), (EVENTS, EVENTS));
    // No dispatch left pending: a dispatcher killed between starting a
    // run's workflow and marking its dispatch leaves the mark to whoever
    // leases the row after the lease lapses, so this comes after the runs.
    eventually(Duration::from_secs(120), || async {
        let (pending,): (i64,) =
            sqlx::query_as("SELECT count(*) FROM event_dispatches WHERE state = 'pending'")
                .fetch_one(&pool)
                .await
                .ok()?;
        (pending == 0).then_some(())
    })
    .await;
    // The schedule fired through the roll, and no nominal time ran twice.
    let ticks = count(
        &pool,
        "SELECT count(*) FROM activity_runs WHERE activity_id = $1 AND status = 'succeeded'",
        &ticking_id,
    )
    .await;
    assert!(ticks > 0, "the PT1S schedule never ran");
    let doubled = count(
        &pool,
        "SELECT count(*) FROM (SELECT scheduled_for FROM activity_runs WHERE activity_id = $1 \
         AND scheduled_for IS NOT NULL GROUP BY scheduled_for HAVING count(*) > 1) d",
        &ticking_id,
    )
    .await;
    assert_eq!(doubled, 0);
}
