//! gateway-http's benchmarks: a source's one-event upsert against the
//! gateway's `GET /up` at 16 connections, the inbox page's render time and
//! `/me/events` latency (its largest page, 1,000 events) for a person with
//! 500 and with 10,000 events, REST
//! batch upsert throughput next to the same batches over gRPC directly, and
//! the gateway's resident memory.
//!
//! Core runs in this process on a temporary SQLite file, and then on a
//! fresh Postgres database when `HADO_TEST_POSTGRES_URL` is set; the gateway is the
//! release binary in its own process, so its memory is its own. Each timing
//! is one HTTP request from send to the last byte read.
//!
//! `cargo bench -p hado-gateway-http --bench http -- one-event` runs only the
//! one-event comparison; `HADO_BENCH_ROUNDS` sets its rounds (3 unless
//! set), so that a profiler can watch it under load for longer.

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use hado_proto::v1::{EventFields, SourceEvent, UpsertEventsRequest};
use hado_testing::{Backend, GATEWAY_TOKEN, TestCore};

const GATEWAY: &str = env!("CARGO_BIN_EXE_hado-gateway-http");
const BATCH: usize = 500;

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn resident_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find(|line| line.starts_with(field))
        .and_then(|line| line.split_whitespace().nth(1))
        .and_then(|kib| kib.parse().ok())
        .unwrap_or(0)
}

fn percentiles(mut samples: Vec<Duration>) -> (f64, f64) {
    samples.sort();
    let count = samples.len();
    (
        samples[count / 2].as_secs_f64() * 1e3,
        samples[(count * 99 / 100).min(count - 1)].as_secs_f64() * 1e3,
    )
}

fn due_at(index: usize) -> String {
    // Spread over the next three years so every group of the inbox has events.
    let day = chrono::NaiveDate::from_ymd_opt(2026, 11, 20).unwrap()
        + chrono::Duration::days((index % 1100) as i64);
    day.format("%Y-%m-%d").to_string()
}

fn item(user: &str, prefix: &str, index: usize) -> Value {
    json!({"user": user, "ref": format!("{prefix}-{index}"), "title": format!("Event {index}"), "subtitle": "From the benchmark", "due_at": due_at(index)})
}

fn source_event(user: &str, prefix: &str, index: usize) -> SourceEvent {
    SourceEvent {
        user: user.into(),
        r#ref: format!("{prefix}-{index}"),
        topic: String::new(),
        fields: Some(EventFields {
            title: format!("Event {index}"),
            due_at: due_at(index),
            subtitle: Some("From the benchmark".into()),
            ..Default::default()
        }),
    }
}

async fn timed_get(
    client: &reqwest::Client,
    url: &str,
    user: &str,
    rounds: usize,
) -> (Vec<Duration>, usize) {
    let mut samples = Vec::with_capacity(rounds);
    let mut bytes = 0;
    for _ in 0..rounds {
        let started = Instant::now();
        let response = client.get(url).header("x-remote-user", user).send().await.unwrap();
        assert!(response.status().is_success(), "{url}: {}", response.status());
        bytes = response.bytes().await.unwrap().len();
        samples.push(started.elapsed());
    }
    (samples, bytes)
}

