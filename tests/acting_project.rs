//! The `Acp-Project` header over HTTP: an operator key (of no project) acts
//! in the project it names, its writes audited there; a project's key may
//! name its own project only, and another project's name answers the 404 an
//! unknown project gets; with authentication disabled the header selects
//! the project too. Temporal is not needed (a closed port).

use crate::common;

use common::*;
use reqwest::Method;
use serde_json::{Value, json};
use sqlx::PgPool;

const HEADER: &str = "Acp-Project";

/// A request with `token`, naming `project` in the header when given.
async fn call(
    base: &str,
    token: Option<&str>,
    project: Option<&str>,
    method: Method,
    path: &str,
    body: Option<&Value>,
) -> (u16, Value) {
    let mut request = reqwest::Client::new().request(method.clone(), format!("{base}{path}"));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(project) = project {
        request = request.header(HEADER, project);
    }
    if let Some(body) = body {
        request = request
            .header("content-type", "application/json")
            .body(body.to_string());
    }
    let response = request
        .send()
        .await
        .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
    json(response).await
}

async fn create_project(app: &TestApp, id: &str) {
    let (status, body) = json(
        app.post("/v1/projects", &json!({"id": id, "name": id}))
            .await,
    )
    .await;
    assert_eq!(status, 201, "{body}");
}

