//! The web inbox in a real browser: Debian's headless Chromium driven over
//! WebDriver (chromedriver, with the Selenium client from PyPI) through
//! `tests/browser/inbox.py`, then the everyday flows in every width,
//! language and with JavaScript on and off through `tests/browser/flows.py`,
//! with axe-core auditing every step, and a real week's inbox at a glance
//! through `tests/browser/glance.py`, and the offer to set the time zone
//! through `tests/browser/zone.py`. Screenshots of each step are kept in
//! `target/test-artifacts/browser/<backend>/` (the flows in `flows/`), the
//! glance's in `target/test-artifacts/browser/glance/` and the offer's in
//! `target/test-artifacts/browser/zone/`.

use crate::common;

use std::path::{Path, PathBuf};

use common::Gateway;
use hado_proto::v1;
use hado_testing::{self as testing, Backend, TestCore};

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/browser/inbox.py");
const FLOWS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/browser/flows.py");
const GLANCE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/browser/glance.py");
const ZONE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/browser/zone.py");

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

/// Runs one of the browser scenarios against `base`, keeping its
/// screenshots in `shots`: how it ended, and all it printed.
async fn run_script(script: &str, base: &str, shots: &Path) -> (bool, String) {
    common::python3([script.as_ref(), base.as_ref(), shots.as_os_str()]).await
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
    let (succeeded, report) = run_script(SCRIPT, &gateway.base, &shots).await;
    assert!(
        succeeded,
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
    let (succeeded, report) = run_script(FLOWS, &gateway.base, &flows).await;
    assert!(succeeded, "the browser flows failed (screenshots in {}):\n{report}", flows.display());
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

/// A real week's inbox at a glance (`tests/browser/glance.py`): 8 overdue,
/// 6 due today and a dozen later, at 1280x800 and 390x844 in both languages.
/// The layout does not depend on the backend, so it runs on SQLite only.
#[tokio::test]
async fn a_full_inbox_reads_at_a_glance() {
    if !browser_available("the at-a-glance browser test") {
        return;
    }
    let core = TestCore::start(&Backend::Sqlite, "2026-12-11T09:00:00Z").await;
    let mut anna = core.inbox_as("anna");
    let update = v1::UpdateProfileRequest { tz: Some("UTC".into()), ..Default::default() };
    anna.update_profile(update).await.unwrap();
    let office = core.source_token("office").await;
    let titles = [
        "Pay the electricity bill",
        "Renew the car insurance policy before it lapses",
        "Return the library books",
        "Submit the expense report for the November trip",
        "Call the landlord about the heating",
        "Book a dentist check-up",
        "Reply to the letter from the tax office",
        "Send a birthday card to Grandma Ruth",
    ];
    for (index, title) in titles.iter().enumerate() {
        let due = format!("2026-12-{:02}", 10 - index);
        let fields = v1::EventFields { title: (*title).into(), due_at: due, ..Default::default() };
        core.push(&office, "anna", &format!("overdue-{index}"), fields).await;
    }
    let today = [
        "Pick up the visa at the consulate",
        "Team notes",
        "Water the plants",
        "Pay the rent",
        "Confirm Friday's dinner booking",
    ];
    for (index, title) in today.iter().enumerate() {
        let due = format!("2026-12-11T{:02}:00", 13 + index);
        let fields = v1::EventFields { title: (*title).into(), due_at: due, ..Default::default() };
        core.push(&office, "anna", &format!("today-{index}"), fields).await;
    }
    for index in 0..12 {
        let fields = v1::EventFields {
            title: format!("Something later, number {index}"),
            due_at: format!("2027-0{}-{:02}", 1 + index / 4, 1 + index * 2),
            ..Default::default()
        };
        core.push(&office, "anna", &format!("later-{index}"), fields).await;
    }
    anna.create_event(v1::EventFields {
        title: "Call the plumber".into(),
        due_at: "2026-12-11T19:00".into(),
        ..Default::default()
    })
    .await
    .unwrap();
    let mut config = common::config(&core);
    config.local_user = Some("anna".into());
    let gateway = Gateway::start(config).await;
    let shots = artifacts(&Backend::Sqlite).with_file_name("glance");
    let _ = std::fs::remove_dir_all(&shots);
    let (succeeded, report) = run_script(GLANCE, &gateway.base, &shots).await;
    assert!(
        succeeded && report.contains("all as expected"),
        "the at-a-glance scenario failed (screenshots in {}):\n{report}",
        shots.display()
    );
    gateway.stop().await;
    core.stop().await;
}

/// Every page offers to set the time zone while a person's zone is still
/// the deployment's default (`tests/browser/zone.py`): one press with
/// JavaScript (the browser's zone) and without it (keeping the default),
/// and nothing once answered. Core's part runs on both backends in its own
/// tests; the pages do not depend on the backend, so this runs on SQLite.
#[tokio::test]
async fn every_page_offers_the_browsers_time_zone_until_it_is_answered() {
    if !browser_available("the time-zone offer browser test") {
        return;
    }
    let core = TestCore::start_configured(&Backend::Sqlite, "2026-12-11T09:00:00Z", |config| {
        config.default_zone = chrono_tz::UTC;
    })
    .await;
    let mut gateways = Vec::new();
    for login in ["anna", "boris", "carla"] {
        let mut config = common::config(&core);
        config.local_user = Some(login.into());
        gateways.push(Gateway::start(config).await);
    }
    let shots = artifacts(&Backend::Sqlite).with_file_name("zone");
    let _ = std::fs::remove_dir_all(&shots);
    let mut arguments = vec![std::ffi::OsString::from(ZONE)];
    arguments.extend(gateways.iter().map(|gateway| gateway.base.clone().into()));
    arguments.push(shots.clone().into());
    let (succeeded, report) = common::python3(arguments).await;
    assert!(
        succeeded && report.contains("all as expected"),
        "the time-zone offer scenario failed (screenshots in {}):\n{report}",
        shots.display()
    );
    // Core holds each answer: a zone chosen, the default kept, no answer.
    for (login, zone, still_default) in
        [("anna", "America/New_York", false), ("boris", "UTC", false), ("carla", "UTC", true)]
    {
        let profile =
            core.inbox_as(login).get_profile(v1::GetProfileRequest::default()).await.unwrap();
        let profile = profile.into_inner();
        assert_eq!((profile.tz.as_str(), profile.tz_is_default), (zone, still_default), "{login}");
    }
    for gateway in gateways {
        gateway.stop().await;
    }
    core.stop().await;
}

hado_testing::on_both_backends!(a_person_uses_the_inbox_in_a_browser);
