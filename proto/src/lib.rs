//! Hado's wire contract: the `hado.v1` gRPC types and services generated from
//! `proto/hado/v1`, the descriptor set for server reflection, the metadata
//! keys every call carries, the codec that counts a request's lists
//! before decoding it (`codec`), what each code of a failed call means at every
//! edge (`errors`) and the conversions between the wire's types and
//! Rust's. Nothing else: no HTTP, no MCP, no view of an event; how a process
//! runs, and what its edges show, is `hado-runtime`'s, `hado-views`' and
//! the gateways'.

/// Generated from `hado/v1/*.proto`, and kept in the repository so that a
/// build needs no protobuf compiler; `tests/generated.rs` keeps it current.
#[allow(clippy::all, missing_docs, unreachable_pub)]
pub mod v1 {
    include!("generated/hado.v1.rs");
}

/// The encoded `FileDescriptorSet` of every `hado.v1` file, for reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] = include_bytes!("generated/hado_descriptor.bin");

pub mod codec;
pub mod convert;
pub mod errors;
pub mod metadata;
