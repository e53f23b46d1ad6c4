//! A revoked key is refused on the very next request by every API process:
//! two `acp api` processes against one database. (A key cache in the API
//! processes would have to keep this true.)

mod common;

use common::*;
use serde_json::Value;
use sqlx::PgPool;

async fn status(http: &reqwest::Client, base: &str, token: &str) -> u16 {
    http.get(format!("{base}/v1/activities"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .status()
        .as_u16()
}

#[sqlx::test(migrations = "./migrations")]
async fn a_revoked_key_is_refused_on_the_next_request_on_every_replica(pool: PgPool) {
    let admin = cli_key(&pool, "admin");
    let temporal = shared_temporal();
    let namespace = new_namespace(&temporal.address()).await;
    let a = ServeProcess::start_command("api", &pool, &temporal.address(), &namespace, &[]).await;
    let b = ServeProcess::start_command("api", &pool, &temporal.address(), &namespace, &[]).await;
    let http = reqwest::Client::new();

    for round in 0..5 {
        // A key both replicas have checked (and keep) ...
        let created: Value = http
            .post(format!("{}/v1/keys", a.base))
            .bearer_auth(&admin)
            .json(&serde_json::json!({"name": format!("reader-{round}"), "scope": "read"}))
            .send()
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .json()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let token = created["token"].as_str().unwrap_or_default().to_owned();
        let id = created["id"].as_str().unwrap_or_default().to_owned();
        for _ in 0..3 {
            assert_eq!(status(&http, &a.base, &token).await, 200);
            assert_eq!(status(&http, &b.base, &token).await, 200);
        }
        // ... revoked through one replica (alternating) is refused at once by both.
        let (via, other) = if round % 2 == 0 { (&a, &b) } else { (&b, &a) };
        let revoked = http
            .post(format!("{}/v1/keys/{id}/revoke", via.base))
            .bearer_auth(&admin)
            .send()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(revoked.status(), 200);
        assert_eq!(
            status(&http, &other.base, &token).await,
            401,
            "round {round}:\n{}",
            other.log()
        );
        assert_eq!(status(&http, &via.base, &token).await, 401, "round {round}");
    }
    // Revoked from the command line (no API process involved): the same.
    let created: Value = http
        .post(format!("{}/v1/keys", a.base))
        .bearer_auth(&admin)
        .json(&serde_json::json!({"name": "cli-revoked", "scope": "read"}))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .json()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let token = created["token"].as_str().unwrap_or_default().to_owned();
    assert_eq!(status(&http, &a.base, &token).await, 200);
    assert_eq!(status(&http, &b.base, &token).await, 200);
    let out = std::process::Command::new(acp_bin())
        .args(["keys", "revoke", created["id"].as_str().unwrap_or_default()])
        .env("DATABASE_URL", database_url(&pool))
        .env("RUST_LOG", "warn")
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(status(&http, &a.base, &token).await, 401);
    assert_eq!(status(&http, &b.base, &token).await, 401);
}
