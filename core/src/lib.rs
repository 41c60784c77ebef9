//! Hado's core: the one home of event logic and storage, served over gRPC.

pub mod domain;
