//! `/v1/events` read side: the event history, each event with its
//! dispatches (and their runs' status) and its conflicting re-deliveries.

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::api::AppState;
use crate::api::caller::Caller;
use crate::api::error::{ApiError, ApiResult};
use crate::api::extract::query_instant;
use crate::api::pagination::{Cursor, Listing, Page, page};
use crate::api::problems;
use acp_domain::event::{ConflictRecord, Dispatch, EventRecord};
use acp_domain::event::{DispatchOutcome, DispatchState, EventId, EventIdOrigin};
use acp_domain::query::EventFilter;
use acp_domain::run::RunStatus;

/// Events' cursor: the last event's time and ID.
pub struct EventCursor;

impl Cursor for EventCursor {
    const SCOPE: &'static str = "events";
    type Key = (DateTime<Utc>, String);
}

/// A dispatch as history records it.
#[derive(Debug, Serialize, ToSchema)]
pub struct DispatchRecord {
    pub activity_id: Uuid,
    pub workflow_id: String,
    pub run_id: Uuid,
    pub state: DispatchState,
    pub outcome: Option<DispatchOutcome>,
    pub attempts: i32,
    pub last_error: Option<String>,
    pub created_at: DateTime<Utc>,
    pub completed_at: Option<DateTime<Utc>>,
    /// The run's status, once its row exists.
    pub run_status: Option<RunStatus>,
    /// Outcome `debounced` (`flow.debounce`): the run of the burst's last
    /// event, which took this one (absent until that run is settled).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub absorbed_by_run_id: Option<Uuid>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct EventResponse {
    pub event_id: String,
    pub event_id_origin: EventIdOrigin,
    pub event_type: String,
    pub source: String,
    pub occurred_at: Option<DateTime<Utc>>,
    /// The event's data: a JSON object for events posted as JSON; a
    /// CloudEvent's `data`, whatever JSON it is.
    pub payload: serde_json::Value,
    pub received_at: DateTime<Utc>,
    /// In `GET /v1/events/{event_id}` only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dispatches: Option<Vec<DispatchRecord>>,
    /// In `GET /v1/events/{event_id}` only: re-deliveries from a broker
    /// source of this event ID with other content (over HTTP they are
    /// refused with 409 instead). The event keeps its first content.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conflicts: Option<Vec<EventConflictRecord>>,
}

/// A conflicting re-delivery: what arrived under a known event ID.
#[derive(Debug, Serialize, ToSchema)]
pub struct EventConflictRecord {
    pub seen_at: DateTime<Utc>,
    /// The source (broker) it came from, while that source exists.
    pub source_id: Option<Uuid>,
    /// Which of `event_type`, `source`, `occurred_at`, `payload` differ from the event.
    pub differs: Vec<String>,
    pub event_type: String,
    pub source: String,
    pub occurred_at: Option<DateTime<Utc>>,
    pub payload: serde_json::Value,
}

fn render(
    event: EventRecord,
    dispatches: Option<Vec<Dispatch>>,
    conflicts: Option<Vec<ConflictRecord>>,
) -> EventResponse {
    EventResponse {
        event_id: event.event_id,
        event_id_origin: event.event_id_origin,
        event_type: event.event_type,
        source: event.source,
        occurred_at: event.occurred_at,
        payload: event.payload,
        received_at: event.received_at,
        dispatches: dispatches.map(|ds| {
            ds.into_iter()
                .map(|d| DispatchRecord {
                    activity_id: d.activity_id,
                    workflow_id: d.workflow_id,
                    run_id: d.run_id,
                    state: d.state,
                    outcome: d.outcome,
                    attempts: d.attempts,
                    last_error: d.last_error,
                    created_at: d.created_at,
                    completed_at: d.completed_at,
                    run_status: d.run_status,
                    absorbed_by_run_id: d.absorbed_by,
                })
                .collect()
        }),
        conflicts: conflicts.map(|cs| {
            cs.into_iter()
                .map(|c| EventConflictRecord {
                    seen_at: c.seen_at,
                    source_id: c.source_id,
                    differs: c.differs,
                    event_type: c.event_type,
                    source: c.source,
                    occurred_at: c.occurred_at,
                    payload: c.payload,
                })
                .collect()
        }),
    }
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListEventsQuery {
    /// Page size, 1 to 200 (default 50).
    #[param(value_type = Option<i32>, minimum = 1, maximum = 200)]
    pub limit: Option<String>,
    /// `next_cursor` of the previous page.
    pub cursor: Option<String>,
    pub event_type: Option<String>,
    pub source: Option<String>,
    /// Received at or after (RFC 3339).
    #[param(value_type = Option<String>, format = DateTime)]
    pub received_after: Option<String>,
    /// Received before (RFC 3339).
    #[param(value_type = Option<String>, format = DateTime)]
    pub received_before: Option<String>,
}

/// List events, newest first.
#[utoipa::path(
    get,
    path = "/v1/events",
    security(("bearer" = ["read"])),
    tag = "events",
    params(ListEventsQuery),
    responses(
        (status = 200, description = "A page of events", body = Page<EventResponse>),
        problems::BadParameter,
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip_all)]
pub async fn list_events(
    State(state): State<AppState>,
    Caller(actor): Caller,
    Listing {
        query,
        limit,
        after,
    }: Listing<ListEventsQuery, EventCursor>,
) -> ApiResult<Json<Page<EventResponse>>> {
    let filter = EventFilter {
        event_type: query.event_type,
        source: query.source,
        received_from: query_instant("received_after", query.received_after.as_deref())?,
        received_to: query_instant("received_before", query.received_before.as_deref())?,
    };
    let rows = state
        .services
        .events
        .list(&actor.project, &filter, after, limit + 1)
        .await?;
    Ok(Json(page(
        rows,
        limit,
        EventCursor::SCOPE,
        |e| (e.received_at, e.event_id.clone()),
        |e| render(e, None, None),
    )))
}

/// One event with its dispatches and their runs' status.
#[utoipa::path(
    get,
    path = "/v1/events/{event_id}",
    security(("bearer" = ["read"])),
    tag = "events",
    params(("event_id" = String, Path, description = "Event ID", pattern = r"^[A-Za-z0-9_.:@+=-]{1,200}$")),
    responses(
        (status = 200, description = "The event", body = EventResponse),
        problems::MalformedEventId,
        problems::NoSuchEvent,
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip(state, actor))]
pub async fn get_event(
    State(state): State<AppState>,
    Caller(actor): Caller,
    params: Result<axum::extract::RawPathParams, axum::extract::rejection::RawPathParamsRejection>,
) -> ApiResult<Json<EventResponse>> {
    let params = params.map_err(|_| ApiError::bad_field("event_id", "is not valid UTF-8"))?;
    let text = params
        .iter()
        .last()
        .map(|(_, v)| v.to_owned())
        .unwrap_or_default();
    let id = EventId::parse(&text).map_err(|m| ApiError::bad_field("event_id", m))?;
    let (event, dispatches) = state.services.events.get(&actor.project, &id).await?;
    let conflicts = state
        .services
        .sources
        .conflicts_of(&actor.project, id.as_str())
        .await?;
    Ok(Json(render(event, Some(dispatches), Some(conflicts))))
}
