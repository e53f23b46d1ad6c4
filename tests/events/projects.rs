//! Routing within a project, against Temporal: the same event (type and
//! ID) posted in two projects starts each project's activity's run once,
//! and nothing of another project's or of `default`'s.

use super::*;

async fn post_as(app: &TestApp, token: &str, path: &str, body: &Value) -> (u16, Value) {
    let response = app
        .http
        .post(app.url(path))
        .bearer_auth(token)
        .header("prefer", "wait=10")
        .json(body)
        .send()
        .await
        .unwrap_or_else(|e| panic!("POST {path}: {e}"));
    json(response).await
}

#[sqlx::test(migrations = "./migrations")]
async fn the_same_event_in_two_projects_runs_each_projects_activity(pool: PgPool) {
    let app = app(pool).await;
    let _worker = app.worker(false, Default::default());
    let in_default = subscriber(&app, &["order.placed"], true).await;
    let mut activities = Vec::new();
    for id in ["team-a", "team-b"] {
        let token = app.project_with_admin(id, json!({})).await;
        let (status, activity) = post_as(
            &app,
            &token,
            "/v1/activities",
            &json!({"name": "orders", "trigger": {"type": "event", "event_types": ["order.placed"]},
                    "tasks": [{"task_type": "noop"}]}),
        )
        .await;
        assert_eq!(status, 201, "{activity}");
        activities.push((
            token,
            activity["id"].as_str().unwrap_or_default().to_owned(),
        ));
    }

    let event = json!({"event_id": "order-1", "event_type": "order.placed", "source": "shop",
                       "payload": {}});
    for (token, activity) in &activities {
        let (status, answer) = post_as(&app, token, "/v1/events", &event).await;
        assert_eq!(status, 200, "{answer}");
        let dispatches = answer["dispatches"].as_array().cloned().unwrap_or_default();
        assert_eq!(dispatches.len(), 1, "{answer}");
        assert_eq!(dispatches[0]["activity_id"], activity.as_str(), "{answer}");
        assert_eq!(dispatches[0]["outcome"], "started", "{answer}");
    }
    for (token, activity) in &activities {
        let workflow_id = format!("activity-{activity}:order-1");
        let run_id = acp_domain::ids::run_id(&workflow_id);
        // The run is its project's: read with the project's key.
        let run = eventually(Duration::from_secs(60), || async {
            let response = app
                .http
                .get(app.url(&format!("/v1/runs/{run_id}")))
                .bearer_auth(token)
                .send()
                .await
                .ok()?;
            let (status, run) = json(response).await;
            (status == 200 && run["status"] != "running").then_some(run)
        })
        .await;
        assert_eq!(run["status"], "succeeded", "{run}");
        assert_eq!(executions(&app, &workflow_id).await.len(), 1);
    }
    assert!(
        executions(&app, &format!("activity-{in_default}:order-1"))
            .await
            .is_empty(),
        "default's activity is not reached by the teams' events"
    );
}
