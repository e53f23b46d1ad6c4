//! Opaque keyset cursors and page limits.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

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

pub fn decode_cursor<K: for<'de> Deserialize<'de>>(scope: &str, text: &str) -> Result<K, ApiError> {
    let bad = || ApiError::bad_field("cursor", "is not a cursor returned by this listing");
    let bytes = URL_SAFE_NO_PAD.decode(text.as_bytes()).map_err(|_| bad())?;
    let body: CursorBody<K> = serde_json::from_slice(&bytes).map_err(|_| bad())?;
    if body.s != scope {
        return Err(bad());
    }
    Ok(body.k)
}

pub fn parse_limit(text: Option<&str>) -> Result<i64, ApiError> {
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
