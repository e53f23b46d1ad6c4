//! The console's files as `acp` serves them at `/console/`: content types,
//! ETags and 304s, gzip, the app's index for its views' addresses, 404 for a
//! missing asset, and GET/HEAD only. Without a built console (a `cargo
//! build` on a machine without Node) `/console/` says how to build it;
//! scripts/test builds it first and sets ACP_CONSOLE_BUILT=1, and then a
//! binary without it is a failure.

use crate::common;

use common::*;
use reqwest::header;
use sqlx::PgPool;

fn client() -> reqwest::Client {
    // No automatic decompression: the test reads Content-Encoding itself.
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

async fn get(url: &str, headers: &[(header::HeaderName, &str)]) -> reqwest::Response {
    let mut request = client().get(url);
    for (name, value) in headers {
        request = request.header(name, *value);
    }
    request
        .send()
        .await
        .unwrap_or_else(|e| panic!("{url}: {e}"))
}

fn header_of(response: &reqwest::Response, name: header::HeaderName) -> String {
    response
        .headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

/// The console's Content-Security-Policy, directive by directive: scripts,
/// styles and calls from this origin only, nothing inline, no framing.
fn assert_csp(response: &reqwest::Response, what: &str) {
    let policy = header_of(response, header::CONTENT_SECURITY_POLICY);
    let directives: Vec<&str> = policy.split(';').map(str::trim).collect();
    for wanted in [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
        "form-action 'self'",
    ] {
        assert!(
            directives.contains(&wanted),
            "{what}: no {wanted} in {policy:?}"
        );
    }
    assert!(!policy.contains("unsafe-"), "{what}: {policy}");
}

#[sqlx::test(migrations = "./migrations")]
async fn the_console_is_served_from_the_binary(pool: PgPool) {
    let app = TestApp::without_temporal(pool).await;
    let built = acp::api::console::is_built();
    if std::env::var("ACP_CONSOLE_BUILT").as_deref() == Ok("1") {
        assert!(
            built,
            "scripts/console build ran, yet the binary has no console"
        );
    }
    let index = get(&app.url("/console/"), &[]).await;
    if !built {
        assert_eq!(index.status(), 503);
        assert_csp(&index, "the page without a console");
        let page = index.text().await.unwrap_or_default();
        assert!(page.contains("scripts/console build"), "{page}");
        return;
    }
    assert_eq!(index.status(), 200);
    assert_eq!(
        header_of(&index, header::CONTENT_TYPE),
        "text/html; charset=utf-8"
    );
    assert_eq!(header_of(&index, header::CACHE_CONTROL), "no-cache");
    assert_csp(&index, "/console/");
    let etag = header_of(&index, header::ETAG);
    assert!(etag.starts_with('"') && etag.len() > 10, "{etag}");
    let html = index.text().await.unwrap_or_default();
    // The policy allows no inline script: the index has none.
    for tag in html.split("<script").skip(1) {
        let open = tag.split('>').next().unwrap_or_default();
        assert!(
            open.contains(" src="),
            "an inline script in the index: {html}"
        );
    }
    assert!(
        !html.contains(" style="),
        "an inline style in the index: {html}"
    );

    // Revalidation: the same ETag is a 304 with no body.
    let again = get(&app.url("/console/"), &[(header::IF_NONE_MATCH, &etag)]).await;
    assert_eq!(again.status(), 304);
    assert_eq!(again.bytes().await.map(|b| b.len()).unwrap_or(1), 0);

    // A view's address (a link pasted to a colleague) is the app's index.
    let view = get(&app.url("/console/activities/x?zoom=week"), &[]).await;
    assert_eq!(view.status(), 200);
    assert_csp(&view, "a view's address");
    assert_eq!(view.text().await.unwrap_or_default(), html);
    let bare = get(&app.url("/console"), &[]).await;
    assert_eq!(bare.status(), 308);
    assert_eq!(header_of(&bare, header::LOCATION), "/console/");

    // Every script and stylesheet the index names: its type, immutable, and
    // gzip when asked for (the same bytes once inflated).
    let assets: Vec<String> = html
        .split('"')
        .filter(|s| s.starts_with("/console/assets/"))
        .map(str::to_owned)
        .collect();
    assert!(
        assets.iter().any(|a| a.ends_with(".js")) && assets.iter().any(|a| a.ends_with(".css")),
        "{html}"
    );
    for asset in &assets {
        let plain = get(&app.url(asset), &[]).await;
        assert_eq!(plain.status(), 200, "{asset}");
        assert_csp(&plain, asset);
        let kind = header_of(&plain, header::CONTENT_TYPE);
        let wanted = if asset.ends_with(".js") {
            "text/javascript; charset=utf-8"
        } else {
            "text/css; charset=utf-8"
        };
        assert_eq!(kind, wanted, "{asset}");
        assert!(
            header_of(&plain, header::CACHE_CONTROL).contains("immutable"),
            "{asset}"
        );
        let bytes = plain.bytes().await.unwrap_or_default();
        let zipped = get(&app.url(asset), &[(header::ACCEPT_ENCODING, "gzip")]).await;
        assert_eq!(
            header_of(&zipped, header::CONTENT_ENCODING),
            "gzip",
            "{asset}"
        );
        let compressed = zipped.bytes().await.unwrap_or_default();
        assert!(compressed.len() < bytes.len(), "{asset}");
        let mut inflated = Vec::new();
        std::io::Read::read_to_end(
            &mut flate2::read::GzDecoder::new(&compressed[..]),
            &mut inflated,
        )
        .unwrap_or_else(|e| panic!("{asset}: {e}"));
        assert_eq!(inflated, bytes.to_vec(), "{asset}");
    }

    // A stale page asking for an old build's file: a 404, not HTML.
    let stale = get(&app.url("/console/assets/index-gone.js"), &[]).await;
    assert_eq!(stale.status(), 404);
    // Files are read, not written.
    let post = client()
        .post(app.url("/console/"))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(post.status(), 405);
    assert_eq!(header_of(&post, header::ALLOW), "GET, HEAD");
}
