//! One error type for every handler, rendered as RFC 9457 problem documents.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;

use acp_domain::FieldError;
use acp_domain::project::rate::RateExceeded;
use acp_service as service;
use acp_service::StoreError;
use acp_temporal::GatewayError;

/// `Retry-After` of a create a count quota refuses, in seconds.
pub const QUOTA_RETRY_AFTER_SECONDS: &str = "60";

/// An RFC 9457 problem document (`application/problem+json`).
#[derive(Debug, Serialize, ToSchema)]
pub struct Problem {
    /// A URI reference naming the problem type.
    #[schema(example = "https://activity-control-plane.dev/problems/validation")]
    pub r#type: String,
    /// Short, human-readable summary of the problem type.
    pub title: String,
    /// The HTTP status code.
    pub status: u16,
    /// Explanation specific to this occurrence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Per-field problems, for validation failures.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<FieldError>,
    /// The project's quota that refused a create (`quota-exceeded` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = "activities")]
    pub quota: Option<String>,
    /// That quota's limit (`quota-exceeded` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
    /// What the project uses of that quota now (`quota-exceeded` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<i64>,
}

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The body or parameters could not be read at all (syntax, type, unknown field).
    #[error("bad request")]
    BadRequest(Vec<FieldError>),
    /// The request was well-formed but its values are not acceptable.
    #[error("validation failed")]
    Validation(Vec<FieldError>),
    #[error("{0} not found")]
    NotFound(&'static str),
    /// The `Acp-Project` header names a project that does not exist, or
    /// one the caller's key may not act in (the same answer for both).
    #[error("project `{0}` not found")]
    UnknownProject(String),
    #[error("the resource changed since the version in If-Match")]
    PreconditionFailed { current_version: i64 },
    #[error("conflict: {0}")]
    Conflict(String),
    /// What was asked for existed once and is no longer kept.
    #[error("gone: {0}")]
    Gone(String),
    /// A known event ID arrived with other content.
    #[error("conflicting re-delivery of event {}", .0.event_id)]
    EventConflict(service::EventConflict),
    #[error("request body exceeds {limit} bytes")]
    PayloadTooLarge { limit: usize },
    #[error("unsupported media type")]
    UnsupportedMediaType(String),
    #[error("method not allowed")]
    MethodNotAllowed,
    /// No bearer token, or one that names no live key.
    #[error("unauthorized: {0}")]
    Unauthorized(&'static str),
    /// A live key whose scope does not cover the route.
    #[error("forbidden: needs scope {needed}")]
    Forbidden {
        needed: acp_domain::auth::Scope,
        have: acp_domain::auth::Scope,
    },
    /// The request took longer than the configured request timeout.
    #[error("quota `{}` reached", .0.quota.name())]
    QuotaExceeded(acp_domain::project::QuotaExceeded),
    /// An event beyond the project's events-per-second quota.
    #[error("quota `events_per_second` reached")]
    RateExceeded(acp_domain::project::rate::RateExceeded),
    #[error("request timed out after {0:?}")]
    Timeout(std::time::Duration),
    #[error("a dependency is unavailable: {0}")]
    Unavailable(String),
    /// This service's settings for a dependency do not work: 503 naming
    /// the dependency (the details are in the service's log, not the answer).
    #[error("a dependency is misconfigured: {0}")]
    Misconfigured(String),
    #[error(transparent)]
    Internal(#[from] anyhow::Error),
}

impl ApiError {
    pub fn bad_field(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self::BadRequest(vec![FieldError::new(field, message)])
    }

    pub fn invalid_field(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Validation(vec![FieldError::new(field, message)])
    }

    fn parts(&self) -> (StatusCode, &'static str, &'static str) {
        match self {
            Self::BadRequest(_) => (
                StatusCode::BAD_REQUEST,
                "bad-request",
                "The request could not be read",
            ),
            Self::Validation(_) => (
                StatusCode::UNPROCESSABLE_ENTITY,
                "validation",
                "The request has invalid fields",
            ),
            Self::NotFound(_) | Self::UnknownProject(_) => {
                (StatusCode::NOT_FOUND, "not-found", "Not found")
            }
            Self::PreconditionFailed { .. } => (
                StatusCode::PRECONDITION_FAILED,
                "precondition-failed",
                "The resource has changed",
            ),
            Self::Conflict(_) => (StatusCode::CONFLICT, "conflict", "Conflict"),
            Self::Gone(_) => (StatusCode::GONE, "gone", "No longer kept"),
            Self::EventConflict(_) => (
                StatusCode::CONFLICT,
                "event-conflict",
                "The event ID was seen before with other content",
            ),
            Self::PayloadTooLarge { .. } => (
                StatusCode::PAYLOAD_TOO_LARGE,
                "payload-too-large",
                "Request body too large",
            ),
            Self::UnsupportedMediaType(_) => (
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported-media-type",
                "Unsupported media type",
            ),
            Self::MethodNotAllowed => (
                StatusCode::METHOD_NOT_ALLOWED,
                "method-not-allowed",
                "Method not allowed",
            ),
            Self::Unauthorized(_) => (
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "Authentication required",
            ),
            Self::Forbidden { .. } => (
                StatusCode::FORBIDDEN,
                "forbidden",
                "The API key's scope does not allow this",
            ),
            Self::QuotaExceeded(_) | Self::RateExceeded(_) => (
                StatusCode::TOO_MANY_REQUESTS,
                "quota-exceeded",
                "The project's quota is reached",
            ),
            Self::Unavailable(_) => (
                StatusCode::SERVICE_UNAVAILABLE,
                "unavailable",
                "A dependency is unavailable",
            ),
            Self::Misconfigured(_) => (
                StatusCode::SERVICE_UNAVAILABLE,
                "misconfigured",
                "A dependency is misconfigured",
            ),
            Self::Timeout(_) => (
                StatusCode::SERVICE_UNAVAILABLE,
                "timeout",
                "The request took too long",
            ),
            Self::Internal(_) => (
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                "Internal server error",
            ),
        }
    }

    pub fn to_problem(&self) -> Problem {
        let (status, slug, title) = self.parts();
        let (detail, errors) = match self {
            Self::BadRequest(errors) | Self::Validation(errors) => {
                let detail = errors
                    .iter()
                    .map(|e| format!("{}: {}", e.field, e.message))
                    .collect::<Vec<_>>()
                    .join("; ");
                (Some(detail), errors.clone())
            }
            Self::NotFound(what) => (Some(format!("{what} not found")), vec![]),
            Self::UnknownProject(name) => (
                Some(format!(
                    "project `{name}` (the `{}` header) not found",
                    super::project_header::HEADER
                )),
                vec![FieldError::new(
                    super::project_header::HEADER,
                    "names no project this key may act in",
                )],
            ),
            Self::PreconditionFailed { current_version } => (
                Some(format!(
                    "If-Match does not match the current version {current_version}; fetch it again and retry"
                )),
                vec![FieldError::new(
                    "If-Match",
                    format!("current version is \"{current_version}\""),
                )],
            ),
            Self::Conflict(detail) => (Some(detail.clone()), vec![]),
            Self::Gone(detail) => (
                Some(detail.clone()),
                vec![FieldError::new("Last-Event-ID", detail.clone())],
            ),
            Self::EventConflict(conflict) => (
                Some(format!(
                    "event `{}` was first seen at {} with other content; the first content stands (differs: {})",
                    conflict.event_id,
                    conflict
                        .first_seen
                        .to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
                    conflict.differs.join(", ")
                )),
                conflict
                    .differs
                    .iter()
                    .map(|field| {
                        FieldError::new(
                            *field,
                            format!("differs from event `{}` as first seen", conflict.event_id),
                        )
                    })
                    .collect(),
            ),
            Self::PayloadTooLarge { limit } => (
                Some(format!("the body must be at most {limit} bytes")),
                vec![FieldError::new("body", format!("exceeds {limit} bytes"))],
            ),
            Self::UnsupportedMediaType(detail) => (
                Some(detail.clone()),
                vec![FieldError::new("Content-Type", detail.clone())],
            ),
            Self::MethodNotAllowed => (None, vec![]),
            Self::Unauthorized(why) => (
                Some(format!(
                    "{why}; send `Authorization: Bearer <token>` with a key from `acp keys create`"
                )),
                vec![FieldError::new("Authorization", *why)],
            ),
            Self::Forbidden { needed, have } => (
                Some(format!(
                    "this route needs a key with scope `{needed}` (or one that includes it); this key has `{have}`"
                )),
                vec![FieldError::new(
                    "Authorization",
                    format!("scope `{have}` does not include `{needed}`"),
                )],
            ),
            Self::QuotaExceeded(q) => (
                Some(format!(
                    "the project has {} of its {} `{}`: delete one, or ask an operator to raise the quota",
                    q.usage,
                    q.limit,
                    q.quota.name()
                )),
                vec![],
            ),
            Self::RateExceeded(r) => (
                Some(format!(
                    "the project accepts {} events a second (beyond its burst): nothing of this event was kept; send it again after {} s",
                    r.limit, r.retry_after_seconds
                )),
                vec![],
            ),
            Self::Timeout(limit) => (
                Some(format!(
                    "no answer within {} ms; it may still take effect, so retry with the same Idempotency-Key or check before repeating a write",
                    limit.as_millis()
                )),
                vec![],
            ),
            // Which dependency is down is useful to the caller; its internals are not.
            Self::Unavailable(what) => (
                Some(format!("{what} is unavailable; retry shortly")),
                vec![],
            ),
            Self::Misconfigured(what) => (
                Some(format!(
                    "this service's settings for {what} do not work; its operators have the details in its log"
                )),
                vec![],
            ),
            Self::Internal(_) => (None, vec![]),
        };
        let quota = match self {
            Self::QuotaExceeded(q) => Some((q.quota.name(), q.limit, q.usage)),
            Self::RateExceeded(r) => Some((RateExceeded::QUOTA, r.limit, r.usage)),
            _ => None,
        };
        Problem {
            r#type: format!("https://activity-control-plane.dev/problems/{slug}"),
            title: title.to_owned(),
            status: status.as_u16(),
            detail,
            errors,
            quota: quota.map(|(name, _, _)| name.to_owned()),
            limit: quota.map(|(_, limit, _)| limit),
            usage: quota.map(|(_, _, usage)| usage),
        }
    }
}

impl From<StoreError> for ApiError {
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::NotFound => ApiError::NotFound("resource"),
            StoreError::Conflict(what) => ApiError::Conflict(what),
            StoreError::VersionMismatch { current } => ApiError::PreconditionFailed {
                current_version: current,
            },
            StoreError::Unavailable(_) => ApiError::Unavailable("PostgreSQL".into()),
            StoreError::KeyRevoked => ApiError::Unauthorized("the API key has been revoked"),
            StoreError::QuotaExceeded(q) => ApiError::QuotaExceeded(q),
            StoreError::Other(e) => ApiError::Internal(e),
        }
    }
}

