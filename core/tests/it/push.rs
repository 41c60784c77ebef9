//! Reminders by Web Push, end to end: a push service stand-in on loopback
//! records what core posts, and every message is decrypted and its VAPID
//! token verified by implementations that owe nothing to Hado's (PyPI's
//! `http-ece` and `cryptography`, through `tests/push/verify.py`), with
//! keys the test's own "browser" made. A 410 removes the device and
//! Settings says so, a 429's `Retry-After` is honoured, a reminder inside
//! quiet hours waits for their end, and Done from the notification's
//! link closes the event. An endpoint that is not a push service's (a
//! private address, plain http) and keys that are not a subscription's are
//! refused, naming the field; another person's device is not theirs to remove.

use std::collections::{HashMap, VecDeque};
use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::Duration as Span;
use serde_json::{Value, json};
use tonic::Code;

use hado_core::delivery;
use hado_proto::v1;
use hado_testing::{self as testing, Backend, TestCore, utc};

const VERIFY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/push/verify.py");
const SUBJECT: &str = "mailto:ops@example.com";

/// A scripted answer: the status, and the `Retry-After` it carries.
type Answer = (u16, Option<u64>);

/// One post the push service received.
#[derive(Clone, Debug)]
struct Posted {
    device: String,
    headers: HashMap<String, String>,
    body: Vec<u8>,
}

/// A push service: records every post and answers each device with its
/// scripted statuses (and `Retry-After`), then 201.
#[derive(Clone, Default)]
struct PushService {
    posted: Arc<Mutex<Vec<Posted>>>,
    script: Arc<Mutex<HashMap<String, VecDeque<Answer>>>>,
}

async fn receive(
    State(service): State<PushService>,
    Path(device): Path<String>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    let headers = headers
        .iter()
        .map(|(name, value)| (name.to_string(), value.to_str().unwrap_or_default().to_owned()))
        .collect();
    service.posted.lock().unwrap().push(Posted {
        device: device.clone(),
        headers,
        body: body.to_vec(),
    });
    let answer = service.script.lock().unwrap().get_mut(&device).and_then(VecDeque::pop_front);
    let (status, retry_after) = answer.unwrap_or((201, None));
    let status = StatusCode::from_u16(status).unwrap();
    match retry_after {
        Some(seconds) => (status, [("retry-after", seconds.to_string())]).into_response(),
        None => status.into_response(),
    }
}

impl PushService {
    async fn start(&self) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let app = axum::Router::new()
            .route("/push/{device}", axum::routing::post(receive))
            .with_state(self.clone());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        base
    }

    fn script(&self, device: &str, answers: &[Answer]) {
        self.script.lock().unwrap().insert(device.to_owned(), answers.iter().copied().collect());
    }

    fn to(&self, device: &str) -> Vec<Posted> {
        let posted = self.posted.lock().unwrap();
        posted.iter().filter(|posted| posted.device == device).cloned().collect()
    }
}

/// A browser's subscription keys, made by `verify.py keys`.
#[derive(Clone, Debug)]
struct BrowserKeys {
    private_key: String,
    p256dh: String,
    auth: String,
}

