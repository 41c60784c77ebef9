//! The in-chat inbox in a real host: the official host side of MCP Apps
//! (`@modelcontextprotocol/ext-apps`'s `AppBridge` and
//! `PostMessageTransport`, with the official MCP client) in Debian's headless
//! Chromium, against the real gateway and core. `tests/app_host/host.js` is
//! bundled for the browser at test time with esbuild; this file serves it, a
//! sandbox proxy on another origin under MCP Apps' default policy, and
//! `/mcp` relayed to the gateway with the person's token, recording every
//! request; `tests/app_host/drive.py` drives the browser. Node and the npm
//! packages are test-time tools only: `HADO_EXT_APPS` names the folder
//! `npm install --prefix` put them in (`.ci/run` does).
//!
//! The view does not depend on the backend, so this runs on SQLite; the
//! MCP-level tests of the view (`view.rs`) run on both.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio::net::TcpListener;

use hado_gateway_mcp::config::McpConfig;
use hado_proto::v1;
use hado_testing::{self as testing, Backend, TestCore};

const HOST_FILES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/app_host");
const INSTALL: &str = "apt-get install chromium chromium-driver, pip install selenium, and npm install --prefix DIR @modelcontextprotocol/ext-apps@2.0.4 @modelcontextprotocol/client@2.4.0 @modelcontextprotocol/core@2.4.0 zod@4.6.7 esbuild@0.28.2 with HADO_EXT_APPS=DIR";

/// The bundled host page's script, when everything it needs is here.
fn bundle() -> Option<String> {
    let browser = Path::new("/usr/bin/chromium").exists()
        && Path::new("/usr/bin/chromedriver").exists()
        && testing::runs("python3", &["-c", "import selenium"]);
    let packages = std::env::var_os("HADO_EXT_APPS").map(PathBuf::from);
    let esbuild = packages.as_ref().map(|folder| folder.join("node_modules/.bin/esbuild"));
    let found = browser
        && esbuild.as_ref().is_some_and(|esbuild| esbuild.exists())
        && packages.as_ref().is_some_and(|folder| {
            folder.join("node_modules/@modelcontextprotocol/ext-apps/package.json").exists()
        });
    if !testing::tool_available("the MCP Apps host test", found, INSTALL) {
        return None;
    }
    let output = std::process::Command::new(esbuild?)
        .arg(format!("{HOST_FILES}/host.js"))
        .args(["--bundle", "--format=iife", "--platform=browser", "--target=chrome120"])
        .arg("--log-level=warning")
        .env("NODE_PATH", packages?.join("node_modules"))
        .output()
        .expect("esbuild runs");
    assert!(output.status.success(), "esbuild: {}", String::from_utf8_lossy(&output.stderr));
    Some(String::from_utf8(output.stdout).expect("the bundle is text"))
}

/// MCP Apps' default Content-Security-Policy, which a host applies to a view
/// that declares no domains: the sandbox proxy's, inherited by the view.
const DEFAULT_POLICY: &str = "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; media-src 'self' data:; connect-src 'none'";

/// One request the host's server saw.
#[derive(Clone, Debug)]
struct Seen {
    host: String,
    path: String,
    /// For `/mcp`: the JSON-RPC method and the protocol version it named.
    rpc: Option<(String, String)>,
}

#[derive(Clone)]
struct HostServer {
    bundle: Arc<String>,
    gateway: String,
    bearer: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    client: reqwest::Client,
}

async fn serve(
    State(host): State<HostServer>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let rpc = (uri.path() == "/mcp" && method == Method::POST).then(|| {
        let message: Value = serde_json::from_slice(&body).unwrap_or_default();
        let version = message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"]
            .as_str()
            .or(headers.get("mcp-protocol-version").and_then(|value| value.to_str().ok()))
            .unwrap_or("")
            .to_owned();
        (message["method"].as_str().unwrap_or("").to_owned(), version)
    });
    let host_name = headers.get(header::HOST).and_then(|value| value.to_str().ok()).unwrap_or("");
    host.seen.lock().unwrap().push(Seen {
        host: host_name.to_owned(),
        path: uri.path().to_owned(),
        rpc,
    });
    let file =
        |name: &str| std::fs::read_to_string(format!("{HOST_FILES}/{name}")).expect("a host file");
    match uri.path() {
        "/host.html" => ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], file("host.html"))
            .into_response(),
        "/host.js" => {
            ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], host.bundle.to_string())
                .into_response()
        }
        "/sandbox.html" => (
            [
                (header::CONTENT_TYPE, "text/html; charset=utf-8"),
                (header::CONTENT_SECURITY_POLICY, DEFAULT_POLICY),
            ],
            file("sandbox.html"),
        )
            .into_response(),
        "/mcp" => relay(&host, method, &headers, body).await,
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

/// `/mcp`, relayed to the gateway with the person's token, as a chat's
/// server side calls its MCP servers.
async fn relay(host: &HostServer, method: Method, headers: &HeaderMap, body: Bytes) -> Response {
    let mut request = host
        .client
        .request(method, &host.gateway)
        .header(header::AUTHORIZATION, &host.bearer)
        .body(body);
    for name in [
        "content-type",
        "accept",
        "mcp-protocol-version",
        "mcp-method",
        "mcp-name",
        "mcp-session-id",
        "last-event-id",
    ] {
        if let Some(value) = headers.get(name) {
            request = request.header(name, value);
        }
    }
    let answer = request.send().await.expect("the gateway answers");
    let status = StatusCode::from_u16(answer.status().as_u16()).unwrap();
    let mut response = Response::builder().status(status);
    for name in ["content-type", "mcp-session-id", "www-authenticate", "allow"] {
        if let Some(value) = answer.headers().get(name) {
            response = response.header(name, value.as_bytes());
        }
    }
    response.body(axum::body::Body::from(answer.bytes().await.unwrap())).unwrap()
}

