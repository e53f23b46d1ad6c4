//! Prometheus metrics, served at `/metrics`: the HTTP families (by the
//! matched route rather than the path, to keep labels low-cardinality) and
//! the text page, over the registry the use cases' metrics are in
//! (`acp_service::metrics`).

use std::sync::LazyLock;
use std::time::Instant;

use acp_service::metrics::{REGISTRY, counter, histogram, latency_buckets};
use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use prometheus::{Encoder, HistogramVec, IntCounterVec, TextEncoder};

pub static HTTP_REQUESTS: LazyLock<IntCounterVec> = LazyLock::new(|| {
    counter(
        "acp_http_requests_total",
        "HTTP requests by matched route and status",
        &["method", "route", "status"],
    )
});
pub static HTTP_LATENCY: LazyLock<HistogramVec> = LazyLock::new(|| {
    histogram(
        "acp_http_request_duration_seconds",
        "HTTP request latency",
        &["method", "route"],
        latency_buckets(),
    )
});

/// Counts and times every request by its matched route (`unmatched` for
/// paths no route serves).
pub async fn track(request: Request, next: Next) -> Response {
    let method = request.method().as_str().to_owned();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_else(|| "unmatched".into());
    let started = Instant::now();
    let response = next.run(request).await;
    HTTP_LATENCY
        .with_label_values(&[&method, &route])
        .observe(started.elapsed().as_secs_f64());
    HTTP_REQUESTS
        .with_label_values(&[&method, &route, response.status().as_str()])
        .inc();
    response
}

/// `GET /metrics`: the Prometheus text format.
pub async fn render() -> Response {
    // Register every family. Those with known label values then show each
    // series at zero; the others (routes, activities, activity types) appear
    // when first seen.
    LazyLock::force(&HTTP_REQUESTS);
    LazyLock::force(&HTTP_LATENCY);
    acp_service::metrics::register_all();
    let mut buffer = Vec::new();
    let _ = TextEncoder::new().encode(&REGISTRY.gather(), &mut buffer);
    (
        [(
            axum::http::header::CONTENT_TYPE,
            "text/plain; version=0.0.4",
        )],
        buffer,
    )
        .into_response()
}
