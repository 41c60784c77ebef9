//! Reminders by webhook, end to end: a checkpoint fires in the scheduler,
//! the delivery loop posts to a real HTTP receiver on loopback, signatures
//! are verified by the Standard Webhooks reference library (PyPI's
//! `standardwebhooks`, through `tests/webhooks/verify.py`), 500s are retried
//! on the schedule, and a 410 turns the channel off.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use chrono::Duration as Span;
use serde_json::{Value, json};
use tonic::Code;
use tonic_types::StatusExt;

use hado_core::delivery;
use hado_proto::v1;
use hado_testing::{self as testing, Backend, TestCore, utc};

const VERIFY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/webhooks/verify.py");

#[derive(Clone, Debug)]
pub(crate) struct Received {
    path: String,
    headers: Value,
    pub(crate) body: String,
}

/// A webhook receiver that records every request and answers each path
/// with its scripted statuses, then 200.
#[derive(Clone, Default)]
pub(crate) struct Receiver {
    received: Arc<Mutex<Vec<Received>>>,
    script: Arc<Mutex<HashMap<String, VecDeque<u16>>>>,
}

async fn receive(
    State(receiver): State<Receiver>,
    Path(path): Path<String>,
    headers: HeaderMap,
    body: String,
) -> StatusCode {
    let headers = headers
        .iter()
        .filter(|(name, _)| name.as_str().starts_with("webhook-"))
        .map(|(name, value)| (name.to_string(), json!(value.to_str().unwrap())))
        .collect();
    receiver.received.lock().unwrap().push(Received {
        path: path.clone(),
        headers: Value::Object(headers),
        body,
    });
    let mut script = receiver.script.lock().unwrap();
    let status = script.get_mut(&path).and_then(VecDeque::pop_front).unwrap_or(200);
    StatusCode::from_u16(status).unwrap()
}

