//! `hado-core`: the gRPC core process.

#[tokio::main]
async fn main() -> std::process::ExitCode {
    hado_core::main_entry().await
}
