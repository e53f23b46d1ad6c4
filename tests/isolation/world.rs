//! Two teams on one service: projects `team-a` and `team-b`, each with an
//! admin key, and in `team-b` one of everything a key can reach (an
//! activity on a shared event type, a scheduled one, a run, an event, a
//! source, a subscription, a calendar, an alert, a key). `team-a` owns the
//! same kinds of things, so a list that hides B's can be seen to show A's.

use crate::common::*;

use reqwest::Method;
use serde_json::{Value, json};
use sqlx::PgPool;
use uuid::Uuid;

/// The event type both teams' activities listen to.
pub const SHARED_TYPE: &str = "order.placed";

/// What one project owns, by ID.
#[derive(Debug, Clone)]
pub struct Owned {
    pub project: String,
    /// An admin key's token of the project.
    pub token: String,
    /// An activity triggered by [`SHARED_TYPE`].
    pub activity: String,
    /// A scheduled activity (an interval trigger).
    pub scheduled: String,
    /// A run of `activity`, seeded as failed so retry and cancel apply.
    pub run: String,
    /// An event the project's key posted.
    pub event: String,
    pub source: String,
    pub subscription: String,
    pub calendar: String,
    pub alert: String,
    /// A read key of the project (not the admin key).
    pub key: String,
}

pub struct World {
    pub app: TestApp,
    pub a: Owned,
    pub b: Owned,
}

impl World {
    /// Both projects, with what each owns. Temporal is a closed port: the
    /// activities stay `pending`, which every read and write still reaches.
    pub async fn build(pool: PgPool) -> Self {
        let app = TestApp::without_temporal(pool).await;
        let a = Owned::create(&app, "team-a").await;
        let b = Owned::create(&app, "team-b").await;
        let world = Self { app, a, b };
        world.assert_owner_reaches_all(&world.b).await;
        world
    }

    /// The owner's key reads each of its objects by ID: the 404s the walk
    /// sees are another project's, not of IDs that do not exist.
    async fn assert_owner_reaches_all(&self, owner: &Owned) {
        for path in [
            format!("/v1/activities/{}", owner.activity),
            format!("/v1/activities/{}", owner.scheduled),
            format!("/v1/runs/{}", owner.run),
            format!("/v1/events/{}", owner.event),
            format!("/v1/sources/{}", owner.source),
            format!("/v1/subscriptions/{}", owner.subscription),
            format!("/v1/calendars/{}", owner.calendar),
            format!("/v1/alerts/{}", owner.alert),
            format!("/v1/keys/{}", owner.key),
        ] {
            let (status, body) = self.call(&owner.token, Method::GET, &path, None).await;
            assert_eq!(status, 200, "GET {path} with its owner's key: {body}");
        }
    }

