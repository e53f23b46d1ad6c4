//! `GET /v1/stream`: every change as Server-Sent Events, resumable from the
//! change log; `POST /v1/stream/tokens`: short-lived tokens for browsers.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use futures::Stream;
use serde::{Deserialize, Serialize};
use tokio::sync::broadcast::error::RecvError;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use super::AppState;
use super::auth::CallerKey;
use super::caller::Caller;
use super::extract::{ApiQuery, path_uuid};
use crate::api::error::{ApiError, ApiResult};
use crate::api::problems;
use acp_domain::change::Change;
use acp_domain::project::ProjectId;
use acp_service::changes::ChangeFeed;

/// Every kind of change the stream carries.
pub const KINDS: [&str; 21] = [
    "run.created",
    "run.status_changed",
    "run.task_started",
    "run.task_ended",
    "run.retried",
    "run.cancel_requested",
    "run.cancelled",
    "activity.created",
    "activity.updated",
    "activity.deleted",
    "activity.paused",
    "activity.resumed",
    "activity.sync_state",
    "activity.replanned",
    "calendar.created",
    "calendar.updated",
    "calendar.deleted",
    "alert.opened",
    "alert.resolved",
    "event.dispatched",
    "audit.recorded",
];

/// How often an idle stream sends a comment (and checks its key is live).
const HEARTBEAT: Duration = Duration::from_secs(15);

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct StreamQuery {
    /// Replay the changes after this sequence number, then go live (the
    /// `Last-Event-ID` header does the same and wins). Without either, the
    /// stream starts with the next change.
    #[param(value_type = Option<i64>, minimum = 0)]
    pub since: Option<String>,
    /// Only this activity's changes.
    #[param(value_type = Option<String>, format = Uuid)]
    pub activity_id: Option<String>,
    /// Comma-separated kinds (`run.created`) or families (`run`, `activity`,
    /// `calendar`, `alert`, `event`); every kind when absent.
    #[param(
        pattern = r"^(run|activity|alert|event)(\.[a-z_]+)?(,(run|activity|alert|event)(\.[a-z_]+)?)*$"
    )]
    pub kinds: Option<String>,
    /// A stream token from `POST /v1/stream/tokens`, for clients that cannot
    /// send an `Authorization` header (a browser's `EventSource`). Never an
    /// API key: keys do not travel in URLs.
    #[param(pattern = r"^acps_[0-9a-f]{64}$")]
    pub token: Option<String>,
}

/// The `data:` of every stream event (its `id:` is `seq`, its `event:` is
/// `kind`). A `resync` event instead means the client fell too far behind:
/// it must reload what it shows, then reconnect without `Last-Event-ID`.
#[derive(Debug, Serialize, ToSchema)]
pub struct ChangeEvent {
    /// Position in the change log: strictly increasing, in commit order.
    pub seq: i64,
    /// When the change was made.
    pub at: DateTime<Utc>,
    /// `run.created`, `run.status_changed`, `run.task_started`,
    /// `run.task_ended`, `run.retried`, `run.cancel_requested`,
    /// `run.cancelled`, `activity.created`, `activity.updated`,
    /// `activity.deleted`, `activity.paused`, `activity.resumed`,
    /// `activity.sync_state`, `activity.replanned` (an edit of the business
    /// calendar its trigger names changed its plan: `data` has the
    /// calendar's `calendar_id`, `calendar_name`, `calendar_version` and
    /// `previous_calendar_version`), `calendar.created`, `calendar.updated`,
    /// `calendar.deleted`, `alert.opened`, `alert.resolved`,
    /// `event.dispatched` or `audit.recorded`.
    #[schema(example = "run.status_changed")]
    pub kind: String,
    pub activity_id: Option<Uuid>,
    /// What changed: a run ID, an activity ID, an alert ID or an event ID.
    pub subject: String,
    /// The changed thing's facts after the change (and, for a status, the
    /// one before).
    #[schema(value_type = Object)]
    pub data: serde_json::Value,
}

fn event_of(change: &Change) -> Event {
    let body = ChangeEvent {
        seq: change.seq,
        at: change.at,
        kind: change.kind.clone(),
        activity_id: change.activity_id,
        subject: change.subject.clone(),
        data: change.data.clone(),
    };
    Event::default()
        .id(change.seq.to_string())
        .event(change.kind.as_str())
        .data(serde_json::to_string(&body).unwrap_or_default())
}

/// Which changes a stream wants: only its key's project's, ever.
#[derive(Debug, Clone)]
struct Filter {
    project: ProjectId,
    activity_id: Option<Uuid>,
    kinds: Option<Vec<String>>,
}

