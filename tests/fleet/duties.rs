//! Background duties across a fleet: reconcile held by one process,
//! handed over when it goes, and a DST extra time started once when its
//! holder dies before it is due.

use super::*;

#[sqlx::test(migrations = "./migrations")]
async fn a_fleet_without_serve_syncs_repairs_drift_and_hands_the_duty_over(pool: PgPool) {
    let mut server = TemporalServer::start();
    let address = server.address();
    let mut apis = vec![
        ServeProcess::start_command("api", &pool, &address, "default", &FLEET_ENV).await,
        ServeProcess::start_command("api", &pool, &address, "default", &FLEET_ENV).await,
    ];
    // Workers serve their probes on ACP_PROBE_LISTEN.
    let probes: Vec<String> = (0..2)
        .map(|_| format!("127.0.0.1:{}", free_port()))
        .collect();
    let _workers: Vec<ServeProcess> = probes
        .iter()
        .map(|probe| {
            let mut env = FLEET_ENV.to_vec();
            env.push(("ACP_PROBE_LISTEN", probe));
            ServeProcess::spawn_command("worker", &pool, &address, "default", &env)
        })
        .collect();
    let http = reqwest::Client::new();
    for probe in &probes {
        let base = format!("http://{probe}");
        eventually(Duration::from_secs(60), || async {
            role(&http, &base, "temporal_worker")
                .await
                .filter(|r| r == "shared")
        })
        .await;
        // Single duties live with the API processes.
        assert_eq!(role(&http, &base, "reconcile").await, None);
    }
    // Exactly one API process reconciles, and one evaluates alerts.
    sole_leader(&http, &[&apis[0], &apis[1]], "reconcile").await;
    sole_leader(&http, &[&apis[0], &apis[1]], "alert_evaluation").await;
    for api in &apis {
        assert_eq!(
            role(&http, &api.base, "event_dispatch").await.as_deref(),
            Some("shared")
        );
        let metrics = http
            .get(format!("{}/metrics", api.base))
            .send()
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .text()
            .await
            .unwrap_or_default();
        assert!(
            metrics.contains("acp_duty_leader{duty=\"reconcile\"}"),
            "{metrics}"
        );
    }

    // Created while Temporal is down: accepted, pending, and synced by the
    // fleet once Temporal is back.
    server.stop();
    let created = http
        .post(format!("{}/v1/activities", apis[1].base))
        .json(&interval_activity("PT45S"))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(created.status(), 201);
    let created: Value = created.json().await.unwrap_or_default();
    assert_eq!(created["schedule"]["sync_state"], "pending", "{created}");
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    let schedule_id = format!("activity-{id}");
    server.restart();
    eventually(Duration::from_secs(60), || async {
        (sync_state(&http, &apis[0].base, &id).await.as_deref() == Some("synced")).then_some(())
    })
    .await;
    assert_eq!(
        paused_in_temporal(&address, &schedule_id).await,
        Some(false)
    );

    // Drift is repaired by the current holder...
    drift_is_repaired(&address, &schedule_id).await;

    // ...and, once it is killed -9, by the process that takes the duty over.
    let leader = sole_leader(&http, &[&apis[0], &apis[1]], "reconcile").await;
    apis[leader].kill9();
    let survivor = apis.remove(1 - leader);
    eventually(Duration::from_secs(30), || async {
        (role(&http, &survivor.base, "reconcile").await.as_deref() == Some("leader")).then_some(())
    })
    .await;
    drift_is_repaired(&address, &schedule_id).await;
    assert_eq!(
        role(&http, &survivor.base, "alert_evaluation")
            .await
            .as_deref(),
        Some("leader")
    );
}

fn utc(s: &str) -> DateTime<Utc> {
    s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
}

/// A reconcile loop of its own (as one process of a fleet would run it),
/// reading the shared driven clock.
fn reconcile_loop(
    app: &TestApp,
    clock: &Arc<AtomicI64>,
) -> (
    tokio::task::JoinHandle<()>,
    tokio::sync::oneshot::Sender<()>,
) {
    let clock = clock.clone();
    let reconciler = Reconciler::new(&app.state.services).with_clock(Arc::new(move || {
        DateTime::from_timestamp(clock.load(Ordering::SeqCst), 0).unwrap_or_default()
    }));
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let handle = tokio::spawn(reconciler.run(Duration::from_millis(200), async {
        let _ = stop_rx.await;
    }));
    (handle, stop_tx)
}

