//! `/v1/subscriptions`: a project's notification subscriptions and the
//! record of every delivery attempt. `admin` only: a subscription sees
//! every run of its project's activities.

use crate::api::caller::Caller;
use axum::Json;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use super::AppState;
use super::alerts::model::parse_target;
use super::extract::{IdParam, JsonBody};
use super::pagination::{Cursor, Listing, Page, page};
use crate::api::error::{ApiError, ApiResult};
use crate::api::problems;
use acp_domain::notify::{Attempt, Delivery, Subscription};
use acp_domain::notify::{DeliveryState, NotificationType};

/// Subscriptions' cursor: the last one's creation time and ID.
pub struct SubscriptionCursor;

impl Cursor for SubscriptionCursor {
    const SCOPE: &'static str = "subscriptions";
    type Key = (DateTime<Utc>, Uuid);
}
/// Deliveries' cursor: the last delivery's creation time and ID.
pub struct DeliveryCursor;

impl Cursor for DeliveryCursor {
    const SCOPE: &'static str = "deliveries";
    type Key = (DateTime<Utc>, Uuid);
}

/// A subscription: notifications of the chosen types are POSTed to `url`
/// as CloudEvents 1.0 structured JSON (`application/cloudevents+json`),
/// each with a stable `id` to deduplicate by, signed with
/// `X-Signature: sha256=<hex HMAC-SHA256 of the body>` when `secret_ref`
/// names a worker environment variable.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SubscriptionRequest {
    /// Absolute http(s) URL. Internal addresses are refused at delivery
    /// unless the SSRF guard is off (`ACP_WEBHOOK_ALLOW_INTERNAL`).
    #[schema(example = "https://hooks.example.com/acp", max_length = 2048)]
    pub url: String,
    #[serde(default)]
    #[schema(example = "NOTIFY_SECRET", pattern = r"^[A-Z_][A-Z0-9_]{0,127}$")]
    pub secret_ref: Option<String>,
    /// Only these types; absent or empty means all.
    #[serde(default)]
    #[schema(value_type = Vec<NotificationType>)]
    pub types: Vec<String>,
    /// Only this activity's notifications.
    #[serde(default)]
    pub activity_id: Option<Uuid>,
    #[serde(default)]
    #[schema(max_length = 2000)]
    pub description: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SubscriptionResponse {
    pub id: Uuid,
    pub url: String,
    pub secret_ref: Option<String>,
    pub types: Vec<NotificationType>,
    pub activity_id: Option<Uuid>,
    pub description: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// One attempt to deliver a notification.
#[derive(Debug, Serialize, ToSchema)]
pub struct AttemptResponse {
    pub attempt: i32,
    pub attempted_at: DateTime<Utc>,
    /// The receiver's HTTP status, when it answered.
    pub status_code: Option<i32>,
    pub error: Option<String>,
    pub duration_ms: i32,
}

/// One notification to this subscription, with every attempt.
#[derive(Debug, Serialize, ToSchema)]
pub struct DeliveryResponse {
    pub id: Uuid,
    /// The CloudEvent `id`.
    pub notification_id: Uuid,
    #[serde(rename = "type")]
    #[schema(value_type = NotificationType)]
    pub kind: String,
    pub url: String,
    pub state: DeliveryState,
    pub attempts: Vec<AttemptResponse>,
    pub last_error: Option<String>,
    pub created_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
}

fn render(s: Subscription) -> SubscriptionResponse {
    SubscriptionResponse {
        id: s.id,
        url: s.url,
        secret_ref: s.secret_ref,
        types: s
            .types
            .iter()
            .filter_map(|t| NotificationType::parse(t).ok())
            .collect(),
        activity_id: s.activity_id,
        description: s.description,
        created_at: s.created_at,
    }
}

fn render_delivery((d, attempts): (Delivery, Vec<Attempt>)) -> DeliveryResponse {
    DeliveryResponse {
        id: d.id,
        notification_id: d.notification_id,
        kind: d.kind,
        url: d.url,
        state: d.state,
        attempts: attempts
            .into_iter()
            .map(|a| AttemptResponse {
                attempt: a.attempt,
                attempted_at: a.attempted_at,
                status_code: a.status_code,
                error: a.error,
                duration_ms: a.duration_ms,
            })
            .collect(),
        last_error: d.last_error,
        created_at: d.created_at,
        finished_at: d.finished_at,
    }
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct PageQuery {
    /// Page size, 1 to 200 (default 50).
    #[param(value_type = Option<i32>, minimum = 1, maximum = 200)]
    pub limit: Option<String>,
    /// `next_cursor` of the previous page.
    pub cursor: Option<String>,
}

/// Create a subscription.
#[utoipa::path(
    post,
    path = "/v1/subscriptions",
    security(("bearer" = ["admin"])),
    tag = "subscriptions",
    request_body = SubscriptionRequest,
    responses(
        (status = 201, description = "Created", body = SubscriptionResponse, headers(("Location" = String))),
        problems::UnreadableBody,
        problems::QuotaExceeded,
        problems::BodyTooLarge,
        problems::NotJson,
        problems::InvalidFields,
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip_all)]
pub async fn create_subscription(
    State(state): State<AppState>,
    Caller(actor): Caller,
    JsonBody(request): JsonBody<SubscriptionRequest>,
) -> ApiResult<Response> {
    let mut errors = Vec::new();
    let target = parse_target(
        &mut errors,
        "",
        &request.url,
        request.secret_ref.as_deref(),
        &request.types,
    );
    if let Some(d) = &request.description
        && (d.chars().count() > 2000 || d.chars().any(|c| c.is_control() && c != '\n' && c != '\t'))
    {
        errors.push(acp_domain::FieldError::new(
            "description",
            "must be at most 2000 characters, no control characters",
        ));
    }
    let Some(target) = target.filter(|_| errors.is_empty()) else {
        return Err(ApiError::Validation(errors));
    };
    let created = state
        .services
        .notifications
        .create_subscription(
            &Subscription {
                id: Uuid::new_v4(),
                url: target.url,
                secret_ref: target.secret_ref,
                types: target.types.iter().map(|t| t.as_str().to_owned()).collect(),
                activity_id: request.activity_id,
                description: request.description,
                created_at: Utc::now(),
            },
            &actor,
        )
        .await?;
    tracing::info!(subscription_id = %created.id, "subscription created");
    let location = format!("/v1/subscriptions/{}", created.id);
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, location)],
        Json(render(created)),
    )
        .into_response())
}

