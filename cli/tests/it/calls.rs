//! What each road a person, a source and an agent take costs core, counted
//! by core's own `hado_grpc_requests_total` on its metrics endpoint, read
//! before and after each step, with `hado core` and both gateways as the
//! processes they run as:
//! - the inbox page is one call (`GetInbox`);
//! - a Done click and the page it leads to are two (`MarkDone`, `GetInbox`),
//!   and so are Remember and Undo;
//! - a source's push is one (`UpsertEvents`), and so is an agent's create
//!   (`CreateEvent`), once the gateway has checked the caller's token (it
//!   asks core once in a few seconds, before it reads a body);
//! - the agent's inbox view (`show_inbox`) is one (`GetInbox`).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use hado_proto::v1::admin_client::AdminClient;
use hado_proto::v1::{SourceName, UserLogin};
use hado_testing::{
    ADMIN_TOKEN, Backend, Bearer, GATEWAY_TOKEN, LINK_SECRET, TestDatabase, wait_until_serving,
};
use reqwest::StatusCode;
use reqwest::redirect::Policy;
use serde_json::json;

use crate::common::{Running, STARTING, core_on, free_port, spawn};

/// Core's count of each `hado.v1` method it answered, from its metrics.
async fn calls(client: &reqwest::Client, metrics: &str) -> BTreeMap<String, u64> {
    let text = client.get(metrics).send().await.unwrap().text().await.unwrap();
    let mut counted = BTreeMap::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix(r#"hado_grpc_requests_total{method="/hado.v1."#) else {
            continue;
        };
        let (method, value) = (rest.split('"').next().unwrap(), rest.rsplit(' ').next().unwrap());
        *counted.entry(method.to_owned()).or_default() += value.parse::<u64>().unwrap();
    }
    counted
}

/// The calls made between two readings, by method.
fn made(before: &BTreeMap<String, u64>, after: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    after
        .iter()
        .map(|(method, count)| (method.clone(), count - before.get(method).copied().unwrap_or(0)))
        .filter(|(_, count)| *count > 0)
        .collect()
}

