//! Liveness and readiness.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::Serialize;
use utoipa::ToSchema;

use super::AppState;
use acp_service::duties::{Duty, Role};

#[derive(Debug, Serialize, ToSchema)]
pub struct Health {
    #[schema(example = "ok")]
    pub status: String,
}

/// One dependency's state.
#[derive(Debug, Serialize, ToSchema)]
pub struct DependencyCheck {
    /// `up` or `down`.
    #[schema(example = "up")]
    pub status: String,
    /// Why it is down.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Readiness {
    /// `ready` when every dependency is up, else `unavailable`.
    #[schema(example = "ready")]
    pub status: String,
    pub postgres: DependencyCheck,
    pub temporal: DependencyCheck,
    /// The background duties this process carries and its role in each
    /// (a fleet needs one `leader` of each single duty somewhere).
    pub duties: Vec<DutyState>,
}

/// A background duty this process carries.
#[derive(Debug, Serialize, ToSchema)]
pub struct DutyState {
    pub duty: DutyName,
    pub role: DutyRole,
}

/// A background duty (see the README's table of which subcommand carries which).
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DutyName {
    Reconcile,
    AlertEvaluation,
    FlowRecovery,
    NotificationHandOver,
    EventDispatch,
    BrokerConsumption,
    TemporalWorker,
    ChangeSequencer,
    HistoryRetention,
}

/// `leader`: holds a duty that must be single in the fleet and acts on it;
/// `standby`: carries it and takes it over when the leader goes; `shared`:
/// a duty every process that carries it performs, dividing the work.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DutyRole {
    Leader,
    Standby,
    Shared,
}

impl From<(Duty, Role)> for DutyState {
    fn from((duty, role): (Duty, Role)) -> Self {
        Self {
            duty: match duty {
                Duty::Reconcile => DutyName::Reconcile,
                Duty::AlertEvaluation => DutyName::AlertEvaluation,
                Duty::FlowRecovery => DutyName::FlowRecovery,
                Duty::NotificationHandOver => DutyName::NotificationHandOver,
                Duty::EventDispatch => DutyName::EventDispatch,
                Duty::BrokerConsumption => DutyName::BrokerConsumption,
                Duty::TemporalWorker => DutyName::TemporalWorker,
                Duty::ChangeSequencer => DutyName::ChangeSequencer,
                Duty::HistoryRetention => DutyName::HistoryRetention,
            },
            role: match role {
                Role::Leader => DutyRole::Leader,
                Role::Standby => DutyRole::Standby,
                Role::Shared => DutyRole::Shared,
            },
        }
    }
}

/// Liveness: the process is serving.
#[utoipa::path(get, path = "/healthz", tag = "health",
    responses((status = 200, description = "Alive", body = Health)))]
pub async fn healthz() -> Json<Health> {
    Json(Health {
        status: "ok".into(),
    })
}

fn check<E: std::fmt::Display>(result: Result<(), E>) -> DependencyCheck {
    match result {
        Ok(()) => DependencyCheck {
            status: "up".into(),
            error: None,
        },
        Err(e) => DependencyCheck {
            status: "down".into(),
            error: Some(e.to_string()),
        },
    }
}

/// Readiness: PostgreSQL and Temporal both answer. Says which one does not,
/// and which background duties this process carries (its role in each).
#[utoipa::path(get, path = "/readyz", tag = "health",
    responses(
        (status = 200, description = "Ready", body = Readiness),
        (status = 503, description = "A dependency is down", body = Readiness),
    ))]
pub async fn readyz(State(state): State<AppState>) -> (StatusCode, Json<Readiness>) {
    let (pg, temporal) = state.services.readiness().await;
    let readiness = Readiness {
        status: String::new(),
        postgres: check(pg),
        temporal: check(temporal),
        duties: state
            .services
            .duties
            .snapshot()
            .into_iter()
            .map(DutyState::from)
            .collect(),
    };
    let ready = readiness.postgres.status == "up" && readiness.temporal.status == "up";
    let status = if ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (
        status,
        Json(Readiness {
            status: if ready { "ready" } else { "unavailable" }.into(),
            ..readiness
        }),
    )
}

/// Prometheus metrics: HTTP requests and latency by matched route, runs by
/// activity and status, skipped fires by reason, event dispatches by outcome,
/// schedule sync failures, reconcile duration, worker task latency, runs
/// queued for a concurrency slot per activity.
#[utoipa::path(get, path = "/metrics", tag = "health",
    responses((status = 200, description = "Prometheus text format", body = String, content_type = "text/plain")))]
pub async fn metrics(State(state): State<AppState>) -> axum::response::Response {
    // Queue lengths are read from PostgreSQL at each scrape, so every
    // replica reports the same; a database outage leaves the last values.
    if let Err(err) = state.services.flow.refresh_gauge().await {
        tracing::debug!(error = %err, "could not refresh the flow queue gauge");
    }
    crate::metrics::render().await
}
