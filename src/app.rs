//! Build the router and its layers, bind, run the service's components, and
//! shut down gracefully.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::handler::Handler;
use axum::http::HeaderValue;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use tokio::net::TcpListener;
use tower_http::cors::{AllowHeaders, AllowMethods, AllowOrigin, CorsLayer};
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::TraceLayer;
use utoipa_swagger_ui::{Config, SwaggerUi};

use crate::api::error::ApiError;
use crate::api::extract::BodyLimit;
use crate::api::{self, AppState};
use crate::config::{HttpOptions, Settings, redact_url};
use crate::duties;
use acp_service::Services;
use acp_temporal::TemporalGateway;

/// Which components a process runs: the HTTP API or not, and the duties
/// `duties::TABLE` gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Service {
    /// `acp serve`: everything in one process (migrates first).
    Serve,
    /// `acp api`: the HTTP API and the duties that live with it.
    Api,
    /// `acp worker`: the Temporal worker and the broker consumers.
    Worker,
}

impl Service {
    /// The subcommand's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Service::Serve => "serve",
            Service::Api => "api",
            Service::Worker => "worker",
        }
    }
}

pub fn build_state(settings: &Settings) -> anyhow::Result<AppState> {
    let pool = acp_service::lazy_pool(&settings.database_url, settings.db_max_connections)?;
    let mut state = AppState::new(
        pool,
        Arc::new(TemporalGateway::new(settings.temporal())),
        &settings.task_queue,
    );
    if let Some(services) = Arc::get_mut(&mut state.services) {
        services.set_stream_buffer(settings.stream_buffer);
        services.set_retention(settings.retention());
    }
    Ok(state)
}

async fn openapi_json() -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        api::openapi::document_json(),
    )
        .into_response()
}

async fn not_found() -> ApiError {
    ApiError::NotFound("route")
}

/// The whole HTTP surface: documented API routes, the spec, Swagger UI.
pub fn build_router(state: AppState, body_limit: usize) -> Router {
    build_router_with(state, &HttpOptions::new(body_limit))
}

/// A request span keyed by the matched route (low cardinality) and the request ID.
fn request_span(request: &axum::http::Request<axum::body::Body>) -> tracing::Span {
    let route = request
        .extensions()
        .get::<axum::extract::MatchedPath>()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_else(|| "unmatched".into());
    let request_id = request
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("-")
        .to_owned();
    tracing::info_span!(
        "request",
        method = %request.method(),
        %route,
        %request_id,
        key_id = tracing::field::Empty
    )
}

/// Answers a request that takes longer than `limit` with a 503 problem.
async fn time_limit(
    axum::extract::State(limit): axum::extract::State<Duration>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    match tokio::time::timeout(limit, next.run(request)).await {
        Ok(response) => response,
        Err(_) => {
            tracing::warn!(?limit, "request timed out");
            ApiError::Timeout(limit).into_response()
        }
    }
}

pub fn build_router_with(state: AppState, options: &HttpOptions) -> Router {
    let body_limit = options.body_limit;
    let (api_router, _) = api::router().split_for_parts();
    let document = serde_json::to_value(api::openapi::document()).unwrap_or_default();
    let selection = api::project_header::Selection {
        state: state.clone(),
        routes: Arc::new(api::project_header::ProjectRoutes::from_document(&document)),
    };
    let auth = if options.auth {
        api::auth::Auth::Keys {
            keys: state.keys.clone(),
            table: Arc::new(api::auth::ScopeTable::from_document(&document)),
            known: Default::default(),
        }
    } else {
        api::auth::Auth::Disabled
    };
    // Layers run outermost last-added: the key is authenticated before the
    // project it names is chosen.
    let api_router = api_router
        .route_layer(axum::middleware::from_fn_with_state(
            selection,
            api::project_header::select_project,
        ))
        .route_layer(axum::middleware::from_fn_with_state(
            auth,
            api::auth::require_key,
        ))
        .method_not_allowed_fallback(|| async { ApiError::MethodNotAllowed })
        .with_state(state);
    let router = Router::new()
        .route("/openapi.json", axum::routing::get(openapi_json))
        .merge(SwaggerUi::new("/swagger-ui").config(Config::from("/openapi.json")))
        .merge(api::console::router())
        .merge(api_router)
        .route_layer(axum::middleware::from_fn(crate::metrics::track))
        .fallback(not_found.layer(axum::middleware::from_fn(crate::metrics::track)))
        .layer(axum::middleware::from_fn_with_state(
            options.request_timeout,
            time_limit,
        ))
        .layer(DefaultBodyLimit::max(body_limit))
        .layer(axum::Extension(BodyLimit(body_limit)));
    let router = if options.cors_origins.is_empty() {
        router
    } else {
        let origins: Vec<HeaderValue> = options
            .cors_origins
            .iter()
            .filter_map(|o| HeaderValue::from_str(o.trim()).ok())
            .collect();
        router.layer(
            CorsLayer::new()
                .allow_origin(AllowOrigin::list(origins))
                .allow_methods(AllowMethods::mirror_request())
                .allow_headers(AllowHeaders::mirror_request())
                .expose_headers([header::ETAG, header::LOCATION, X_REQUEST_ID.clone()]),
        )
    };
    // Outermost first: a request ID is set (or kept), the span carries it,
    // and the response echoes it.
    router
        .layer(PropagateRequestIdLayer::new(X_REQUEST_ID.clone()))
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(request_span)
                .on_request(())
                .on_response(
                    tower_http::trace::DefaultOnResponse::new()
                        .level(tracing::Level::INFO)
                        .latency_unit(tower_http::LatencyUnit::Millis),
                ),
        )
        .layer(SetRequestIdLayer::new(
            X_REQUEST_ID.clone(),
            MakeRequestUuid,
        ))
        .layer(tower::limit::ConcurrencyLimitLayer::new(
            options.max_concurrency.max(1),
        ))
}

