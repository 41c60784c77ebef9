//! The gateway driven by a client nobody on the team wrote: the official
//! Python MCP SDK (`pip install mcp`), over streamable HTTP and over the
//! legacy HTTP+SSE transport, running `tests/python/sdk_scenario.py`
//! against core + gateway on ephemeral ports.

use tokio::net::TcpListener;
use tokio::sync::oneshot;

use hado_gateway_mcp::config::McpConfig;
use hado_proto::v1;
use hado_testing::{self as testing, Backend, TestCore};

const SCENARIO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/sdk_scenario.py");
const AGENTS: &str = include_str!("../../../docs/agents.md");

/// The agents' guide's JSON client configurations that reach the server over HTTP
/// (its `mcpServers` and VS Code `servers` blocks with a `url`).
fn readme_configurations() -> Vec<String> {
    let blocks = AGENTS
        .split("```json\n")
        .skip(1)
        .map(|block| block.split("```").next().unwrap_or_default().to_owned());
    blocks
        .filter(|block| {
            let parsed: serde_json::Value = serde_json::from_str(block).unwrap_or_default();
            let server = parsed
                .get("mcpServers")
                .or_else(|| parsed.get("servers"))
                .map(|servers| &servers["hado"]);
            server.is_some_and(|server| server.get("url").is_some())
        })
        .collect()
}

async fn the_python_sdk_runs_the_whole_scenario(backend: Backend) {
    let found =
        testing::runs("python3", &["-c", "import mcp.client.streamable_http, mcp.client.sse"]);
    if !testing::tool_available("the Python MCP SDK scenario", found, "pip install 'mcp>=2,<3'") {
        return;
    }
    let core = TestCore::start(&backend, "2026-12-01T10:00:00Z").await;
    // Each of the agents' guide's client configurations, as a person pastes it
    // with their address and token: streamable HTTP or the legacy HTTP+SSE
    // transport as its type says, each with a gateway (and so a tool-call
    // allowance) and a person of its own.
    let configurations = readme_configurations();
    assert!(
        configurations.len() >= 4,
        "the agents' guide shows mcpServers and VS Code configurations over both transports"
    );
    for (index, configuration) in configurations.iter().enumerate() {
        let login = format!("person{index}");
        let token = core
            .admin()
            .issue_agent_token(v1::UserLogin { login })
            .await
            .unwrap()
            .into_inner()
            .token;
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let pasted = configuration
            .replace("http://127.0.0.1:8081", &format!("http://{}", listener.local_addr().unwrap()))
            .replace("hado_agent_…", &token);
        let server: serde_json::Value = serde_json::from_str(&pasted).unwrap();
        let server = server
            .get("mcpServers")
            .or_else(|| server.get("servers"))
            .map(|servers| servers["hado"].clone())
            .unwrap();
        let transport = match server["type"].as_str() {
            Some("http") => "streamable",
            Some("sse") => "sse",
            other => panic!("a configuration of type {other:?}: {configuration}"),
        };
        let url = server["url"].as_str().unwrap();
        let base = url
            .strip_suffix(if transport == "sse" { "/sse" } else { "/mcp" })
            .unwrap_or_else(|| panic!("{url}"))
            .to_owned();
        let token = server["headers"]["Authorization"]
            .as_str()
            .and_then(|value| value.strip_prefix("Bearer "))
            .unwrap()
            .to_owned();
        let (shutdown, stopped) = oneshot::channel::<()>();
        // The scenario makes eight tool calls, then runs into the limit.
        let config = McpConfig { calls_per_minute: 10, ..McpConfig::local(&core.url()) };
        let gateway = tokio::spawn(hado_gateway_mcp::run(config, listener, async {
            let _ = stopped.await;
        }));

        let output = tokio::process::Command::new("python3")
            .arg(SCENARIO)
            .arg(&base)
            .arg(&token)
            .arg(transport)
            .output()
            .await
            .expect("python3 runs");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr).replace(&token, "hado_agent_…");
        assert!(
            output.status.success(),
            "the SDK scenario over {transport} failed:\n{stdout}\n{stderr}"
        );
        assert!(stdout.contains(&format!("over {transport}: 12 tools listed; create, list, ack, done and archive all as expected")), "{stdout}");

        let _ = shutdown.send(());
        gateway.await.unwrap().unwrap();
    }
    core.stop().await;
}

hado_testing::on_both_backends!(the_python_sdk_runs_the_whole_scenario);
