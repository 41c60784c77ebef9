//! A database server gone without a word: connections to it hang instead
//! of being refused (its host away, a network that drops packets, an
//! address that outlived its container). Core's probe takes a connection
//! of its own left unanswered for a second as storage down, as it takes one
//! refused; a busy server still answers a new connection.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::net::{TcpListener, TcpStream};

use hado_engine::StorageLook;
use hado_engine::clock::ManualClock;
use hado_testing::{Backend, TestDatabase, config, utc};

/// A loopback relay to Postgres that relays until it is silenced; from
/// then on, it accepts every connection and answers none.
struct Relay {
    url: String,
    silent: Arc<std::sync::atomic::AtomicBool>,
    held: Arc<Mutex<Vec<TcpStream>>>,
}

impl Relay {
    async fn to(database_url: &str) -> Self {
        let (user, place) = database_url.split_once('@').expect("a URL with a user");
        let (host, name) = place.split_once('/').expect("a URL with a database");
        let upstream = if host.contains(':') { host.to_owned() } else { format!("{host}:5432") };
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("{user}@{}/{name}", listener.local_addr().unwrap());
        let silent = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let held: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
        let (quiet, holding) = (silent.clone(), held.clone());
        tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                if quiet.load(std::sync::atomic::Ordering::SeqCst) {
                    holding.lock().unwrap().push(client);
                    continue;
                }
                let upstream = upstream.clone();
                tokio::spawn(async move {
                    if let Ok(mut server) = TcpStream::connect(&upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
            }
        });
        Self { url, silent, held }
    }

    fn silence(&self) {
        self.silent.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_leaves_a_new_connection_unanswered_is_down_not_busy() {
    let Some(backend) = Backend::postgres(
        "silent::a_server_that_leaves_a_new_connection_unanswered_is_down_not_busy",
    ) else {
        return;
    };
    let database = TestDatabase::create(&backend).await;
    let relay = Relay::to(&database.url).await;
    let clock = Arc::new(ManualClock::new(utc("2026-12-01T10:00:00Z")));
    let engine =
        hado_core::open(&config(&relay.url), clock).await.expect("core opens through the relay");
    let look = engine.storage_answers().await;
    assert!(matches!(look, StorageLook::Fine), "the server answers through the relay: {look:?}");

    relay.silence();
    let asked = Instant::now();
    let look = engine.storage_answers().await;
    assert!(
        matches!(look, StorageLook::Failed(_)),
        "a connection left unanswered was taken for {look:?}, as a busy writer's would be"
    );
    assert!(asked.elapsed() < Duration::from_secs(3), "the look took {:?}", asked.elapsed());
    assert!(!relay.held.lock().unwrap().is_empty(), "the look's connection reached the relay");
    drop(engine);
    database.drop_now().await;
}
