//! The OpenAPI document checked against the running gateway by Schemathesis
//! (`pip install schemathesis`), a checker nobody on the team wrote: every
//! operation fuzzed with every check, through core on an ephemeral port.

use crate::common;

use common::Gateway;
use hado_gateway::TrustedProxies;
use hado_proto::v1::UpsertEventsRequest;
use hado_testing::{self as testing, Backend, TestCore, source_event};

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
    // The checker stands for the sign-in proxy too, so that `/me/events`
    // has its person, and so that a request without one is refused (which
    // its check that each operation needs its credential asks).
    let mut config = common::config(&core);
    config.trusted_proxies = TrustedProxies::parse("127.0.0.1").unwrap();
    let gateway = Gateway::start(config).await;
    let addr = gateway.addr;
    // A person with events, so that the list has pages to check.
    let docs = (0..30)
        .map(|index| {
            source_event("anna", &format!("doc-{index}"), &format!("Doc {index}"), "2026-12-14")
        })
        .collect();
    core.ingest(&token).upsert_events(UpsertEventsRequest { events: docs }).await.unwrap();

    let output = tokio::process::Command::new("st")
        .args(["--config-file", SETTINGS, "run", &format!("http://{addr}/openapi.json")])
        .args(["--header", &format!("Authorization: Bearer {token}")])
        .args(["--header", "X-Remote-User: anna"])
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
    assert!(report.contains("Tested: 5"), "all five operations were tested:\n{report}");

    gateway.stop().await;
    core.stop().await;
}

hado_testing::on_both_backends!(the_openapi_document_matches_the_running_api);
