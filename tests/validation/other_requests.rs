//! Malformed requests of every other kind are refused, naming what is wrong.

use super::*;

#[sqlx::test(migrations = "./migrations")]
async fn malformed_requests_of_every_other_kind(pool: PgPool) {
    let app = TestApp::spawn_with(pool, &closed_address(), "default", 4096).await;
    let http = &app.http;
    let raw = |method: reqwest::Method, path: &str| http.request(method, app.url(path));

    // (request, status, field)
    let cases: Vec<(reqwest::RequestBuilder, u16, &str)> = vec![
        (
            raw(reqwest::Method::POST, "/v1/activities")
                .header("content-type", "application/json")
                .body("{not json"),
            400,
            "body",
        ),
        (
            raw(reqwest::Method::POST, "/v1/activities")
                .header("content-type", "application/json")
                .body("[]"),
            400,
            "body",
        ),
        (
            raw(reqwest::Method::POST, "/v1/activities")
                .header("content-type", "application/json")
                .body(format!("{}{}", valid(), " {}")),
            400,
            "body",
        ),
        (
            raw(reqwest::Method::POST, "/v1/activities")
                .header("content-type", "text/plain")
                .body(valid().to_string()),
            415,
            "Content-Type",
        ),
        (
            raw(reqwest::Method::POST, "/v1/activities").body(valid().to_string()),
            415,
            "Content-Type",
        ),
        (
            raw(reqwest::Method::POST, "/v1/activities")
                .header("content-type", "application/json")
                .body(json!({"name": "x".repeat(5000)}).to_string()),
            413,
            "body",
        ),
        (
            raw(reqwest::Method::GET, "/v1/activities/not-a-uuid"),
            400,
            "id",
        ),
        (
            raw(reqwest::Method::DELETE, "/v1/activities/1234"),
            400,
            "id",
        ),
        (
            raw(reqwest::Method::GET, "/v1/activities?limit=0"),
            400,
            "limit",
        ),
        (
            raw(reqwest::Method::GET, "/v1/activities?limit=201"),
            400,
            "limit",
        ),
        (
            raw(reqwest::Method::GET, "/v1/activities?limit=abc"),
            400,
            "limit",
        ),
        (
            raw(reqwest::Method::GET, "/v1/activities?cursor=garbage"),
            400,
            "cursor",
        ),
        (
            raw(reqwest::Method::GET, "/v1/activities?trigger_type=weekly"),
            400,
            "trigger_type",
        ),
        (
            raw(reqwest::Method::GET, "/v1/activities?enabled=maybe"),
            400,
            "enabled",
        ),
        (
            raw(reqwest::Method::GET, "/v1/activities?label=novalue"),
            400,
            "label",
        ),
        (
            raw(reqwest::Method::GET, "/v1/activities?sort=name"),
            400,
            "sort",
        ),
        (
            raw(
                reqwest::Method::PUT,
                &format!("/v1/activities/{}", uuid::Uuid::new_v4()),
            )
            .header("content-type", "application/json")
            .header("if-match", "version-three")
            .body(valid().to_string()),
            400,
            "If-Match",
        ),
        (
            raw(reqwest::Method::POST, "/v1/activities")
                .header("content-type", "application/json")
                .header("idempotency-key", "")
                .body(valid().to_string()),
            400,
            "Idempotency-Key",
        ),
    ];
    for (request, status, field) in cases {
        let response = request.send().await.unwrap_or_else(|e| panic!("send: {e}"));
        let got = response.status().as_u16();
        let problem: Value = response.json().await.unwrap_or(Value::Null);
        assert_eq!(got, status, "{field}: {problem}");
        let fields: Vec<&str> = problem["errors"]
            .as_array()
            .map(|e| e.iter().filter_map(|e| e["field"].as_str()).collect())
            .unwrap_or_default();
        assert!(
            fields.contains(&field),
            "expected field {field}, got {problem}"
        );
    }

    // Unknown routes and methods are problems too, never 5xx.
    let response = raw(reqwest::Method::GET, "/v2/nothing")
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(response.status(), 404);
    assert_eq!(
        response.headers()["content-type"],
        "application/problem+json"
    );
    let response = raw(reqwest::Method::PATCH, "/v1/activities")
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(response.status(), 405);
    assert_eq!(
        response.headers()["content-type"],
        "application/problem+json"
    );
}