fn leads(app: &TestApp) -> bool {
    app.state
        .services
        .duties
        .snapshot()
        .iter()
        .any(|(d, r)| d.as_str() == "reconcile" && r.as_str() == "leader")
}

/// A time the DST policy wants and the engine does not fire (Berlin's 02:30
/// on 2026-03-29, shifted to 01:00Z) is started once by two reconcile
/// loops side by side, also when the loop holding the duty dies just before
/// the time is due. The loops read a driven clock (a process cannot be
/// moved to that night), each with its own pool and lease, as two
/// processes would.
#[sqlx::test(migrations = "./migrations")]
async fn a_dst_extra_time_starts_once_when_its_holder_dies_before_it_is_due(pool: PgPool) {
    let server = shared_temporal();
    let namespace = new_namespace(&server.address()).await;
    let first = TestApp::spawn(pool.clone(), &server.address(), &namespace).await;
    let second = TestApp::spawn(pool.clone(), &server.address(), &namespace).await;
    let worker = first.worker(false, Default::default());
    let created = first
        .create(&json!({
            "name": "dst-extra-fleet",
            "trigger": {
                "type": "cron", "cron": "30 2 * * *", "timezone": "Europe/Berlin",
                "misfire_policy": "catchup", "catchup_limit": 1000
            },
            "tasks": [{"task_type": "noop"}]
        }))
        .await;
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    let uuid: uuid::Uuid = id.parse().unwrap_or_else(|e| panic!("{e}"));
    sqlx::query("UPDATE activities SET created_at = '2026-03-01T00:00:00Z' WHERE id = $1")
        .bind(uuid)
        .execute(&pool)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let extra = "2026-03-29T01:00:00Z";
    let clock = Arc::new(AtomicI64::new(utc("2026-03-29T00:59:00Z").timestamp()));

    // The first loop takes the duty; the second stands by.
    let (first_loop, _first_stop) = reconcile_loop(&first, &clock);
    eventually(Duration::from_secs(10), || async {
        leads(&first).then_some(())
    })
    .await;
    let (second_loop, second_stop) = reconcile_loop(&second, &clock);
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert!(!leads(&second), "two holders of the reconcile duty");
    assert!(first.runs_of(&id).await.is_empty());

    // The holder dies (its task and its lease connection gone, as with
    // kill -9) one second before the time is due.
    clock.store(utc("2026-03-29T00:59:59Z").timestamp(), Ordering::SeqCst);
    first_loop.abort();
    let _ = first_loop.await;
    clock.store(utc("2026-03-29T01:00:05Z").timestamp(), Ordering::SeqCst);
    eventually(Duration::from_secs(30), || async {
        leads(&second).then_some(())
    })
    .await;
    let run = eventually(Duration::from_secs(90), || async {
        first
            .runs_of(&id)
            .await
            .into_iter()
            .find(|r| r["status"] == "succeeded")
    })
    .await;
    assert_eq!(
        run["workflow_id"],
        format!("activity-{id}:2026-03-29T01:00:00+00:00"),
        "{run}"
    );
    assert_eq!(run["scheduled_for"], extra, "{run}");

    // The first comes back as a standby; later passes of either start
    // nothing more.
    let (again, again_stop) = reconcile_loop(&first, &clock);
    clock.store(utc("2026-03-29T01:30:00Z").timestamp(), Ordering::SeqCst);
    first.passes_of("reconcile", 10).await;
    let executions: Vec<String> =
        executions_matching(&first, "WorkflowType = 'RunActivityWorkflow'")
            .await
            .into_iter()
            .map(|e| e.workflow_id)
            .filter(|w| w.starts_with(&format!("activity-{id}:")))
            .collect();
    assert_eq!(executions.len(), 1, "{executions:?}");
    assert_eq!(first.runs_of(&id).await.len(), 1);
    let _ = second_stop.send(());
    let _ = again_stop.send(());
    let _ = second_loop.await;
    let _ = again.await;
    worker.stop().await;
}