/// List subscriptions, newest first.
#[utoipa::path(
    get,
    path = "/v1/subscriptions",
    security(("bearer" = ["admin"])),
    tag = "subscriptions",
    params(PageQuery),
    responses(
        (status = 200, description = "A page of subscriptions", body = Page<SubscriptionResponse>),
        problems::BadParameter,
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip_all)]
pub async fn list_subscriptions(
    State(state): State<AppState>,
    Caller(actor): Caller,
    Listing { limit, after, .. }: Listing<PageQuery, SubscriptionCursor>,
) -> ApiResult<Json<Page<SubscriptionResponse>>> {
    let rows = state
        .services
        .notifications
        .list_subscriptions(&actor.project, after, limit + 1)
        .await?;
    Ok(Json(page(
        rows,
        limit,
        SubscriptionCursor::SCOPE,
        |s| (s.created_at, s.id),
        render,
    )))
}

/// One subscription.
#[utoipa::path(
    get,
    path = "/v1/subscriptions/{id}",
    security(("bearer" = ["admin"])),
    tag = "subscriptions",
    params(("id" = Uuid, Path, description = "Subscription ID")),
    responses(
        (status = 200, description = "The subscription", body = SubscriptionResponse),
        problems::BadId,
        problems::NoSuchSubscription,
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip(actor, state))]
pub async fn get_subscription(
    State(state): State<AppState>,
    Caller(actor): Caller,
    IdParam(id): IdParam,
) -> ApiResult<Json<SubscriptionResponse>> {
    Ok(Json(render(
        state
            .services
            .notifications
            .get_subscription(id, &actor.project)
            .await?,
    )))
}

/// Delete a subscription: nothing more is sent to it; its deliveries stay listed.
#[utoipa::path(
    delete,
    path = "/v1/subscriptions/{id}",
    security(("bearer" = ["admin"])),
    tag = "subscriptions",
    params(("id" = Uuid, Path, description = "Subscription ID")),
    responses(
        (status = 204, description = "Deleted"),
        problems::BadId,
        problems::NoSuchSubscription,
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip(actor, state))]
pub async fn delete_subscription(
    State(state): State<AppState>,
    Caller(actor): Caller,
    IdParam(id): IdParam,
) -> ApiResult<StatusCode> {
    state
        .services
        .notifications
        .delete_subscription(id, &actor)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// A subscription's deliveries, newest first, each with every attempt.
#[utoipa::path(
    get,
    path = "/v1/subscriptions/{id}/deliveries",
    security(("bearer" = ["admin"])),
    tag = "subscriptions",
    params(("id" = Uuid, Path, description = "Subscription ID"), PageQuery),
    responses(
        (status = 200, description = "A page of deliveries", body = Page<DeliveryResponse>),
        problems::BadParameter,
        problems::NoSuchSubscription,
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip(actor, state, limit, after))]
pub async fn list_deliveries(
    State(state): State<AppState>,
    Caller(actor): Caller,
    IdParam(id): IdParam,
    Listing { limit, after, .. }: Listing<PageQuery, DeliveryCursor>,
) -> ApiResult<Json<Page<DeliveryResponse>>> {
    let rows = state
        .services
        .notifications
        .deliveries(id, &actor.project, after, limit + 1)
        .await?;
    Ok(Json(page(
        rows,
        limit,
        DeliveryCursor::SCOPE,
        |(d, _)| (d.created_at, d.id),
        render_delivery,
    )))
}
