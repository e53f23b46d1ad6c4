//! The operations console at `/console/`: the single-page app built from
//! `console/` (`scripts/console build`) and embedded by `build.rs`, served
//! from memory with its content type, a strong ETag, `304 Not Modified` on a
//! matching `If-None-Match`, and a gzip copy to clients that accept it.
//!
//! Hashed assets (`/console/assets/…`) are cached for a year; `index.html`
//! is revalidated on every load, so a new build is picked up at once. Any
//! other path under `/console/` is a view of the app (`/console/runs?…`,
//! `/console/activities/{id}`): it gets `index.html`, whose script reads
//! the address. A binary built without the console answers a page saying
//! how to build it.
//!
//! Every response carries a strict Content-Security-Policy: the app is its
//! own hashed script and stylesheet, calls only this origin (the API and its
//! change stream), and sets styles through the CSSOM, so no inline script
//! or style, plugin, base URL, framing or foreign form target is needed.
//! Injected markup therefore cannot run. `data:` images are the index's
//! empty favicon, which keeps the browser from asking for `/favicon.ico`.

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};

/// The policy of every `/console/` response.
const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; \
    style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; \
    base-uri 'none'; frame-ancestors 'none'; form-action 'self'";

/// One embedded file of `console/dist`.
pub struct Asset {
    /// Its path under `console/dist`, with `/` separators.
    pub path: &'static str,
    pub bytes: &'static [u8],
    /// A gzip copy, for text worth compressing.
    pub gzip: Option<&'static [u8]>,
    /// A strong ETag, quoted.
    pub etag: &'static str,
    pub content_type: &'static str,
}

include!(concat!(env!("OUT_DIR"), "/console_assets.rs"));

/// Whether this binary carries a built console.
pub fn is_built() -> bool {
    find("index.html").is_some()
}

fn find(path: &str) -> Option<&'static Asset> {
    ASSETS.iter().find(|a| a.path == path)
}

/// `/console` (redirected to `/console/`) and everything under it.
pub fn router<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route(
            "/console",
            axum::routing::get(|| async { Redirect::permanent("/console/") }),
        )
        .route("/console/", axum::routing::any(serve))
        .route("/console/{*path}", axum::routing::any(serve))
}

async fn serve(request: Request) -> Response {
    if request.method() != Method::GET && request.method() != Method::HEAD {
        let mut response = StatusCode::METHOD_NOT_ALLOWED.into_response();
        response
            .headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        return response;
    }
    let path = request.uri().path().strip_prefix("/console/").unwrap_or("");
    let Some(index) = find("index.html") else {
        return not_built();
    };
    let asset = match find(path) {
        Some(asset) => asset,
        // A missing hashed file is a stale page asking for an old build: a
        // 404, not the app's HTML under a script's name.
        None if path.starts_with("assets/") => return StatusCode::NOT_FOUND.into_response(),
        None => index,
    };
    respond(asset, request.headers(), request.method() == Method::HEAD)
}

fn respond(asset: &Asset, headers: &HeaderMap, head_only: bool) -> Response {
    let immutable = asset.path.starts_with("assets/");
    let cache = if immutable {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    };
    let mut builder = Response::builder()
        .header(header::ETAG, asset.etag)
        .header(header::CACHE_CONTROL, cache)
        .header(header::VARY, "accept-encoding")
        .header(header::X_CONTENT_TYPE_OPTIONS, "nosniff")
        .header(header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY);
    if asset.path == "index.html" {
        builder = builder
            .header(header::REFERRER_POLICY, "no-referrer")
            .header(header::X_FRAME_OPTIONS, "DENY");
    }
    if matches_etag(headers, asset.etag) {
        return builder
            .status(StatusCode::NOT_MODIFIED)
            .body(Body::empty())
            .unwrap_or_else(|_| StatusCode::NOT_MODIFIED.into_response());
    }
    let (bytes, gzipped) = match asset.gzip {
        Some(gzip) if accepts_gzip(headers) => (gzip, true),
        _ => (asset.bytes, false),
    };
    builder = builder
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, asset.content_type)
        .header(header::CONTENT_LENGTH, bytes.len());
    if gzipped {
        builder = builder.header(header::CONTENT_ENCODING, "gzip");
    }
    let body = if head_only {
        Body::empty()
    } else {
        Body::from(bytes)
    };
    builder
        .body(body)
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

/// `If-None-Match: "a", W/"b"` or `*` matching this ETag (weak comparison,
/// as RFC 9110 asks for If-None-Match).
fn matches_etag(headers: &HeaderMap, etag: &str) -> bool {
    headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|tag| tag.trim().trim_start_matches("W/"))
        .any(|tag| tag == "*" || tag == etag)
}

fn accepts_gzip(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|coding| {
            let mut parts = coding.split(';');
            let name = parts.next().unwrap_or("").trim();
            let refused = parts.any(|p| {
                p.trim()
                    .strip_prefix("q=")
                    .and_then(|q| q.trim().parse::<f32>().ok())
                    == Some(0.0)
            });
            (name.eq_ignore_ascii_case("gzip") || name == "*") && !refused
        })
}

fn not_built() -> Response {
    let page = "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
        <title>Console not built</title></head><body><main>\
        <h1>The operations console is not built into this binary</h1>\
        <p>Build it with <code>scripts/console build</code> (Node 20 and npm; \
        it runs <code>npm ci</code> and <code>vite build</code> in <code>console/</code>), \
        then build the service again (<code>cargo build</code>). \
        <code>scripts/dev</code> does both.</p>\
        <p>The API is at <a href=\"/swagger-ui/\">/swagger-ui/</a>.</p>\
        </main></body></html>";
    (
        StatusCode::SERVICE_UNAVAILABLE,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
            (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
        ],
        page,
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(name: header::HeaderName, value: &'static str) -> HeaderMap {
        let mut map = HeaderMap::new();
        map.insert(name, HeaderValue::from_static(value));
        map
    }

    #[test]
    fn if_none_match_compares_weakly_and_takes_lists() {
        let tag = "\"abc\"";
        for (value, expected) in [
            ("\"abc\"", true),
            ("W/\"abc\"", true),
            ("\"x\", \"abc\"", true),
            ("*", true),
            ("\"abcd\"", false),
            ("abc", false),
        ] {
            assert_eq!(
                matches_etag(&headers(header::IF_NONE_MATCH, value), tag),
                expected,
                "{value}"
            );
        }
        assert!(!matches_etag(&HeaderMap::new(), tag));
    }

    #[test]
    fn gzip_is_sent_only_when_accepted() {
        for (value, expected) in [
            ("gzip", true),
            ("gzip, deflate, br", true),
            ("br;q=1.0, GZIP;q=0.5", true),
            ("*", true),
            ("gzip;q=0", false),
            ("br", false),
            ("identity", false),
        ] {
            assert_eq!(
                accepts_gzip(&headers(header::ACCEPT_ENCODING, value)),
                expected,
                "{value}"
            );
        }
    }
}
