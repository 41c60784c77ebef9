//! The OpenAPI document checked against the running gateway by Schemathesis
//! (`pip install schemathesis`), a checker nobody on the team wrote: every
//! operation fuzzed with every check, through core on an ephemeral port.

use std::io::Write as _;
use std::process::Command;

use tokio::net::TcpListener;
use tokio::sync::oneshot;

use hado_core::testing::{Backend, GATEWAY_TOKEN, TestCore};
use hado_gateway_http::config::{HttpConfig, Secret};

const SETTINGS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/schemathesis.toml");

fn schemathesis_available(test: &str) -> bool {
    let found = Command::new("st").arg("--version").output().is_ok_and(|output| output.status.success());
    if !found {
        assert!(std::env::var("CI").is_err(), "Schemathesis must be installed under CI (pip install schemathesis) for {test}");
        let _ = writeln!(std::io::stderr(), "SKIPPED {test}: Schemathesis is not installed (pip install schemathesis)");
    }
    found
}

async fn the_openapi_document_matches_the_running_api(backend: Backend) {
    if !schemathesis_available("the Schemathesis run") {
        return;
    }
    let core = TestCore::start(&backend, "2026-12-01T10:00:00Z").await;
    let token = core.source_token("docs").await;
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let config = HttpConfig {
        addr,
        core_url: core.url(),
        gateway_token: Secret(GATEWAY_TOKEN.into()),
        trusted_proxies: Vec::new(),
        local_user: None,
        public_url: None,
        mcp_url: None,
    };
    let (shutdown, stopped) = oneshot::channel::<()>();
    let gateway = tokio::spawn(hado_gateway_http::run(config, listener, async {
        let _ = stopped.await;
    }));

    let output = tokio::process::Command::new("st")
        .args(["--config-file", SETTINGS, "run", &format!("http://{addr}/openapi.json")])
        .args(["--header", &format!("Authorization: Bearer {token}")])
        .args(["--checks", "all", "--max-examples", "60", "--seed", "20261130", "--no-color"])
        .output()
        .await
        .expect("st runs");
    let report = format!("{}\n{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr)).replace(&token, "hado_src_…");
    assert!(output.status.success(), "Schemathesis found the document and the API apart:\n{report}");
    assert!(report.contains("Tested: 3"), "all three operations were tested:\n{report}");

    let _ = shutdown.send(());
    gateway.await.unwrap().unwrap();
    core.stop().await;
}

hado_core::on_both_backends!(the_openapi_document_matches_the_running_api);
