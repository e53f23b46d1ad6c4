//! The activity resource: ETag/If-Match, Idempotency-Key, PUT, merge patch,
//! filters, pagination, and the legacy field. Temporal is a closed port here,
//! so every write is accepted with `sync_state: pending`.

use crate::common;

use std::collections::HashSet;

use common::*;
use serde_json::{Value, json};
use sqlx::PgPool;

#[sqlx::test(migrations = "./migrations")]
async fn create_returns_location_etag_and_pending_sync(pool: PgPool) {
    let app = TestApp::without_temporal(pool.clone()).await;
    let response = app
        .post("/v1/activities", &interval_activity("PT30S"))
        .await;
    assert_eq!(response.status(), 201);
    let location = response.headers()["location"]
        .to_str()
        .unwrap_or_default()
        .to_owned();
    let etag = response.headers()["etag"]
        .to_str()
        .unwrap_or_default()
        .to_owned();
    let body: Value = response.json().await.unwrap_or_default();
    assert_eq!(
        location,
        format!("/v1/activities/{}", body["id"].as_str().unwrap_or_default())
    );
    assert_eq!(etag, "\"1\"");
    assert_eq!(body["version"], 1);
    assert_eq!(body["schedule"]["sync_state"], "pending");
    assert!(
        body["schedule"]["last_error"]
            .as_str()
            .is_some_and(|e| e.contains("unavailable")),
        "{body}"
    );
    // Defaults are filled in and shown.
    assert_eq!(body["trigger"]["misfire_policy"], "skip");
    assert_eq!(body["trigger"]["catchup_limit"], 10);
    assert_eq!(body["trigger"]["misfire_grace"], "PT1M");
    assert_eq!(body["enabled"], true);

    let (status, fetched) = json(app.get(&location).await).await;
    assert_eq!(status, 200);
    assert_eq!(fetched["id"], body["id"]);
    // The row is really there, and its first version is recorded.
    let (versions,): (i64,) = sqlx::query_as("SELECT count(*) FROM activity_versions")
        .fetch_one(&pool)
        .await
        .unwrap_or((0,));
    assert_eq!(versions, 1);
}

#[sqlx::test(migrations = "./migrations")]
async fn if_match_guards_every_write(pool: PgPool) {
    let app = TestApp::without_temporal(pool).await;
    let created = app.create(&interval_activity("PT30S")).await;
    let path = format!(
        "/v1/activities/{}",
        created["id"].as_str().unwrap_or_default()
    );

    let stale = app
        .http
        .patch(app.url(&path))
        .header("content-type", "application/merge-patch+json")
        .header("if-match", "\"7\"")
        .body(json!({"name": "renamed"}).to_string())
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(stale.status(), 412);
    let problem: Value = stale.json().await.unwrap_or_default();
    assert_eq!(problem["errors"][0]["field"], "If-Match");

    let fresh = app
        .http
        .patch(app.url(&path))
        .header("content-type", "application/merge-patch+json")
        .header("if-match", "\"1\"")
        .body(json!({"name": "renamed"}).to_string())
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(fresh.status(), 200);
    assert_eq!(fresh.headers()["etag"], "\"2\"");

    let put_stale = app
        .http
        .put(app.url(&path))
        .header("if-match", "\"1\"")
        .json(&interval_activity("PT1M"))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(put_stale.status(), 412);

    let delete_stale = app
        .http
        .delete(app.url(&path))
        .header("if-match", "\"1\"")
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(delete_stale.status(), 412);
    let delete_fresh = app
        .http
        .delete(app.url(&path))
        .header("if-match", "W/\"2\"")
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(delete_fresh.status(), 204);
    assert_eq!(app.get(&path).await.status(), 404);
}

