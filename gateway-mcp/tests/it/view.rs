//! The in-chat inbox (an MCP App) as MCP clients see it, over every way the
//! gateway is served: `show_inbox` names its `ui://` view in `_meta.ui`, the
//! tools the view calls are visible to it, the server declares resources and
//! the `io.modelcontextprotocol/ui` extension, and `resources/read` gives one
//! self-contained HTML document of MIME type `text/html;profile=mcp-app`;
//! over streamable HTTP (as 2025 clients speak it, and statelessly as the
//! 2026-07-28 revision does), the legacy HTTP+SSE transport and stdio.

use rmcp::ServiceExt;
use rmcp::model::{ReadResourceRequestParams, ResourceContents};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

use hado_proto::v1;
use hado_testing::{Backend, TestCore};

use crate::mcp::{INITIALIZE, Stack, call};

pub(crate) const URI: &str = "ui://hado/inbox";
pub(crate) const MIME: &str = "text/html;profile=mcp-app";

/// What a document for an MCP App's frame must not hold: anything that
/// reaches another origin, loads a font, or asks the network; markup made
/// from text; a height taken from the viewport.
pub(crate) fn assert_self_contained(html: &str) {
    assert!(html.starts_with("<!doctype html>"), "one HTML5 document: {}", &html[..40]);
    let lowered = html.to_lowercase();
    for outside in [
        "http:",
        "https:",
        "\"//",
        "'//",
        "`//",
        "url(",
        "@import",
        "@font-face",
        "<link",
        "<img",
        "<iframe",
        "<object",
        "<embed",
        "<base",
        " src=",
        "href=",
        "fetch(",
        "xmlhttprequest",
        "websocket",
        "eventsource",
        "sendbeacon",
        "import(",
        "innerhtml",
        "outerhtml",
        "insertadjacenthtml",
        "document.write",
        "100vh",
    ] {
        assert!(!lowered.contains(outside), "the view's document holds {outside:?}");
    }
    assert_eq!(lowered.matches("<script").count(), 2, "one data block and one inline script");
}

/// The one content `resources/read` of the view gives: its MIME type, its
/// `_meta.ui`, and its text.
fn the_document(contents: &[ResourceContents]) -> (String, Value, String) {
    assert_eq!(contents.len(), 1, "one content");
    let value = serde_json::to_value(&contents[0]).unwrap();
    (
        value["mimeType"].as_str().unwrap_or_default().to_owned(),
        value["_meta"].clone(),
        value["text"].as_str().expect("the HTML as text").to_owned(),
    )
}

/// An inbox with an event in each group and a title full of markup.
pub(crate) async fn seed(core: &TestCore, login: &str) -> Vec<(i64, &'static str)> {
    let docs = core.source_token("docs").await;
    let mut made = Vec::new();
    for (key, title, due_at) in [
        ("rent", "Pay the rent", "2026-11-28"),
        ("call", "Call the consulate", "2026-12-01T18:00"),
        ("visa", "<img src=x onerror=alert(1)><b>Visa</b> & \"papers\"", "2026-12-10"),
        ("tax", "File the tax return", "2027-03-01"),
    ] {
        let fields =
            v1::EventFields { title: title.into(), due_at: due_at.into(), ..Default::default() };
        made.push((core.push(&docs, login, key, fields).await, title));
    }
    made
}

