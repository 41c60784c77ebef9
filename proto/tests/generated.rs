//! The code generated from `hado/v1/*.proto` is kept in `src/generated/`, so
//! building Hado compiles no protobuf compiler (protox and prost-build were a
//! tenth of a cold build). This test generates it afresh and compares: when
//! a `.proto` file changed, it writes the new code and fails once, asking
//! for a review and a commit; under CI (`CI` set) it only fails.

use std::path::Path;

use prost::Message;

const PROTOS: &[&str] = &["hado/v1/events.proto", "hado/v1/inbox.proto", "hado/v1/ingest.proto", "hado/v1/admin.proto", "hado/v1/links.proto"];

#[test]
fn generated_code_matches_the_protos() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let descriptors = protox::compile(PROTOS, [root]).expect("the .proto files compile");
    let scratch = tempfile::tempdir().expect("a temporary folder");
    tonic_prost_build::configure().out_dir(scratch.path()).emit_rerun_if_changed(false).compile_fds(descriptors.clone()).expect("the code is generated");
    let code = std::fs::read(scratch.path().join("hado.v1.rs")).expect("hado.v1.rs was generated");
    let fresh = [("hado.v1.rs", code), ("hado_descriptor.bin", descriptors.encode_to_vec())];

    let in_ci = std::env::var_os("CI").is_some();
    let mut stale = Vec::new();
    for (name, bytes) in fresh {
        let path = root.join("src/generated").join(name);
        if std::fs::read(&path).ok().as_deref() != Some(bytes.as_slice()) {
            stale.push(format!("proto/src/generated/{name}"));
            if !in_ci {
                std::fs::write(&path, bytes).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
            }
        }
    }
    let what_now =
        if in_ci { "run `cargo test -p hado-proto` locally to regenerate it, and commit it" } else { "it has been regenerated: review and commit it" };
    assert!(stale.is_empty(), "{} did not match hado/v1/*.proto; {what_now}", stale.join(" and "));
}