#[sqlx::test(migrations = "./migrations")]
async fn idempotency_key_replays_the_same_activity(pool: PgPool) {
    let app = TestApp::without_temporal(pool.clone()).await;
    let send = |key: &'static str, body: Value| {
        let request = app
            .http
            .post(app.url("/v1/activities"))
            .header("idempotency-key", key)
            .json(&body);
        async move { request.send().await.unwrap_or_else(|e| panic!("{e}")) }
    };
    // Concurrent first deliveries and a later retry all get one activity.
    let body = interval_activity("PT30S");
    let responses = futures::future::join_all((0..8).map(|_| send("key-1", body.clone()))).await;
    let mut ids = HashSet::new();
    for response in responses {
        assert_eq!(response.status(), 201);
        let json: Value = response.json().await.unwrap_or_default();
        ids.insert(json["id"].as_str().unwrap_or_default().to_owned());
    }
    assert_eq!(ids.len(), 1, "{ids:?}");
    let retry = send("key-1", body.clone()).await;
    assert_eq!(retry.headers()["idempotent-replayed"], "true");
    let retry: Value = retry.json().await.unwrap_or_default();
    assert!(ids.contains(retry["id"].as_str().unwrap_or_default()));

    // The same key with another body is a conflict, not a second activity.
    let other = send("key-1", interval_activity("PT1M")).await;
    assert_eq!(other.status(), 409);
    // Another key is another activity.
    assert_eq!(send("key-2", body).await.status(), 201);
    let (count,): (i64,) = sqlx::query_as("SELECT count(*) FROM activities")
        .fetch_one(&pool)
        .await
        .unwrap_or((0,));
    assert_eq!(count, 2);
}

#[sqlx::test(migrations = "./migrations")]
async fn put_creates_then_replaces(pool: PgPool) {
    let app = TestApp::without_temporal(pool).await;
    let id = uuid::Uuid::new_v4();
    let path = format!("/v1/activities/{id}");

    let created = app.put(&path, &interval_activity("PT30S")).await;
    assert_eq!(created.status(), 201);
    assert_eq!(created.headers()["location"], path.as_str());
    let created: Value = created.json().await.unwrap_or_default();
    assert_eq!(created["id"], id.to_string());
    assert_eq!(created["version"], 1);

    // Same body again: nothing changes, the version stays.
    let (status, same) = json(app.put(&path, &interval_activity("PT30S")).await).await;
    assert_eq!((status, same["version"].clone()), (200, json!(1)));

    let mut replacement = interval_activity("PT2M");
    replacement["name"] = json!("replaced");
    let (status, replaced) = json(app.put(&path, &replacement).await).await;
    assert_eq!(status, 200);
    assert_eq!(replaced["version"], 2);
    assert_eq!(replaced["name"], "replaced");
    assert_eq!(replaced["trigger"]["every"], "PT2M");
    assert_eq!(replaced["created_at"], created["created_at"]);

    // If-Match: * on a missing activity is a precondition failure.
    let missing = app
        .http
        .put(app.url(&format!("/v1/activities/{}", uuid::Uuid::new_v4())))
        .header("if-match", "*")
        .json(&interval_activity("PT30S"))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(missing.status(), 412);
}