impl Filter {
    fn wants(&self, change: &Change) -> bool {
        if change.project != self.project.as_str() {
            return false;
        }
        if self.activity_id.is_some() && change.activity_id != self.activity_id {
            return false;
        }
        match &self.kinds {
            None => true,
            Some(kinds) => kinds.iter().any(|k| {
                change.kind == *k
                    || change
                        .kind
                        .split_once('.')
                        .is_some_and(|(family, _)| family == k)
            }),
        }
    }
}

fn parse_kinds(text: &str) -> Result<Vec<String>, ApiError> {
    text.split(',')
        .map(|k| {
            let k = k.trim();
            let known = KINDS.contains(&k)
                || KINDS
                    .iter()
                    .any(|full| full.split_once('.').is_some_and(|(f, _)| f == k));
            if known {
                Ok(k.to_owned())
            } else {
                Err(ApiError::bad_field(
                    "kinds",
                    format!(
                        "`{k}` is not a kind: use run, activity, calendar, alert, event, audit or one of {}",
                        KINDS.join(", ")
                    ),
                ))
            }
        })
        .collect()
}

fn parse_since(field: &str, text: &str) -> Result<i64, ApiError> {
    text.trim()
        .parse::<i64>()
        .ok()
        .filter(|n| *n >= 0)
        .ok_or_else(|| ApiError::bad_field(field, format!("`{text}` is not a sequence number")))
}

struct StreamState {
    feed: ChangeFeed,
    rx: tokio::sync::broadcast::Receiver<Arc<Change>>,
    closing: tokio::sync::watch::Receiver<bool>,
    filter: Filter,
    /// The last `seq` sent or passed over: nothing at or before it again.
    last: i64,
    /// Reading the log (after `last`) rather than the live feed.
    replaying: bool,
    pending: VecDeque<Change>,
    key: Option<Uuid>,
    next_check: tokio::time::Instant,
    done: bool,
}

impl StreamState {
    /// The next event to send, or `None` when the stream ends.
    async fn next(&mut self) -> Option<Event> {
        loop {
            if self.done {
                return None;
            }
            if let Some(change) = self.pending.pop_front() {
                if change.seq <= self.last {
                    continue;
                }
                self.last = change.seq;
                if self.filter.wants(&change) {
                    return Some(event_of(&change));
                }
                continue;
            }
            if self.replaying {
                match self.feed.after(self.last).await {
                    Ok(page) if page.is_empty() => self.replaying = false,
                    Ok(page) => self.pending.extend(page),
                    Err(err) => {
                        self.done = true;
                        return Some(closing_event("error", &err.to_string(), self.last));
                    }
                }
                continue;
            }
            if let Some(event) = self.check_key().await {
                return Some(event);
            }
            let check_in = self
                .next_check
                .saturating_duration_since(tokio::time::Instant::now());
            tokio::select! {
                _ = self.closing.wait_for(|c| *c) => {
                    self.done = true;
                    return None;
                }
                _ = tokio::time::sleep(check_in) => continue,
                received = self.rx.recv() => match received {
                    Ok(change) if change.seq <= self.last => continue,
                    Ok(change) if change.seq == self.last + 1 => {
                        self.pending.push_back((*change).clone());
                    }
                    // A gap: read the log up to it (a skipped number reads
                    // nothing), then carry on live.
                    Ok(_) => self.replaying = true,
                    Err(RecvError::Lagged(_)) => {
                        self.done = true;
                        return Some(closing_event(
                            "resync",
                            "this stream fell too far behind the changes; reload, then reconnect without Last-Event-ID",
                            self.last,
                        ));
                    }
                    Err(RecvError::Closed) => {
                        self.done = true;
                        return None;
                    }
                },
            }
        }
    }

    /// Every heartbeat, a stream opened with a key confirms it is still
    /// live: a revoked key's stream ends.
    async fn check_key(&mut self) -> Option<Event> {
        if tokio::time::Instant::now() < self.next_check {
            return None;
        }
        self.next_check = tokio::time::Instant::now() + HEARTBEAT;
        let key = self.key?;
        match self.feed.key_is_live(key).await {
            Ok(false) => {
                self.done = true;
                Some(closing_event(
                    "revoked",
                    "the API key has been revoked",
                    self.last,
                ))
            }
            _ => None,
        }
    }
}

fn closing_event(kind: &str, detail: &str, last: i64) -> Event {
    Event::default()
        .event(kind)
        .data(serde_json::json!({"detail": detail, "last_event_id": last}).to_string())
}