/// Waits until `url` answers 200.
async fn until_up(client: &reqwest::Client, url: &str) {
    let deadline = Instant::now() + STARTING;
    while !client.get(url).send().await.is_ok_and(|reply| reply.status() == StatusCode::OK) {
        assert!(Instant::now() < deadline, "{url} did not come up");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Core, gateway-http (serving anna locally) and gateway-mcp, each its own
/// process; the addresses of core's metrics and of both gateways.
struct Processes {
    _running: Vec<Running>,
    metrics: String,
    web: String,
    mcp: String,
    core_port: u16,
}

async fn start(folder: &Path, database: &str, client: &reqwest::Client) -> Processes {
    let (core_port, metrics, web, mcp) = (free_port(), free_port(), free_port(), free_port());
    let core_url = format!("http://127.0.0.1:{core_port}");
    let core = spawn(
        "core",
        folder,
        &[
            ("HADO_DATABASE_URL", database.to_owned()),
            ("HADO_GRPC_ADDR", format!("127.0.0.1:{core_port}")),
            ("HADO_METRICS_ADDR", format!("127.0.0.1:{metrics}")),
            ("HADO_ADMIN_TOKEN", ADMIN_TOKEN.into()),
            ("HADO_GATEWAY_TOKEN", GATEWAY_TOKEN.into()),
            ("HADO_SECRET", LINK_SECRET.into()),
        ],
    );
    wait_until_serving(core_on(core_port), STARTING).await;
    let web_gateway = spawn(
        "gateway-http",
        folder,
        &[
            ("HADO_CORE_URL", core_url.clone()),
            ("HADO_HTTP_ADDR", format!("127.0.0.1:{web}")),
            ("HADO_GATEWAY_TOKEN", GATEWAY_TOKEN.into()),
            ("HADO_LOCAL_USER", "anna".into()),
        ],
    );
    let mcp_gateway = spawn(
        "gateway-mcp",
        folder,
        &[
            ("HADO_CORE_URL", core_url),
            ("HADO_MCP_ADDR", format!("127.0.0.1:{mcp}")),
            ("HADO_GATEWAY_TOKEN", GATEWAY_TOKEN.into()),
        ],
    );
    let (web, mcp) = (format!("http://127.0.0.1:{web}"), format!("http://127.0.0.1:{mcp}"));
    until_up(client, &format!("{web}/up")).await;
    until_up(client, &format!("{mcp}/up")).await;
    Processes {
        _running: vec![core, web_gateway, mcp_gateway],
        metrics: format!("http://127.0.0.1:{metrics}/metrics"),
        web,
        mcp,
        core_port,
    }
}

async fn each_road_costs_core_what_it_must(backend: Backend) {
    let database = TestDatabase::create(&backend).await;
    let folder = tempfile::tempdir().unwrap();
    let client = reqwest::Client::builder().redirect(Policy::none()).build().unwrap();
    let stack = start(folder.path(), &database.url, &client).await;
    let mut admin =
        AdminClient::with_interceptor(core_on(stack.core_port), Bearer::new(ADMIN_TOKEN, None));
    let source = admin.create_source(SourceName { name: "docs".into() }).await.unwrap();
    let source = source.into_inner().token;
    let agent = admin.issue_agent_token(UserLogin { login: "anna".into() }).await.unwrap();
    let agent = agent.into_inner().token;

    // anna's inbox: something overdue, due today, in preparation, and a
    // long history of closed events.
    let push = |events: serde_json::Value| {
        client
            .post(format!("{}/api/events", stack.web))
            .bearer_auth(&source)
            .json(&json!({ "events": events }))
            .send()
    };
    let mut events: Vec<serde_json::Value> = (0..500)
        .map(|index| json!({"user": "anna", "ref": format!("old-{index}"), "title": "Old", "due_at": "2020-01-01", "after_due": "expire"}))
        .collect();
    for (reference, due_at) in
        [("tax", "2020-06-01"), ("bins", "2099-01-01"), ("visa", "2099-02-01")]
    {
        events
            .push(json!({"user": "anna", "ref": reference, "title": reference, "due_at": due_at}));
    }
    assert_eq!(push(json!(events)).await.unwrap().status(), StatusCode::OK);

    // A source's push of one event, its token checked a moment ago: one call.
    let before = calls(&client, &stack.metrics).await;
    let one = json!([{"user": "anna", "ref": "one", "title": "One more", "due_at": "2099-03-01"}]);
    assert_eq!(push(one).await.unwrap().status(), StatusCode::OK);
    let pushed = made(&before, &calls(&client, &stack.metrics).await);
    assert_eq!(pushed, BTreeMap::from([("Ingest/UpsertEvents".to_owned(), 1)]));

    // The inbox page: one call.
    let page = || client.get(format!("{}/", stack.web)).send();
    let before = calls(&client, &stack.metrics).await;
    let inbox = page().await.unwrap();
    assert_eq!(inbox.status(), StatusCode::OK);
    let inbox = inbox.text().await.unwrap();
    let shown = made(&before, &calls(&client, &stack.metrics).await);
    assert_eq!(shown, BTreeMap::from([("Inbox/GetInbox".to_owned(), 1)]), "the inbox page");
    let tax = inbox
        .split(r#"id="event-"#)
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the overdue event leads the page")
        .to_owned();

    // A click and the page it leads to: two calls each.
    for (action, answer) in [("done", "MarkDone"), ("reopen", "ReopenEvent"), ("ack", "MarkAck")] {
        let before = calls(&client, &stack.metrics).await;
        let clicked = client
            .post(format!("{}/events/{tax}/{action}", stack.web))
            .header("sec-fetch-site", "same-origin")
            .send()
            .await
            .unwrap();
        assert_eq!(clicked.status(), StatusCode::SEE_OTHER, "{action}");
        let location = clicked.headers()["location"].to_str().unwrap().to_owned();
        let said = clicked.headers()["set-cookie"].to_str().unwrap();
        let said = said.split(';').next().unwrap().to_owned();
        let next = client
            .get(format!("{}{location}", stack.web))
            .header("cookie", said)
            .send()
            .await
            .unwrap();
        assert_eq!(next.status(), StatusCode::OK);
        assert!(next.text().await.unwrap().contains(r#"class="feedback""#), "{action} said so");
        let clicked = made(&before, &calls(&client, &stack.metrics).await);
        let expected =
            BTreeMap::from([(format!("Inbox/{answer}"), 1), ("Inbox/GetInbox".to_owned(), 1)]);
        assert_eq!(clicked, expected, "{action} and the page it leads to");
    }

    // An agent's create over MCP, its token checked a moment ago: one call.
    let tool = |id: u32, name: &str, arguments: serde_json::Value| {
        client
            .post(format!("{}/mcp", stack.mcp))
            .bearer_auth(&agent)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18")
            .json(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}}))
            .send()
    };
    assert_eq!(tool(1, "get_profile", json!({})).await.unwrap().status(), StatusCode::OK);
    let before = calls(&client, &stack.metrics).await;
    let created =
        tool(2, "create_event", json!({"title": "Dentist", "due_at": "2099-04-01"})).await.unwrap();
    assert_eq!(created.status(), StatusCode::OK);
    assert!(created.text().await.unwrap().contains("Dentist"));
    let created = made(&before, &calls(&client, &stack.metrics).await);
    assert_eq!(created, BTreeMap::from([("Inbox/CreateEvent".to_owned(), 1)]), "an agent's create");

    // The inbox inside the agent's chat is the web inbox's one call too.
    let before = calls(&client, &stack.metrics).await;
    let shown = tool(3, "show_inbox", json!({})).await.unwrap();
    assert_eq!(shown.status(), StatusCode::OK);
    assert!(shown.text().await.unwrap().contains("Dentist"));
    let shown = made(&before, &calls(&client, &stack.metrics).await);
    assert_eq!(shown, BTreeMap::from([("Inbox/GetInbox".to_owned(), 1)]), "the agent's inbox view");
}

hado_testing::on_both_backends!(each_road_costs_core_what_it_must);
