//! Reminders under faults, with real `hado-core` processes on the real
//! clock: a core killed (SIGKILL) after it claimed a delivery and before the
//! receiver answered loses nothing, because another pass sends it again once
//! its lease runs out; and two cores on one Postgres deliver 1,000 due
//! reminders with no reminder sent twice, and never more posts in flight to
//! one receiver than `HADO_DELIVERY_CONCURRENCY` between them.
//!
//! Checkpoints are real: each event is due at a whole minute just over an
//! hour ahead, so its "one hour before" checkpoint comes within two minutes.

#![cfg(unix)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::HeaderMap;
use chrono::{DurationRound, Utc};
use tokio::process::{Child, Command};

use hado_proto::v1;
use hado_proto::v1::admin_client::AdminClient;
use hado_proto::v1::inbox_client::InboxClient;
use hado_proto::v1::ingest_client::IngestClient;
use hado_testing::{
    self as testing, ADMIN_TOKEN, Backend, Bearer, GATEWAY_TOKEN, LINK_SECRET, TestDatabase,
};

const CORE: &str = env!("CARGO_BIN_EXE_hado-core");

fn free_address() -> String {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().to_string()
}

async fn start_core(database_url: &str, address: &str) -> Child {
    start_core_with(database_url, address, &[]).await
}

async fn start_core_with(database_url: &str, address: &str, settings: &[(&str, &str)]) -> Child {
    let child = Command::new(CORE)
        .envs(settings.iter().copied())
        .env("HADO_DATABASE_URL", database_url)
        .env("HADO_GRPC_ADDR", address)
        .env("HADO_ADMIN_TOKEN", ADMIN_TOKEN)
        .env("HADO_GATEWAY_TOKEN", GATEWAY_TOKEN)
        .env("HADO_SECRET", LINK_SECRET)
        .env("HADO_WEBHOOK_ALLOW_PRIVATE", "true")
        .env("RUST_LOG", "error")
        .kill_on_drop(true)
        .spawn()
        .expect("hado-core starts");
    let channel =
        tonic::transport::Channel::from_shared(format!("http://{address}")).unwrap().connect_lazy();
    testing::wait_until_serving(channel, std::time::Duration::from_secs(5)).await;
    child
}

fn kill(child: &Child) {
    let pid = nix::unistd::Pid::from_raw(child.id().expect("still running") as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL).expect("the child is killed");
}

/// Everything a receiver got, by `webhook-id`, with how often.
#[derive(Clone, Default)]
struct Receiver {
    seen: Arc<Mutex<HashMap<String, usize>>>,
    /// How long to hold the first request before answering.
    hold_first: Arc<Mutex<Option<Duration>>>,
    /// How long to hold every request, and the most held at once.
    hold_each: Duration,
    held: Arc<Mutex<(usize, usize)>>,
}

