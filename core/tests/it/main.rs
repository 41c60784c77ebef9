//! hado-core's integration tests in one binary, so that the test build links
//! tonic, sqlx and axum once instead of once per file. Each file is a module
//! and reads as it did on its own.

mod catch_up;
mod email;
mod faults;
mod grpc;
mod harness;
mod inbox_view;
mod kept;
mod lost_writes;
mod oauth;
mod one_core;
mod parsers;
mod push;
mod storage_story;
mod telegram;
mod trust;
mod upgrade;
mod upsert_groups;
mod wal;
mod webhooks;
