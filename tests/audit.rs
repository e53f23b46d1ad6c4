//! The audit log: every write operation of the OpenAPI document leaves
//! exactly one entry naming the key that made it, the operation and the
//! subject; a dry run or a failed write leaves none; `GET /v1/audit`
//! filters and pages them.

use crate::common;

use std::collections::BTreeSet;

use chrono::{Duration, Utc};
use common::*;
use serde_json::{Value, json};
use sqlx::PgPool;
use uuid::Uuid;

/// The write operations that leave no entry, and why.
const NOT_AUDITED: [(&str, &str); 5] = [
    // Event ingestion is data, not configuration: each event is recorded
    // with its dispatches and its dedupe (GET /v1/events).
    ("ingest_event", "event data"),
    ("ingest_events_batch", "event data"),
    ("ingest_cloudevent", "event data"),
    // Changes nothing: a trigger's next times.
    ("preview_schedule", "read-like"),
    // A short-lived read credential for the caller's own key, so a browser
    // can open the stream: it changes no configuration.
    ("create_stream_token", "read-like"),
];

/// Every operation of the committed document that is not a read.
fn write_operations() -> BTreeSet<String> {
    let text = std::fs::read_to_string("openapi/openapi.json")
        .unwrap_or_else(|e| panic!("read openapi/openapi.json: {e}"));
    let doc: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    let mut ops = BTreeSet::new();
    for item in doc["paths"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(_, v)| v)
    {
        for (method, op) in item.as_object().into_iter().flatten() {
            if matches!(method.as_str(), "get" | "head" | "parameters") {
                continue;
            }
            if let Some(id) = op["operationId"].as_str() {
                ops.insert(id.to_owned());
            }
        }
    }
    ops
}

/// The calls in the order the walk makes them (later ones use what earlier
/// ones created). Each is one arm of [`Walk::call`].
const WALK: [&str; 28] = [
    "create_activity",
    "put_activity",
    "patch_activity",
    "pause_activity",
    "resume_activity",
    "backfill_activity",
    "trigger_activity",
    "cancel_run",
    "retry_run",
    "cancel_activity_runs",
    "retry_activity_runs",
    "delete_activity",
    "create_calendar",
    "put_calendar",
    "patch_calendar",
    "import_calendar",
    "delete_calendar",
    "create_source",
    "patch_source",
    "delete_source",
    "create_subscription",
    "delete_subscription",
    "create_key",
    "revoke_key",
    "create_project",
    "put_project",
    "patch_project",
    "delete_project",
];

/// A client that sends one key's token.
struct Caller {
    http: reqwest::Client,
    base: String,
}

impl Caller {
    fn new(base: &str, token: &str) -> Self {
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert(
            reqwest::header::AUTHORIZATION,
            format!("Bearer {token}")
                .parse()
                .unwrap_or_else(|e| panic!("{e}")),
        );
        let http = reqwest::Client::builder()
            .default_headers(headers)
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        Self {
            http,
            base: base.to_owned(),
        }
    }

    async fn send(&self, request: reqwest::RequestBuilder) -> (u16, Value) {
        let response = request.send().await.unwrap_or_else(|e| panic!("{e}"));
        let status = response.status().as_u16();
        let text = response.text().await.unwrap_or_default();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    async fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        let url = format!("{}{path}", self.base);
        self.send(self.http.post(url).json(body)).await
    }

    async fn put(&self, path: &str, body: &Value) -> (u16, Value) {
        let url = format!("{}{path}", self.base);
        self.send(self.http.put(url).json(body)).await
    }

    async fn patch(&self, path: &str, body: &Value) -> (u16, Value) {
        let url = format!("{}{path}", self.base);
        let request = self
            .http
            .patch(url)
            .header("content-type", "application/merge-patch+json")
            .body(body.to_string());
        self.send(request).await
    }

    async fn delete(&self, path: &str) -> (u16, Value) {
        let url = format!("{}{path}", self.base);
        self.send(self.http.delete(url)).await
    }

    async fn get(&self, path: &str) -> (u16, Value) {
        let url = format!("{}{path}", self.base);
        self.send(self.http.get(url)).await
    }
}

fn activity_body(name: &str) -> Value {
    json!({
        "name": name,
        "trigger": {"type": "interval", "every": "PT1H", "misfire_policy": "skip"},
        "tasks": [{"task_type": "noop"}],
    })
}

fn calendar_body(name: &str) -> Value {
    json!({
        "name": name,
        "timezone": "Europe/Berlin",
        "holidays": [{"date": "2026-12-25", "name": "Christmas Day"}],
    })
}