fn artifacts() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../target")));
    target.join("test-artifacts").join("mcp-app")
}

/// The words the view must show, from `hado-words`.
fn expected_words(words: &hado_words::Words) -> Value {
    json!({
        "overdue": words.overdue, "today": words.today, "preparing": words.preparing,
        "scheduled": words.scheduled, "remember": words.remember, "undo": words.undo,
        "feedback_done": words.feedback_done, "event_deleted": words.event_deleted,
        "quiet_until": words.quiet_until,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_host_shows_the_inbox_and_acts_through_it() {
    let Some(bundle) = bundle() else { return };
    let core = TestCore::start(&Backend::Sqlite, "2026-12-01T10:00:00Z").await;
    let token = core
        .admin()
        .issue_agent_token(v1::UserLogin { login: "anna".into() })
        .await
        .unwrap()
        .into_inner()
        .token;
    let seeded = crate::view::seed(&core, "anna").await;
    let plants = v1::EventFields {
        title: "Water the plants".into(),
        due_at: "2026-12-01T20:00".into(),
        ..Default::default()
    };
    let plants = core.inbox_as("anna").create_event(plants).await.unwrap().into_inner().id;

    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let gateway = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (stop_gateway, gateway_stopped) = tokio::sync::oneshot::channel::<()>();
    let gateway_task =
        tokio::spawn(hado_gateway_mcp::run(McpConfig::local(&core.url()), listener, async {
            let _ = gateway_stopped.await;
        }));

    let seen = Arc::new(Mutex::new(Vec::new()));
    let host = HostServer {
        bundle: Arc::new(bundle),
        gateway,
        bearer: format!("Bearer {token}"),
        seen: seen.clone(),
        client: reqwest::Client::new(),
    };
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let app = Router::new().fallback(serve).with_state(host);
    let host_task = tokio::spawn(async move { axum::serve(listener, app).await });

    let names = ["rent", "call", "visa", "tax"];
    let mut events: serde_json::Map<String, Value> = names
        .iter()
        .zip(&seeded)
        .map(|(name, (id, title))| ((*name).to_owned(), json!({"id": id, "title": title})))
        .collect();
    events.insert("plants".into(), json!({"id": plants, "title": "Water the plants"}));
    let expected = json!({
        "events": events,
        "words": {"en": expected_words(&hado_words::EN), "ru": expected_words(&hado_words::RU)},
    });
    let shots = artifacts();
    let _ = std::fs::remove_dir_all(&shots);
    std::fs::create_dir_all(&shots).unwrap();
    let expected_file = shots.join("expected.json");
    std::fs::write(&expected_file, expected.to_string()).unwrap();

    let output = tokio::process::Command::new("python3")
        .arg(format!("{HOST_FILES}/drive.py"))
        .arg(format!("http://127.0.0.1:{port}"))
        .arg(&shots)
        .arg(&expected_file)
        .output()
        .await
        .expect("python3 runs");
    let report = format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
    .replace(&token, "hado_agent_…");
    assert!(
        output.status.success() && report.contains("all as expected"),
        "the MCP Apps host scenario failed (screenshots in {}):\n{report}",
        shots.display()
    );

    // What reached the gateway: the model's 2025 session and the view's own
    // stateless 2026-07-28 one, the view's answers on the latter.
    let seen = seen.lock().unwrap().clone();
    let calls: Vec<(String, String)> = seen.iter().filter_map(|seen| seen.rpc.clone()).collect();
    assert!(
        calls.iter().any(|(method, _)| method == "initialize"),
        "the model's session: {calls:?}"
    );
    assert!(
        calls
            .iter()
            .any(|(method, version)| method == "server/discover" && version == "2026-07-28"),
        "the view's session: {calls:?}"
    );
    let view_calls = calls
        .iter()
        .filter(|(method, version)| method == "tools/call" && version == "2026-07-28")
        .count();
    assert!(view_calls >= 6, "the view's answers went through its own session: {calls:?}");
    // The sandbox's origin served only the sandbox page: nothing from the view.
    let sandbox_origin = format!("localhost:{port}");
    let from_sandbox: Vec<&Seen> = seen.iter().filter(|seen| seen.host == sandbox_origin).collect();
    assert!(from_sandbox.iter().all(|seen| seen.path == "/sandbox.html"), "{from_sandbox:?}");
    assert!(
        !seen.iter().any(|seen| seen.path.starts_with("/probe-")),
        "a refused request arrived: {seen:?}"
    );

    // And core holds what the person did.
    let mut anna = core.inbox_as("anna");
    let event = |id: i64| {
        let mut anna = anna.clone();
        async move { anna.get_event(v1::EventId { id }).await.unwrap().into_inner() }
    };
    assert_eq!(event(seeded[0].0).await.state(), v1::EventState::Overdue, "Done, then Undo");
    assert!(event(seeded[1].0).await.quiet_until.is_some(), "Remember");
    assert!(event(seeded[3].0).await.quiet_until.is_some(), "Remember until tomorrow");
    assert_eq!(event(plants).await.state(), v1::EventState::Withdrawn);
    let profile = anna.get_profile(v1::GetProfileRequest::default()).await.unwrap().into_inner();
    assert_eq!((profile.tz.as_str(), profile.tz_is_default), ("Asia/Tokyo", false));
    for shot in ["view-dark.png", "view-light.png", "view-russian.png"] {
        assert!(shots.join(shot).exists(), "{shot} was saved");
    }

    host_task.abort();
    let _ = stop_gateway.send(());
    let _ = gateway_task.await;
    core.stop().await;
}
