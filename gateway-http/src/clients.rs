//! Owns the ready configurations Settings and `/me/agent-token` show for
//! the MCP clients people use, each with the person's agent token.

use crate::config::HttpConfig;

/// The line that connects Claude Code to this Hado with `token`. When
/// gateway-mcp's address is not known (see [`HttpConfig::mcp_url`]), the
/// line says so in its place rather than guess an address that 404s.
pub(crate) fn connect_line(config: &HttpConfig, token: &str) -> String {
    let url = config.mcp_url.as_deref().unwrap_or(UNKNOWN_MCP_URL);
    format!("claude mcp add --transport http hado {url} --header \"Authorization: Bearer {token}\"")
}

/// Ready configurations for the clients people use, each with `token`:
/// Claude Code's commands, the `mcpServers` JSON most IDEs read, and VS
/// Code's `servers`, over streamable HTTP and the legacy SSE transport.
pub(crate) fn client_configurations(
    config: &HttpConfig,
    token: &str,
) -> Vec<(&'static str, String)> {
    let url = config.mcp_url.as_deref().unwrap_or(UNKNOWN_MCP_URL);
    let sse = match config.mcp_url.as_deref() {
        Some(url) => {
            url.strip_suffix("/mcp").map_or_else(|| url.to_owned(), |base| format!("{base}/sse"))
        }
        None => UNKNOWN_SSE_URL.to_owned(),
    };
    let header = serde_json::json!({ "Authorization": format!("Bearer {token}") });
    let json = |value: serde_json::Value| serde_json::to_string_pretty(&value).unwrap_or_default();
    vec![
        ("Claude Code (HTTP)", connect_line(config, token)),
        (
            "Claude Code (SSE)",
            format!(
                "claude mcp add --transport sse hado {sse} --header \"Authorization: Bearer {token}\""
            ),
        ),
        (
            "mcpServers (HTTP)",
            json(
                serde_json::json!({ "mcpServers": { "hado": { "type": "http", "url": url, "headers": header } } }),
            ),
        ),
        (
            "mcpServers (SSE)",
            json(
                serde_json::json!({ "mcpServers": { "hado": { "type": "sse", "url": sse, "headers": header } } }),
            ),
        ),
        (
            "VS Code (HTTP)",
            json(
                serde_json::json!({ "servers": { "hado": { "type": "http", "url": url, "headers": header } } }),
            ),
        ),
        (
            "VS Code (SSE)",
            json(
                serde_json::json!({ "servers": { "hado": { "type": "sse", "url": sse, "headers": header } } }),
            ),
        ),
    ]
}

/// Whether the connect line names gateway-mcp's address.
pub(crate) fn knows_mcp_url(config: &HttpConfig) -> bool {
    config.mcp_url.is_some()
}

/// What stands in the connect line for an MCP address gateway-http does not know.
const UNKNOWN_MCP_URL: &str = "<gateway-mcp's /mcp URL>";
const UNKNOWN_SSE_URL: &str = "<gateway-mcp's /sse URL>";