const ICS: &str = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//acp tests//EN\r\n\
BEGIN:VEVENT\r\nUID:xmas@acp\r\nDTSTART;VALUE=DATE:20261225\r\nSUMMARY:Christmas\r\n\
END:VEVENT\r\nEND:VCALENDAR\r\n";

/// A run row as the run workflow would have written it, without a run:
/// cancel and retry act on rows (and on Temporal, which has no execution
/// of it), so nothing needs to run.
async fn seeded_run(pool: &PgPool, activity: &str, status: &str) -> String {
    let run_id = Uuid::new_v4();
    let activity = Uuid::parse_str(activity).unwrap_or_else(|e| panic!("{e}"));
    sqlx::query(
        "INSERT INTO activity_runs (run_id, activity_id, workflow_id, trigger_type, status,
             started_at, definition_version)
         VALUES ($1, $2, 'activity-' || $2 || ':seeded-' || $1, 'manual', $3, now(), 1)",
    )
    .bind(run_id)
    .bind(activity)
    .bind(status)
    .execute(pool)
    .await
    .unwrap_or_else(|e| panic!("seed a run: {e}"));
    run_id.to_string()
}

/// What the walk created so far.
#[derive(Default)]
struct Walk {
    activity: String,
    calendar: String,
    source: String,
    subscription: String,
    key: String,
}

/// The project the walk creates, changes and deletes.
const PROJECT: &str = "audited-team";

fn id_of(body: &Value) -> String {
    body["id"].as_str().unwrap_or_default().to_owned()
}

