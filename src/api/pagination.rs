//! Opaque keyset cursors and page limits, read by one extractor
//! ([`Listing`]) for every list.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::extract::ApiQuery;
use crate::api::error::ApiError;

pub const DEFAULT_LIMIT: i64 = 50;
pub const MAX_LIMIT: i64 = 200;

/// A page of results, newest first. Pass `next_cursor` back as `cursor` for
/// the next page; `null` means this is the last one.
#[derive(Debug, Serialize, ToSchema)]
pub struct Page<T: ToSchema> {
    pub items: Vec<T>,
    pub next_cursor: Option<String>,
}

#[derive(Serialize, Deserialize)]
struct CursorBody<K> {
    /// Which listing the cursor belongs to, so one list's cursor is not
    /// silently accepted by another.
    s: String,
    k: K,
}

pub fn encode_cursor<K: Serialize>(scope: &str, key: &K) -> String {
    let body = CursorBody {
        s: scope.to_owned(),
        k: key,
    };
    URL_SAFE_NO_PAD.encode(serde_json::to_vec(&body).unwrap_or_default())
}

fn decode_cursor<K: for<'de> Deserialize<'de>>(scope: &str, text: &str) -> Result<K, ApiError> {
    let bad = || ApiError::bad_field("cursor", "is not a cursor returned by this listing");
    let bytes = URL_SAFE_NO_PAD.decode(text.as_bytes()).map_err(|_| bad())?;
    let body: CursorBody<K> = serde_json::from_slice(&bytes).map_err(|_| bad())?;
    if body.s != scope {
        return Err(bad());
    }
    Ok(body.k)
}

fn parse_limit(text: Option<&str>) -> Result<i64, ApiError> {
    let Some(text) = text else {
        return Ok(DEFAULT_LIMIT);
    };
    match text.parse::<i64>() {
        Ok(n) if (1..=MAX_LIMIT).contains(&n) => Ok(n),
        _ => Err(ApiError::bad_field(
            "limit",
            format!("must be an integer from 1 to {MAX_LIMIT}"),
        )),
    }
}

/// One listing's cursors: the scope written into them, so one list's cursor
/// is not silently accepted by another, and the key they carry.
pub trait Cursor {
    const SCOPE: &'static str;
    type Key: Serialize + DeserializeOwned + Send;
}

/// A list's query string: its own parameters `Q` (whose `limit` and
/// `cursor` fields document the page in the OpenAPI document) and the page
/// asked for, read and checked the same way for every list: `limit` from 1
/// to [`MAX_LIMIT`] (default [`DEFAULT_LIMIT`]), then `cursor` as one of
/// `C`'s, each refused with a 400 naming it.
pub struct Listing<Q, C: Cursor> {
    pub query: Q,
    pub limit: i64,
    /// The last key of the previous page; `None` for the first page.
    pub after: Option<C::Key>,
}

/// The page's own parameters, read beside the list's (which has them too).
#[derive(Deserialize)]
struct PageParams {
    limit: Option<String>,
    cursor: Option<String>,
}

impl<S, Q, C> FromRequestParts<S> for Listing<Q, C>
where
    S: Send + Sync,
    Q: DeserializeOwned + Send,
    C: Cursor,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let ApiQuery(query) = ApiQuery::<Q>::from_request_parts(parts, state).await?;
        let ApiQuery(PageParams { limit, cursor }) =
            ApiQuery::from_request_parts(parts, state).await?;
        let limit = parse_limit(limit.as_deref())?;
        let after = cursor
            .as_deref()
            .map(|c| decode_cursor(C::SCOPE, c))
            .transpose()?;
        Ok(Self {
            query,
            limit,
            after,
        })
    }
}

/// Builds a page from `limit + 1` fetched rows: the extra row only says that
/// there is more.
pub fn page<R, T: ToSchema, K: Serialize>(
    mut rows: Vec<R>,
    limit: i64,
    scope: &str,
    key: impl Fn(&R) -> K,
    render: impl Fn(R) -> T,
) -> Page<T> {
    let more = rows.len() as i64 > limit;
    rows.truncate(limit as usize);
    let next_cursor = if more {
        rows.last().map(|last| encode_cursor(scope, &key(last)))
    } else {
        None
    };
    Page {
        items: rows.into_iter().map(render).collect(),
        next_cursor,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{DateTime, Utc};

    #[test]
    fn cursors_round_trip_and_are_scoped() {
        let key = (Utc::now(), uuid::Uuid::new_v4());
        let text = encode_cursor("activities", &key);
        let back: (DateTime<Utc>, uuid::Uuid) = decode_cursor("activities", &text).unwrap();
        assert_eq!(back, key);
        assert!(decode_cursor::<(DateTime<Utc>, uuid::Uuid)>("runs", &text).is_err());
        assert!(decode_cursor::<(DateTime<Utc>, uuid::Uuid)>("activities", "garbage!").is_err());
    }

    #[test]
    fn limits() {
        assert_eq!(parse_limit(None).unwrap(), DEFAULT_LIMIT);
        assert_eq!(parse_limit(Some("200")).unwrap(), 200);
        assert!(parse_limit(Some("0")).is_err());
        assert!(parse_limit(Some("201")).is_err());
        assert!(parse_limit(Some("ten")).is_err());
    }
}