impl Receiver {
    pub(crate) async fn start(&self) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let app = axum::Router::new()
            .route("/{path}", axum::routing::post(receive))
            .with_state(self.clone());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        base
    }

    fn script(&self, path: &str, statuses: &[u16]) {
        self.script.lock().unwrap().insert(path.to_owned(), statuses.iter().copied().collect());
    }

    pub(crate) fn at(&self, path: &str) -> Vec<Received> {
        self.received
            .lock()
            .unwrap()
            .iter()
            .filter(|received| received.path == path)
            .cloned()
            .collect()
    }

    pub(crate) async fn wait_for(&self, path: &str, count: usize) -> Vec<Received> {
        for _ in 0..200 {
            let found = self.at(path);
            if found.len() >= count {
                return found;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("{path} received {} requests, not {count}", self.at(path).len());
    }
}

async fn webhooks_are_signed_retried_and_turned_off_by_410(backend: Backend) {
    let core = TestCore::start(&backend, "2026-12-01T10:00:00Z").await;
    let receiver = Receiver::default();
    let base = receiver.start().await;
    let mut anna = core.inbox_as("anna");

    let good = anna
        .add_webhook(v1::AddWebhookRequest { url: format!("{base}/good") })
        .await
        .unwrap()
        .into_inner();
    let secret = good.secret.clone();
    assert!(secret.starts_with("whsec_"));
    let good_id = good.channel.unwrap().id;
    let gone_id = anna
        .add_webhook(v1::AddWebhookRequest { url: format!("{base}/gone") })
        .await
        .unwrap()
        .into_inner()
        .channel
        .unwrap()
        .id;
    receiver.script("gone", &[410]);
    let bad = anna
        .add_webhook(v1::AddWebhookRequest { url: "ftp://example.com/hook".into() })
        .await
        .unwrap_err();
    assert_eq!(bad.code(), Code::InvalidArgument);

    // Channels are the person's to manage from the inbox, not the agent's.
    let token = core
        .admin()
        .issue_agent_token(v1::UserLogin { login: "anna".into() })
        .await
        .unwrap()
        .into_inner()
        .token;
    assert_eq!(
        core.agent(&token).list_channels(v1::ListChannelsRequest {}).await.unwrap_err().code(),
        Code::PermissionDenied
    );

    // A test message goes out at once.
    anna.test_channel(v1::ChannelId { id: good_id }).await.unwrap();
    let test = receiver.wait_for("good", 1).await;
    assert_eq!(serde_json::from_str::<Value>(&test[0].body).unwrap()["type"], "test");

    // The D−3 checkpoint of an event due on the 5th fires on the 2nd at 08:00 Berlin time.
    let event = anna
        .create_event(v1::EventFields {
            title: "Visa".into(),
            due_at: "2026-12-05".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    receiver.script("good", &[500, 503]);
    core.clock.set(utc("2026-12-02T07:00:00Z"));
    hado_core::scheduler::drain(&core.engine).await.unwrap();
    let deliverer = core.deliverer();
    delivery::drain(&deliverer).await.unwrap();
    receiver.wait_for("gone", 1).await;
    receiver.wait_for("good", 2).await;
    // The failed first attempt shows on its channel as soon as it is
    // recorded, with its time and its status, and in the delivery log, while
    // it waits to be retried.
    let failing = testing::eventually("the failed attempt shows on its channel", || {
        let mut anna = anna.clone();
        async move {
            let channels =
                anna.list_channels(v1::ListChannelsRequest {}).await.unwrap().into_inner().channels;
            channels
                .into_iter()
                .find(|channel| channel.id == good_id && channel.last_error.is_some())
        }
    })
    .await;
    assert!(
        failing.enabled && failing.last_error.as_deref().is_some_and(|error| error.contains("500")),
        "{failing:?}"
    );
    assert_eq!(
        failing.last_error_at.as_ref().map(hado_proto::convert::rfc3339_at).as_deref(),
        Some("2026-12-02T07:00:00Z"),
        "{failing:?}"
    );
    let logged = anna.get_event(v1::EventId { id: event.id }).await.unwrap().into_inner();
    let line =
        logged.deliveries.iter().find(|line| line.channel == format!("webhook {good_id}")).unwrap();
    assert_eq!(line.status().word(), "pending");
    assert!(line.note.as_deref().is_some_and(|note| note.contains("500")), "{line:?}");

    // 500 and 503 are retried on the schedule: after about 5 s, then about 5 min.
    core.clock.advance(Span::seconds(6));
    delivery::drain(&deliverer).await.unwrap();
    receiver.wait_for("good", 3).await;
    core.clock.advance(Span::minutes(6));
    delivery::drain(&deliverer).await.unwrap();
    let good_requests = receiver.wait_for("good", 4).await;
    let reminders: Vec<&Received> = good_requests.iter().skip(1).collect();
    let ids: Vec<&Value> =
        reminders.iter().map(|received| &received.headers["webhook-id"]).collect();
    assert!(
        ids.iter().all(|id| *id == ids[0]),
        "every attempt carries the same id, so the receiver can drop duplicates"
    );
    let body: Value = serde_json::from_str(&reminders[2].body).unwrap();
    assert_eq!(
        (body["type"].as_str(), body["event"]["title"].as_str(), body["event"]["id"].as_i64()),
        (Some("reminder.checkpoint"), Some("Visa"), Some(event.id))
    );
    assert_eq!(body["checkpoint"], "2026-12-02T07:00:00Z");
    assert!(body["event"].get("editable").is_none(), "the client view");
    for action in ["done_url", "remember_url"] {
        assert!(
            body["actions"][action].as_str().unwrap().starts_with("http://127.0.0.1:8080/a/"),
            "{body}"
        );
    }

    // The delivery log and the channels show what happened.
    let mut expected = vec![
        (format!("webhook {gone_id}"), "failed".to_owned(), 1),
        (format!("webhook {good_id}"), "sent".to_owned(), 3),
    ];
    expected.sort();
    let logged = testing::eventually("the last attempt is recorded", || {
        let mut anna = anna.clone();
        let expected = expected.clone();
        async move {
            let logged = anna.get_event(v1::EventId { id: event.id }).await.unwrap().into_inner();
            let mut log: Vec<(String, String, i64)> = logged
                .deliveries
                .iter()
                .map(|line| (line.channel.clone(), line.status().word().to_owned(), line.attempts))
                .collect();
            log.sort();
            (log == expected).then_some(logged)
        }
    })
    .await;
    assert!(logged.needs_attention);
    let channels =
        anna.list_channels(v1::ListChannelsRequest {}).await.unwrap().into_inner().channels;
    let gone = channels.iter().find(|channel| channel.id == gone_id).unwrap();
    assert!(
        !gone.enabled && gone.last_error.as_deref().is_some_and(|error| error.contains("410")),
        "{gone:?}"
    );
    let good = channels.iter().find(|channel| channel.id == good_id).unwrap();
    assert!(
        good.enabled && good.last_error.is_none() && good.last_error_at.is_none(),
        "a success clears the failure: {good:?}"
    );

    // Every body to the good receiver verifies with the reference library.
    let found = testing::runs("python3", &["-c", "import standardwebhooks"]);
    if testing::tool_available(
        "verifying webhooks with standardwebhooks",
        found,
        "pip install standardwebhooks",
    ) {
        let deliveries: Vec<Value> =
            good_requests.iter().map(|received| json!({"secret": secret, "headers": received.headers, "body": received.body})).collect();
        let mut verify = tokio::process::Command::new("python3")
            .arg(VERIFY)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use tokio::io::AsyncWriteExt;
        verify
            .stdin
            .take()
            .unwrap()
            .write_all(serde_json::to_string(&deliveries).unwrap().as_bytes())
            .await
            .unwrap();
        let output = verify.wait_with_output().await.unwrap();
        assert!(
            output.status.success(),
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "verified 4 deliveries");
    }

    // Remember answers the reminder; channels can be turned off and removed.
    let remembered =
        anna.mark_ack(v1::MarkAckRequest { id: event.id, until: None }).await.unwrap().into_inner();
    assert!(!remembered.needs_attention);
    anna.set_channel_enabled(v1::SetChannelEnabledRequest { id: good_id, enabled: false })
        .await
        .unwrap();
    anna.remove_channel(v1::ChannelId { id: gone_id }).await.unwrap();
    assert_eq!(
        anna.remove_channel(v1::ChannelId { id: gone_id }).await.unwrap_err().code(),
        Code::NotFound
    );
    core.stop().await;
}

async fn private_targets_are_refused_unless_allowed(backend: Backend) {
    let core = TestCore::start_configured(&backend, "2026-12-01T10:00:00Z", |config| {
        config.webhook_allow_private = false
    })
    .await;
    let mut anna = core.inbox_as("anna");
    for url in [
        "http://127.0.0.1:8080/hook",
        "http://localhost/hook",
        "https://192.168.1.10/hook",
        "http://[::1]/hook",
        // Reserved, documentation and benchmarking ranges, and loopback written in disguise.
        "http://192.0.2.1/hook",
        "http://198.18.0.1/hook",
        "http://240.0.0.1/hook",
        "http://[::127.0.0.1]/hook",
        "http://2130706433/hook",
        "http://127.1/hook",
        "http://0x7f000001/hook",
        "http://[::ffff:7f00:1]/hook",
    ] {
        let refused =
            anna.add_webhook(v1::AddWebhookRequest { url: url.into() }).await.unwrap_err();
        assert_eq!(refused.code(), Code::InvalidArgument, "{url}");
        assert!(
            refused.message().starts_with("url ") && refused.message().contains("refused"),
            "{url}: {}",
            refused.message()
        );
        let violation =
            refused.get_details_bad_request().expect("field violations").field_violations.remove(0);
        assert_eq!(
            (violation.field.as_str(), violation.reason.as_str()),
            ("url", "PRIVATE_ADDRESS"),
            "{url}"
        );
    }
    assert!(
        anna.add_webhook(v1::AddWebhookRequest { url: "https://hooks.example.com/hado".into() })
            .await
            .is_ok()
    );
    assert!(
        anna.list_channels(v1::ListChannelsRequest {}).await.unwrap().into_inner().channels.len()
            == 1,
        "nothing refused was stored"
    );

    // A name that resolves to loopback only when it is sent to (as after DNS
    // rebinding), and an address written in disguise that got in somehow:
    // the client connects only to addresses that pass, so nothing arrives.
    let receiver = Receiver::default();
    let base = receiver.start().await;
    let port = base.rsplit(':').next().unwrap();
    // Bob's, so that nothing is sent to anna's hook on a real host name.
    let mut bob = core.inbox_as("bob");
    let rebound = core.plant_webhook("bob", &format!("http://localhost:{port}/rebound")).await;
    let disguised = core.plant_webhook("bob", &format!("http://2130706433:{port}/disguised")).await;
    let event = bob
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
    delivery::drain(&core.deliverer()).await.unwrap();
    // Core's own delivery loop runs beside this drain and may have claimed
    // either delivery first: wait until both outcomes are recorded. Each is
    // refused for good, with the reason on the channel, and never sent.
    let mut channels = Vec::new();
    for _ in 0..200 {
        channels =
            bob.list_channels(v1::ListChannelsRequest {}).await.unwrap().into_inner().channels;
        if [rebound, disguised].iter().all(|id| {
            channels.iter().any(|channel| channel.id == *id && channel.last_error.is_some())
        }) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    for id in [rebound, disguised] {
        let channel = channels.iter().find(|channel| channel.id == id).unwrap();
        assert!(
            channel.last_error.as_deref().is_some_and(|error| error.contains("refused")),
            "{channel:?}"
        );
    }
    let log = bob.get_event(v1::EventId { id: event.id }).await.unwrap().into_inner().deliveries;
    assert!(log.len() == 2 && log.iter().all(|line| line.status().word() == "failed"), "{log:?}");
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(receiver.received.lock().unwrap().is_empty(), "nothing reached the loopback receiver");
    core.stop().await;
}

/// A receiver that strains (503) is paused for all its posts, a second,
/// then two if it strains again when it is next asked, and so on; another
/// receiver meanwhile gets its posts at once; an easy answer ends the
/// pauses. Core's own delivery loop sends; the test moves the clock.
async fn a_strained_receiver_is_paused_and_the_others_are_not(backend: Backend) {
    let core = TestCore::start(&backend, "2026-12-01T10:00:00Z").await;
    let (strained, easy) = (Receiver::default(), Receiver::default());
    let (strained_base, easy_base) = (strained.start().await, easy.start().await);
    let mut anna = core.inbox_as("anna");
    let mut add = async |url: String| {
        anna.add_webhook(v1::AddWebhookRequest { url })
            .await
            .unwrap()
            .into_inner()
            .channel
            .unwrap()
            .id
    };
    let (busy_hook, other_hook, easy_hook) = (
        add(format!("{strained_base}/busy")).await,
        add(format!("{strained_base}/other")).await,
        add(format!("{easy_base}/easy")).await,
    );
    strained.script("busy", &[503, 503]);
    let test =
        async |id: i64| core.inbox_as("anna").test_channel(v1::ChannelId { id }).await.unwrap();
    // Longer than the loop takes to look again at what it held back.
    let a_while = || tokio::time::sleep(Duration::from_millis(700));

    // The first 503 pauses the whole receiver for a second; the other
    // receiver is sent to at once.
    test(busy_hook).await;
    strained.wait_for("busy", 1).await;
    test(busy_hook).await;
    test(easy_hook).await;
    easy.wait_for("easy", 1).await;
    a_while().await;
    assert_eq!(strained.at("busy").len(), 1, "a paused receiver gets nothing");

    // A second later the held post goes, meets 503 again, and the receiver
    // is paused for two seconds, for all its hooks.
    core.clock.advance(Span::milliseconds(1100));
    strained.wait_for("busy", 2).await;
    test(other_hook).await;
    core.clock.advance(Span::milliseconds(1100));
    a_while().await;
    assert!(strained.at("other").is_empty(), "still paused a second later");
    core.clock.advance(Span::milliseconds(1000));
    strained.wait_for("other", 1).await;

    // That easy answer ended the pauses: the next post goes at once.
    test(other_hook).await;
    strained.wait_for("other", 2).await;
    core.stop().await;
}

/// A receiver that holds every request until it is let go.
#[derive(Clone, Default)]
struct Holding {
    arrived: Arc<std::sync::atomic::AtomicUsize>,
    go: Arc<tokio::sync::Notify>,
}

impl Holding {
    async fn start(&self) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let holding = self.clone();
        let app = axum::Router::new().route(
            "/held",
            axum::routing::post(async move || {
                holding.arrived.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                holding.go.notified().await;
                StatusCode::OK
            }),
        );
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        base
    }
}

/// A receiver that is slow to answer holds up only its own posts: while
/// one post waits for its answer, the loop goes on sending what is due to
/// the others, more than one claim's worth.
async fn a_slow_receiver_holds_up_only_its_own_posts(backend: Backend) {
    let core = TestCore::start(&backend, "2026-12-01T10:00:00Z").await;
    let (slow, quick) = (Holding::default(), Receiver::default());
    let (slow_base, quick_base) = (slow.start().await, quick.start().await);
    let mut anna = core.inbox_as("anna");
    let slow_hook = anna
        .add_webhook(v1::AddWebhookRequest { url: format!("{slow_base}/held") })
        .await
        .unwrap()
        .into_inner()
        .channel
        .unwrap()
        .id;
    let quick_hook = anna
        .add_webhook(v1::AddWebhookRequest { url: format!("{quick_base}/quick") })
        .await
        .unwrap()
        .into_inner()
        .channel
        .unwrap()
        .id;

    let arrived = || slow.arrived.load(std::sync::atomic::Ordering::SeqCst);
    anna.test_channel(v1::ChannelId { id: slow_hook }).await.unwrap();
    for _ in 0..200 {
        if arrived() == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(arrived(), 1, "the slow receiver's post went out");
    // Three claims' worth for the quick receiver, all queued while the slow
    // one has not answered: tests are capped per channel and per person, so
    // they go to 30 webhooks on that receiver, held by ten people.
    anna.remove_channel(v1::ChannelId { id: quick_hook }).await.unwrap();
    for person in 0..10 {
        let mut inbox = core.inbox_as(&format!("person{person}"));
        for hook in 0..3 {
            let url = format!("{quick_base}/quick-{person}-{hook}");
            let added = inbox.add_webhook(v1::AddWebhookRequest { url }).await.unwrap();
            let id = added.into_inner().channel.unwrap().id;
            for _ in 0..5 {
                inbox.test_channel(v1::ChannelId { id }).await.unwrap();
            }
        }
    }
    for _ in 0..400 {
        if quick.received.lock().unwrap().len() >= 150 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(quick.received.lock().unwrap().len(), 150, "every quick post went out");
    assert_eq!(arrived(), 1, "the slow receiver's post still waits for its answer");
    slow.go.notify_waiters();
    core.stop().await;
}

hado_testing::on_both_backends!(
    webhooks_are_signed_retried_and_turned_off_by_410,
    private_targets_are_refused_unless_allowed,
    a_strained_receiver_is_paused_and_the_others_are_not,
    a_slow_receiver_holds_up_only_its_own_posts
);
