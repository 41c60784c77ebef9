//! The OpenAPI document checked against the running gateway by Schemathesis
//! (`pip install schemathesis`), a checker nobody on the team wrote: every
//! operation fuzzed with every check, through core on an ephemeral port.

use crate::common;

use common::Gateway;
use hado_core::testing::{self, Backend, TestCore};

const SETTINGS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/schemathesis.toml");

async fn the_openapi_document_matches_the_running_api(backend: Backend) {
    if !testing::tool_available(
        "the Schemathesis run",
        testing::runs("st", &["--version"]),
        "pip install 'schemathesis>=4,<5'",
    ) {
        return;
    }
    let core = TestCore::start(&backend, "2026-12-01T10:00:00Z").await;
    let token = core.source_token("docs").await;
    let gateway = Gateway::start(common::config(&core)).await;
    let addr = gateway.addr;

    let output = tokio::process::Command::new("st")
        .args(["--config-file", SETTINGS, "run", &format!("http://{addr}/openapi.json")])
        .args(["--header", &format!("Authorization: Bearer {token}")])
        .args(["--checks", "all", "--max-examples", "60", "--seed", "20261130", "--no-color"])
        .output()
        .await
        .expect("st runs");
    let report = format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
    .replace(&token, "hado_src_…");
    assert!(
        output.status.success(),
        "Schemathesis found the document and the API apart:\n{report}"
    );
    assert!(report.contains("Tested: 3"), "all three operations were tested:\n{report}");

    gateway.stop().await;
    core.stop().await;
}

hado_core::on_both_backends!(the_openapi_document_matches_the_running_api);
