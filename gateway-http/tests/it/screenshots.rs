//! The pictures in README.md and `docs/`, made from a seeded inbox in
//! Debian's headless Chromium (`tests/browser/screenshots.py`): a person's
//! real week on a fixed clock (a visa renewal, a tax filing, a dentist, a
//! domain renewal, a passport; overdue, today, preparing and scheduled,
//! from several sources) with a Telegram chat, an email address, a webhook
//! and two devices for push.
//!
//! `scripts/screenshots` sets `HADO_SCREENSHOTS_INTO` to `docs/` and so
//! writes the committed pictures. In the suite the test makes them afresh
//! in `target/test-artifacts/screenshots/` and compares each with its
//! committed counterpart by width and height, not pixel by pixel (fonts and
//! antialiasing differ from one Chromium to the next): a committed picture
//! that the script no longer makes, or that no doc shows, fails it, as does
//! a page that no longer shows what its picture is of.

use crate::common;

use std::path::{Path, PathBuf};

use axum::Json;
use axum::extract::Path as UrlPath;
use serde_json::{Value, json};

use common::Gateway;
use hado_core::config::{PushConfig, TelegramConfig};
use hado_gateway_http::config::Secret;
use hado_proto::v1;
use hado_testing::{self as testing, Backend, MailSink, TestCore};

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/browser/screenshots.py");
const TELEGRAM_SECRET: &str = "telegram-hook-secret-0123456789abcdef";
/// Where the README and the guides keep their pictures.
const DOCS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs");
/// The pictures the script makes, each shown in the README or a guide.
const PICTURES: [&str; 5] = [
    "inbox-wide-light.png",
    "inbox-wide-dark.png",
    "inbox-phone-light.png",
    "inbox-phone-dark.png",
    "settings-light.png",
];

/// A Bot API on loopback that knows the bot and takes every message.
async fn bot_api(UrlPath((_token, method)): UrlPath<(String, String)>) -> Json<Value> {
    match method.as_str() {
        "getMe" => Json(json!({"ok": true, "result": {"username": "hado_bot"}})),
        _ => Json(json!({"ok": true, "result": {"message_id": 1}})),
    }
}

/// Width and height from a PNG's header.
fn dimensions(path: &Path) -> (u32, u32) {
    let bytes = std::fs::read(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    assert!(
        bytes.len() > 24 && bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
        "{} is a PNG",
        path.display()
    );
    let number = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
    (number(16), number(20))
}

/// The README and every guide, for the pictures they show.
fn docs_text() -> String {
    let mut text = std::fs::read_to_string(Path::new(DOCS).join("../README.md")).unwrap();
    for entry in std::fs::read_dir(DOCS).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|extension| extension == "md") {
            text.push_str(&std::fs::read_to_string(path).unwrap());
        }
    }
    text
}

