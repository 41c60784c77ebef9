//! gateway-http's integration tests in one binary, so that the test build
//! links tonic, sqlx and axum once instead of once per file. Each file is a
//! module and reads as it did on its own. `hardening` stays a binary of its
//! own: its timing bounds must not share the machine with the browser test.

mod balancing;
mod bodies;
mod browser;
mod caddy;
#[path = "../common/mod.rs"]
mod common;
mod email;
mod http;
mod ics;
mod push;
mod schemathesis;
mod screenshots;
mod telegram;
mod trust;
mod web;