impl Walk {
    /// Makes one valid request of `operation`; returns the subject the
    /// entry should name.
    async fn call(&mut self, api: &Caller, pool: &PgPool, operation: &str) -> (String, String) {
        let ok = |(status, body): (u16, Value), want: &[u16]| {
            assert!(want.contains(&status), "{operation}: {status} {body}");
            body
        };
        let activity = |id: &str| ("activity".to_owned(), id.to_owned());
        let a = self.activity.clone();
        match operation {
            "create_activity" => {
                let body = ok(
                    api.post("/v1/activities", &activity_body("audited")).await,
                    &[201],
                );
                self.activity = id_of(&body);
                activity(&self.activity)
            }
            "put_activity" => {
                let path = format!("/v1/activities/{a}");
                ok(api.put(&path, &activity_body("audited-2")).await, &[200]);
                activity(&a)
            }
            "patch_activity" => {
                let path = format!("/v1/activities/{a}");
                ok(api.patch(&path, &json!({"description": "x"})).await, &[200]);
                activity(&a)
            }
            "pause_activity" | "resume_activity" => {
                let verb = operation.trim_end_matches("_activity");
                let path = format!("/v1/activities/{a}/{verb}");
                ok(api.post(&path, &json!({"note": "audit"})).await, &[200]);
                activity(&a)
            }
            "backfill_activity" => {
                let end = Utc::now() - Duration::hours(1);
                let body = json!({"start": (end - Duration::hours(2)).to_rfc3339(), "end": end.to_rfc3339()});
                let path = format!("/v1/activities/{a}/backfill");
                ok(api.post(&path, &body).await, &[202]);
                activity(&a)
            }
            "trigger_activity" => {
                let path = format!("/v1/activities/{a}/trigger");
                ok(api.post(&path, &json!({})).await, &[202]);
                activity(&a)
            }
            "cancel_run" => {
                let run = seeded_run(pool, &a, "running").await;
                let path = format!("/v1/runs/{run}/cancel");
                ok(api.post(&path, &json!({"reason": "audit"})).await, &[202]);
                ("run".to_owned(), run)
            }
            "retry_run" => {
                let run = seeded_run(pool, &a, "failed").await;
                let path = format!("/v1/runs/{run}/retry");
                ok(api.post(&path, &json!({})).await, &[202]);
                ("run".to_owned(), run)
            }
            "cancel_activity_runs" | "retry_activity_runs" => {
                let (verb, status) = if operation.starts_with("cancel") {
                    ("cancel", "running")
                } else {
                    ("retry", "failed")
                };
                seeded_run(pool, &a, status).await;
                let path = format!("/v1/activities/{a}/runs/{verb}");
                let body = ok(api.post(&path, &json!({})).await, &[200]);
                assert!(
                    body["results"].as_array().is_some_and(|i| !i.is_empty()),
                    "{body}"
                );
                activity(&a)
            }
            "delete_activity" => {
                ok(api.delete(&format!("/v1/activities/{a}")).await, &[204]);
                activity(&a)
            }
            "create_calendar" => {
                let body = ok(
                    api.post("/v1/calendars", &calendar_body("ops")).await,
                    &[201],
                );
                self.calendar = id_of(&body);
                ("calendar".to_owned(), self.calendar.clone())
            }
            "put_calendar" => {
                let path = format!("/v1/calendars/{}", self.calendar);
                ok(api.put(&path, &calendar_body("ops-2")).await, &[200]);
                ("calendar".to_owned(), self.calendar.clone())
            }
            "patch_calendar" => {
                let path = format!("/v1/calendars/{}", self.calendar);
                ok(api.patch(&path, &json!({"name": "ops-3"})).await, &[200]);
                ("calendar".to_owned(), self.calendar.clone())
            }
            "import_calendar" => {
                let request = api
                    .http
                    .post(format!("{}/v1/calendars:import?name=imported", api.base))
                    .header("content-type", "text/calendar")
                    .body(ICS);
                let body = ok(api.send(request).await, &[201]);
                ("calendar".to_owned(), id_of(&body["calendar"]))
            }
            "delete_calendar" => {
                let path = format!("/v1/calendars/{}", self.calendar);
                ok(api.delete(&path).await, &[204]);
                ("calendar".to_owned(), self.calendar.clone())
            }
            "create_source" => {
                let body = json!({"name": "orders", "kind": "rabbitmq", "enabled": false,
                    "config": {"url": "amqp://guest@127.0.0.1:5672/%2f", "queue": "orders"}});
                let body = ok(api.post("/v1/sources", &body).await, &[201]);
                self.source = id_of(&body);
                ("source".to_owned(), self.source.clone())
            }
            "patch_source" => {
                let path = format!("/v1/sources/{}", self.source);
                ok(api.patch(&path, &json!({"name": "orders-2"})).await, &[200]);
                ("source".to_owned(), self.source.clone())
            }
            "delete_source" => {
                let path = format!("/v1/sources/{}", self.source);
                ok(api.delete(&path).await, &[204]);
                ("source".to_owned(), self.source.clone())
            }
            "create_subscription" => {
                let body = json!({"url": "https://hooks.example.com/acp", "types": ["run.failed"]});
                let body = ok(api.post("/v1/subscriptions", &body).await, &[201]);
                self.subscription = id_of(&body);
                ("subscription".to_owned(), self.subscription.clone())
            }
            "delete_subscription" => {
                let path = format!("/v1/subscriptions/{}", self.subscription);
                ok(api.delete(&path).await, &[204]);
                ("subscription".to_owned(), self.subscription.clone())
            }
            "create_key" => {
                let body = json!({"name": "short-lived", "scope": "read"});
                let body = ok(api.post("/v1/keys", &body).await, &[201]);
                self.key = id_of(&body);
                ("api_key".to_owned(), self.key.clone())
            }
            "revoke_key" => {
                let path = format!("/v1/keys/{}/revoke", self.key);
                ok(api.post(&path, &json!({})).await, &[200]);
                ("api_key".to_owned(), self.key.clone())
            }
            "create_project" => {
                let body = json!({"id": PROJECT, "name": "Audited team"});
                ok(api.post("/v1/projects", &body).await, &[201]);
                ("project".to_owned(), PROJECT.to_owned())
            }
            "put_project" => {
                let path = format!("/v1/projects/{PROJECT}");
                let body = json!({"name": "Audited team", "weight": 2});
                ok(api.put(&path, &body).await, &[200]);
                ("project".to_owned(), PROJECT.to_owned())
            }
            "patch_project" => {
                let path = format!("/v1/projects/{PROJECT}");
                let body = json!({"quotas": {"activities": 10}});
                ok(api.patch(&path, &body).await, &[200]);
                ("project".to_owned(), PROJECT.to_owned())
            }
            "delete_project" => {
                let path = format!("/v1/projects/{PROJECT}");
                ok(api.delete(&path).await, &[204]);
                ("project".to_owned(), PROJECT.to_owned())
            }
            other => panic!("the walk has no call for {other}: add one to WALK and Walk::call"),
        }
    }
}

/// seq, key_id, key_name, operation, subject_type, subject_id, request_id.
type EntryRow = (
    i64,
    Option<Uuid>,
    Option<String>,
    String,
    String,
    String,
    String,
);

/// Entries after `seq`, oldest first, read from the table.
async fn entries_after(pool: &PgPool, seq: i64) -> Vec<EntryRow> {
    sqlx::query_as(
        "SELECT seq, key_id, key_name, operation, subject_type, subject_id, request_id
         FROM audit_log WHERE seq > $1 ORDER BY seq",
    )
    .bind(seq)
    .fetch_all(pool)
    .await
    .unwrap_or_else(|e| panic!("{e}"))
}