#[sqlx::test(migrations = "./migrations")]
async fn merge_patch_changes_only_what_it_names(pool: PgPool) {
    let app = TestApp::without_temporal(pool).await;
    let mut body = interval_activity("PT30S");
    body["labels"] = json!({"team": "support", "tier": "gold"});
    body["description"] = json!("before");
    let created = app.create(&body).await;
    let path = format!(
        "/v1/activities/{}",
        created["id"].as_str().unwrap_or_default()
    );

    let (status, patched) = json(
        app.patch(
            &path,
            &json!({"description": null, "labels": {"tier": null, "region": "eu"}, "trigger": {"misfire_policy": "compress"}}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 200, "{patched}");
    assert_eq!(patched["description"], Value::Null);
    assert_eq!(
        patched["labels"],
        json!({"team": "support", "region": "eu"})
    );
    assert_eq!(patched["trigger"]["misfire_policy"], "compress");
    assert_eq!(patched["trigger"]["every"], "PT30S");
    assert_eq!(patched["name"], created["name"]);
    assert_eq!(patched["version"], 2);

    // A patch that makes the whole invalid is refused, naming the field.
    let (status, problem) = json(
        app.patch(&path, &json!({"trigger": {"every": "PT0S"}}))
            .await,
    )
    .await;
    assert_eq!(status, 422);
    assert_eq!(problem["errors"][0]["field"], "trigger.every");
    // Read-only fields are not patchable.
    let (status, problem) = json(app.patch(&path, &json!({"version": 9})).await).await;
    assert_eq!(status, 400);
    assert_eq!(problem["errors"][0]["field"], "version");
    // A non-object patch is refused.
    let (status, _) = json(app.patch(&path, &json!([1, 2])).await).await;
    assert_eq!(status, 400);
    // Patching a missing activity is a 404.
    let (status, _) = json(
        app.patch(
            &format!("/v1/activities/{}", uuid::Uuid::new_v4()),
            &json!({}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 404);
}

#[sqlx::test(migrations = "./migrations")]
async fn filters_narrow_the_list(pool: PgPool) {
    let app = TestApp::without_temporal(pool).await;
    let mut a = interval_activity("PT30S");
    a["name"] = json!("Nightly 100% report");
    a["labels"] = json!({"team": "billing"});
    app.create(&a).await;
    let mut b = activity_with(json!({"type": "event", "event_types": ["x.y"]}));
    b["enabled"] = json!(false);
    b["labels"] = json!({"team": "support"});
    app.create(&b).await;
    app.create(&activity_with(json!({"type": "cron", "cron": "0 0 * * *"})))
        .await;

    let count = |q: &'static str| {
        let app = &app;
        async move {
            let (status, list) = json(app.get(&format!("/v1/activities?{q}")).await).await;
            assert_eq!(status, 200, "{q}: {list}");
            list["items"].as_array().map(Vec::len).unwrap_or(0)
        }
    };
    assert_eq!(count("").await, 3);
    assert_eq!(count("trigger_type=event").await, 1);
    assert_eq!(count("trigger_type=interval").await, 1);
    assert_eq!(count("enabled=false").await, 1);
    assert_eq!(count("enabled=true").await, 2);
    assert_eq!(count("label=team%3Dbilling").await, 1);
    assert_eq!(count("label=team%3Dnobody").await, 0);
    assert_eq!(count("q=nightly").await, 1);
    // LIKE wildcards in q match literally.
    assert_eq!(count("q=100%25").await, 1);
    assert_eq!(count("q=%25").await, 1);
    // Unescaped, `_` would match every name; literally, none has one.
    assert_eq!(count("q=_").await, 0);
    assert_eq!(count("trigger_type=interval&label=team%3Dsupport").await, 0);
}

#[sqlx::test(migrations = "./migrations")]
async fn pagination_has_no_duplicates_or_gaps_while_rows_are_inserted(pool: PgPool) {
    let app = TestApp::without_temporal(pool).await;
    let mut originals = HashSet::new();
    for i in 0..45 {
        let mut body = activity_with(json!({"type": "event", "event_types": ["x"]}));
        body["name"] = json!(format!("a-{i}"));
        originals.insert(
            app.create(&body).await["id"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
        );
    }
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let path = match &cursor {
            Some(c) => format!("/v1/activities?limit=10&cursor={c}"),
            None => "/v1/activities?limit=10".to_owned(),
        };
        let (status, page) = json(app.get(&path).await).await;
        assert_eq!(status, 200, "{page}");
        for item in page["items"].as_array().cloned().unwrap_or_default() {
            seen.push(item["id"].as_str().unwrap_or_default().to_owned());
        }
        pages += 1;
        // Insert while paging: new rows are newer than every cursor, so they
        // never shift a later page.
        let mut body = activity_with(json!({"type": "event", "event_types": ["x"]}));
        body["name"] = json!(format!("late-{pages}"));
        app.create(&body).await;
        match page["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
    }
    assert_eq!(pages, 5);
    let unique: HashSet<_> = seen.iter().cloned().collect();
    assert_eq!(unique.len(), seen.len(), "duplicates across pages");
    assert_eq!(unique, originals, "gaps across pages");
}

#[sqlx::test(migrations = "./migrations")]
async fn legacy_dedupe_field_round_trips(pool: PgPool) {
    let app = TestApp::without_temporal(pool.clone()).await;
    let mut body = interval_activity("PT30S");
    body["dedupe_key_strategy"] = json!("skip");
    let created = app.create(&body).await;
    assert_eq!(created["dedupe_key_strategy"], "skip");
    let path = format!(
        "/v1/activities/{}",
        created["id"].as_str().unwrap_or_default()
    );
    let (_, fetched) = json(app.get(&path).await).await;
    assert_eq!(fetched["dedupe_key_strategy"], "skip");
    let (_, patched) = json(
        app.patch(&path, &json!({"dedupe_key_strategy": "content_hash"}))
            .await,
    )
    .await;
    assert_eq!(patched["dedupe_key_strategy"], "content_hash");
    let (_, cleared) = json(
        app.patch(&path, &json!({"dedupe_key_strategy": null}))
            .await,
    )
    .await;
    assert_eq!(cleared["dedupe_key_strategy"], Value::Null);
    // It is stored in the definition, and nothing else about the activity depends on it.
    let (stored,): (Value,) =
        sqlx::query_as("SELECT definition FROM activity_versions WHERE version = 2")
            .fetch_one(&pool)
            .await
            .unwrap_or((Value::Null,));
    assert_eq!(stored["dedupe_key_strategy"], "content_hash");
}
