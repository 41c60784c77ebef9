//! The installable inbox and push through gateway-http: the manifest, icons,
//! service worker and offline page it serves; `GET /me/push/key` and
//! `POST /me/push`, which a device subscribes through (201 with its
//! channel; a bad field named, a body past its cap refused); and, in
//! Debian's headless Chromium (`tests/browser/push.py`), a reminder core
//! really sent, decrypted by PyPI's `http-ece` (core's
//! `tests/push/verify.py`), delivered to the service worker, shown with
//! Done and Remember, and Done from its handler closing the event.

use crate::common;

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use axum::http::HeaderMap;
use reqwest::StatusCode;
use serde_json::{Value, json};

use common::Gateway;
use hado_proto::v1;
use hado_testing::{self as testing, Backend, TestCore, utc};

const VERIFY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../core/tests/push/verify.py");
const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/browser/push.py");
const SUBJECT: &str = "mailto:ops@example.com";
const USER_AGENT: &str = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";

type Posts = Arc<Mutex<Vec<(HashMap<String, String>, Vec<u8>)>>>;

/// A push service on loopback that takes every post with 201.
async fn push_service(posts: Posts) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let app = axum::Router::new().route(
        "/push/{device}",
        axum::routing::post(move |headers: HeaderMap, body: axum::body::Bytes| async move {
            let headers = headers
                .iter()
                .map(|(name, value)| (name.to_string(), value.to_str().unwrap().to_owned()))
                .collect();
            posts.lock().unwrap().push((headers, body.to_vec()));
            axum::http::StatusCode::CREATED
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    base
}

fn python(arguments: &[&str], input: Option<&str>) -> String {
    use std::io::Write;
    let mut child = std::process::Command::new("python3")
        .args(arguments)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("python3 runs");
    child.stdin.take().unwrap().write_all(input.unwrap_or_default().as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

async fn a_device_subscribes_and_its_notification_closes_an_event(backend: Backend) {
    let verifiers = testing::runs("python3", &["-c", "import http_ece, cryptography"]);
    if !testing::tool_available("push", verifiers, "pip install 'http-ece>=1.2,<2'") {
        return;
    }
    let core = TestCore::start_configured(&backend, "2026-12-01T10:00:00Z", |config| {
        config.push =
            Some(hado_core::config::PushConfig { subject: SUBJECT.into(), private_key: None });
    })
    .await;
    let mut config = common::config(&core);
    config.local_user = Some("anna".into());
    let gateway = Gateway::start(config).await;
    let client = reqwest::Client::new();
    let url = |path: &str| format!("{}{path}", gateway.base);

    // The installable app's files.
    let manifest: Value =
        client.get(url("/static/manifest.webmanifest")).send().await.unwrap().json().await.unwrap();
    assert_eq!((&manifest["start_url"], &manifest["display"]), (&json!("/"), &json!("standalone")));
    for icon in manifest["icons"].as_array().unwrap() {
        let png = client.get(url(icon["src"].as_str().unwrap())).send().await.unwrap();
        assert_eq!(png.headers()["content-type"], "image/png");
        let png = png.bytes().await.unwrap();
        let width = u32::from_be_bytes(png[16..20].try_into().unwrap());
        assert_eq!(format!("{width}x{width}"), icon["sizes"].as_str().unwrap());
    }
    let worker = client.get(url("/sw.js")).send().await.unwrap();
    assert!(worker.headers()["content-type"].to_str().unwrap().starts_with("text/javascript"));
    assert!(worker.text().await.unwrap().contains("notificationclick"));
    let offline = client.get(url("/static/offline.html")).send().await.unwrap();
    assert_eq!(offline.status(), StatusCode::OK);
    assert!(offline.text().await.unwrap().contains("offline"));

    // The key, and a device subscribing with keys its browser made.
    let key: Value = client.get(url("/me/push/key")).send().await.unwrap().json().await.unwrap();
    let public_key = key["public_key"].as_str().unwrap().to_owned();
    assert_eq!(public_key.len(), 87, "base64url of a 65-byte point");
    let keys: Value = serde_json::from_str(&python(&[VERIFY, "keys"], None)).unwrap();
    let posts = Posts::default();
    let service = push_service(posts.clone()).await;
    let subscribe = |body: Value| {
        client
            .post(url("/me/push"))
            .header("user-agent", USER_AGENT)
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
    };
    let subscription = json!({
        "endpoint": format!("{service}/push/laptop"),
        "expirationTime": null,
        "keys": { "p256dh": keys["p256dh"], "auth": keys["auth"] },
    });
    let created = subscribe(subscription.clone()).await.unwrap();
    assert_eq!(created.status(), StatusCode::CREATED);
    let channel: Value = created.json().await.unwrap();
    assert_eq!((&channel["kind"], &channel["name"]), (&json!("push"), &json!("Chrome on Linux")));

    // A bad field is named; a body past the cap is not read.
    let mut bad = subscription.clone();
    bad["keys"]["p256dh"] = json!("AAAA");
    let refused = subscribe(bad).await.unwrap();
    assert_eq!(refused.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(refused.text().await.unwrap().contains("keys.p256dh"));
    let mut huge = subscription.clone();
    huge["endpoint"] = json!(format!("https://push.example.com/{}", "a".repeat(5000)));
    assert_eq!(subscribe(huge).await.unwrap().status(), StatusCode::PAYLOAD_TOO_LARGE);
    let settings = client.get(url("/settings")).send().await.unwrap().text().await.unwrap();
    assert!(settings.contains("id=\"push-on\"") && settings.contains("Chrome on Linux"));
    // Another site's page cannot subscribe a device for the person.
    let foreign = client
        .post(url("/me/push"))
        .header("content-type", "application/json")
        .header("sec-fetch-site", "cross-site")
        .body(subscription.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status(), StatusCode::FORBIDDEN);
    // The device's name is the person's to change, from Settings.
    let id = channel["id"].as_i64().unwrap();
    let renamed = client
        .post(url(&format!("/settings/channels/{id}/name")))
        .form(&[("name", "Work laptop")])
        .send()
        .await
        .unwrap();
    assert!(renamed.status().is_success(), "{}", renamed.status());
    let settings = client.get(url("/settings")).send().await.unwrap().text().await.unwrap();
    assert!(settings.contains("Work laptop"), "the new name shows");

    // A reminder core really sends, decrypted as the browser would.
    let visa = core
        .inbox_as("anna")
        .create_event(v1::EventFields {
            title: "Visa".into(),
            due_at: "2026-12-05".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    core.clock.set(utc("2026-12-02T07:00:00Z"));
    hado_core::scheduler::drain(&core.engine).await.unwrap();
    hado_core::delivery::drain(&core.deliverer()).await.unwrap();
    let (headers, body) = testing::eventually("a reminder reaches the push service", || async {
        posts.lock().unwrap().last().cloned()
    })
    .await;
    let given = json!({
        "vapid_public_key": public_key,
        "subject": SUBJECT,
        "messages": [{
            "private_key": keys["private_key"], "auth": keys["auth"], "origin": service,
            "headers": headers, "body_hex": hex::encode(&body),
        }],
    });
    let decrypted: Vec<Value> =
        serde_json::from_str(&python(&[VERIFY], Some(&given.to_string()))).unwrap();
    // The test core's links name the public address it was given; the
    // browser reaches this gateway.
    let payload = decrypted[0].to_string().replace("http://127.0.0.1:8080", &gateway.base);

    if browser_available() {
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), &payload).unwrap();
        let id = visa.id.to_string();
        let (succeeded, report) = common::python3([
            SCRIPT.as_ref(),
            gateway.base.as_ref(),
            file.path().as_os_str(),
            id.as_ref(),
        ])
        .await;
        assert!(succeeded && report.contains("all as expected"), "{report}");
        let event = core.inbox_as("anna").get_event(v1::EventId { id: visa.id }).await.unwrap();
        assert_eq!(event.into_inner().state(), v1::EventState::Done);
    }
    gateway.stop().await;
    core.stop().await;
}

fn browser_available() -> bool {
    let found = Path::new("/usr/bin/chromium").exists()
        && Path::new("/usr/bin/chromedriver").exists()
        && testing::runs("python3", &["-c", "import selenium"]);
    testing::tool_available(
        "the push browser test",
        found,
        "apt-get install chromium chromium-driver and pip install selenium",
    )
}

async fn without_a_vapid_subject_settings_offers_no_push(backend: Backend) {
    let core = TestCore::start(&backend, "2026-12-01T10:00:00Z").await;
    let mut config = common::config(&core);
    config.local_user = Some("anna".into());
    let gateway = Gateway::start(config).await;
    let client = reqwest::Client::new();
    let key = client.get(format!("{}/me/push/key", gateway.base)).send().await.unwrap();
    assert_eq!(key.status(), StatusCode::NOT_FOUND);
    let settings = client
        .get(format!("{}/settings", gateway.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(!settings.contains("id=\"push-on\""), "no button without push");
    gateway.stop().await;
    core.stop().await;
}

hado_testing::on_both_backends!(
    a_device_subscribes_and_its_notification_closes_an_event,
    without_a_vapid_subject_settings_offers_no_push,
);
