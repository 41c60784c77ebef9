//! Hado's wire contract: the `hado.v1` gRPC types and services generated from
//! `proto/hado/v1`, the descriptor set for server reflection, the mapping
//! from gRPC codes to HTTP statuses and the JSON views both gateways share,
//! and the few process conventions (settings, logging, signals) every Hado
//! binary follows.

#[allow(clippy::all, missing_docs)]
pub mod v1 {
    tonic::include_proto!("hado.v1");
}

/// The encoded `FileDescriptorSet` of every `hado.v1` file, for reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/hado_descriptor.bin"));

pub mod client;
pub mod error;
pub mod metadata;
pub mod process;
pub mod views;
pub mod wording;