/// The person's week on the test's clock (Friday 11 December 2026, 10:00 in
/// Berlin): what the pictures show.
async fn seed(core: &TestCore) {
    let mut anna = core.inbox_as("anna");
    let profile = v1::UpdateProfileRequest {
        tz: Some("Europe/Berlin".into()),
        quiet_start: Some("22:00".into()),
        quiet_end: Some("07:30".into()),
        ..Default::default()
    };
    anna.update_profile(profile).await.unwrap();
    let fields = |title: &str, due_at: &str, subtitle: Option<&str>, fire_at: Option<&str>| {
        v1::EventFields {
            title: title.into(),
            due_at: due_at.into(),
            subtitle: subtitle.map(Into::into),
            fire_at: fire_at.map(Into::into),
            ..Default::default()
        }
    };
    let registrar = core.source_token("registrar").await;
    let utility = core.source_token("stadtwerke").await;
    let clinic = core.source_token("dental-clinic").await;
    let embassy = core.source_token("embassy").await;
    let taxes = core.source_token("tax-office").await;
    let passports = core.source_token("citizens-office").await;
    let airline = core.source_token("airline").await;
    let garage = core.source_token("garage").await;

    let domain = fields(
        "Renew the domain anna-keller.dev",
        "2026-12-08",
        Some("Automatic renewal failed: the card on file expired"),
        None,
    );
    core.push(&registrar, "anna", "anna-keller.dev", domain).await;
    let bill =
        fields("Pay the electricity bill", "2026-12-10", Some("€84.20, invoice 2026-11"), None);
    let bill = core.push(&utility, "anna", "invoice-2026-11", bill).await;
    let dentist = v1::EventFields {
        done_label: Some("Went".into()),
        ..fields("Dentist check-up", "2026-12-11T15:30", Some("Dr. Berg, Hauptstraße 12"), None)
    };
    core.push(&clinic, "anna", "appointment-8812", dentist).await;
    let visa = v1::EventFields {
        deep_link: Some("https://example.com/appointments".into()),
        ..fields(
            "Visa renewal: book the appointment",
            "2026-12-22",
            Some("The residence permit expires on 14 January"),
            Some("2026-11-23"),
        )
    };
    core.push(&embassy, "anna", "permit-renewal", visa).await;
    let tax = fields(
        "File the 2025 tax return",
        "2027-01-31",
        Some("Receipts are in the blue folder"),
        Some("2026-12-01"),
    );
    core.push(&taxes, "anna", "return-2025", tax).await;
    let passport = fields(
        "Passport expires",
        "2027-02-14",
        Some("Apply at least six weeks ahead"),
        Some("2026-12-01"),
    );
    core.push(&passports, "anna", "passport", passport).await;
    let flight =
        fields("Flight to Tokyo", "2027-03-01T10:00+09:00", Some("LH 714, seat 32A"), None);
    core.push(&airline, "anna", "booking-7Q2K", flight).await;
    let car = fields("Car inspection", "2027-04-09", None, None);
    core.push(&garage, "anna", "inspection", car).await;
    let lease = fields("Send the signed lease back", "2026-12-11T18:00", None, None);
    anna.create_event(lease).await.unwrap();
    let birthday = fields("Mum's birthday: order flowers", "2027-05-02", None, None);
    anna.create_event(birthday).await.unwrap();

    // The checkpoints due by now mark what needs attention; the bill is
    // remembered until tomorrow.
    hado_core::scheduler::drain(&core.engine).await.unwrap();
    let ack = v1::MarkAckRequest { id: bill, until: Some("tomorrow".into()) };
    anna.mark_ack(ack).await.unwrap();
}

/// Where reminders go: an email address, confirmed from the message that
/// reached the mail server, a webhook, two devices, and a Telegram chat
/// linked through the gateway as Telegram would.
async fn channels(core: &TestCore, gateway: &Gateway, sink: &MailSink) {
    let client = reqwest::Client::new();
    let mut anna = core.inbox_as("anna");
    let address = v1::AddEmailRequest { address: "anna@keller.example".into() };
    anna.add_email(address).await.unwrap();
    let confirmation = sink.wait_for(1).await.remove(0);
    let link = confirmation.links("/c/").remove(0);
    let path = &link[link.find("/c/").expect("a confirmation link")..];
    let confirmed = client
        .post(format!("{}{path}", gateway.base))
        .header("sec-fetch-site", "same-origin")
        .send()
        .await
        .unwrap();
    assert!(confirmed.status().is_success(), "the address is confirmed: {}", confirmed.status());
    let hook = v1::AddWebhookRequest { url: "https://automations.example.net/hado".into() };
    anna.add_webhook(hook).await.unwrap();
    // RFC 8291's example subscription keys: a real P-256 point and secret.
    let device = |endpoint: &str, user_agent: &str| {
        v1::AddPushRequest {
        endpoint: endpoint.into(),
        p256dh: "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4".into(),
        auth: "BTBZMqHH6r4Tts7J_aSIgg".into(),
        expiration_time: None,
        user_agent: user_agent.into(),
    }
    };
    let phone = device(
        "https://push.example.com/send/phone-4c1d",
        "Mozilla/5.0 (Linux; Android 15; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Mobile Safari/537.36",
    );
    anna.add_push(phone).await.unwrap();
    let laptop = device(
        "https://push.example.com/send/laptop-9e02",
        "Mozilla/5.0 (X11; Linux x86_64; rv:145.0) Gecko/20100101 Firefox/145.0",
    );
    anna.add_push(laptop).await.unwrap();

    let link = anna.create_telegram_link(v1::CreateTelegramLinkRequest {}).await.unwrap();
    let link = link.into_inner().url;
    let code = link.rsplit("start=").next().expect("a link with its code");
    let update = json!({"update_id": 1, "message": {"message_id": 1, "chat": {"id": 4242, "type": "private", "first_name": "Anna"}, "text": format!("/start {code}")}});
    let linked = client
        .post(format!("{}/hooks/telegram", gateway.base))
        .header("x-telegram-bot-api-secret-token", TELEGRAM_SECRET)
        .json(&update)
        .send()
        .await
        .unwrap();
    assert!(linked.status().is_success(), "the chat is linked: {}", linked.status());
    let listed = anna.list_channels(v1::ListChannelsRequest {}).await.unwrap().into_inner();
    assert_eq!(listed.channels.len(), 5, "every channel: {listed:?}");
}

