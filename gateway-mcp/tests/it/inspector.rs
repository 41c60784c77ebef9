//! The tool schemas through the official MCP Inspector's portability check
//! (`mcp-inspector --cli … --method tools/list --strict`): it reports every
//! construct some clients cannot read (type arrays, number formats such as
//! `uint32`, …), and the tools must pass with nothing to report. The
//! Inspector comes from npm; `HADO_MCP_INSPECTOR` names its `mcp-inspector`
//! (`.ci/run` installs it), otherwise one on `PATH` is used.

use tokio::net::TcpListener;
use tokio::sync::oneshot;

use hado_gateway_mcp::config::McpConfig;
use hado_proto::v1;
use hado_testing::{self as testing, Backend, TestCore};

const INSTALL: &str = "npm install @modelcontextprotocol/inspector@2 and set HADO_MCP_INSPECTOR to its node_modules/.bin/mcp-inspector";

async fn the_inspector_finds_every_schema_portable(backend: Backend) {
    let inspector = std::env::var("HADO_MCP_INSPECTOR").unwrap_or_else(|_| "mcp-inspector".into());
    let found = testing::runs(&inspector, &["--version"]);
    if !testing::tool_available("the MCP Inspector's schema portability check", found, INSTALL) {
        return;
    }
    let core = TestCore::start(&backend, "2026-12-01T10:00:00Z").await;
    let token = core
        .admin()
        .issue_agent_token(v1::UserLogin { login: "anna".into() })
        .await
        .unwrap()
        .into_inner()
        .token;
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (shutdown, stopped) = oneshot::channel::<()>();
    let gateway =
        tokio::spawn(hado_gateway_mcp::run(McpConfig::local(&core.url()), listener, async {
            let _ = stopped.await;
        }));

    // The Inspector keeps a catalog of servers; this one is thrown away.
    let catalog = tempfile::tempdir().expect("a temporary folder");
    let output = tokio::process::Command::new(&inspector)
        .args([
            "--cli",
            &url,
            "--header",
            &format!("Authorization: Bearer {token}"),
            "--method",
            "tools/list",
            "--strict",
        ])
        .env("MCP_CATALOG_PATH", catalog.path().join("mcp.json"))
        .output()
        .await
        .expect("the Inspector runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr).replace(&token, "hado_agent_…");
    assert!(
        output.status.success(),
        "the Inspector refused the tool list ({}):\n{stderr}",
        output.status
    );
    assert!(
        !stderr.contains("Warning") && !stderr.contains("Error"),
        "the Inspector found portability problems:\n{stderr}"
    );
    let listed: serde_json::Value =
        serde_json::from_str(&stdout).expect("the Inspector prints the tool list as JSON");
    assert_eq!(listed["tools"].as_array().map(Vec::len), Some(12), "{stdout}");

    let _ = shutdown.send(());
    gateway.await.unwrap().unwrap();
    core.stop().await;
}

hado_testing::on_both_backends!(the_inspector_finds_every_schema_portable);