/// A key of `project` with `scope`, made by the operator: its token.
async fn project_key(app: &TestApp, project: &str, scope: &str) -> String {
    let (status, key) = json(
        app.post(
            "/v1/keys",
            &json!({"name": format!("{project}-{scope}"), "scope": scope, "project": project}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 201, "{key}");
    key["token"].as_str().unwrap_or_default().to_owned()
}

/// Creates an interval activity in `project` with its key: its ID.
async fn activity_in(app: &TestApp, token: &str, name: &str) -> String {
    let mut body = interval_activity("PT1H");
    body["name"] = json!(name);
    let (status, created) = call(
        &app.base,
        Some(token),
        None,
        Method::POST,
        "/v1/activities",
        Some(&body),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    created["id"].as_str().unwrap_or_default().to_owned()
}

fn ids(page: &Value) -> Vec<String> {
    page["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|item| item["id"].as_str().map(str::to_owned))
        .collect()
}

/// The 404 problem of an unknown project, naming the header.
fn assert_unknown_project(status: u16, problem: &Value, what: &str) {
    assert_eq!(status, 404, "{what}: {problem}");
    assert_eq!(
        problem["type"], "https://activity-control-plane.dev/problems/not-found",
        "{what}: {problem}"
    );
    assert_eq!(problem["errors"][0]["field"], HEADER, "{what}: {problem}");
}

#[sqlx::test(migrations = "./migrations")]
async fn an_operator_acts_in_the_project_it_names(pool: PgPool) {
    let app = TestApp::without_temporal(pool).await;
    let op = app.token.clone();
    create_project(&app, "team-a").await;
    create_project(&app, "team-b").await;
    let a_key = project_key(&app, "team-a", "admin").await;
    let a_activity = activity_in(&app, &a_key, "a-nightly").await;
    let default_activity = activity_in(&app, &op, "default-nightly").await;
    let (_, session) = call(&app.base, Some(&op), None, Method::GET, "/v1/session", None).await;
    let operator_id = session["key"]["id"].clone();
    let operator_name = session["key"]["name"].clone();

    // Without the header the operator acts in `default`, as before.
    let (status, page) = call(
        &app.base,
        Some(&op),
        None,
        Method::GET,
        "/v1/activities",
        None,
    )
    .await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(ids(&page), vec![default_activity.clone()]);
    let (status, _) = call(
        &app.base,
        Some(&op),
        None,
        Method::GET,
        &format!("/v1/activities/{a_activity}"),
        None,
    )
    .await;
    assert_eq!(status, 404, "team-a's activity is not in `default`");

    // Naming team-a, it sees team-a's activities and only those.
    let (status, page) = call(
        &app.base,
        Some(&op),
        Some("team-a"),
        Method::GET,
        "/v1/activities",
        None,
    )
    .await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(ids(&page), vec![a_activity.clone()]);

    // It pauses team-a's activity; the entry is in team-a's audit log,
    // naming the operator's key, and not in default's.
    let (status, paused) = call(
        &app.base,
        Some(&op),
        Some("team-a"),
        Method::POST,
        &format!("/v1/activities/{a_activity}/pause"),
        Some(&json!({"note": "maintenance"})),
    )
    .await;
    assert_eq!(status, 200, "{paused}");
    let (_, activity) = call(
        &app.base,
        Some(&a_key),
        None,
        Method::GET,
        &format!("/v1/activities/{a_activity}"),
        None,
    )
    .await;
    assert_eq!(
        activity["paused"], true,
        "team-a's key sees it paused: {activity}"
    );
    let audit = format!("/v1/audit?operation=pause_activity&subject_id={a_activity}");
    let (status, entries) = call(&app.base, Some(&a_key), None, Method::GET, &audit, None).await;
    assert_eq!(status, 200, "{entries}");
    let items = entries["items"].as_array().cloned().unwrap_or_default();
    assert_eq!(items.len(), 1, "one entry in team-a's log: {entries}");
    assert_eq!(items[0]["key_id"], operator_id, "{entries}");
    assert_eq!(items[0]["key_name"], operator_name, "{entries}");
    let (_, in_default) = call(&app.base, Some(&op), None, Method::GET, &audit, None).await;
    assert_eq!(
        in_default["items"],
        json!([]),
        "none in default's: {in_default}"
    );

    // A key it makes while acting in team-a is team-a's.
    let (status, key) = call(
        &app.base,
        Some(&op),
        Some("team-a"),
        Method::POST,
        "/v1/keys",
        Some(&json!({"name": "a-reader", "scope": "read"})),
    )
    .await;
    assert_eq!((status, &key["project"]), (201, &json!("team-a")), "{key}");

    // A project that does not exist, and a name that cannot be one.
    let (status, problem) = call(
        &app.base,
        Some(&op),
        Some("team-z"),
        Method::GET,
        "/v1/activities",
        None,
    )
    .await;
    assert_unknown_project(status, &problem, "unknown project");
    let (status, problem) = call(
        &app.base,
        Some(&op),
        Some("Team A!"),
        Method::GET,
        "/v1/activities",
        None,
    )
    .await;
    assert_eq!(status, 400, "{problem}");
    assert_eq!(problem["errors"][0]["field"], HEADER, "{problem}");
}

#[sqlx::test(migrations = "./migrations")]
async fn a_projects_key_names_its_own_project_only(pool: PgPool) {
    let app = TestApp::without_temporal(pool).await;
    create_project(&app, "team-a").await;
    create_project(&app, "team-b").await;
    let a_key = project_key(&app, "team-a", "admin").await;
    let b_key = project_key(&app, "team-b", "admin").await;
    let a_activity = activity_in(&app, &a_key, "a-nightly").await;
    let b_activity = activity_in(&app, &b_key, "b-nightly").await;

    // Naming its own project changes nothing.
    let (status, page) = call(
        &app.base,
        Some(&b_key),
        Some("team-b"),
        Method::GET,
        "/v1/activities",
        None,
    )
    .await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(ids(&page), vec![b_activity]);

    // Naming team-a (which exists) answers what naming one that does not
    // exist answers, on a list and on a write.
    let pause = format!("/v1/activities/{a_activity}/pause");
    for project in ["team-a", "team-z"] {
        let (status, problem) = call(
            &app.base,
            Some(&b_key),
            Some(project),
            Method::GET,
            "/v1/activities",
            None,
        )
        .await;
        assert_unknown_project(status, &problem, &format!("list naming {project}"));
        let (status, mut problem) = call(
            &app.base,
            Some(&b_key),
            Some(project),
            Method::POST,
            &pause,
            None,
        )
        .await;
        assert_unknown_project(status, &problem, &format!("pause naming {project}"));
        // Only the name differs between the two answers.
        problem["detail"] = json!(null);
        assert_eq!(
            problem,
            json!({"type": "https://activity-control-plane.dev/problems/not-found",
                   "title": "Not found", "status": 404, "detail": null,
                   "errors": [{"field": HEADER, "message": "names no project this key may act in"}]})
        );
    }
    let (_, activity) = call(
        &app.base,
        Some(&a_key),
        None,
        Method::GET,
        &format!("/v1/activities/{a_activity}"),
        None,
    )
    .await;
    assert_eq!(activity["paused"], false, "not paused: {activity}");
}

#[sqlx::test(migrations = "./migrations")]
async fn with_authentication_off_the_header_selects_the_project(pool: PgPool) {
    let app = TestApp::without_temporal(pool.clone()).await;
    create_project(&app, "team-a").await;
    let a_key = project_key(&app, "team-a", "admin").await;
    let a_activity = activity_in(&app, &a_key, "a-nightly").await;

    let gateway = std::sync::Arc::new(acp_temporal::TemporalGateway::new(temporal_settings(
        &closed_address(),
        "default",
    )));
    let state = acp::api::AppState::new(pool, gateway, TASK_QUEUE);
    let mut options = acp::config::HttpOptions::new(1024 * 1024);
    options.auth = false;
    let router = acp::app::build_router_with(state, &options);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let open = format!(
        "http://{}",
        listener.local_addr().unwrap_or_else(|e| panic!("{e}"))
    );
    tokio::spawn(async move {
        let _ = acp::app::serve(listener, router, std::future::pending()).await;
    });

    let (status, page) = call(&open, None, None, Method::GET, "/v1/activities", None).await;
    assert_eq!((status, ids(&page)), (200, vec![]), "default's: {page}");
    let (status, page) = call(
        &open,
        None,
        Some("team-a"),
        Method::GET,
        "/v1/activities",
        None,
    )
    .await;
    assert_eq!((status, ids(&page)), (200, vec![a_activity]), "{page}");
    let (status, problem) = call(
        &open,
        None,
        Some("team-z"),
        Method::GET,
        "/v1/activities",
        None,
    )
    .await;
    assert_unknown_project(status, &problem, "unknown project, auth off");
}
