//! Swagger UI in a real browser: headless Chromium (Debian's `chromium`)
//! driven over the DevTools protocol. It authorises with an API key, uses
//! "Try it out" to create an activity and to list it, and the test asserts on
//! what the page shows. A screenshot is kept in `target/artefacts/`.

use crate::common;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use sqlx::PgPool;
use tokio_tungstenite::tungstenite::Message;

fn chromium() -> PathBuf {
    if let Ok(path) = std::env::var("ACP_CHROMIUM") {
        return PathBuf::from(path);
    }
    for candidate in ["/usr/bin/chromium", "/usr/bin/chromium-browser"] {
        if std::path::Path::new(candidate).exists() {
            return PathBuf::from(candidate);
        }
    }
    panic!("no Chromium: scripts/test installs Debian's `chromium`, or set ACP_CHROMIUM");
}

/// A headless Chromium with a fresh profile, killed on drop.
struct Browser {
    child: Child,
    profile: PathBuf,
    devtools: String,
}

impl Browser {
    fn start() -> Self {
        let profile = std::env::temp_dir().join(format!("acp-chromium-{}", uuid::Uuid::new_v4()));
        let mut child = Command::new(chromium())
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-extensions",
                "--no-first-run",
                "--no-default-browser-check",
                "--window-size=1280,2000",
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e}", chromium().display()));
        let stderr = child.stderr.take().unwrap_or_else(|| panic!("no stderr"));
        // "DevTools listening on ws://127.0.0.1:PORT/devtools/browser/ID"
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut seen = Vec::new();
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(url) = line.split("DevTools listening on ").nth(1) {
                    let _ = tx.send(Ok(url.trim().to_owned()));
                } else {
                    seen.push(line);
                    if seen.len() == 200 {
                        let _ = tx.send(Err(seen.join("\n")));
                    }
                }
            }
            let _ = tx.send(Err(seen.join("\n")));
        });
        let devtools = match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(Ok(url)) => url,
            Ok(Err(log)) => panic!("Chromium did not start its DevTools endpoint:\n{log}"),
            Err(_) => panic!("Chromium did not start within 30 s"),
        };
        Self {
            child,
            profile,
            devtools,
        }
    }

    /// The DevTools WebSocket of the browser's page.
    async fn page(&self) -> Page {
        let port = self
            .devtools
            .trim_start_matches("ws://")
            .split('/')
            .next()
            .unwrap_or_default()
            .to_owned();
        let targets: Value = reqwest::get(format!("http://{port}/json/list"))
            .await
            .unwrap_or_else(|e| panic!("DevTools targets: {e}"))
            .json()
            .await
            .unwrap_or_else(|e| panic!("DevTools targets: {e}"));
        let url = targets
            .as_array()
            .into_iter()
            .flatten()
            .find(|t| t["type"] == "page")
            .and_then(|t| t["webSocketDebuggerUrl"].as_str())
            .unwrap_or_else(|| panic!("no page target: {targets}"))
            .to_owned();
        let (socket, _) = tokio_tungstenite::connect_async(url)
            .await
            .unwrap_or_else(|e| panic!("DevTools socket: {e}"));
        Page { socket, next_id: 0 }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

struct Page {
    socket: tokio_tungstenite::WebSocketStream<
        tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
    >,
    next_id: u64,
}

impl Page {
    /// One DevTools command and its result; events in between are ignored.
    async fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let command = json!({"id": id, "method": method, "params": params});
        self.socket
            .send(Message::text(command.to_string()))
            .await
            .unwrap_or_else(|e| panic!("{method}: {e}"));
        loop {
            let message = tokio::time::timeout(Duration::from_secs(30), self.socket.next())
                .await
                .unwrap_or_else(|_| panic!("{method}: no answer in 30 s"))
                .unwrap_or_else(|| panic!("{method}: DevTools closed"))
                .unwrap_or_else(|e| panic!("{method}: {e}"));
            let Message::Text(text) = message else {
                continue;
            };
            let reply: Value = serde_json::from_str(&text).unwrap_or_default();
            if reply["id"] == id {
                assert!(reply["error"].is_null(), "{method}: {reply}");
                return reply["result"].clone();
            }
        }
    }

    /// Evaluates a JavaScript expression in the page and returns its value.
    async fn eval(&mut self, expression: &str) -> Value {
        let result = self
            .call(
                "Runtime.evaluate",
                json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
            )
            .await;
        assert!(
            result["exceptionDetails"].is_null(),
            "{expression}: {}",
            result["exceptionDetails"]
        );
        result["result"]["value"].clone()
    }

    /// Waits until `expression` is truthy; returns its value.
    async fn wait_for(&mut self, what: &str, expression: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let value = self.eval(expression).await;
            if !(value.is_null() || value == false || value == "") {
                return value;
            }
            if Instant::now() > deadline {
                let text = self.eval("document.body.innerText.slice(0, 3000)").await;
                panic!("the page never showed {what}; it shows:\n{text}");
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    async fn click(&mut self, what: &str, selector: &str) {
        let selector = serde_json::to_string(selector).unwrap_or_default();
        self.wait_for(what, &format!("!!document.querySelector({selector})"))
            .await;
        self.eval(&format!("document.querySelector({selector}).click()"))
            .await;
    }

    /// Types into a React-controlled input or textarea.
    async fn fill(&mut self, what: &str, selector: &str, text: &str) {
        let selector = serde_json::to_string(selector).unwrap_or_default();
        let text = serde_json::to_string(text).unwrap_or_default();
        self.wait_for(what, &format!("!!document.querySelector({selector})"))
            .await;
        self.eval(&format!(
            "(() => {{
                const el = document.querySelector({selector});
                const proto = el instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
                Object.getOwnPropertyDescriptor(proto, 'value').set.call(el, {text});
                el.dispatchEvent(new Event('input', {{ bubbles: true }}));
                el.dispatchEvent(new Event('change', {{ bubbles: true }}));
            }})()"
        ))
        .await;
    }

    /// The live response of an operation once it has one: (status, body text).
    async fn response_of(&mut self, operation: &str) -> (String, String) {
        let block = format!("#operations-{operation}");
        let status = self
            .wait_for(
                &format!("a response for {operation}"),
                &format!(
                    "document.querySelector('{block} .live-responses-table tbody .response-col_status')?.innerText.trim()"
                ),
            )
            .await;
        let body = self
            .eval(&format!(
                "document.querySelector('{block} .live-responses-table tbody .response-col_description pre')?.innerText ?? ''"
            ))
            .await;
        (
            status.as_str().unwrap_or_default().to_owned(),
            body.as_str().unwrap_or_default().to_owned(),
        )
    }

    async fn screenshot(&mut self, path: &std::path::Path) {
        use base64::Engine;
        let shot = self
            .call(
                "Page.captureScreenshot",
                json!({"format": "png", "captureBeyondViewport": true}),
            )
            .await;
        let png = base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().unwrap_or_default())
            .unwrap_or_else(|e| panic!("screenshot: {e}"));
        assert!(png.starts_with(b"\x89PNG"), "not a PNG");
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("{e}"));
        }
        std::fs::write(path, png).unwrap_or_else(|e| panic!("{e}"));
        eprintln!("screenshot: {}", path.display());
    }
}

