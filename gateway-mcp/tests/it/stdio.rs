//! `hado-gateway-mcp --stdio` as an MCP client launches it: the real binary
//! as a child process, rmcp's client on its stdin/stdout, core on an
//! ephemeral port.

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::json;

use hado_proto::v1;
use hado_testing::{Backend, TestCore};

const GATEWAY: &str = env!("CARGO_BIN_EXE_hado-gateway-mcp");

pub(crate) fn gateway(core_url: &str, token: Option<&str>) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(GATEWAY);
    command
        .arg("--stdio")
        .env("HADO_CORE_URL", core_url)
        .env("RUST_LOG", "warn")
        .env_remove("HADO_AGENT_TOKEN");
    if let Some(token) = token {
        command.env("HADO_AGENT_TOKEN", token);
    }
    command
}

async fn stdio_serves_the_tokens_user(backend: Backend) {
    let core = TestCore::start(&backend, "2026-12-01T10:00:00Z").await;
    let token = core
        .admin()
        .issue_agent_token(v1::UserLogin { login: "anna".into() })
        .await
        .unwrap()
        .into_inner()
        .token;

    let client =
        ().serve(TokioChildProcess::new(gateway(&core.url(), Some(&token))).unwrap())
            .await
            .expect("the stdio server starts");
    assert_eq!(client.list_all_tools().await.unwrap().len(), 12);
    let arguments =
        json!({"title": "Tax return", "due_at": "2027-05-31"}).as_object().cloned().unwrap();
    let created = client
        .call_tool(CallToolRequestParams::new("create_event").with_arguments(arguments))
        .await
        .unwrap();
    let created = created.structured_content.expect("structured content");
    assert_eq!(
        (created["user"].as_str(), created["source"].as_str()),
        (Some("anna"), Some("manual"))
    );
    let listed = client
        .call_tool(CallToolRequestParams::new("list_events"))
        .await
        .unwrap()
        .structured_content
        .unwrap();
    assert_eq!(listed["events"][0]["id"], created["id"]);
    client.cancel().await.unwrap();

    // A token core does not know stops the process at start, saying which variable.
    let refused = gateway(&core.url(), Some("hado_agent_0000")).output().await.unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&refused.stderr).trim(),
        "hado gateway-mcp: HADO_AGENT_TOKEN: core does not know this agent token"
    );
    let missing = gateway(&core.url(), None).output().await.unwrap();
    assert!(String::from_utf8_lossy(&missing.stderr).contains("HADO_AGENT_TOKEN: is not set"));

    // A client on the pipe hears why: its initialize gets a JSON-RPC error
    // with the reason, not just a closed connection.
    for (token, reason) in [
        (Some("hado_agent_0000"), "core does not know this agent token"),
        (None, "HADO_AGENT_TOKEN: is not set"),
    ] {
        use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
        let mut child = gateway(&core.url(), token)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
        stdin.write_all(format!("{initialize}\n").as_bytes()).await.unwrap();
        let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let reply = tokio::time::timeout(std::time::Duration::from_secs(10), lines.next_line())
            .await
            .expect("an answer")
            .unwrap()
            .expect("a line");
        let reply: serde_json::Value = serde_json::from_str(&reply).unwrap();
        assert_eq!(reply["id"], 1, "{reply}");
        assert!(reply["error"]["message"].as_str().unwrap().contains(reason), "{reply}");
        assert_eq!(child.wait().await.unwrap().code(), Some(2));
    }

    core.stop().await;
}

hado_testing::on_both_backends!(stdio_serves_the_tokens_user);
