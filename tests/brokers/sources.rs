//! Broker sources through the API: validated and managed.

use super::*;

/// Sources are validated field by field, and their credentials are only
/// ever the name of an environment variable.
#[sqlx::test(migrations = "./migrations")]
async fn sources_are_validated_and_managed(pool: PgPool) {
    let app = TestApp::without_temporal(pool).await;
    let bad = json!({"name": "", "kind": "nats", "secret_ref": "lower", "config": {"url": "nats://u:secret@h:4222", "stream": "a b", "durable": "d"}});
    let (status, problem) = json(app.post("/v1/sources", &bad).await).await;
    assert_eq!(status, 422, "{problem}");
    let fields: Vec<&str> = problem["errors"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["field"].as_str())
        .collect();
    assert_eq!(
        fields,
        ["name", "secret_ref", "config.url", "config.stream"]
    );
    let (status, problem) = json(
        app.post(
            "/v1/sources",
            &json!({"name": "x", "kind": "kafka", "config": {}}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 400, "{problem}");

    let good = json!({"name": "orders", "kind": "rabbitmq", "secret_ref": "RABBIT", "enabled": false, "config": {"url": "amqp://guest@127.0.0.1:5672/%2f", "queue": "orders"}});
    let response = app.post("/v1/sources", &good).await;
    assert_eq!(response.status(), 201);
    let (_, created) = json(response).await;
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    assert_eq!(created["config"]["prefetch"], 50);
    let (status, _) = json(app.post("/v1/sources", &good).await).await;
    assert_eq!(status, 409, "names are unique");
    let (status, one) = json(app.get(&format!("/v1/sources/{id}")).await).await;
    assert_eq!(status, 200);
    assert_eq!(one["status"]["connected"], false);
    assert_eq!(one["status"]["reported_at"], Value::Null);

    let (status, patched) = json(
        app.patch(
            &format!("/v1/sources/{id}"),
            &json!({"config": {"prefetch": 10}, "enabled": true}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 200, "{patched}");
    assert_eq!(
        (
            patched["config"]["prefetch"].clone(),
            patched["version"].clone()
        ),
        (json!(10), json!(2))
    );
    let (status, problem) = json(
        app.patch(
            &format!("/v1/sources/{id}"),
            &json!({"config": {"prefetch": 0}}),
        )
        .await,
    )
    .await;
    assert_eq!(
        (status, problem["errors"][0]["field"].clone()),
        (422, json!("config.prefetch"))
    );
    let stale = app
        .http
        .delete(app.url(&format!("/v1/sources/{id}")))
        .header("if-match", "\"1\"")
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(stale.status(), 412);
    assert_eq!(app.delete(&format!("/v1/sources/{id}")).await.status(), 204);
    assert_eq!(app.get(&format!("/v1/sources/{id}")).await.status(), 404);
    assert_eq!(
        app.get(&format!("/v1/sources/{id}/rejected"))
            .await
            .status(),
        404
    );
}