impl Receiver {
    async fn start(&self) -> String {
        let receiver = self.clone();
        let app = axum::Router::new().route(
            "/hook",
            axum::routing::post(move |headers: HeaderMap| {
                let receiver = receiver.clone();
                async move {
                    let id = headers
                        .get("webhook-id")
                        .and_then(|value| value.to_str().ok())
                        .unwrap_or_default()
                        .to_owned();
                    *receiver.seen.lock().unwrap().entry(id).or_default() += 1;
                    let hold = receiver.hold_first.lock().unwrap().take();
                    if let Some(hold) = hold {
                        tokio::time::sleep(hold).await;
                    }
                    {
                        let mut held = receiver.held.lock().unwrap();
                        held.0 += 1;
                        held.1 = held.1.max(held.0);
                    }
                    tokio::time::sleep(receiver.hold_each).await;
                    receiver.held.lock().unwrap().0 -= 1;
                    "ok"
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        url
    }

    fn total(&self) -> usize {
        self.seen.lock().unwrap().values().sum()
    }

    async fn wait_for_total(&self, total: usize, within: Duration) {
        let started = tokio::time::Instant::now();
        while self.total() < total {
            assert!(
                started.elapsed() < within,
                "the receiver got {} requests, not {total}",
                self.total()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// A due moment whose "one hour before" checkpoint is the next whole minute
/// at least 15 s away.
fn due_just_over_an_hour_ahead() -> String {
    let soon = (Utc::now() + chrono::Duration::seconds(15))
        .duration_trunc(chrono::Duration::minutes(1))
        .unwrap()
        + chrono::Duration::minutes(1);
    (soon + chrono::Duration::hours(1)).format("%Y-%m-%dT%H:%MZ").to_string()
}

/// A user with no quiet hours (so the checkpoint is not moved), a webhook,
/// and `count` events due just over an hour ahead.
async fn prepare(address: &str, hook: &str, count: usize) {
    let channel =
        tonic::transport::Channel::from_shared(format!("http://{address}")).unwrap().connect_lazy();
    let mut inbox =
        InboxClient::with_interceptor(channel.clone(), Bearer::new(GATEWAY_TOKEN, Some("anna")));
    let none = v1::UpdateProfileRequest {
        quiet_start: Some("00:00".into()),
        quiet_end: Some("00:00".into()),
        ..Default::default()
    };
    inbox.update_profile(none).await.unwrap();
    inbox.add_webhook(v1::AddWebhookRequest { url: hook.into() }).await.unwrap();
    let token = AdminClient::with_interceptor(channel.clone(), Bearer::new(ADMIN_TOKEN, None))
        .create_source(v1::SourceName { name: "docs".into() })
        .await
        .unwrap()
        .into_inner()
        .token;
    let due_at = due_just_over_an_hour_ahead();
    let events = (0..count)
        .map(|index| v1::SourceEvent {
            user: "anna".into(),
            r#ref: format!("item-{index}"),
            topic: String::new(),
            fields: Some(v1::EventFields {
                title: format!("Item {index}"),
                due_at: due_at.clone(),
                ..Default::default()
            }),
        })
        .collect();
    IngestClient::with_interceptor(channel, Bearer::new(&token, None))
        .upsert_events(v1::UpsertEventsRequest { events })
        .await
        .unwrap();
}

async fn a_core_killed_mid_send_loses_no_reminder(backend: Backend) {
    let database = TestDatabase::create(&backend).await;
    let receiver = Receiver::default();
    *receiver.hold_first.lock().unwrap() = Some(Duration::from_secs(10));
    let hook = receiver.start().await;
    let address = free_address();
    let first = start_core(&database.url, &address).await;
    prepare(&address, &hook, 1).await;

    // The reminder reaches the receiver, which holds its answer; core dies meanwhile.
    receiver.wait_for_total(1, Duration::from_secs(150)).await;
    kill(&first);
    let _ = first.wait_with_output().await;

    // A new core sends it again once the dead one's lease has run out, with the same id.
    let second = start_core(&database.url, &address).await;
    receiver.wait_for_total(2, Duration::from_secs(60)).await;
    let seen = receiver.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1, "one reminder, sent twice under one webhook-id: {seen:?}");
    assert!(seen.keys().all(|id| id.starts_with("msg_")));
    drop(second);
    database.drop_now().await;
}

/// Several cores share one database only on Postgres (SQLite is one
/// process's file), so this test has no SQLite twin.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_cores_on_one_postgres_send_each_reminder_once() {
    let Some(backend) =
        Backend::postgres("faults::two_cores_on_one_postgres_send_each_reminder_once")
    else {
        return;
    };
    let database = TestDatabase::create(&backend).await;
    // The receiver takes its time, so that posts pile up if nothing paces them.
    let receiver = Receiver { hold_each: Duration::from_millis(20), ..Receiver::default() };
    let hook = receiver.start().await;
    let (first_address, second_address) = (free_address(), free_address());
    let paced = [("HADO_DELIVERY_CONCURRENCY", "8")];
    let first = start_core_with(&database.url, &first_address, &paced).await;
    let second = start_core_with(&database.url, &second_address, &paced).await;
    prepare(&first_address, &hook, 1000).await;

    receiver.wait_for_total(1000, Duration::from_secs(180)).await;
    // Give a would-be duplicate time to arrive.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let seen = receiver.seen.lock().unwrap().clone();
    let twice: Vec<_> = seen.iter().filter(|(_, count)| **count > 1).collect();
    assert!(twice.is_empty(), "sent more than once: {twice:?}");
    assert_eq!(seen.len(), 1000, "each of the 1,000 due reminders arrived");
    let most = receiver.held.lock().unwrap().1;
    assert!(
        (2..=8).contains(&most),
        "at most 8 posts in flight to the receiver from both cores together, and more than one: {most}"
    );
    drop((first, second));
    database.drop_now().await;
}

hado_testing::on_both_backends!(a_core_killed_mid_send_loses_no_reminder);
