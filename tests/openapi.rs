//! The committed OpenAPI document is exactly what the binary prints and serves.

use crate::common;

use std::process::Command;

use common::*;
use serde_json::Value;
use sqlx::PgPool;

fn committed() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/openapi/openapi.json");
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {path}: {e}"))
}

#[test]
fn committed_spec_equals_what_acp_openapi_prints() {
    let output = Command::new(acp_bin())
        .arg("openapi")
        .output()
        .unwrap_or_else(|e| panic!("run acp openapi: {e}"));
    assert!(output.status.success());
    let printed = String::from_utf8(output.stdout).unwrap_or_default();
    assert!(
        printed == committed(),
        "openapi/openapi.json is stale: run `cargo run -- openapi > openapi/openapi.json` and commit it"
    );
}

#[sqlx::test(migrations = "./migrations")]
async fn served_spec_is_byte_identical_and_swagger_ui_answers(pool: PgPool) {
    let app = TestApp::without_temporal(pool).await;
    let response = app.get("/openapi.json").await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "application/json");
    assert_eq!(response.text().await.unwrap_or_default(), committed());

    let ui = app.get("/swagger-ui/").await;
    assert_eq!(ui.status(), 200);
    let html = ui.text().await.unwrap_or_default();
    assert!(html.contains("swagger-ui"), "{html}");
    let config = app.get("/swagger-ui/swagger-initializer.js").await;
    assert_eq!(config.status(), 200);
    assert!(
        config
            .text()
            .await
            .unwrap_or_default()
            .contains("/openapi.json")
    );
}

#[test]
fn every_operation_documents_its_errors_and_the_legacy_field_is_deprecated() {
    let spec: Value = serde_json::from_str(&committed()).unwrap_or_default();
    assert_eq!(spec["openapi"], "3.1.0");
    let paths = spec["paths"].as_object().cloned().unwrap_or_default();
    for required in [
        "/v1/activities",
        "/v1/activities/{id}",
        "/healthz",
        "/readyz",
    ] {
        assert!(paths.contains_key(required), "{required} missing");
    }
    for (path, item) in &paths {
        for (method, op) in item.as_object().cloned().unwrap_or_default() {
            let responses = op["responses"].as_object().cloned().unwrap_or_default();
            assert!(!responses.is_empty(), "{method} {path} has no responses");
            if path.starts_with("/v1/") {
                let has_problem = responses.iter().any(|(code, r)| {
                    code.starts_with('4') && r["content"]["application/problem+json"].is_object()
                });
                assert!(has_problem, "{method} {path} documents no problem response");
            }
        }
    }
    let schemas = &spec["components"]["schemas"];
    assert_eq!(
        schemas["ActivityRequest"]["properties"]["dedupe_key_strategy"]["deprecated"],
        true
    );
    assert_eq!(
        schemas["ActivityResponse"]["properties"]["dedupe_key_strategy"]["deprecated"],
        true
    );
    assert!(schemas["Problem"]["properties"]["errors"].is_object());
}

/// Generators can use the document: every `$ref` resolves, every component
/// is used, and the JSON event operation has one JSON body (CloudEvents'
/// modes are an operation of their own).
#[test]
fn every_reference_resolves_and_every_component_is_used() {
    let text = committed();
    let spec: Value = serde_json::from_str(&text).unwrap_or_default();
    let defined: std::collections::BTreeSet<String> = spec["components"]["schemas"]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    let mut referenced = std::collections::BTreeSet::new();
    for piece in text.split("\"$ref\": \"").skip(1) {
        let target = piece.split('"').next().unwrap_or_default();
        let name = target
            .strip_prefix("#/components/schemas/")
            .unwrap_or_else(|| panic!("a $ref outside the schemas: {target}"));
        referenced.insert(name.to_owned());
    }
    let dangling: Vec<&String> = referenced.difference(&defined).collect();
    assert!(dangling.is_empty(), "unresolvable: {dangling:?}");
    let unused: Vec<&String> = defined.difference(&referenced).collect();
    assert!(unused.is_empty(), "unused components: {unused:?}");
    let events = &spec["paths"]["/v1/events"]["post"]["requestBody"]["content"];
    let types: Vec<&String> = events
        .as_object()
        .map(|m| m.keys().collect())
        .unwrap_or_default();
    assert_eq!(types, ["application/json"]);
    let cloudevents = &spec["paths"]["/v1/cloudevents"]["post"]["requestBody"]["content"];
    assert!(cloudevents["application/cloudevents+json"].is_object());
    assert!(cloudevents["application/cloudevents-batch+json"].is_object());
}