#[sqlx::test(migrations = "./migrations")]
async fn swagger_ui_authorises_creates_and_lists_an_activity(pool: PgPool) {
    let app = TestApp::without_temporal(pool).await;
    let browser = Browser::start();
    let mut page = browser.page().await;
    page.call("Page.enable", json!({})).await;
    page.call("Page.navigate", json!({"url": app.url("/swagger-ui/")}))
        .await;
    page.wait_for(
        "the title of the API",
        "document.querySelector('.information-container .title')?.innerText.includes('activity-control-plane')",
    )
    .await;
    page.wait_for(
        "the create operation",
        "!!document.querySelector('#operations-activities-create_activity')",
    )
    .await;

    // Authorize with the bearer scheme.
    page.click("the Authorize button", ".scheme-container .btn.authorize")
        .await;
    page.fill(
        "the bearer input",
        ".dialog-ux .auth-container input",
        &app.token,
    )
    .await;
    page.click(
        "the modal's Authorize button",
        ".dialog-ux .auth-btn-wrapper .btn.modal-btn.auth.authorize",
    )
    .await;
    page.wait_for(
        "that it is authorised",
        "document.querySelector('.dialog-ux .auth-container')?.innerText.includes('Authorized')",
    )
    .await;
    page.click("the modal's close button", ".dialog-ux .btn-done")
        .await;

    // Try it out: create.
    let name = format!(
        "from-swagger-ui-{}",
        &uuid::Uuid::new_v4().simple().to_string()[..8]
    );
    let body = json!({
        "name": name,
        "trigger": {"type": "event", "event_types": ["swagger.tested"]},
        "tasks": [{"task_type": "noop"}]
    });
    page.click(
        "the create operation",
        "#operations-activities-create_activity .opblock-summary-control",
    )
    .await;
    page.click(
        "Try it out",
        "#operations-activities-create_activity .try-out__btn",
    )
    .await;
    page.fill(
        "the request body editor",
        "#operations-activities-create_activity textarea.body-param__text",
        &serde_json::to_string_pretty(&body).unwrap_or_default(),
    )
    .await;
    page.click(
        "Execute",
        "#operations-activities-create_activity .btn.execute",
    )
    .await;
    let (status, shown) = page.response_of("activities-create_activity").await;
    assert_eq!(status, "201", "the page shows: {shown}");
    let created: Value = serde_json::from_str(&shown).unwrap_or_else(|e| panic!("{e}: {shown}"));
    assert_eq!(created["name"], name.as_str());
    let id = created["id"].as_str().unwrap_or_default().to_owned();

    // Try it out: list.
    page.click(
        "the list operation",
        "#operations-activities-list_activities .opblock-summary-control",
    )
    .await;
    page.click(
        "Try it out",
        "#operations-activities-list_activities .try-out__btn",
    )
    .await;
    page.click(
        "Execute",
        "#operations-activities-list_activities .btn.execute",
    )
    .await;
    let (status, shown) = page.response_of("activities-list_activities").await;
    assert_eq!(status, "200", "the page shows: {shown}");
    let listed: Value = serde_json::from_str(&shown).unwrap_or_else(|e| panic!("{e}: {shown}"));
    assert!(
        listed["items"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|a| a["id"] == id.as_str() && a["name"] == name.as_str()),
        "the list on the page lacks {id}: {shown}"
    );

    let artefact =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/artefacts/swagger-ui.png");
    page.screenshot(&artefact).await;

    // And the service agrees.
    let (status, stored) = json(app.get(&format!("/v1/activities/{id}")).await).await;
    assert_eq!(status, 200);
    assert_eq!(stored["name"], name.as_str());
}