async fn last_seq(pool: &PgPool) -> i64 {
    sqlx::query_scalar("SELECT COALESCE(max(seq), 0) FROM audit_log")
        .fetch_one(pool)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

#[sqlx::test(migrations = "./migrations")]
async fn every_write_operation_leaves_one_entry_naming_its_key(pool: PgPool) {
    let documented: BTreeSet<String> = write_operations()
        .into_iter()
        .filter(|op| !NOT_AUDITED.iter().any(|(n, _)| n == op))
        .collect();
    let walked: BTreeSet<String> = WALK.iter().map(|s| (*s).to_owned()).collect();
    assert_eq!(
        walked, documented,
        "every write operation of the document is walked (or excluded in NOT_AUDITED)"
    );

    let server = shared_temporal();
    let namespace = new_namespace(&server.address()).await;
    let app = TestApp::spawn(pool.clone(), &server.address(), &namespace).await;
    let (status, key) = json(
        app.post("/v1/keys", &json!({"name": "auditor", "scope": "operator"}))
            .await,
    )
    .await;
    assert_eq!(status, 201, "{key}");
    let key_id =
        Uuid::parse_str(key["id"].as_str().unwrap_or_default()).unwrap_or_else(|e| panic!("{e}"));
    let api = Caller::new(&app.base, key["token"].as_str().unwrap_or_default());

    let mut walk = Walk::default();
    let mut request_ids = BTreeSet::new();
    for operation in WALK {
        let before = last_seq(&pool).await;
        let (subject_type, subject_id) = walk.call(&api, &pool, operation).await;
        let entries = entries_after(&pool, before).await;
        assert_eq!(entries.len(), 1, "{operation}: {entries:?}");
        let (_, by, name, op, kind, id, request_id) = &entries[0];
        assert_eq!(
            (by, name.as_deref(), op.as_str(), kind.as_str(), id.as_str()),
            (
                &Some(key_id),
                Some("auditor"),
                operation,
                subject_type.as_str(),
                subject_id.as_str()
            ),
            "{operation}"
        );
        assert!(
            request_ids.insert(request_id.clone()),
            "{operation}: request ID {request_id} seen before"
        );
    }

    // Each entry is a change of the stream too, in its own transaction.
    let changes: i64 = sqlx::query_scalar(
        "SELECT (SELECT count(*) FROM change_inbox WHERE kind = 'audit.recorded')
              + (SELECT count(*) FROM change_log WHERE kind = 'audit.recorded')",
    )
    .fetch_one(&pool)
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(changes, last_seq_count(&pool).await);

    // The API lists them newest first, by key and operation, in pages.
    let (status, mine) = api
        .get(&format!("/v1/audit?key_id={key_id}&limit=200"))
        .await;
    assert_eq!(status, 200, "{mine}");
    let ops: Vec<&str> = mine["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["operation"].as_str())
        .collect();
    let mut newest_first: Vec<&str> = WALK.to_vec();
    newest_first.reverse();
    assert_eq!(ops, newest_first);

    let (_, pauses) = api.get("/v1/audit?operation=pause_activity").await;
    assert_eq!(
        pauses["items"].as_array().map(Vec::len),
        Some(1),
        "{pauses}"
    );
    assert_eq!(pauses["items"][0]["key_name"], "auditor");
    assert_eq!(
        pauses["items"][0]["change"]["after"]["paused"], true,
        "{pauses}"
    );
    assert_eq!(pauses["items"][0]["change"]["before"]["paused"], false);

    let subject = format!(
        "/v1/audit?subject_type=activity&subject_id={}&limit=4",
        walk.activity
    );
    let (_, first) = api.get(&subject).await;
    let cursor = first["next_cursor"].as_str().unwrap_or_default().to_owned();
    assert!(!cursor.is_empty(), "{first}");
    let (_, second) = api.get(&format!("{subject}&cursor={cursor}")).await;
    let seqs = |page: &Value| -> Vec<i64> {
        page["items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| e["seq"].as_i64())
            .collect()
    };
    let (a, b) = (seqs(&first), seqs(&second));
    assert_eq!(a.len(), 4);
    assert!(
        a.windows(2).all(|w| w[0] > w[1]) && b.iter().all(|s| s < &a[3]),
        "{a:?} {b:?}"
    );

    let future = (Utc::now() + Duration::hours(1)).to_rfc3339();
    let (_, none) = api
        .get(&format!("/v1/audit?since={}", urlencode(&future)))
        .await;
    assert_eq!(none["items"], json!([]));
    let (_, all) = api
        .get(&format!("/v1/audit?until={}&limit=200", urlencode(&future)))
        .await;
    assert!(all["items"].as_array().map(Vec::len) >= Some(WALK.len()));
    let (status, _) = api.get("/v1/audit?subject_type=planet").await;
    assert_eq!(status, 400);
    let (_, projects) = api
        .get(&format!(
            "/v1/audit?subject_type=project&subject_id={PROJECT}"
        ))
        .await;
    let ops: Vec<&str> = projects["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["operation"].as_str())
        .collect();
    assert_eq!(
        ops,
        [
            "delete_project",
            "patch_project",
            "put_project",
            "create_project"
        ],
        "{projects}"
    );
    // The document's pattern for the filter names every kind an entry has.
    let text = std::fs::read_to_string("openapi/openapi.json")
        .unwrap_or_else(|e| panic!("read openapi/openapi.json: {e}"));
    let document: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    let pattern = document["paths"]["/v1/audit"]["get"]["parameters"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["name"] == "subject_type")
        .and_then(|p| p["schema"]["pattern"].as_str())
        .unwrap_or_default();
    for kind in acp_domain::audit::SUBJECT_KINDS {
        assert!(pattern.contains(kind), "{kind} is not in {pattern}");
    }

    // Read-only keys do not see it.
    let (_, reader) = api
        .post("/v1/keys", &json!({"name": "reader", "scope": "write"}))
        .await;
    let reader = Caller::new(&app.base, reader["token"].as_str().unwrap_or_default());
    assert_eq!(reader.get("/v1/audit").await.0, 403);
}

async fn last_seq_count(pool: &PgPool) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM audit_log")
        .fetch_one(pool)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

fn urlencode(text: &str) -> String {
    text.replace('+', "%2B").replace(':', "%3A")
}

#[sqlx::test(migrations = "./migrations")]
async fn dry_runs_and_failed_writes_leave_no_entry(pool: PgPool) {
    let app = TestApp::without_temporal(pool.clone()).await;
    let created = app.create(&activity_body("quiet")).await;
    let id = id_of(&created);
    let before = last_seq(&pool).await;

    let cases: Vec<(&str, reqwest::RequestBuilder, u16)> = vec![
        (
            "422: an invalid definition",
            app.http
                .post(app.url("/v1/activities"))
                .json(&json!({"name": "", "trigger": {"type": "interval", "every": "nope"}, "tasks": []})),
            422,
        ),
        (
            "412: a stale If-Match",
            app.http
                .put(app.url(&format!("/v1/activities/{id}")))
                .header("if-match", "\"7\"")
                .json(&activity_body("stale")),
            412,
        ),
        (
            "412: a stale If-Match on delete",
            app.http
                .delete(app.url(&format!("/v1/activities/{id}")))
                .header("if-match", "\"7\""),
            412,
        ),
        (
            "404: no such activity",
            app.http
                .post(app.url(&format!("/v1/activities/{}/pause", Uuid::new_v4())))
                .json(&json!({})),
            404,
        ),
        (
            "404: no such key",
            app.http
                .post(app.url(&format!("/v1/keys/{}/revoke", Uuid::new_v4()))),
            404,
        ),
        (
            "a resume's dry run",
            app.http
                .post(app.url(&format!("/v1/activities/{id}/resume")))
                .json(&json!({"dry_run": true})),
            200,
        ),
        (
            "a backfill's dry run",
            app.http
                .post(app.url(&format!("/v1/activities/{id}/backfill")))
                .json(&json!({"start": "2026-01-01T00:00:00Z", "end": "2026-01-01T05:00:00Z", "dry_run": true})),
            200,
        ),
        (
            "a bulk retry's dry run",
            app.http
                .post(app.url(&format!("/v1/activities/{id}/runs/retry")))
                .json(&json!({"dry_run": true})),
            200,
        ),
        (
            "a preview",
            app.http.post(app.url("/v1/schedules/preview")).json(
                &json!({"trigger": {"type": "interval", "every": "PT1H"}}),
            ),
            200,
        ),
    ];
    for (what, request, want) in cases {
        let response = request.send().await.unwrap_or_else(|e| panic!("{e}"));
        let status = response.status().as_u16();
        let body = response.text().await.unwrap_or_default();
        assert_eq!(status, want, "{what}: {body}");
        assert_eq!(last_seq(&pool).await, before, "{what} left an entry");
    }

    // Nothing updates or deletes an entry, not even SQL.
    let refused = sqlx::query("DELETE FROM audit_log").execute(&pool).await;
    assert!(refused.is_err(), "the log is append-only");
}