/// Temporal's answers, the same on every route: a refusal is a conflict
/// with what Temporal holds, anything else means it is out of reach.
impl From<GatewayError> for ApiError {
    fn from(err: GatewayError) -> Self {
        match err {
            GatewayError::Rejected(message) => {
                ApiError::Conflict(format!("Temporal refused: {message}"))
            }
            GatewayError::AlreadyExists => {
                ApiError::Conflict("Temporal refused: it exists already".into())
            }
            GatewayError::Unavailable(_) => ApiError::Unavailable("Temporal".into()),
            GatewayError::Misconfigured(message) => {
                tracing::error!(%message, "Temporal is misconfigured");
                ApiError::Misconfigured("Temporal".into())
            }
        }
    }
}

impl From<service::Error> for ApiError {
    fn from(err: service::Error) -> Self {
        match err {
            service::Error::NotFound(what) => ApiError::NotFound(what),
            service::Error::Invalid(errors) => ApiError::Validation(errors),
            service::Error::Conflict(detail) => ApiError::Conflict(detail),
            service::Error::EventConflict(conflict) => ApiError::EventConflict(conflict),
            service::Error::Store(err) => err.into(),
            service::Error::Temporal(err) => err.into(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        match &self {
            ApiError::Internal(err) => tracing::error!(error = ?err, "request failed"),
            ApiError::Unavailable(what) => {
                tracing::warn!(dependency = %what, "dependency unavailable")
            }
            _ => {}
        }
        let problem = self.to_problem();
        let status =
            StatusCode::from_u16(problem.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let body = serde_json::to_vec(&problem).unwrap_or_default();
        let mut response = (status, body).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/problem+json"),
        );
        match self {
            ApiError::Unavailable(_) | ApiError::Timeout(_) => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
            }
            // Nothing a count quota limits frees on its own: a minute is a
            // polite pace to ask again at, not a promise.
            ApiError::QuotaExceeded(_) => {
                headers.insert(
                    header::RETRY_AFTER,
                    HeaderValue::from_static(QUOTA_RETRY_AFTER_SECONDS),
                );
            }
            // The rate refills: the time until the next token.
            ApiError::RateExceeded(r) => {
                headers.insert(
                    header::RETRY_AFTER,
                    HeaderValue::from(r.retry_after_seconds),
                );
            }
            ApiError::Unauthorized(_) => {
                headers.insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static("Bearer realm=\"activity-control-plane\""),
                );
            }
            _ => {}
        }
        response
    }
}

pub type ApiResult<T> = Result<T, ApiError>;