fn folder() -> (PathBuf, bool) {
    match std::env::var_os("HADO_SCREENSHOTS_INTO") {
        Some(folder) => (PathBuf::from(folder), true),
        None => {
            let target =
                std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| {
                    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../target"))
                });
            (target.join("test-artifacts").join("screenshots"), false)
        }
    }
}

#[tokio::test]
async fn the_docs_pictures_are_made_from_a_seeded_inbox() {
    let found = Path::new("/usr/bin/chromium").exists()
        && Path::new("/usr/bin/chromedriver").exists()
        && testing::runs("python3", &["-c", "import selenium"]);
    let install = "apt-get install chromium chromium-driver and pip install selenium";
    if !testing::tool_available("the docs' pictures", found, install) {
        return;
    }
    let Some(sink) = MailSink::start("the docs' pictures").await else {
        return;
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let api_url = format!("http://{}", listener.local_addr().unwrap());
    let api = axum::Router::new().route("/{token}/{method}", axum::routing::post(bot_api));
    tokio::spawn(async move { axum::serve(listener, api).await.unwrap() });
    // Friday 11 December 2026, 10:00 in Berlin.
    let core = TestCore::start_configured(&Backend::Sqlite, "2026-12-11T09:00:00Z", |config| {
        config.telegram =
            Some(TelegramConfig { token: "123456:screenshots".into(), api_url, webhook: true });
        config.smtp = Some(sink.config("Hado <hado@keller.example>"));
        config.push =
            Some(PushConfig { subject: "mailto:ops@example.com".into(), private_key: None });
    })
    .await;
    seed(&core).await;
    let mut config = common::config(&core);
    config.local_user = Some("anna".into());
    config.telegram_webhook_secret = Some(Secret(TELEGRAM_SECRET.into()));
    let gateway = Gateway::start(config).await;
    channels(&core, &gateway, &sink).await;

    let (folder, writing) = folder();
    if !writing {
        let _ = std::fs::remove_dir_all(&folder);
    }
    let (succeeded, report) =
        common::python3([SCRIPT.as_ref(), gateway.base.as_ref(), folder.as_os_str()]).await;
    gateway.stop().await;
    core.stop().await;
    assert!(succeeded && report.contains("all as expected"), "{report}");

    let docs = docs_text();
    for picture in PICTURES {
        let fresh = dimensions(&folder.join(picture));
        let committed = dimensions(&Path::new(DOCS).join(picture));
        assert_eq!(fresh, committed, "{picture}: made afresh, and as committed under docs/");
        assert!(docs.contains(picture), "{picture} is shown in the README or a guide");
    }
    // Every picture under docs/ is made by a test: these, or the agent's
    // in-chat inbox, which gateway-mcp/tests/it/app_host.rs photographs.
    for entry in std::fs::read_dir(DOCS).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".png") {
            assert!(
                PICTURES.contains(&name.as_str()) || name.starts_with("inbox-in-chat-"),
                "docs/{name} is made by no test"
            );
            assert!(docs.contains(&name), "docs/{name} is shown in the README or a guide");
        }
    }
}