/// Every change of the caller's project, as Server-Sent Events.
#[utoipa::path(
    get,
    path = "/v1/stream",
    security(("bearer" = ["read"])),
    tag = "stream",
    description = "Every change of the project the request acts in (the key's; an operator key's: the one `Acp-Project` names, else `default`; a stream token's: the one its request acted in) to runs (created, status changed, task started and ended, retried, cancel requested, cancelled), activities (created, updated, deleted, paused with its note, resumed, sync state, re-planned by an edit of their business calendar), business calendars (created, updated, deleted), alerts (opened, resolved) and event dispatches, as Server-Sent Events whose `id:` is the change's position in the change log and whose `data:` is a `ChangeEvent`. A change is logged in the same transaction as the change itself. Reconnect with `Last-Event-ID` (or `since`) to replay what was missed, then go live: no gap, no duplicate. A comment is sent every 15 s. A client that falls behind gets a `resync` event and the stream ends; a stream whose key is revoked gets `revoked`; the stream ends when the service stops. Browsers authenticate with `token` from `POST /v1/stream/tokens`.",
    params(
        StreamQuery,
        ("Last-Event-ID" = Option<String>, Header, nullable = false, description = "The last `id:` received: replay after it"),
    ),
    responses(
        (status = 200, description = "The stream", body = ChangeEvent, content_type = "text/event-stream"),
        problems::BadNamedParameter,
        problems::ChangesPruned,
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip_all)]
pub async fn stream(
    State(state): State<AppState>,
    Caller(actor): Caller,
    key: Option<axum::Extension<CallerKey>>,
    headers: HeaderMap,
    ApiQuery(query): ApiQuery<StreamQuery>,
) -> ApiResult<Response> {
    let since = match headers.get("last-event-id") {
        Some(value) => Some(parse_since(
            "Last-Event-ID",
            value.to_str().unwrap_or("not text"),
        )?),
        None => query
            .since
            .as_deref()
            .map(|t| parse_since("since", t))
            .transpose()?,
    };
    let filter = Filter {
        project: actor.project,
        activity_id: query
            .activity_id
            .as_deref()
            .map(|t| path_uuid("activity_id", t))
            .transpose()?,
        kinds: query.kinds.as_deref().map(parse_kinds).transpose()?,
    };
    let feed = state.services.changes.clone();
    // Subscribe first: whatever the log gains from here on reaches this
    // stream live, and the replay below covers everything before.
    let rx = feed.subscribe();
    let bounds = feed.bounds().await?;
    let last = match since {
        Some(since) if since < bounds.pruned_through => {
            return Err(ApiError::Gone(format!(
                "the changes after {since} are no longer kept (kept: after {}); reload, then connect without Last-Event-ID",
                bounds.pruned_through
            )));
        }
        Some(since) => since,
        None => bounds.newest,
    };
    let closing = feed.closing();
    let state = StreamState {
        feed,
        rx,
        closing,
        filter,
        last,
        // Whatever was logged before the subscription is read from the log.
        replaying: true,
        pending: VecDeque::new(),
        key: key.map(|axum::Extension(CallerKey(id))| id),
        next_check: tokio::time::Instant::now() + HEARTBEAT,
        done: false,
    };
    let events = futures::stream::unfold(state, |mut state| async move {
        let event = state.next().await?;
        Some((Ok::<Event, Infallible>(event), state))
    });
    Ok(sse(events))
}

fn sse<S>(events: S) -> Response
where
    S: Stream<Item = Result<Event, Infallible>> + Send + 'static,
{
    Sse::new(events)
        .keep_alive(KeepAlive::new().interval(HEARTBEAT))
        .into_response()
}

/// A stream token, shown once.
#[derive(Debug, Serialize, ToSchema)]
pub struct StreamTokenResponse {
    /// Pass it as `token` to `GET /v1/stream`; it works nowhere else.
    #[schema(pattern = r"^acps_[0-9a-f]{64}$")]
    pub token: String,
    pub expires_at: DateTime<Utc>,
}

/// A short-lived, read-only token for `GET /v1/stream`, bound to the key
/// that asks and to the project it acts in (an operator key's choice by
/// `Acp-Project`): refused once it expires (5 minutes) or that key is revoked.
#[utoipa::path(
    post,
    path = "/v1/stream/tokens",
    security(("bearer" = ["read"])),
    tag = "stream",
    responses(
        (status = 201, description = "The token", body = StreamTokenResponse),
        problems::AuthenticationDisabled,
        problems::PostgresUnavailable,
    )
)]
#[tracing::instrument(skip_all)]
pub async fn create_stream_token(
    State(state): State<AppState>,
    key: Option<axum::Extension<CallerKey>>,
    Caller(actor): Caller,
) -> ApiResult<(StatusCode, Json<StreamTokenResponse>)> {
    let Some(axum::Extension(CallerKey(key_id))) = key else {
        return Err(ApiError::Conflict(
            "authentication is disabled (ACP_AUTH_DISABLED): GET /v1/stream needs no token".into(),
        ));
    };
    let (token, expires_at) = state
        .services
        .changes
        .create_token(key_id, &actor.project)
        .await?;
    Ok((
        StatusCode::CREATED,
        Json(StreamTokenResponse { token, expires_at }),
    ))
}
