//! `hado-gateway-http`: the HTTP gateway process.

#[tokio::main]
async fn main() -> std::process::ExitCode {
    hado_gateway_http::main_entry().await
}