/// What `acp worker` serves on `ACP_PROBE_LISTEN`: liveness, readiness
/// (with the duties it carries) and its metrics, nothing of the API.
pub fn probe_router(state: AppState) -> Router {
    use axum::routing::get;
    Router::new()
        .route("/healthz", get(api::health::healthz))
        .route("/readyz", get(api::health::readyz))
        .route("/metrics", get(api::health::metrics))
        .fallback(not_found)
        .with_state(state)
}

static X_REQUEST_ID: axum::http::HeaderName = axum::http::HeaderName::from_static("x-request-id");

/// Serves until `shutdown` resolves, then finishes in-flight requests.
///
/// The router is made a service once and shared: handed over as a `Router`,
/// axum rebuilds it per connection (~440 allocations, 70 KiB RSS each).
pub async fn serve(
    listener: TcpListener,
    router: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router.into_make_service())
        .with_graceful_shutdown(shutdown)
        .await
}

/// Resolves on SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = terminate => {},
    }
    tracing::info!("shutdown signal received");
}

/// Migrations at start-up, waiting a while for a database that is still
/// coming up (containers start in any order).
async fn migrate_with_retry(services: &Services, settings: &Settings) -> anyhow::Result<()> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        match services.migrate().await {
            Ok(()) => return Ok(()),
            Err(err) if tokio::time::Instant::now() < deadline => {
                tracing::warn!(error = %err, url = %redact_url(&settings.database_url), "migrations failed; retrying");
                tokio::time::sleep(Duration::from_secs(2)).await;
            }
            Err(err) => return Err(err),
        }
    }
}

/// Runs the components `service` names until SIGINT/SIGTERM (or until one
/// of them fails), then stops them within the grace period.
pub async fn run_service(service: Service, settings: Settings) -> anyhow::Result<()> {
    let command = service;
    tracing::info!(?settings, ?command, "starting");
    if settings.auth_disabled && command != Service::Worker {
        tracing::warn!(
            "authentication is OFF (--auth-disabled / ACP_AUTH_DISABLED): anyone who can reach {} can define, trigger and delete activities",
            settings.listen
        );
    }
    acp_service::metrics::set_activity_label(settings.metrics_activity_label);
    let state = build_state(&settings)?;
    if command == Service::Serve {
        migrate_with_retry(&state.services, &settings).await?;
    }
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let stopped = move || {
        let mut rx = stop_rx.clone();
        async move {
            let _ = rx.wait_for(|stop| *stop).await;
        }
    };
    let mut tasks = tokio::task::JoinSet::new();

    // The listeners first: a port already taken stops the process before
    // any duty starts.
    let api_listener = if matches!(command, Service::Serve | Service::Api) {
        Some(TcpListener::bind(settings.listen).await?)
    } else {
        None
    };
    let probe_listener = match (command, settings.probe_listen) {
        (Service::Worker, Some(probe)) => Some(TcpListener::bind(probe).await?),
        _ => None,
    };

    let context = duties::Context {
        services: &state.services,
        settings: &settings,
    };
    for duty in duties::carried_by(command, &settings) {
        let running = duty.start(&context, Box::pin(stopped()))?;
        tasks.spawn(async move {
            running.await;
            Ok(())
        });
    }

    if let Some(listener) = api_listener {
        let addr = listener.local_addr()?;
        tracing::info!(
            api = %format!("http://{addr}/v1/activities"),
            swagger_ui = %format!("http://{addr}/swagger-ui/"),
            console = %format!(
                "http://{addr}/console/{}",
                if api::console::is_built() { "" } else { " (not built: scripts/console build)" }
            ),
            "listening"
        );
        let router = build_router_with(state.clone(), &settings.http());
        let shutdown = stopped();
        tasks.spawn(async move {
            serve(listener, router, shutdown)
                .await
                .map_err(anyhow::Error::from)
        });
    }
    if let Some(listener) = probe_listener {
        tracing::info!(probes = %format!("http://{}/readyz", listener.local_addr()?), "listening");
        let shutdown = stopped();
        let router = probe_router(state.clone());
        tasks.spawn(async move {
            serve(listener, router, shutdown)
                .await
                .map_err(anyhow::Error::from)
        });
    }

    tokio::select! {
        _ = shutdown_signal() => {}
        Some(result) = tasks.join_next() => {
            // A component ended by itself: that is a failure of the service.
            let _ = stop_tx.send(true);
            result??;
            anyhow::bail!("a component stopped unexpectedly");
        }
    }
    // Stop accepting, let in-flight requests and the worker's tasks finish,
    // but no longer than the grace period.
    let _ = stop_tx.send(true);
    let grace = settings.shutdown_grace();
    let drained = tokio::time::timeout(grace, async {
        while let Some(result) = tasks.join_next().await {
            result??;
        }
        anyhow::Ok(())
    })
    .await;
    match drained {
        Ok(result) => result?,
        Err(_) => anyhow::bail!("components did not stop within the {grace:?} grace period"),
    }
    tracing::info!("stopped");
    Ok(())
}
