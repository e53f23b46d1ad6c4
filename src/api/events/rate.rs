//! The events-per-second quota at ingest: before an event is recorded, the
//! caller's project takes a token for it (one statement, one token per
//! event of a batch); an event without one is answered 429 and is not
//! recorded, so nothing accepted is ever dropped.

use crate::api::AppState;
use crate::api::error::{ApiError, ApiResult};
use acp_domain::project::ProjectId;
use acp_service::events::NewEvent;

/// Takes the token of one event: none there is the 429.
pub(super) async fn take_one(state: &AppState, project: &ProjectId) -> ApiResult<()> {
    let taken = state
        .services
        .projects
        .take_event_tokens(project, 1)
        .await?;
    match taken.and_then(|t| t.refusal()) {
        Some(refusal) => Err(ApiError::RateExceeded(refusal)),
        None => Ok(()),
    }
}

/// Takes a token for each readable event of `items`, in order: those
/// beyond the tokens there are become 429s. When none gets one, the whole
/// request is the 429.
pub(super) async fn take(
    state: &AppState,
    project: &ProjectId,
    items: Vec<ApiResult<NewEvent>>,
) -> ApiResult<Vec<ApiResult<NewEvent>>> {
    let wanted = items.iter().filter(|i| i.is_ok()).count() as i64;
    if wanted == 0 {
        return Ok(items);
    }
    let Some(taken) = state
        .services
        .projects
        .take_event_tokens(project, wanted)
        .await?
    else {
        return Ok(items);
    };
    let Some(refusal) = taken.refusal() else {
        return Ok(items);
    };
    if taken.granted <= 0 {
        return Err(ApiError::RateExceeded(refusal));
    }
    let mut granted = taken.granted;
    Ok(items
        .into_iter()
        .map(|item| match item {
            Ok(event) if granted > 0 => {
                granted -= 1;
                Ok(event)
            }
            Ok(_) => Err(ApiError::RateExceeded(refusal)),
            Err(err) => Err(err),
        })
        .collect())
}
