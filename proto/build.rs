//! Compiles `hado/v1/*.proto` with protox (pure Rust, no system `protoc`) and
//! generates the tonic clients and servers plus the descriptor set that core's
//! reflection service serves.

use std::path::PathBuf;

use prost::Message;

const PROTOS: &[&str] = &["hado/v1/events.proto", "hado/v1/inbox.proto", "hado/v1/ingest.proto", "hado/v1/admin.proto", "hado/v1/links.proto"];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    let descriptors = protox::compile(PROTOS, ["."])?;
    std::fs::write(out_dir.join("hado_descriptor.bin"), descriptors.encode_to_vec())?;
    tonic_prost_build::configure().compile_fds(descriptors)?;
    for proto in PROTOS {
        println!("cargo:rerun-if-changed={proto}");
    }
    Ok(())
}
