//! `hado-gateway-mcp`: the MCP gateway process.

#[tokio::main]
async fn main() -> std::process::ExitCode {
    hado_gateway_mcp::main_entry(std::env::args().skip(1)).await
}
