//! A revoked key is refused on the very next request by every API process:
//! two `acp api` processes against one database. The busiest routes (run
//! history, event ingest) check a key they have seen in memory and leave its
//! liveness to the statement that serves the request; this shows that a
//! revocation through either replica, or from the command line, still
//! refuses the next request on both, on every kind of route: a page with
//! rows, an empty page, an event with subscribers and one without, and a
//! request the handler refuses before it reads anything.

use crate::common;

use common::*;
use serde_json::{Value, json};
use sqlx::PgPool;
use uuid::Uuid;

/// One request, with what it answers while the key is live.
struct Probe {
    name: &'static str,
    live: u16,
}

const PROBES: [Probe; 7] = [
    Probe {
        name: "GET /v1/activities",
        live: 200,
    },
    Probe {
        name: "GET /v1/runs (rows)",
        live: 200,
    },
    Probe {
        name: "GET /v1/runs (empty page)",
        live: 200,
    },
    Probe {
        name: "GET /v1/activities/{id}/runs",
        live: 200,
    },
    Probe {
        name: "POST /v1/events (subscribed)",
        live: 202,
    },
    Probe {
        name: "POST /v1/events (no subscriber)",
        live: 200,
    },
    Probe {
        name: "POST /v1/events (invalid)",
        live: 422,
    },
];

struct World {
    http: reqwest::Client,
    activity: String,
    pool: PgPool,
}

impl World {
    /// Sends probe `index` to `base`; returns its status and, for an event,
    /// its ID.
    async fn send(&self, base: &str, token: &str, index: usize) -> (u16, Option<String>) {
        let event_id = format!("probe-{}", Uuid::new_v4());
        let request = match index {
            0 => self.http.get(format!("{base}/v1/activities")),
            1 => self.http.get(format!("{base}/v1/runs?limit=2")),
            2 => self
                .http
                .get(format!("{base}/v1/runs?activity_id={}", Uuid::new_v4())),
            3 => self
                .http
                .get(format!("{base}/v1/activities/{}/runs", self.activity)),
            4 | 5 => self.http.post(format!("{base}/v1/events")).json(&json!({
                "event_id": event_id,
                "event_type": if index == 4 { "probe.sent" } else { "probe.unheard" },
                "source": "tests",
                "payload": {},
            })),
            _ => self
                .http
                .post(format!("{base}/v1/events"))
                .json(&json!({"event_id": event_id, "event_type": "probe.sent", "source": "", "payload": {}})),
        };
        let status = request
            .bearer_auth(token)
            .send()
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .status()
            .as_u16();
        (status, (index >= 4).then_some(event_id))
    }

    async fn recorded(&self, event_id: &str) -> bool {
        sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM events WHERE event_id = $1)")
            .bind(event_id)
            .fetch_one(&self.pool)
            .await
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// Every probe answers as it should while the key is live, on both
    /// replicas, twice (the second time from what each replica keeps).
    async fn all_live(&self, replicas: [&str; 2], token: &str) {
        for _ in 0..2 {
            for base in replicas {
                for (index, probe) in PROBES.iter().enumerate() {
                    let (status, _) = self.send(base, token, index).await;
                    assert_eq!(status, probe.live, "{} on {base} (live)", probe.name);
                }
            }
        }
    }

    /// Every probe is refused, and no refused event was recorded.
    async fn all_refused(&self, replicas: [&str; 2], token: &str, context: &str) {
        for base in replicas {
            for (index, probe) in PROBES.iter().enumerate() {
                let (status, event_id) = self.send(base, token, index).await;
                assert_eq!(status, 401, "{context}: {} on {base}", probe.name);
                if let Some(event_id) = event_id {
                    assert!(
                        !self.recorded(&event_id).await,
                        "{context}: {event_id} recorded"
                    );
                }
            }
        }
    }
}