async fn the_view_is_declared_and_served_over_streamable_http(backend: Backend) {
    let stack = Stack::start(&backend, 600).await;
    let token = stack.agent_token("anna").await;
    let events = seed(&stack.core, "anna").await;
    let client = stack.client(&token).await;

    // The server declares resources and the extension.
    let info = client.peer_info().expect("the server's info");
    let capabilities = serde_json::to_value(&info.capabilities).unwrap();
    assert_eq!(capabilities["extensions"]["io.modelcontextprotocol/ui"], json!({}));
    assert!(capabilities["resources"].is_object(), "{capabilities}");

    // show_inbox names the view; the tools the view calls are visible to it.
    let tools = client.list_all_tools().await.unwrap();
    let meta = |name: &str| {
        let tool = tools.iter().find(|tool| tool.name == name).unwrap();
        serde_json::to_value(tool).unwrap()["_meta"].clone()
    };
    assert_eq!(
        meta("show_inbox"),
        json!({"ui": {"resourceUri": URI, "visibility": ["model", "app"]}})
    );
    for name in ["mark_done", "mark_ack", "reopen_event", "restore_reminders", "update_profile"] {
        let visibility = &meta(name)["ui"]["visibility"];
        assert!(
            visibility.is_null() || visibility.as_array().unwrap().contains(&json!("app")),
            "{name}: {visibility}"
        );
    }
    let show = tools.iter().find(|tool| tool.name == "show_inbox").unwrap();
    assert_eq!(show.annotations.as_ref().and_then(|hints| hints.read_only_hint), Some(true));

    // The resource is listed, and read as one self-contained document.
    let listed = client.list_all_resources().await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!((listed[0].uri.as_str(), listed[0].mime_type.as_deref()), (URI, Some(MIME)));
    let read = client.read_resource(ReadResourceRequestParams::new(URI)).await.unwrap();
    let (mime, meta, html) = the_document(&read.contents);
    assert_eq!(mime, MIME);
    assert_self_contained(&html);
    assert!(meta["ui"].get("csp").is_none(), "no outside origin is asked for: {meta}");
    let unknown = client.read_resource(ReadResourceRequestParams::new("ui://hado/other")).await;
    assert!(format!("{unknown:?}").contains("no resource"), "{unknown:?}");

    // The text names every open event: id, title, due moment and state.
    let result = call(&client, "show_inbox", json!({})).await;
    assert_ne!(result.is_error, Some(true), "{result:?}");
    let text = result.content[0].as_text().expect("text").text.clone();
    for ((id, title), (due_at, state)) in events.iter().zip([
        ("2026-11-28", "overdue"),
        ("2026-12-01T18:00", "today"),
        ("2026-12-10", "preparing"),
        ("2027-03-01", "scheduled"),
    ]) {
        let quoted = serde_json::to_string(title).unwrap();
        let line = text
            .lines()
            .find(|line| line.starts_with(&format!("- id {id}: {quoted}, due {due_at} ")))
            .unwrap_or_else(|| panic!("no line for {id} {title} in:\n{text}"));
        assert!(line.contains(&format!("), {state}")), "{line}");
    }
    let order: Vec<usize> = ["overdue, 1:", "today, 1:", "preparing, 1:", "scheduled, 1:"]
        .iter()
        .map(|heading| text.find(heading).unwrap_or_else(|| panic!("{heading} in:\n{text}")))
        .collect();
    assert!(order.windows(2).all(|pair| pair[0] < pair[1]), "Overdue first:\n{text}");

    // The structured content is the view's: the groups in the same order,
    // every title exactly as the source wrote it, words in both languages.
    let view = result.structured_content.expect("structured content");
    let states: Vec<&str> =
        view["groups"].as_array().unwrap().iter().filter_map(|g| g["state"].as_str()).collect();
    assert_eq!(states, ["overdue", "today", "preparing", "scheduled"]);
    assert_eq!(view["groups"][2]["events"][0]["title"], events[2].1);
    assert_eq!(view["groups"][0]["events"][0]["when"]["en"], "3 days overdue");
    assert_eq!(
        view["person"],
        json!({
            "login": "anna", "tz": "Europe/Berlin", "tz_is_default": true, "locale": "en",
            "local_time": "2026-12-01T11:00 (Tuesday)"
        })
    );

    // A Done from the view is the model's Done: the event leaves the inbox.
    call(&client, "mark_done", json!({"id": events[0].0})).await;
    let after = call(&client, "show_inbox", json!({})).await.structured_content.unwrap();
    assert_eq!(after["groups"][0]["count"], 0, "{after}");
    client.cancel().await.unwrap();
    stack.stop().await;
}

