//! API keys: every `/v1` operation in the OpenAPI document, with no token,
//! each scope, a revoked key and a forged one; the keys API and `acp keys`.

use crate::common;

use std::process::Command;

use acp_domain::auth::Scope;
use common::*;
use reqwest::Method;
use serde_json::{Value, json};
use sqlx::PgPool;

/// Every operation of the served document: (method, route template, the scope
/// it declares). Panics if a `/v1` operation declares none.
async fn operations(app: &TestApp) -> Vec<(Method, String, Scope)> {
    let (status, doc) = json(
        reqwest::get(app.url("/openapi.json"))
            .await
            .unwrap_or_else(|e| panic!("{e}")),
    )
    .await;
    assert_eq!(status, 200);
    let mut ops = Vec::new();
    for (path, item) in doc["paths"].as_object().into_iter().flatten() {
        for (method, operation) in item.as_object().into_iter().flatten() {
            let Ok(method) = Method::from_bytes(method.to_ascii_uppercase().as_bytes()) else {
                continue;
            };
            let scopes: Vec<&str> = operation["security"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|r| r["bearer"].as_array())
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            if !path.starts_with("/v1/") {
                assert!(
                    scopes.is_empty(),
                    "{method} {path} is open but declares {scopes:?}"
                );
                continue;
            }
            assert_eq!(
                scopes.len(),
                1,
                "{method} {path} must declare exactly one scope: {scopes:?}"
            );
            let scope = Scope::parse(scopes[0])
                .unwrap_or_else(|| panic!("{method} {path}: unknown scope {}", scopes[0]));
            for status in ["401", "403"] {
                assert!(
                    operation["responses"][status].is_object(),
                    "{method} {path} does not document {status}"
                );
            }
            ops.push((method, path.clone(), scope));
        }
    }
    ops
}

/// A concrete URL for a route template: path parameters become real IDs
/// where we have them, else well-formed unknown ones.
fn concrete(template: &str, activity_id: &str) -> String {
    template
        .replace("{id}", activity_id)
        .replace("{run_id}", &uuid::Uuid::new_v4().to_string())
        .replace("{event_id}", "evt-unknown")
}

async fn call(
    app: &TestApp,
    method: &Method,
    path: &str,
    token: Option<&str>,
) -> (u16, Value, reqwest::header::HeaderMap) {
    // A client without the harness's default admin key.
    let client = reqwest::Client::new();
    let mut request = client.request(method.clone(), app.url(path));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if [Method::POST, Method::PUT, Method::PATCH].contains(method) {
        let content_type = if *method == Method::PATCH {
            "application/merge-patch+json"
        } else {
            "application/json"
        };
        request = request.header("content-type", content_type).body("{}");
    }
    let response = request
        .send()
        .await
        .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    // An event stream does not end: its status and headers are the answer.
    let streaming = headers
        .get("content-type")
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    let body = if streaming {
        Value::Null
    } else {
        response.json().await.unwrap_or(Value::Null)
    };
    (status, body, headers)
}