/// POSTs `body` to `url` with `token`; the JSON answer.
async fn post(http: &reqwest::Client, url: String, token: &str, body: Value) -> Value {
    http.post(url)
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .json()
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// `acp_event_ingest_total{path}` of the process at `base`.
async fn ingested(http: &reqwest::Client, base: &str, path: &str) -> u64 {
    let text = http
        .get(format!("{base}/metrics"))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .text()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let series = format!("acp_event_ingest_total{{path=\"{path}\"}} ");
    text.lines()
        .find_map(|line| line.strip_prefix(&series)?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {series} in\n{text}"))
}

async fn create_key(
    http: &reqwest::Client,
    base: &str,
    admin: &str,
    name: &str,
    scope: &str,
) -> (String, String) {
    let created = post(
        http,
        format!("{base}/v1/keys"),
        admin,
        json!({"name": name, "scope": scope}),
    )
    .await;
    let token = created["token"].as_str().unwrap_or_default().to_owned();
    let id = created["id"].as_str().unwrap_or_default().to_owned();
    (token, id)
}

#[sqlx::test(migrations = "./migrations")]
async fn a_revoked_key_is_refused_on_the_next_request_on_every_replica(pool: PgPool) {
    let admin = cli_key(&pool, "admin");
    let temporal = shared_temporal();
    let namespace = new_namespace(&temporal.address()).await;
    let a = ServeProcess::start_command("api", &pool, &temporal.address(), &namespace, &[]).await;
    let b = ServeProcess::start_command("api", &pool, &temporal.address(), &namespace, &[]).await;
    let http = reqwest::Client::new();
    let created = post(
        &http,
        format!("{}/v1/activities", a.base),
        &admin,
        json!({
            "name": "probe", "trigger": {"type": "event", "event_types": ["probe.sent"]},
            "tasks": [{"task_type": "noop"}]
        }),
    )
    .await;
    let activity = created["id"].as_str().unwrap_or_default().to_owned();
    sqlx::query(
        "INSERT INTO activity_runs (run_id, activity_id, workflow_id, trigger_type, status)
         SELECT gen_random_uuid(), $1, 'activity-' || $1 || ':seed-' || i, 'manual', 'succeeded'
         FROM generate_series(1, 3) AS i",
    )
    .bind(Uuid::parse_str(&activity).unwrap_or_default())
    .execute(&pool)
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let world = World {
        http: http.clone(),
        activity,
        pool: pool.clone(),
    };
    let both = [a.base.as_str(), b.base.as_str()];

    for round in 0..4 {
        // A key both replicas have checked (and keep) ...
        let (token, id) =
            create_key(&http, &a.base, &admin, &format!("key-{round}"), "admin").await;
        world.all_live(both, &token).await;
        if round == 0 {
            // Both have written events in one statement (what the key
            // check rides on), after a first one the general way.
            for base in both {
                for path in ["one_statement", "general"] {
                    let n = ingested(&http, base, path).await;
                    assert!(n >= 1, "{base}: {n} events ingested by the {path} path");
                }
            }
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
        let order = [other.base.as_str(), via.base.as_str()];
        world
            .all_refused(order, &token, &format!("round {round}\n{}", other.log()))
            .await;
    }
    // A key whose scope does not cover a route is told so while it is live,
    // and that it is revoked once it is, on a route it was never let into.
    let (token, id) = create_key(&http, &a.base, &admin, "producer", "events").await;
    let runs = |base: &str| {
        http.get(format!("{base}/v1/runs"))
            .bearer_auth(&token)
            .send()
    };
    for base in both {
        for _ in 0..2 {
            let (status, _) = world.send(base, &token, 5).await;
            assert_eq!(status, 200, "an events key posts events");
            let status = runs(base).await.unwrap_or_else(|e| panic!("{e}")).status();
            assert_eq!(status, 403, "an events key reads no runs");
        }
    }
    let revoked = http
        .post(format!("{}/v1/keys/{id}/revoke", a.base))
        .bearer_auth(&admin)
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(revoked.status(), 200);
    for base in both {
        let status = runs(base).await.unwrap_or_else(|e| panic!("{e}")).status();
        assert_eq!(status, 401, "{base}: a revoked events key on GET /v1/runs");
    }
    // Revoked from the command line (no API process involved): the same.
    let (token, id) = create_key(&http, &a.base, &admin, "cli-revoked", "admin").await;
    world.all_live(both, &token).await;
    let out = std::process::Command::new(acp_bin())
        .args(["keys", "revoke", &id])
        .env("DATABASE_URL", database_url(&pool))
        .env("RUST_LOG", "warn")
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    world.all_refused(both, &token, "revoked by the CLI").await;
}
