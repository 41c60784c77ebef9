//! The code generated from `hado/v1/*.proto` is kept in `src/generated/`, so
//! neither building Hado nor testing it compiles a protobuf compiler
//! (protox and prost-build were about a tenth of either cold build).
//!
//! Two checks keep it current:
//! - always: the `.proto` files still hash to what `src/generated/protos.sha256`
//!   recorded when the code was generated, so an edited `.proto` file
//!   without new code fails the test suite at once;
//! - with `--features regenerate` (CI runs it as a gate): the code is
//!   generated afresh and compared. Outside CI it writes the new code and
//!   fails once, asking for a review and a commit; under CI it only fails.

use std::path::Path;

use sha2::{Digest, Sha256};

const PROTOS: &[&str] = &[
    "hado/v1/events.proto",
    "hado/v1/inbox.proto",
    "hado/v1/ingest.proto",
    "hado/v1/admin.proto",
    "hado/v1/links.proto",
    "hado/v1/oauth.proto",
];

const REGENERATE: &str = "cargo test -p hado-proto --features regenerate --test generated";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The hash of every `.proto` file's name and text, in hex.
fn protos_hash() -> String {
    let mut hasher = Sha256::new();
    for proto in PROTOS {
        let text =
            std::fs::read(root().join(proto)).unwrap_or_else(|error| panic!("{proto}: {error}"));
        hasher.update(proto.as_bytes());
        hasher.update((text.len() as u64).to_be_bytes());
        hasher.update(&text);
    }
    hasher.finalize().iter().map(|byte| format!("{byte:02x}")).collect()
}

#[test]
fn the_generated_code_was_made_from_these_protos() {
    let recorded = std::fs::read_to_string(root().join("src/generated/protos.sha256"))
        .expect("src/generated/protos.sha256 is there");
    assert_eq!(
        recorded.trim(),
        protos_hash(),
        "a .proto file changed since the code in src/generated was made: run `{REGENERATE}`"
    );
}

#[cfg(feature = "regenerate")]
#[test]
fn generated_code_matches_the_protos() {
    use prost::Message;

    let descriptors = protox::compile(PROTOS, [root()]).expect("the .proto files compile");
    let scratch = tempfile::tempdir().expect("a temporary folder");
    tonic_prost_build::configure()
        .out_dir(scratch.path())
        .emit_rerun_if_changed(false)
        // Requests' lists are counted before they are decoded (src/codec.rs).
        .codec_path("crate::codec::Bounded")
        .compile_fds(descriptors.clone())
        .expect("the code is generated");
    let code = std::fs::read(scratch.path().join("hado.v1.rs")).expect("hado.v1.rs was generated");
    let fresh = [
        ("hado.v1.rs", code),
        ("hado_descriptor.bin", descriptors.encode_to_vec()),
        ("protos.sha256", format!("{}\n", protos_hash()).into_bytes()),
    ];

    let in_ci = std::env::var_os("CI").is_some();
    let mut stale = Vec::new();
    for (name, bytes) in fresh {
        let path = root().join("src/generated").join(name);
        if std::fs::read(&path).ok().as_deref() != Some(bytes.as_slice()) {
            stale.push(format!("proto/src/generated/{name}"));
            if !in_ci {
                std::fs::write(&path, bytes)
                    .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
            }
        }
    }
    let what_now = if in_ci {
        format!("run `{REGENERATE}` locally to regenerate it, and commit it")
    } else {
        "it has been regenerated: review and commit it".into()
    };
    assert!(stale.is_empty(), "{} did not match hado/v1/*.proto; {what_now}", stale.join(" and "));
}
