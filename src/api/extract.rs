//! Extractors that turn every malformed request into a problem document
//! naming the field, instead of axum's plain-text rejections.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::header::{CONTENT_TYPE, IF_MATCH};
use axum::http::request::Parts;
use serde::de::DeserializeOwned;
use uuid::Uuid;

use crate::api::error::ApiError;
use acp_domain::FieldError;
use acp_domain::query::Expect;

/// Turns a serde error at a path into a field error, naming the missing or
/// unknown field itself rather than its parent object.
fn field_error(path: &str, message: &str) -> FieldError {
    // `?` marks a position serde could not name (e.g. a syntax error).
    let base = path.trim_end_matches('?').trim_end_matches('.');
    let base = if base == "." { "" } else { base };
    let join = |name: &str| {
        if base.is_empty() {
            name.to_owned()
        } else {
            format!("{base}.{name}")
        }
    };
    let named = |prefix: &str| {
        message
            .strip_prefix(prefix)
            .and_then(|rest| rest.split('`').next())
            .map(join)
    };
    let field = named("missing field `")
        .or_else(|| {
            // serde_path_to_error already includes the unknown key in the path.
            message.starts_with("unknown field `").then(|| {
                if base.is_empty() {
                    named("unknown field `").unwrap_or_else(|| "body".to_owned())
                } else {
                    base.to_owned()
                }
            })
        })
        .unwrap_or_else(|| {
            if base.is_empty() {
                "body".to_owned()
            } else {
                base.to_owned()
            }
        });
    // serde appends " at line 1 column 12" to messages; keep it, it helps.
    FieldError::new(field, message)
}

/// The JSON path of the first string (or key) holding a NUL character:
/// PostgreSQL cannot store one in `text` or `jsonb`.
fn find_nul(value: &serde_json::Value, path: &mut String) -> bool {
    match value {
        serde_json::Value::String(s) => s.contains('\0'),
        serde_json::Value::Array(items) => items.iter().enumerate().any(|(i, v)| {
            let len = path.len();
            path.push_str(&format!("[{i}]"));
            let found = find_nul(v, path);
            if !found {
                path.truncate(len);
            }
            found
        }),
        serde_json::Value::Object(map) => map.iter().any(|(k, v)| {
            let len = path.len();
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(k);
            let found = k.contains('\0') || find_nul(v, path);
            if !found {
                path.truncate(len);
            }
            found
        }),
        _ => false,
    }
}

pub fn from_json_slice<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    // Cheap pre-check: only bodies that spell a NUL escape get the full walk.
    if bytes.windows(6).any(|w| w.eq_ignore_ascii_case(b"\\u0000"))
        && let Ok(value) = serde_json::from_slice::<serde_json::Value>(bytes)
    {
        let mut path = String::new();
        if find_nul(&value, &mut path) {
            let field = if path.is_empty() {
                "body".to_owned()
            } else {
                path
            };
            return Err(ApiError::bad_field(
                field,
                "must not contain the NUL character (\\u0000)",
            ));
        }
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value: T = serde_path_to_error::deserialize(&mut de).map_err(|err| {
        let path = err.path().to_string();
        let message = err.into_inner().to_string();
        ApiError::BadRequest(vec![field_error(&path, &message)])
    })?;
    de.end().map_err(|e| {
        ApiError::bad_field(
            "body",
            format!("trailing characters after the JSON value: {e}"),
        )
    })?;
    Ok(value)
}

pub fn from_json_value<T: DeserializeOwned>(value: serde_json::Value) -> Result<T, ApiError> {
    serde_path_to_error::deserialize(value).map_err(|err| {
        let path = err.path().to_string();
        let message = err.into_inner().to_string();
        ApiError::BadRequest(vec![field_error(&path, &message)])
    })
}

/// A JSON body (`application/json` or any `+json` type), size-limited by
/// the router's body limit.
pub struct JsonBody<T>(pub T);

impl<S, T> FromRequest<S> for JsonBody<T>
where
    S: Send + Sync,
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let content_type = req
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        let essence = content_type
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_owned();
        let is_json = essence == "application/json"
            || (essence.starts_with("application/") && essence.ends_with("+json"));
        if !is_json {
            return Err(ApiError::UnsupportedMediaType(format!(
                "expected application/json, got `{}`",
                if essence.is_empty() {
                    "nothing"
                } else {
                    &essence
                }
            )));
        }
        let bytes = read_body(req, state).await?;
        from_json_slice(&bytes).map(JsonBody)
    }
}

/// The configured body limit, put in request extensions so rejections can
/// say what it is.
#[derive(Clone, Copy)]
pub struct BodyLimit(pub usize);

/// Query parameters, with unknown or malformed ones named in a 400.
pub struct ApiQuery<T>(pub T);

impl<S, T> FromRequestParts<S> for ApiQuery<T>
where
    S: Send + Sync,
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let query = parts.uri.query().unwrap_or("");
        if let Some((name, _)) = form_urlencoded_parse(query).find(|(_, v)| v.contains('\0')) {
            return Err(ApiError::bad_field(
                name,
                "must not contain the NUL character",
            ));
        }
        let de = serde_urlencoded::Deserializer::new(form_urlencoded_parse(query));
        serde_path_to_error::deserialize(de)
            .map(ApiQuery)
            .map_err(|err| {
                let path = err.path().to_string();
                let message = err.into_inner().to_string();
                ApiError::BadRequest(vec![field_error(&path, &message)])
            })
    }
}

