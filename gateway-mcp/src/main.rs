//! `hado-gateway-mcp`: the MCP gateway process.

#[tokio::main]
async fn main() -> std::process::ExitCode {
    hado_gateway_mcp::main_entry(clap::Parser::parse()).await
}