async fn key(app: &TestApp, scope: Scope) -> (String, String) {
    let (_, token) = app
        .state
        .keys
        .create(
            &format!("{scope}-key"),
            scope,
            &acp_domain::audit::Actor::command_line("create_key"),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let id = acp_domain::auth::parse(&token)
        .map(|(id, _)| id.to_string())
        .unwrap_or_default();
    (id, token)
}

#[sqlx::test(migrations = "./migrations")]
async fn every_v1_operation_by_every_scope(pool: PgPool) {
    let temporal = shared_temporal();
    let namespace = new_namespace(&temporal.address()).await;
    let app = TestApp::spawn(pool, &temporal.address(), &namespace).await;
    let activity = app
        .create(&activity_with(
            json!({"type": "event", "event_types": ["order.created"]}),
        ))
        .await;
    let activity_id = activity["id"].as_str().unwrap_or_default().to_owned();
    let mut tokens = Vec::new();
    for scope in Scope::ALL {
        tokens.push((scope, key(&app, scope).await.1));
    }
    let (revoked_id, revoked) = key(&app, Scope::Admin).await;
    app.state
        .keys
        .revoke(
            revoked_id.parse().unwrap_or_default(),
            &acp_domain::audit::Actor::command_line("revoke_key"),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let forged = {
        let (id, _) =
            acp_domain::auth::parse(&tokens[3].1).unwrap_or_else(|| panic!("token shape"));
        format!("acp_{}_{}", id.simple(), "0".repeat(64))
    };

    let mut ops = operations(&app).await;
    // Deletes last, so the other operations find the activity.
    ops.sort_by_key(|(method, _, _)| *method == Method::DELETE);
    assert!(
        ops.len() >= 22,
        "only {} /v1 operations documented",
        ops.len()
    );
    let mut table = Vec::new();
    for (method, template, needed) in &ops {
        let path = concrete(template, &activity_id);
        let mut row = format!("{method:<6} {template:<36} needs {needed:<6} |");

        for (token, label) in [
            (None, "no token"),
            (Some("Bearer-less garbage"), "garbage"),
            (Some(revoked.as_str()), "revoked"),
            (Some(forged.as_str()), "forged"),
        ] {
            let (status, body, headers) = call(&app, method, &path, token).await;
            assert_eq!(status, 401, "{method} {template} with {label}: {body}");
            assert_eq!(body["status"], 401, "{body}");
            assert_eq!(body["errors"][0]["field"], "Authorization", "{body}");
            assert!(
                headers.contains_key("www-authenticate"),
                "{method} {template}"
            );
            if label == "revoked" {
                assert!(
                    body["detail"]
                        .as_str()
                        .unwrap_or_default()
                        .contains("revoked"),
                    "{body}"
                );
            }
        }
        for (scope, token) in &tokens {
            let (status, body, _) = call(&app, method, &path, Some(token)).await;
            if scope.grants(*needed) {
                assert!(
                    ![401, 403].contains(&status) && status < 500,
                    "{method} {template} with a {scope} key: {status} {body}"
                );
            } else {
                assert_eq!(
                    status, 403,
                    "{method} {template} with a {scope} key: {body}"
                );
                assert!(
                    body["detail"]
                        .as_str()
                        .unwrap_or_default()
                        .contains(needed.as_str()),
                    "{body}"
                );
            }
            row.push_str(&format!(" {scope}={status}"));
        }
        table.push(row);
    }
    eprintln!("{}", table.join("\n"));
}

#[sqlx::test(migrations = "./migrations")]
async fn open_routes_need_no_token(pool: PgPool) {
    let app = TestApp::without_temporal(pool).await;
    for path in ["/healthz", "/metrics", "/openapi.json", "/swagger-ui/"] {
        let response = reqwest::get(app.url(path))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(response.status(), 200, "{path}");
    }
    // Ready or not (Temporal is down here), it answers without a key.
    let response = reqwest::get(app.url("/readyz"))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!([200, 503].contains(&response.status().as_u16()));
}

#[sqlx::test(migrations = "./migrations")]
async fn keys_api_creates_lists_and_revokes(pool: PgPool) {
    let app = TestApp::without_temporal(pool.clone()).await;
    let response = app
        .post("/v1/keys", &json!({"name": "crm", "scope": "events"}))
        .await;
    assert_eq!(response.status(), 201);
    let location = response.headers()["location"]
        .to_str()
        .unwrap_or_default()
        .to_owned();
    let (_, created) = json(response).await;
    let token = created["token"].as_str().unwrap_or_default().to_owned();
    assert_eq!(created["scope"], "events");
    assert_eq!(
        location,
        format!("/v1/keys/{}", created["id"].as_str().unwrap_or_default())
    );

    // Only a hash is stored: the token appears in no column.
    let stored: Vec<(String, String)> =
        sqlx::query_as("SELECT name, encode(secret_sha256, 'hex') FROM api_keys")
            .fetch_all(&pool)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    for (_, hash) in &stored {
        assert!(!token.contains(hash.as_str()));
        assert_eq!(hash.len(), 64);
    }

    // The events key ingests, and cannot read.
    let event = json!({"event_type": "order.created", "source": "crm", "payload": {}});
    let (status, _, _) = call_json(&app, Method::POST, "/v1/events", &token, &event).await;
    assert_eq!(status, 200);
    let (status, _, _) = call_json(&app, Method::GET, "/v1/events", &token, &Value::Null).await;
    assert_eq!(status, 403);
    let (status, _, _) = call_json(&app, Method::GET, "/v1/session", &token, &Value::Null).await;
    assert_eq!(status, 403, "an events key cannot read, not even who it is");
    // The operator key the app was made with says who it is.
    let (status, session) = json(app.get("/v1/session").await).await;
    assert_eq!(status, 200, "{session}");
    assert_eq!(session["authentication"], "required", "{session}");
    assert_eq!(session["scope"], "operator", "{session}");
    assert_eq!(session["project"], Value::Null, "{session}");
    assert!(session["key"]["id"].is_string(), "{session}");

    let (status, list) = json(app.get("/v1/keys").await).await;
    assert_eq!(status, 200);
    let items = list["items"].as_array().cloned().unwrap_or_default();
    assert_eq!(items.len(), 2, "{list}");
    assert!(
        items
            .iter()
            .all(|k| k.get("token").is_none() && k.get("secret_sha256").is_none())
    );

    let (status, revoked) = json(app.post(&format!("{location}/revoke"), &Value::Null).await).await;
    assert_eq!(status, 200);
    assert!(revoked["revoked_at"].is_string());
    let (status, body, _) = call_json(&app, Method::POST, "/v1/events", &token, &event).await;
    assert_eq!(status, 401, "{body}");
    // Revoking twice keeps the first time.
    let (_, again) = json(app.post(&format!("{location}/revoke"), &Value::Null).await).await;
    assert_eq!(again["revoked_at"], revoked["revoked_at"]);

    // Bad bodies name the field.
    let (status, problem) = json(
        app.post("/v1/keys", &json!({"name": "x", "scope": "root"}))
            .await,
    )
    .await;
    assert_eq!(status, 400, "{problem}");
    assert_eq!(problem["errors"][0]["field"], "scope", "{problem}");
    let (status, problem) = json(
        app.post("/v1/keys", &json!({"name": " ", "scope": "read"}))
            .await,
    )
    .await;
    assert_eq!(status, 422, "{problem}");
    assert_eq!(problem["errors"][0]["field"], "name", "{problem}");
    let (status, _) = json(
        app.post(
            &format!("/v1/keys/{}/revoke", uuid::Uuid::new_v4()),
            &Value::Null,
        )
        .await,
    )
    .await;
    assert_eq!(status, 404);
}

async fn call_json(
    app: &TestApp,
    method: Method,
    path: &str,
    token: &str,
    body: &Value,
) -> (u16, Value, reqwest::header::HeaderMap) {
    let mut request = reqwest::Client::new()
        .request(method, app.url(path))
        .bearer_auth(token);
    if !body.is_null() {
        request = request.json(body);
    }
    let response = request.send().await.unwrap_or_else(|e| panic!("{e}"));
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    (
        status,
        response.json().await.unwrap_or(Value::Null),
        headers,
    )
}

fn acp(pool: &PgPool, args: &[&str]) -> std::process::Output {
    Command::new(acp_bin())
        .args(args)
        .env("DATABASE_URL", database_url(pool))
        .env("RUST_LOG", "warn")
        .output()
        .unwrap_or_else(|e| panic!("acp {args:?}: {e}"))
}

#[sqlx::test(migrations = "./migrations")]
async fn acp_keys_cli_prints_a_token_once_and_revokes(pool: PgPool) {
    let app = TestApp::without_temporal(pool.clone()).await;
    let out = acp(
        &pool,
        &["keys", "create", "--name", "dashboard", "--scope", "read"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let token = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    assert!(
        acp_domain::auth::parse(&token).is_some(),
        "stdout is the token alone: {token:?}"
    );
    let (status, _, _) = call_json(&app, Method::GET, "/v1/activities", &token, &Value::Null).await;
    assert_eq!(status, 200);
    let (status, _, _) = call_json(
        &app,
        Method::POST,
        "/v1/activities",
        &token,
        &interval_activity("PT1M"),
    )
    .await;
    assert_eq!(status, 403);

    let list = acp(&pool, &["keys", "list"]);
    let listing = String::from_utf8_lossy(&list.stdout);
    let id = acp_domain::auth::parse(&token)
        .map(|(id, _)| id.to_string())
        .unwrap_or_default();
    assert!(
        listing.contains(&id) && listing.contains("dashboard"),
        "{listing}"
    );
    assert!(!listing.contains(&token[40..]), "the list shows no secret");

    let out = acp(&pool, &["keys", "revoke", &id]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (status, _, _) = call_json(&app, Method::GET, "/v1/activities", &token, &Value::Null).await;
    assert_eq!(status, 401);

    let out = acp(
        &pool,
        &["keys", "revoke", &uuid::Uuid::new_v4().to_string()],
    );
    assert!(!out.status.success());
    let out = acp(&pool, &["keys", "create", "--name", "x", "--scope", "root"]);
    assert!(!out.status.success());
}

#[sqlx::test(migrations = "./migrations")]
async fn auth_off_only_when_asked_and_then_open(pool: PgPool) {
    let gateway = std::sync::Arc::new(acp_temporal::TemporalGateway::new(temporal_settings(
        &closed_address(),
        "default",
    )));
    let state = acp::api::AppState::new(pool, gateway, TASK_QUEUE);
    let mut options = acp::config::HttpOptions::new(1024 * 1024);
    assert!(options.auth, "auth is on unless turned off");
    options.auth = false;
    let router = acp::app::build_router_with(state, &options);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let base = format!(
        "http://{}",
        listener.local_addr().unwrap_or_else(|e| panic!("{e}"))
    );
    tokio::spawn(async move {
        let _ = acp::app::serve(listener, router, std::future::pending()).await;
    });
    let response = reqwest::get(format!("{base}/v1/activities"))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(response.status(), 200);
    // A client learns that no key is needed and that it may do everything.
    let session: Value = reqwest::get(format!("{base}/v1/session"))
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .json()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        session,
        json!({"authentication": "disabled", "scope": "operator", "project": "default", "key": null})
    );
}
