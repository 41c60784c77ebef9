//! The web inbox in a real browser: Debian's headless Chromium driven over
//! WebDriver (chromedriver, with the Selenium client from PyPI) through
//! `tests/browser/inbox.py`, then the everyday flows in every width,
//! language and with JavaScript on and off through `tests/browser/flows.py`,
//! with axe-core auditing every step. Screenshots of each step are kept in
//! `target/test-artifacts/browser/<backend>/` (the flows in `flows/`).

use crate::common;

use std::path::{Path, PathBuf};

use common::Gateway;
use hado_core::testing::{self, Backend, TestCore};
use hado_proto::v1;

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/browser/inbox.py");
const FLOWS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/browser/flows.py");

fn browser_available(test: &str) -> bool {
    let found = Path::new("/usr/bin/chromium").exists()
        && Path::new("/usr/bin/chromedriver").exists()
        && testing::runs("python3", &["-c", "import selenium"]);
    testing::tool_available(
        test,
        found,
        "apt-get install chromium chromium-driver and pip install selenium",
    )
}

fn artifacts(backend: &Backend) -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../target")));
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
    let mut config = common::config(&core);
    config.local_user = Some("anna".into());
    let gateway = Gateway::start(config).await;

    // axe-core audits each step when it is installed (CI installs it).
    let axe = std::env::var("HADO_AXE").is_ok_and(|path| Path::new(&path).exists());
    testing::tool_available(
        "the axe-core audit in the browser test",
        axe,
        "npm install axe-core@4 and HADO_AXE set to its axe.min.js",
    );
    let shots = artifacts(&backend);
    let _ = std::fs::remove_dir_all(&shots);
    let output = tokio::process::Command::new("python3")
        .arg(SCRIPT)
        .arg(&gateway.base)
        .arg(&shots)
        .output()
        .await
        .expect("python3 runs");
    let report = format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.status.success(),
        "the browser scenario failed (screenshots in {}):\n{report}",
        shots.display()
    );
    assert!(report.contains("all as expected"), "{report}");
    let saved = std::fs::read_dir(&shots).unwrap().count();
    assert!(saved >= 6, "a screenshot per step, found {saved}");
    let audited: usize = report
        .split(" pages audited")
        .next()
        .and_then(|before| before.rsplit(' ').next())
        .and_then(|count| count.parse().ok())
        .unwrap_or(0);
    assert!(!axe || audited == saved, "axe-core audited {audited} of {saved} steps: {report}");

    // The everyday flows at 1280 and 390 px, in both languages, with
    // JavaScript on and off.
    let flows = shots.join("flows");
    let output = tokio::process::Command::new("python3")
        .arg(FLOWS)
        .arg(&gateway.base)
        .arg(&flows)
        .output()
        .await
        .expect("python3 runs");
    let report = format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.status.success(),
        "the browser flows failed (screenshots in {}):\n{report}",
        flows.display()
    );
    assert!(report.contains("8 runs") && report.contains("all as expected"), "{report}");
    let saved = std::fs::read_dir(&flows).unwrap().count();
    let audited: usize = report
        .split(" pages audited")
        .next()
        .and_then(|before| before.rsplit(' ').next())
        .and_then(|count| count.parse().ok())
        .unwrap_or(0);
    assert!(!axe || audited == saved, "axe-core audited {audited} of {saved} pages: {report}");

    gateway.stop().await;
    core.stop().await;
}

hado_core::on_both_backends!(a_person_uses_the_inbox_in_a_browser);