/// Requests a second over `CONNECTIONS` connections at once, each sending
/// `REQUESTS_EACH` requests that `request` makes from its number.
async fn rate(
    client: &reqwest::Client,
    request: impl Fn(&reqwest::Client, usize) -> reqwest::RequestBuilder + Clone + Send + 'static,
) -> f64 {
    let started = Instant::now();
    let tasks: Vec<_> = (0..CONNECTIONS)
        .map(|connection| {
            let (client, request) = (client.clone(), request.clone());
            tokio::spawn(async move {
                for call in 0..REQUESTS_EACH {
                    let response =
                        request(&client, connection * REQUESTS_EACH + call).send().await.unwrap();
                    assert!(response.status().is_success(), "{}", response.status());
                    response.bytes().await.unwrap();
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    (CONNECTIONS * REQUESTS_EACH) as f64 / started.elapsed().as_secs_f64()
}

const CONNECTIONS: usize = 16;
const REQUESTS_EACH: usize = 200;

#[tokio::main]
async fn main() {
    bench(Backend::Sqlite).await;
    if let Some(backend) = Backend::postgres("the HTTP benchmark") {
        bench(backend).await;
    }
}

async fn bench(backend: Backend) {
    let name = match backend {
        Backend::Sqlite => "SQLite",
        Backend::Postgres(_) => "Postgres",
    };
    println!("\n=== Hado on {name} ===");
    let core = TestCore::start(&backend, "2026-12-01T10:00:00Z").await;
    let token = core.source_token("bench").await;
    let port = free_port();
    let mut gateway = tokio::process::Command::new(GATEWAY)
        .env("HADO_CORE_URL", core.url())
        .env("HADO_HTTP_ADDR", format!("127.0.0.1:{port}"))
        .env("HADO_GATEWAY_TOKEN", GATEWAY_TOKEN)
        .env("HADO_TRUSTED_PROXIES", "127.0.0.1")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("the gateway starts");
    let pid = gateway.id().unwrap();
    let base = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::new();
    for _ in 0..400 {
        if client.get(format!("{base}/up")).send().await.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    println!("gateway-http resident memory, idle: {} KiB", resident_kib(pid, "VmRSS:"));

    // A source's upsert of one event against the gateway's own `GET /up`,
    // at 16 connections, alternating, three rounds.
    let rounds: usize =
        std::env::var("HADO_BENCH_ROUNDS").ok().and_then(|rounds| rounds.parse().ok()).unwrap_or(3);
    println!(
        "\nOne event a request against GET /up, {CONNECTIONS} connections, {rounds} rounds \
         (gateway pid {pid}, core in pid {})",
        std::process::id()
    );
    for round in 0..rounds {
        let up = format!("{base}/up");
        let upped = rate(&client, move |client, _| client.get(&up)).await;
        let (events, token) = (format!("{base}/api/events"), token.clone());
        let upserted = rate(&client, move |client, index| {
            let event = item("one", &format!("one-{round}"), index);
            client.post(&events).bearer_auth(&token).json(&json!({ "events": [event] }))
        })
        .await;
        println!(
            "{name}: POST /api/events (one event) {upserted:.0}/s, GET /up {upped:.0}/s: {:.2} of GET /up",
            upserted / upped
        );
    }
    if std::env::args().any(|argument| argument == "one-event") {
        let _ = gateway.start_kill();
        let _ = gateway.wait().await;
        core.stop().await;
        return;
    }

    // Batch upsert: REST against gRPC, the same batches of 500 new events,
    // in alternating rounds after a warm-up, so neither path gets the cold start.
    println!(
        "\nBatch upsert, {BATCH} new events a batch, 10 batches a round, 3 rounds alternating"
    );
    let mut ingest = core.ingest(&token);
    let warm_up: Vec<SourceEvent> =
        (0..BATCH).map(|index| source_event("warm", "w", index)).collect();
    ingest.upsert_events(UpsertEventsRequest { events: warm_up }).await.unwrap();
    let (mut grpc_rates, mut rest_rates) = (Vec::new(), Vec::new());
    for round in 0..3 {
        let started = Instant::now();
        for batch in 0..10 {
            let first = (round * 10 + batch) * BATCH;
            let events: Vec<SourceEvent> =
                (first..first + BATCH).map(|index| source_event("grpc", "g", index)).collect();
            ingest.upsert_events(UpsertEventsRequest { events }).await.unwrap();
        }
        grpc_rates.push((10 * BATCH) as f64 / started.elapsed().as_secs_f64());
        let started = Instant::now();
        for batch in 0..10 {
            let first = (round * 10 + batch) * BATCH;
            let events: Vec<Value> =
                (first..first + BATCH).map(|index| item("rest", "r", index)).collect();
            let response = client
                .post(format!("{base}/api/events"))
                .bearer_auth(&token)
                .json(&json!({ "events": events }))
                .send()
                .await
                .unwrap();
            assert!(response.status().is_success());
            response.bytes().await.unwrap();
        }
        rest_rates.push((10 * BATCH) as f64 / started.elapsed().as_secs_f64());
    }
    let rounds = |rates: &[f64]| {
        rates.iter().map(|rate| format!("{rate:.0}")).collect::<Vec<_>>().join(", ")
    };
    println!("gRPC Ingest.UpsertEvents directly   {} events/s", rounds(&grpc_rates));
    println!("REST POST /api/events               {} events/s", rounds(&rest_rates));

    // The inbox for 500 and for 10,000 events.
    for (user, count) in [("small", 500_usize), ("large", 10_000)] {
        for batch in 0..count.div_ceil(BATCH) {
            let events: Vec<SourceEvent> = (batch * BATCH..((batch + 1) * BATCH).min(count))
                .map(|index| source_event(user, "e", index))
                .collect();
            ingest.upsert_events(UpsertEventsRequest { events }).await.unwrap();
        }
        let rounds = if count > 1000 { 10 } else { 30 };
        println!("\n{count} active events");
        let (samples, bytes) = timed_get(&client, &format!("{base}/"), user, rounds).await;
        let (p50, p99) = percentiles(samples);
        println!(
            "GET / (inbox page)      p50 {p50:>8.1} ms  p99 {p99:>8.1} ms  {:>6} KiB of HTML",
            bytes / 1024
        );
        let (samples, bytes) =
            timed_get(&client, &format!("{base}/me/events?limit=1000"), user, rounds).await;
        let (p50, p99) = percentiles(samples);
        println!(
            "GET /me/events?limit=1000 (its largest page)   p50 {p50:>8.1} ms  p99 {p99:>8.1} ms  {:>6} KiB of JSON",
            bytes / 1024
        );
        let (samples, _) =
            timed_get(&client, &format!("{base}/me/events?state=today"), user, rounds).await;
        let (p50, p99) = percentiles(samples);
        println!("GET /me/events?state=today  p50 {p50:>4.1} ms  p99 {p99:>4.1} ms");
    }
    println!(
        "\ngateway-http resident memory after the load: {} KiB now, {} KiB at its peak",
        resident_kib(pid, "VmRSS:"),
        resident_kib(pid, "VmHWM:")
    );

    let _ = gateway.start_kill();
    let _ = gateway.wait().await;
    core.stop().await;
}
