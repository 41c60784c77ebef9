//! The write path's guard: in one run, an agent's `create_event` over MCP
//! (a durable write through gateway and core) against MCP `ping` through
//! the same gateway (the reference, which writes nothing), both at 16
//! sessions at once. The guard fails when creates fall below a floor of
//! the reference's rate, set well under the goal in BENCHMARKS.md, so that
//! a change that makes every create take a transaction of its own again
//! (as failover once did, unnoticed) fails here. It compares no absolute
//! time: it runs three rounds and keeps the best ratio, so that a noisy
//! neighbour does not fail it, and prints every figure. It is a test
//! binary of its own, and measures one backend after the other, so that
//! no other test shares the machine with it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, ClientRequest, PingRequest};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::json;
use tokio::net::TcpListener;

use hado_core::testing::{Backend, TestCore};
use hado_gateway_mcp::config::McpConfig;
use hado_proto::v1;

type Client = Arc<RunningService<RoleClient, ()>>;

const SESSIONS: usize = 16;
const CALLS_EACH: usize = 40;
const ROUNDS: usize = 3;

/// Calls a second, `CALLS_EACH` on each session at once.
async fn rate<F, Fut>(clients: &[Client], operation: F) -> f64
where
    F: Fn(Client, usize) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let started = Instant::now();
    let tasks: Vec<_> = clients
        .iter()
        .enumerate()
        .map(|(session, client)| {
            let (client, operation) = (client.clone(), operation.clone());
            tokio::spawn(async move {
                for call in 0..CALLS_EACH {
                    operation(client.clone(), session * CALLS_EACH + call).await;
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("a session's calls finish");
    }
    (clients.len() * CALLS_EACH) as f64 / started.elapsed().as_secs_f64()
}

async fn ping(client: Client, _: usize) {
    let request = ClientRequest::PingRequest(PingRequest::default());
    client.send_request(request).await.expect("ping is answered");
}

async fn create(client: Client, call: usize) {
    let arguments = json!({"title": format!("Guarded {call}"), "due_at": "2026-12-14"});
    let params = CallToolRequestParams::new("create_event")
        .with_arguments(arguments.as_object().cloned().unwrap());
    let result = client.call_tool(params).await.expect("create_event is answered");
    assert_ne!(result.is_error, Some(true), "create_event failed: {result:?}");
}

/// The floor of creates per ping: well under the goal (0.6 on SQLite, 0.5
/// on Postgres, BENCHMARKS.md), and above what a transaction per create
/// gave (0.30 and 0.21).
fn floor(backend: &Backend) -> f64 {
    match backend {
        Backend::Sqlite => 0.4,
        Backend::Postgres(_) => 0.3,
    }
}

/// A line straight to stderr, past the test runner's capture, so that CI's
/// log shows the figures of a guard that passed too.
fn say(line: String) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

fn name(backend: &Backend) -> &'static str {
    match backend {
        Backend::Sqlite => "SQLite",
        Backend::Postgres(_) => "Postgres",
    }
}

async fn creating_over_mcp_keeps_pace_with_ping(backend: Backend) {
    let core = TestCore::start(&backend, "2026-12-01T10:00:00Z").await;
    let mut config = McpConfig::local(&core.url());
    config.calls_per_minute = 1_000_000;
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (shutdown, stopped) = tokio::sync::oneshot::channel::<()>();
    let gateway = tokio::spawn(async move {
        let stopped = async {
            let _ = stopped.await;
        };
        hado_gateway_mcp::run(config, listener, stopped).await.expect("gateway-mcp serves");
    });
    let issued = core.admin().issue_agent_token(v1::UserLogin { login: "anna".into() }).await;
    let token = issued.expect("an agent token").into_inner().token;
    let mut clients = Vec::with_capacity(SESSIONS);
    for _ in 0..SESSIONS {
        let transport = StreamableHttpClientTransport::from_config(
            StreamableHttpClientTransportConfig::with_uri(url.as_str()).auth_header(token.clone()),
        );
        clients.push(Arc::new(().serve(transport).await.expect("the MCP client connects")));
    }
    // Warm: connections to core open, the first statements prepared.
    rate(&clients[..1], create).await;
    let mut best: Option<(f64, f64, f64)> = None;
    for round in 1..=ROUNDS {
        let pings = rate(&clients, ping).await;
        let creates = rate(&clients, create).await;
        let ratio = creates / pings;
        say(format!(
            "write-path guard ({}), round {round}: create_event {creates:.0}/s, ping {pings:.0}/s, ratio {ratio:.2} (floor {:.2})",
            name(&backend),
            floor(&backend)
        ));
        if best.is_none_or(|(best, _, _)| ratio > best) {
            best = Some((ratio, creates, pings));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (ratio, creates, pings) = best.expect("a round was measured");
    say(format!(
        "write-path guard ({}): best ratio {ratio:.2}: create_event {creates:.0}/s against ping {pings:.0}/s, 16 sessions",
        name(&backend)
    ));
    assert!(
        ratio >= floor(&backend),
        "an MCP create_event ran at {ratio:.2} of MCP ping ({creates:.0}/s against {pings:.0}/s), under the floor of {:.2}: the write path got slower (BENCHMARKS.md, \"The write path\")",
        floor(&backend)
    );
    for client in clients {
        if let Ok(client) = Arc::try_unwrap(client) {
            let _ = client.cancel().await;
        }
    }
    let _ = shutdown.send(());
    let _ = gateway.await;
    core.stop().await;
}

/// Both backends in one test, one after the other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_write_path_keeps_pace_with_its_reference() {
    creating_over_mcp_keeps_pace_with_ping(Backend::Sqlite).await;
    let test = concat!(module_path!(), "::the_write_path_keeps_pace_with_its_reference");
    if let Some(backend) = Backend::postgres(test) {
        creating_over_mcp_keeps_pace_with_ping(backend).await;
    }
}
