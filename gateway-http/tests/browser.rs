//! The web inbox in a real browser: Debian's headless Chromium driven over
//! WebDriver (chromedriver, with the Selenium client from PyPI) through
//! `tests/browser/inbox.py`. Screenshots of each step are kept in
//! `target/test-artifacts/browser/<backend>/`.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::Command;

use tokio::net::TcpListener;
use tokio::sync::oneshot;

use hado_core::testing::{Backend, GATEWAY_TOKEN, TestCore};
use hado_gateway_http::config::{HttpConfig, Secret};
use hado_proto::v1;

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/browser/inbox.py");

fn browser_available(test: &str) -> bool {
    let chromium = std::path::Path::new("/usr/bin/chromium").exists() && std::path::Path::new("/usr/bin/chromedriver").exists();
    let selenium = Command::new("python3").args(["-c", "import selenium"]).output().is_ok_and(|output| output.status.success());
    if !(chromium && selenium) {
        assert!(
            std::env::var("CI").is_err(),
            "Chromium, chromedriver and Selenium must be installed under CI (apt-get install chromium chromium-driver; pip install selenium) for {test}"
        );
        let _ = writeln!(std::io::stderr(), "SKIPPED {test}: needs apt-get install chromium chromium-driver and pip install selenium");
    }
    chromium && selenium
}

fn artifacts(backend: &Backend) -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../target")));
    let name = match backend {
        Backend::Sqlite => "sqlite",
        Backend::Postgres(_) => "postgres",
    };
    target.join("test-artifacts").join("browser").join(name)
}

async fn a_person_uses_the_inbox_in_a_browser(backend: Backend) {
    if !browser_available("the browser test") {
        return;
    }
    // The clock stands at 11 December, 09:00 UTC: 14 December is in 3 days.
    let core = TestCore::start(&backend, "2026-12-11T09:00:00Z").await;
    let update = v1::UpdateProfileRequest { tz: Some("UTC".into()), ..Default::default() };
    core.inbox_as("anna").update_profile(update).await.unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let config = HttpConfig {
        addr,
        core_url: core.url(),
        gateway_token: Secret(GATEWAY_TOKEN.into()),
        trusted_proxies: Vec::new(),
        local_user: Some("anna".into()),
        public_url: None,
        mcp_url: None,
    };
    let (shutdown, stopped) = oneshot::channel::<()>();
    let gateway = tokio::spawn(hado_gateway_http::run(config, listener, async {
        let _ = stopped.await;
    }));

    let shots = artifacts(&backend);
    let _ = std::fs::remove_dir_all(&shots);
    let output = tokio::process::Command::new("python3").arg(SCRIPT).arg(format!("http://{addr}")).arg(&shots).output().await.expect("python3 runs");
    let report = format!("{}\n{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "the browser scenario failed (screenshots in {}):\n{report}", shots.display());
    assert!(report.contains("all as expected"), "{report}");
    let saved = std::fs::read_dir(&shots).unwrap().count();
    assert!(saved >= 6, "a screenshot per step, found {saved}");

    let _ = shutdown.send(());
    gateway.await.unwrap().unwrap();
    core.stop().await;
}

hado_core::on_both_backends!(a_person_uses_the_inbox_in_a_browser);