fn browser_keys() -> BrowserKeys {
    let output = Command::new("python3").args([VERIFY, "keys"]).output().expect("python3 runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let keys: Value = serde_json::from_slice(&output.stdout).unwrap();
    let field = |name: &str| keys[name].as_str().unwrap().to_owned();
    BrowserKeys { private_key: field("private_key"), p256dh: field("p256dh"), auth: field("auth") }
}

/// Every post decrypted and verified by `verify.py`: what each notification says.
fn decrypted(
    posts: &[Posted],
    keys: &BrowserKeys,
    vapid_public_key: &str,
    origin: &str,
) -> Vec<Value> {
    let messages: Vec<Value> = posts
        .iter()
        .map(|posted| {
            json!({
                "private_key": keys.private_key,
                "auth": keys.auth,
                "origin": origin,
                "headers": posted.headers,
                "body_hex": hex::encode(&posted.body),
            })
        })
        .collect();
    let given =
        json!({ "vapid_public_key": vapid_public_key, "subject": SUBJECT, "messages": messages });
    let mut child = Command::new("python3")
        .arg(VERIFY)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    child.stdin.take().unwrap().write_all(given.to_string().as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice::<Vec<Value>>(&output.stdout).unwrap()
}

fn verifiers_here() -> bool {
    testing::tool_available(
        "push",
        testing::runs("python3", &["-c", "import http_ece, cryptography"]),
        "python3 with PyPI's http-ece (pip install 'http-ece>=1.2,<2')",
    )
}

fn subscription(endpoint: &str, keys: &BrowserKeys) -> v1::AddPushRequest {
    v1::AddPushRequest {
        endpoint: endpoint.to_owned(),
        p256dh: keys.p256dh.clone(),
        auth: keys.auth.clone(),
        expiration_time: None,
        user_agent: "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36".into(),
    }
}

async fn push_reminders_are_sealed_signed_paced_and_quiet_at_night(backend: Backend) {
    if !verifiers_here() {
        return;
    }
    let core = TestCore::start_configured(&backend, "2026-12-01T10:00:00Z", |config| {
        config.push =
            Some(hado_core::config::PushConfig { subject: SUBJECT.into(), private_key: None });
    })
    .await;
    let service = PushService::default();
    let base = service.start().await;
    let mut anna = core.inbox_as("anna");
    let deliverer = core.deliverer();
    let settle = || async {
        hado_core::scheduler::drain(&core.engine).await.unwrap();
        delivery::drain(&deliverer).await.unwrap();
        core.deliveries_settled().await;
    };
    let listed = anna.list_channels(v1::ListChannelsRequest {}).await.unwrap().into_inner();
    let vapid_public_key = listed.push_public_key;
    assert_eq!(URL_SAFE_NO_PAD.decode(&vapid_public_key).unwrap().len(), 65);

    // Two devices subscribe with keys their browsers made.
    let (phone_keys, old_keys) = (browser_keys(), browser_keys());
    let phone = anna
        .add_push(subscription(&format!("{base}/push/phone"), &phone_keys))
        .await
        .unwrap()
        .into_inner();
    assert_eq!((phone.kind(), phone.name.as_str()), (v1::ChannelKind::Push, "Chrome on Android"));
    let old = anna
        .add_push(subscription(&format!("{base}/push/old"), &old_keys))
        .await
        .unwrap()
        .into_inner();
    service.script("old", &[(410, None)]);
    let lost = anna
        .add_push(subscription(&format!("{base}/push/lost"), &browser_keys()))
        .await
        .unwrap()
        .into_inner();
    service.script("lost", &[(404, None)]);
    // The same endpoint again takes its new keys and stays one device.
    let again = anna
        .add_push(subscription(&format!("{base}/push/phone"), &phone_keys))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(again.id, phone.id);
    let renamed = anna
        .rename_channel(v1::RenameChannelRequest { id: phone.id, name: "  Anna's phone ".into() })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(renamed.name, "Anna's phone");

    // A test goes out at once, and says so.
    anna.test_channel(v1::ChannelId { id: phone.id }).await.unwrap();
    settle().await;
    testing::eventually("the test reaches the phone", || async {
        (!service.to("phone").is_empty()).then_some(())
    })
    .await;
    let test = decrypted(&service.to("phone"), &phone_keys, &vapid_public_key, &base);
    assert_eq!(
        (test[0]["type"].as_str(), test[0]["renotify"].as_bool()),
        (Some("test"), Some(false))
    );

    // The D−3 checkpoint of an event due on the 5th: 08:00 on the 2nd in Berlin.
    let visa = anna
        .create_event(v1::EventFields {
            title: "Visa".into(),
            due_at: "2026-12-05".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    core.clock.set(utc("2026-12-02T07:00:00Z"));
    let before = service.to("phone").len();
    settle().await;
    testing::eventually("the checkpoint reaches the phone", || async {
        let ended = service.to("old").len() == 1 && service.to("lost").len() == 1;
        (service.to("phone").len() > before && ended).then_some(())
    })
    .await;
    settle().await;
    let posts = service.to("phone");
    let reminder = posts.last().unwrap();
    let notification =
        decrypted(std::slice::from_ref(reminder), &phone_keys, &vapid_public_key, &base).remove(0);
    assert_eq!(notification["title"], "Visa");
    assert_eq!(notification["tag"], format!("event-{}", visa.id));
    assert_eq!(notification["state"], "preparing");
    assert_eq!(notification["renotify"], true);
    assert!(notification["body"].as_str().unwrap().contains("5"), "{notification}");
    let actions: Vec<&str> = notification["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|action| action["action"].as_str().unwrap())
        .collect();
    assert_eq!(actions, ["done", "remember"]);
    // Until the next checkpoint (D−1, 08:00 on the 4th), in no hurry, one topic per event.
    assert_eq!(reminder.headers["ttl"], (2 * 24 * 3600).to_string());
    assert_eq!(reminder.headers["urgency"], "normal");
    // The topic travels in the clear: a keyed hash of the event, not its id
    // (`Vapid::topic`'s own test shows it opaque).
    let visa_topic = reminder.headers["topic"].clone();
    assert_eq!(visa_topic.len(), 22, "{visa_topic}");
    assert!(!visa_topic.starts_with("event"), "{visa_topic}");

    // The old device's push service said 410, the lost one's 404: both are
    // removed, and Settings says so.
    assert_eq!((service.to("old").len(), service.to("lost").len()), (1, 1));
    let listed = anna.list_channels(v1::ListChannelsRequest {}).await.unwrap().into_inner();
    let ids: Vec<i64> = listed.channels.iter().map(|channel| channel.id).collect();
    assert_eq!(ids, [phone.id], "{listed:?}");
    assert!(lost.id != old.id);
    assert_eq!(listed.push_gone, "Chrome on Android");

    // Inside quiet hours (22:30 in Berlin) a new event's reminder waits for 08:00.
    core.clock.set(utc("2026-12-02T21:30:00Z"));
    let rent = anna
        .create_event(v1::EventFields {
            title: "Rent".into(),
            due_at: "2026-12-03".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let before = service.to("phone").len();
    settle().await;
    assert_eq!(service.to("phone").len(), before, "nothing is pushed during quiet hours");
    core.clock.set(utc("2026-12-03T07:00:00Z"));
    settle().await;
    testing::eventually("the held reminder goes at the end of quiet hours", || async {
        (service.to("phone").len() > before).then_some(())
    })
    .await;
    let morning = service.to("phone");
    let rent_post = morning[before..].iter().find(|posted| posted.headers["topic"] != visa_topic);
    let rent_post = rent_post.expect("the held reminder went at the end of quiet hours");
    assert_eq!(rent_post.headers["urgency"], "high", "an event due today is urgent");

    // A 429 with Retry-After holds the device's posts for that long.
    let tablet_keys = browser_keys();
    let tablet = anna
        .add_push(subscription(&format!("{base}/push/tablet"), &tablet_keys))
        .await
        .unwrap()
        .into_inner();
    service.script("phone", &[(429, Some(120))]);
    core.clock.set(utc("2026-12-04T07:00:00Z"));
    let before = service.to("phone").len();
    hado_core::scheduler::drain(&core.engine).await.unwrap();
    delivery::drain(&deliverer).await.unwrap();
    let held = testing::eventually("the 429 is recorded on its delivery", || {
        let mut anna = anna.clone();
        async move {
            let mut lines = Vec::new();
            for id in [visa.id, rent.id] {
                lines.extend(
                    anna.get_event(v1::EventId { id }).await.unwrap().into_inner().deliveries,
                );
            }
            lines.into_iter().find(|line| {
                line.status().word() == "pending"
                    && line.note.as_deref().is_some_and(|note| note.contains("429"))
            })
        }
    })
    .await;
    assert_eq!(held.attempts, 1, "{held:?}");
    let refused = service.to("phone").len();
    assert!(refused > before);
    // A push service limits each subscription: the phone's 429 does not
    // hold another device at the same service.
    let tablet_before = service.to("tablet").len();
    anna.test_channel(v1::ChannelId { id: tablet.id }).await.unwrap();
    delivery::drain(&deliverer).await.unwrap();
    testing::eventually("the tablet is not held by the phone's 429", || async {
        (service.to("tablet").len() > tablet_before).then_some(())
    })
    .await;
    core.clock.advance(Span::seconds(60));
    delivery::drain(&deliverer).await.unwrap();
    assert_eq!(service.to("phone").len(), refused, "nothing goes before Retry-After has passed");
    core.clock.advance(Span::seconds(70));
    settle().await;
    let all = service.to("phone");
    assert!(all.len() > refused, "the reminder went once Retry-After had passed");

    // Every post decrypts and verifies; Done through the notification's link closes the event.
    let notifications = decrypted(&all, &phone_keys, &vapid_public_key, &base);
    let latest =
        notifications.iter().rev().find(|notification| notification["event"] == visa.id).unwrap();
    let done_url = latest["actions"][0]["url"].as_str().unwrap();
    let token = done_url.rsplit_once("/a/").unwrap().1.to_owned();
    core.links().use_action_link(v1::ActionLinkRequest { token }).await.unwrap();
    let closed = anna.get_event(v1::EventId { id: visa.id }).await.unwrap().into_inner();
    assert_eq!(closed.state(), v1::EventState::Done);

    // A 403 (the service will not take this token, as after a key change)
    // is final: nothing waits to be sent to that device again.
    service.script("phone", &[(403, None)]);
    let before = service.to("phone").len();
    anna.test_channel(v1::ChannelId { id: phone.id }).await.unwrap();
    delivery::drain(&deliverer).await.unwrap();
    testing::eventually("the 403 ends the test's delivery, with no retry", || async {
        let ended = core.pending_deliveries().await == 0;
        (service.to("phone").len() == before + 1 && ended).then_some(())
    })
    .await;
    core.stop().await;
}

async fn an_endpoint_or_keys_that_are_not_a_push_services_are_refused(backend: Backend) {
    if !verifiers_here() {
        return;
    }
    let core = TestCore::start_configured(&backend, "2026-12-01T10:00:00Z", |config| {
        config.push =
            Some(hado_core::config::PushConfig { subject: SUBJECT.into(), private_key: None });
        config.webhook_allow_private = false;
    })
    .await;
    let anna = core.inbox_as("anna");
    let keys = browser_keys();
    let refused = |request: v1::AddPushRequest| {
        let mut anna = anna.clone();
        async move { anna.add_push(request).await.unwrap_err() }
    };
    let field_of = |status: &tonic::Status| {
        use tonic_types::StatusExt;
        status
            .get_details_bad_request()
            .map(|bad| bad.field_violations[0].field.clone())
            .unwrap_or_default()
    };
    for endpoint in [
        "https://127.0.0.1/push",
        "https://10.0.0.8/push",
        "https://[::1]/push",
        "https://169.254.169.254/latest/meta-data",
        "https://localhost./push",
        "https://LOCALHOST/push",
        "http://push.example.com/send",
        "javascript:alert(1)",
        "",
    ] {
        let status = refused(subscription(endpoint, &keys)).await;
        assert_eq!(status.code(), Code::InvalidArgument, "{endpoint}: {status:?}");
        assert_eq!(field_of(&status), "endpoint", "{endpoint}: {}", status.message());
    }
    // Keys are read on a core that lets tests use loopback, so that no name is resolved.
    core.stop().await;
    let core = TestCore::start_configured(&backend, "2026-12-01T10:00:00Z", |config| {
        config.push =
            Some(hado_core::config::PushConfig { subject: SUBJECT.into(), private_key: None });
    })
    .await;
    let mut anna = core.inbox_as("anna");
    let refused = |request: v1::AddPushRequest| {
        let mut anna = anna.clone();
        async move { anna.add_push(request).await.unwrap_err() }
    };
    let endpoint = "https://127.0.0.1:9/push/abc";
    for (p256dh, auth, field) in [
        ("AAAA".to_owned(), keys.auth.clone(), "keys.p256dh"),
        ("B".repeat(5000), keys.auth.clone(), "keys.p256dh"),
        (keys.p256dh.clone(), "c2hvcnQ".to_owned(), "keys.auth"),
        (keys.p256dh.clone(), "A".repeat(5000), "keys.auth"),
    ] {
        let status =
            refused(v1::AddPushRequest { p256dh, auth, ..subscription(endpoint, &keys) }).await;
        assert_eq!(status.code(), Code::InvalidArgument);
        assert_eq!(field_of(&status), field, "{}", status.message());
        assert!(status.message().contains(field), "{}", status.message());
    }
    let expired = v1::AddPushRequest { expiration_time: Some(1), ..subscription(endpoint, &keys) };
    assert_eq!(field_of(&refused(expired).await), "expirationTime");
    let long_name = v1::RenameChannelRequest { id: 1, name: "x".repeat(65) };
    assert_eq!(anna.rename_channel(long_name).await.unwrap_err().code(), Code::InvalidArgument);

    // Another person's device is not found, never removed or renamed.
    let mut bob = core.inbox_as("bob");
    let device = anna
        .add_push(subscription("https://127.0.0.1:9/push/anna", &keys))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        bob.remove_channel(v1::ChannelId { id: device.id }).await.unwrap_err().code(),
        Code::NotFound
    );
    let rename = v1::RenameChannelRequest { id: device.id, name: "mine".into() };
    assert_eq!(bob.rename_channel(rename).await.unwrap_err().code(), Code::NotFound);
    assert_eq!(
        bob.test_channel(v1::ChannelId { id: device.id }).await.unwrap_err().code(),
        Code::NotFound
    );
    let listed = anna.list_channels(v1::ListChannelsRequest {}).await.unwrap().into_inner();
    assert!(listed.channels.iter().any(|channel| channel.id == device.id));
    core.stop().await;

    // Without HADO_VAPID_SUBJECT there is no key and no device to add.
    let core = TestCore::start(&backend, "2026-12-01T10:00:00Z").await;
    let mut anna = core.inbox_as("anna");
    let listed = anna.list_channels(v1::ListChannelsRequest {}).await.unwrap().into_inner();
    assert_eq!(listed.push_public_key, "");
    let off = anna.add_push(subscription("https://127.0.0.1:9/push/x", &keys)).await.unwrap_err();
    assert_eq!(off.code(), Code::FailedPrecondition);
    core.stop().await;
}

/// Thirty subscriptions sent at once, each to another endpoint: the cap of
/// twenty devices holds, so one person cannot fan a reminder out to more.
async fn a_burst_of_subscriptions_stays_within_the_device_cap(backend: Backend) {
    if !verifiers_here() {
        return;
    }
    let core = TestCore::start_configured(&backend, "2026-12-01T10:00:00Z", |config| {
        config.push =
            Some(hado_core::config::PushConfig { subject: SUBJECT.into(), private_key: None });
    })
    .await;
    let anna = core.inbox_as("anna");
    let keys = browser_keys();
    let burst = (0..30).map(|index| {
        let (mut anna, request) =
            (anna.clone(), subscription(&format!("http://127.0.0.1:9/push/{index}"), &keys));
        async move { anna.add_push(request).await }
    });
    let answers = futures::future::join_all(burst).await;
    let added = answers.iter().filter(|answer| answer.is_ok()).count();
    assert_eq!(added, 20, "{:?}", answers.iter().filter_map(|a| a.as_ref().err()).next());
    let listed = anna.clone().list_channels(v1::ListChannelsRequest {}).await.unwrap();
    assert_eq!(listed.into_inner().channels.len(), 20);
    core.stop().await;
}

hado_testing::on_both_backends!(
    push_reminders_are_sealed_signed_paced_and_quiet_at_night,
    an_endpoint_or_keys_that_are_not_a_push_services_are_refused,
    a_burst_of_subscriptions_stays_within_the_device_cap,
);
