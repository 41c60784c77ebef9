//! The gateway driven by a client nobody on the team wrote: the official
//! Python MCP SDK (`pip install mcp`), over streamable HTTP and over the
//! legacy HTTP+SSE transport, running `tests/python/sdk_scenario.py`
//! against core + gateway on ephemeral ports.

use tokio::net::TcpListener;
use tokio::sync::oneshot;

use hado_core::testing::{self, Backend, TestCore};
use hado_gateway_mcp::config::McpConfig;
use hado_proto::v1;

const SCENARIO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/sdk_scenario.py");

async fn the_python_sdk_runs_the_whole_scenario(backend: Backend) {
    let found = testing::runs("python3", &["-c", "import mcp.client.streamable_http, mcp.client.sse"]);
    if !testing::tool_available("the Python MCP SDK scenario", found, "pip install 'mcp>=2,<3'") {
        return;
    }
    let core = TestCore::start(&backend, "2026-12-01T10:00:00Z").await;
    // Streamable HTTP, then the legacy HTTP+SSE transport: the same tools,
    // each with a gateway (and so a tool-call allowance) of its own.
    for (transport, login) in [("streamable", "anna"), ("sse", "bob")] {
        let token = core.admin().issue_agent_token(v1::UserLogin { login: login.into() }).await.unwrap().into_inner().token;
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let (shutdown, stopped) = oneshot::channel::<()>();
        // The scenario makes eight tool calls, then runs into the limit.
        let config = McpConfig { calls_per_minute: 10, ..McpConfig::local(&core.url()) };
        let gateway = tokio::spawn(hado_gateway_mcp::run(config, listener, async {
            let _ = stopped.await;
        }));

        let output = tokio::process::Command::new("python3").arg(SCENARIO).arg(&base).arg(&token).arg(transport).output().await.expect("python3 runs");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr).replace(&token, "hado_agent_…");
        assert!(output.status.success(), "the SDK scenario over {transport} failed:\n{stdout}\n{stderr}");
        assert!(stdout.contains(&format!("over {transport}: 11 tools listed; create, list, ack, done and archive all as expected")), "{stdout}");

        let _ = shutdown.send(());
        gateway.await.unwrap().unwrap();
    }
    core.stop().await;
}

hado_core::on_both_backends!(the_python_sdk_runs_the_whole_scenario);