fn form_urlencoded_parse(query: &str) -> url::form_urlencoded::Parse<'_> {
    url::form_urlencoded::parse(query.as_bytes())
}

/// Parses a path segment as a UUID, naming the parameter on failure.
pub fn path_uuid(name: &str, text: &str) -> Result<Uuid, ApiError> {
    Uuid::try_parse(text).map_err(|_| ApiError::bad_field(name, format!("`{text}` is not a UUID")))
}

/// `If-Match`, as a store precondition.
pub fn if_match(parts: &axum::http::HeaderMap) -> Result<Expect, ApiError> {
    let Some(value) = parts.get(IF_MATCH) else {
        return Ok(Expect::Anything);
    };
    let text = value
        .to_str()
        .map_err(|_| ApiError::bad_field("If-Match", "must be ASCII"))?
        .trim();
    if text == "*" {
        return Ok(Expect::Exists);
    }
    let tag = text.strip_prefix("W/").unwrap_or(text);
    tag.strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .and_then(|t| t.parse::<i64>().ok())
        .map(Expect::Version)
        .ok_or_else(|| {
            ApiError::bad_field(
                "If-Match",
                "must be an ETag from this API, e.g. \"3\", or *",
            )
        })
}

/// `Idempotency-Key`, if present: 1 to 255 visible ASCII characters.
pub fn idempotency_key(headers: &axum::http::HeaderMap) -> Result<Option<String>, ApiError> {
    let Some(value) = headers.get("idempotency-key") else {
        return Ok(None);
    };
    let bad = || {
        ApiError::bad_field(
            "Idempotency-Key",
            "must be 1 to 255 visible ASCII characters",
        )
    };
    let text = value.to_str().map_err(|_| bad())?;
    if text.is_empty() || text.len() > 255 || !text.chars().all(|c| c.is_ascii_graphic()) {
        return Err(bad());
    }
    Ok(Some(text.to_owned()))
}

pub fn etag(version: i64) -> String {
    format!("\"{version}\"")
}

/// The resource's UUID path parameter (`{id}`, `{run_id}`: the last one in
/// the route); a malformed one is a 400 naming the parameter.
pub struct IdParam(pub Uuid);

impl<S: Send + Sync> FromRequestParts<S> for IdParam {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let params = axum::extract::RawPathParams::from_request_parts(parts, state)
            .await
            .map_err(|_| ApiError::bad_field("id", "is not valid UTF-8"))?;
        let (name, text) = params
            .iter()
            .last()
            .map(|(name, value)| (name.to_owned(), value.to_owned()))
            .unwrap_or_else(|| ("id".to_owned(), String::new()));
        path_uuid(&name, &text).map(IdParam)
    }
}

/// A JSON body that may be absent: an empty body is `T::default()`.
pub struct OptionalJsonBody<T>(pub T);

impl<S, T> FromRequest<S> for OptionalJsonBody<T>
where
    S: Send + Sync,
    T: DeserializeOwned + Default,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let declared_empty = req
            .headers()
            .get(axum::http::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim() == "0");
        let no_type = req.headers().get(CONTENT_TYPE).is_none();
        if declared_empty || no_type {
            let limit = req
                .extensions()
                .get::<BodyLimit>()
                .map(|l| l.0)
                .unwrap_or(usize::MAX);
            let bytes = Bytes::from_request(req, state)
                .await
                .map_err(|_| ApiError::PayloadTooLarge { limit })?;
            if bytes.iter().all(u8::is_ascii_whitespace) {
                return Ok(Self(T::default()));
            }
            return Err(ApiError::UnsupportedMediaType(
                "a body needs Content-Type: application/json".into(),
            ));
        }
        // A body that is there must be the documented object: a JSON `null`
        // is not "no body" (the document says the body is optional, not
        // nullable, which is what generated clients send: nothing).
        JsonBody::<T>::from_request(req, state)
            .await
            .map(|JsonBody(v)| Self(v))
    }
}

/// The body's bytes within the configured limit: 413 past it, 400 when it
/// cannot be read at all.
pub async fn read_body<S: Send + Sync>(req: Request, state: &S) -> Result<Bytes, ApiError> {
    let limit = req
        .extensions()
        .get::<BodyLimit>()
        .map(|l| l.0)
        .unwrap_or(usize::MAX);
    Bytes::from_request(req, state).await.map_err(|rejection| {
        if rejection.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::PayloadTooLarge { limit }
        } else {
            ApiError::bad_field("body", rejection.body_text())
        }
    })
}

/// An optional RFC 3339 query parameter; a malformed one is a 400 naming it.
pub fn query_instant(
    field: &str,
    text: Option<&str>,
) -> Result<Option<chrono::DateTime<chrono::Utc>>, ApiError> {
    text.map(|t| {
        chrono::DateTime::parse_from_rfc3339(t)
            .map(|d| d.with_timezone(&chrono::Utc))
            .map_err(|_| ApiError::bad_field(field, format!("`{t}` is not an RFC 3339 timestamp")))
    })
    .transpose()
}
