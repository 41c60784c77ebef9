//! The hado CLI's integration tests in one binary, so that the test build
//! links tonic, sqlx and axum once instead of once per file. Each file is a
//! module and reads as it did on its own. `load_faults` stays a binary of
//! its own: its 60 s of load would crowd the timing of the tests here.

mod architecture;
mod backup;
mod bare_image;
mod calls;
#[path = "../common/mod.rs"]
mod common;
mod deploy;
mod docs;
mod exposure;
mod failover;
mod kubernetes;
mod outside_tools;
mod readme_tour;
mod rolling;
mod settings;
mod up;
