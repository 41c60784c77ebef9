//! gateway-mcp's integration tests in one binary, so that the test build
//! links tonic, sqlx and axum once instead of once per file. Each file is a
//! module and reads as it did on its own.

mod app_host;
mod inspector;
mod mcp;
mod oauth;
mod python_sdk;
mod stdio;
mod view;