/// The view's own session may speak the 2026-07-28 revision, statelessly
/// (no `initialize`, its context in each request's `_meta`), beside a model
/// on a 2025 session.
async fn the_view_is_served_statelessly_as_2026_07_28_speaks(backend: Backend) {
    let stack = Stack::start(&backend, 600).await;
    let bearer = format!("Bearer {}", stack.agent_token("anna").await);
    seed(&stack.core, "anna").await;
    let context = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": [MIME]}}
        },
        "io.modelcontextprotocol/clientInfo": {"name": "a view's host", "version": "1"}
    });
    // Each request says its method, and what it names, in headers too.
    let ask = async |id: u32, method: &str, name: Option<&str>, params: Value| -> Value {
        let mut params = params;
        params["_meta"] = context.clone();
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let mut headers = vec![
            ("authorization", bearer.as_str()),
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", method),
        ];
        headers.extend(name.map(|name| ("mcp-name", name)));
        stack.post(&headers, &body.to_string()).await.json().await.unwrap()
    };
    let discovered = ask(1, "server/discover", None, json!({})).await;
    let capabilities = &discovered["result"]["capabilities"];
    assert_eq!(capabilities["extensions"]["io.modelcontextprotocol/ui"], json!({}), "{discovered}");
    assert!(capabilities["resources"].is_object(), "{discovered}");
    let read = ask(2, "resources/read", Some(URI), json!({"uri": URI})).await;
    let content = &read["result"]["contents"][0];
    assert_eq!(content["mimeType"], MIME, "{read}");
    assert_self_contained(content["text"].as_str().unwrap());
    let arguments = json!({"name": "show_inbox", "arguments": {}});
    let shown = ask(3, "tools/call", Some("show_inbox"), arguments).await;
    assert_eq!(shown["result"]["structuredContent"]["groups"][0]["state"], "overdue", "{shown}");
    stack.stop().await;
}

/// Over the legacy HTTP+SSE transport the same resource is read.
async fn the_view_is_served_over_the_legacy_event_stream(backend: Backend) {
    let stack = Stack::start(&backend, 600).await;
    let bearer = format!("Bearer {}", stack.agent_token("anna").await);
    let base = stack.url.trim_end_matches("/mcp").to_owned();
    let client = reqwest::Client::new();
    let mut stream =
        client.get(format!("{base}/sse")).header("authorization", &bearer).send().await.unwrap();
    let first = String::from_utf8(stream.chunk().await.unwrap().unwrap().to_vec()).unwrap();
    let endpoint = first.lines().find_map(|line| line.strip_prefix("data: ")).unwrap().to_owned();
    let read =
        json!({"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": URI}});
    for message in [INITIALIZE.to_owned(), read.to_string()] {
        let posted = client
            .post(format!("{base}{endpoint}"))
            .header("authorization", &bearer)
            .header("content-type", "application/json")
            .body(message)
            .send()
            .await
            .unwrap();
        assert_eq!(posted.status(), reqwest::StatusCode::ACCEPTED);
    }
    let mut seen = String::new();
    let reply = loop {
        let chunk = stream.chunk().await.unwrap().expect("the stream stays open");
        seen.push_str(std::str::from_utf8(&chunk).unwrap());
        let found = seen
            .lines()
            .filter_map(|line| line.strip_prefix("data: "))
            .filter_map(|data| serde_json::from_str::<Value>(data).ok())
            .find(|message| message["id"] == 2);
        if let Some(reply) = found {
            break reply;
        }
    };
    assert_eq!(reply["result"]["contents"][0]["mimeType"], MIME, "{reply}");
    assert_self_contained(reply["result"]["contents"][0]["text"].as_str().unwrap());
    drop(stream);
    stack.stop().await;
}

/// Over stdio, as a client that launches the gateway reads it.
async fn the_view_is_served_over_stdio(backend: Backend) {
    let core = TestCore::start(&backend, "2026-12-01T10:00:00Z").await;
    let token = core
        .admin()
        .issue_agent_token(v1::UserLogin { login: "anna".into() })
        .await
        .unwrap()
        .into_inner()
        .token;
    let launched = crate::stdio::gateway(&core.url(), Some(&token));
    let client = ().serve(TokioChildProcess::new(launched).unwrap()).await.unwrap();
    let info = client.peer_info().unwrap();
    let capabilities = serde_json::to_value(&info.capabilities).unwrap();
    assert_eq!(capabilities["extensions"]["io.modelcontextprotocol/ui"], json!({}));
    let read = client.read_resource(ReadResourceRequestParams::new(URI)).await.unwrap();
    let (mime, _, html) = the_document(&read.contents);
    assert_eq!(mime, MIME);
    assert_self_contained(&html);
    client.cancel().await.unwrap();
    core.stop().await;
}

hado_testing::on_both_backends!(
    the_view_is_declared_and_served_over_streamable_http,
    the_view_is_served_statelessly_as_2026_07_28_speaks,
    the_view_is_served_over_the_legacy_event_stream,
    the_view_is_served_over_stdio,
);