    /// A request with `token`; the answer's status and JSON body (`Null`
    /// when it is not JSON). PATCH bodies are sent as merge patches.
    pub async fn call(
        &self,
        token: &str,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> (u16, Value) {
        let mut request = self
            .app
            .http
            .request(method.clone(), self.app.url(path))
            .bearer_auth(token);
        if let Some(body) = body {
            let content_type = if method == Method::PATCH {
                "application/merge-patch+json"
            } else {
                "application/json"
            };
            request = request
                .header("content-type", content_type)
                .body(body.to_string());
        }
        let response = request
            .send()
            .await
            .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
        json(response).await
    }

    /// A POST with `token` of `body` as `content_type` (e.g. a CloudEvent's).
    pub async fn call_as(
        &self,
        token: &str,
        path: &str,
        content_type: &str,
        body: &Value,
    ) -> (u16, Value) {
        let response = self
            .app
            .http
            .post(self.app.url(path))
            .bearer_auth(token)
            .header("content-type", content_type)
            .body(body.to_string())
            .send()
            .await
            .unwrap_or_else(|e| panic!("POST {path}: {e}"));
        json(response).await
    }

    /// A's key asks for something of B's by ID: the answer must be the
    /// same 404 problem an ID that never existed gets.
    pub async fn assert_hidden(&self, method: Method, path: &str, body: Option<&Value>) {
        let (status, problem) = self.call(&self.a.token, method.clone(), path, body).await;
        assert_eq!(
            status, 404,
            "{method} {path} with team-a's key answered {status}: {problem}"
        );
        assert_eq!(
            problem["type"], "https://activity-control-plane.dev/problems/not-found",
            "{method} {path}: {problem}"
        );
    }

    /// The IDs (`field` of each item) of a list page A's key reads.
    pub async fn listed_by_a(&self, path: &str, field: &str) -> Vec<String> {
        let (status, page) = self.call(&self.a.token, Method::GET, path, None).await;
        assert_eq!(status, 200, "GET {path}: {page}");
        page["items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|item| item[field].as_str().map(str::to_owned))
            .collect()
    }

    /// A list A's key reads shows `own` (A's) and not `foreign` (B's).
    pub async fn assert_listed_only_own(&self, path: &str, field: &str, own: &str, foreign: &str) {
        let ids = self.listed_by_a(path, field).await;
        assert!(
            ids.iter().any(|id| id == own),
            "GET {path}: A's {own} missing from {ids:?}"
        );
        assert!(
            !ids.iter().any(|id| id == foreign),
            "GET {path}: team-b's {foreign} shown to team-a: {ids:?}"
        );
    }
}

impl Owned {
    async fn create(app: &TestApp, project: &str) -> Self {
        app.create_project(project, json!({})).await;
        let token = app.project_key(project, "admin", "admin").await.1;
        let (key_id, _) = app.project_key(project, "reader", "read").await;
        let post = |path: &'static str, body: Value| {
            let token = token.clone();
            async move {
                let response = reqwest::Client::new()
                    .post(app.url(path))
                    .bearer_auth(&token)
                    .json(&body)
                    .send()
                    .await
                    .unwrap_or_else(|e| panic!("POST {path}: {e}"));
                let (status, body) = json(response).await;
                assert!(
                    status == 201 || status == 202,
                    "POST {path}: {status} {body}"
                );
                body
            }
        };
        let id = |body: &Value| body["id"].as_str().unwrap_or_default().to_owned();
        let calendar = id(&post(
            "/v1/calendars",
            json!({"name": format!("{project} holidays"), "timezone": "Europe/Berlin",
                   "covered_until": "2030-12-31",
                   "holidays": [{"date": "2030-12-25", "name": "Christmas"}]}),
        )
        .await);
        let activity = id(&post(
            "/v1/activities",
            json!({"name": format!("{project} orders"),
                   "trigger": {"type": "event", "event_types": [SHARED_TYPE]},
                   "tasks": [{"task_type": "noop"}]}),
        )
        .await);
        let scheduled = id(&post(
            "/v1/activities",
            json!({"name": format!("{project} nightly"),
                   "trigger": {"type": "interval", "every": "PT1H"},
                   "tasks": [{"task_type": "noop"}]}),
        )
        .await);
        let source = id(&post(
            "/v1/sources",
            json!({"name": format!("{project}-orders"), "kind": "rabbitmq", "enabled": false,
                   "config": {"url": "amqp://guest@127.0.0.1:5672/%2f",
                              "queue": format!("{project}-orders")}}),
        )
        .await);
        let subscription = id(&post(
            "/v1/subscriptions",
            json!({"url": format!("https://hooks.example.com/{project}"),
                   "types": ["run.failed"]}),
        )
        .await);
        let event = post(
            "/v1/events",
            json!({"event_type": SHARED_TYPE, "source": "shop",
                   "event_id": format!("{project}-order-1"), "payload": {"order": 1}}),
        )
        .await["event_id"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let activity_uuid = Uuid::parse_str(&activity).unwrap_or_default();
        let run: Uuid = sqlx::query_scalar(
            "INSERT INTO activity_runs (run_id, activity_id, workflow_id, trigger_type, status, \
             finished_at) VALUES (gen_random_uuid(), $1, 'activity-' || $1 || ':manual-seeded', \
             'manual', 'failed', now()) RETURNING run_id",
        )
        .bind(activity_uuid)
        .fetch_one(&app.pool)
        .await
        .unwrap_or_else(|e| panic!("seed a run: {e}"));
        let alert: Uuid = sqlx::query_scalar(
            "INSERT INTO alerts (id, activity_id, kind, summary) \
             VALUES (gen_random_uuid(), $1, 'stuck', 'a run is stuck') RETURNING id",
        )
        .bind(activity_uuid)
        .fetch_one(&app.pool)
        .await
        .unwrap_or_else(|e| panic!("seed an alert: {e}"));
        Self {
            project: project.to_owned(),
            token,
            activity,
            scheduled,
            run: run.to_string(),
            event,
            source,
            subscription,
            calendar,
            alert: alert.to_string(),
            key: key_id,
        }
    }
}
