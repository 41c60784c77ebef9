//! Peak memory of each gateway (the release binary under `hado up`, on its
//! SQLite default) for the worst request bodies at each cap and for floods
//! of legacy event streams: DESIGN's "memory is bounded by bytes". Every
//! attempt starts a fresh `hado up`, so that each peak (`VmHWM`) is its own.
//! With `HADO_BENCH_BASE=/path/to/hado` (a release build of another
//! commit), every attempt runs on that build too, the two in turn, so both
//! are measured in the same run; `HADO_BENCH_ROUNDS` (default 1) repeats
//! the whole set; arguments keep only the attempts whose name contains one
//! of them. BENCHMARKS.md records the figures.

#![cfg(target_os = "linux")]

#[path = "../tests/common/mod.rs"]
mod common;
mod support;

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use bytes::Bytes;
use serde_json::{Value, json};

use common::{Ports, free_ports, hado_at, start_at};
use support::{Process, Up, processes};

/// The largest request body `/mcp` and `/messages` read.
const MCP_CAP: usize = 1024 * 1024;
/// What the issue sent to `POST /api/events`: 8 MB, just under the cap it had.
const ISSUE_REST_BYTES: usize = 8_000_000;
/// A legacy stream's flood: streams of one token, and the size of each ping.
const FLOOD_STREAMS: usize = 8;
const FLOOD_PING_BYTES: usize = 480_000;
/// The most pings the flood posts to one stream.
const FLOOD_PINGS_EACH: usize = 60;
/// The lockout: people with eight unread streams each, then one more person.
const CROWD: usize = 33;
const STREAMS_EACH: usize = 8;

/// A build of `hado` under test.
struct Build {
    name: String,
    program: PathBuf,
}

/// One attempt: what it sends, to which gateway, how many at once.
#[derive(Clone, Copy)]
enum Attempt {
    /// A `tools/call` whose arguments hold `zeros` zeros in one array.
    McpZeros { zeros: usize, at_once: usize },
    /// A `tools/call` whose title is one string filling the cap.
    McpLongString { at_once: usize },
    /// A `tools/call` whose arguments hold 4,000 strings, about 1 MB.
    McpManyStrings { at_once: usize },
    /// `POST /api/events` whose one event's `subtitle` is an array of zeros
    /// filling `bytes`.
    RestZeros { bytes: usize, at_once: usize },
    /// `POST /api/events` with 1,000 events, every field at its longest.
    RestFullBatch { at_once: usize },
    /// `POST /api/events` with as many empty events as fit `bytes`.
    RestEmptyEvents { bytes: usize, at_once: usize },
    /// `UpsertEvents` straight to core, `items` empty events (two bytes
    /// each on the wire), with no credential.
    GrpcEmptyEvents { items: usize, at_once: usize },
    /// One token's streams, never read, and 480 KB pings posted to them
    /// until they are refused or a post waits for 5 s: their pad one
    /// string, or an array of zeros.
    SseFlood { zeros: bool },
    /// One token's streams, initialized and never read, each sent 300
    /// `tools/list` (a few KiB of reply each) and then 480 KB pings until
    /// they are refused or a post waits for 5 s: what unread replies and
    /// waiting messages hold.
    SseUnreadReplies,
    /// 33 people open 8 streams each and read none; then a 34th opens one.
    SseCrowd,
    /// The same four times, every stream closed before the next: whether
    /// what closed streams held is given back.
    SseCrowdRounds,
}

impl Attempt {
    fn name(self) -> String {
        match self {
            Self::McpZeros { zeros, at_once } => {
                format!("mcp: tools/call with {zeros} zeros in its arguments, {at_once} at once")
            }
            Self::McpLongString { at_once } => {
                format!("mcp: tools/call with a 1 MiB title, {at_once} at once")
            }
            Self::McpManyStrings { at_once } => {
                format!("mcp: tools/call with 4,000 strings of 250 bytes, {at_once} at once")
            }
            Self::RestZeros { bytes, at_once } => format!(
                "rest: POST /api/events, subtitle an array of zeros, {bytes} bytes, {at_once} at once"
            ),
            Self::RestFullBatch { at_once } => format!(
                "rest: POST /api/events, 1,000 events with every field at its longest, {at_once} at once"
            ),
            Self::RestEmptyEvents { bytes, at_once } => {
                format!(
                    "rest: POST /api/events, empty events filling {bytes} bytes, {at_once} at once"
                )
            }
            Self::GrpcEmptyEvents { items, at_once } => format!(
                "grpc: UpsertEvents straight to core, {items} empty events, {at_once} at once"
            ),
            Self::SseFlood { zeros } => format!(
                "sse: {FLOOD_STREAMS} unread streams of one token, {FLOOD_PING_BYTES}-byte pings of {}",
                if zeros { "zeros" } else { "one string" }
            ),
            Self::SseUnreadReplies => format!(
                "sse: {FLOOD_STREAMS} unread streams of one token, 300 tool lists each, then {FLOOD_PING_BYTES}-byte pings"
            ),
            Self::SseCrowdRounds => {
                format!(
                    "sse: the same {CROWD} people and one more, four times, each time closing every stream"
                )
            }
            Self::SseCrowd => {
                format!(
                    "sse: {CROWD} people with {STREAMS_EACH} unread streams each, then one more"
                )
            }
        }
    }

    fn gateway(self) -> &'static str {
        match self {
            Self::RestZeros { .. } | Self::RestFullBatch { .. } | Self::RestEmptyEvents { .. } => {
                "gateway-http"
            }
            Self::GrpcEmptyEvents { .. } => "core",
            _ => "gateway-mcp",
        }
    }
}

/// The attempts, in the order they run.
fn attempts() -> Vec<Attempt> {
    let rest_cap = hado_gateway_http::MAX_BODY_BYTES;
    let mut all = Vec::new();
    for at_once in [1, 16, 32] {
        all.push(Attempt::McpZeros { zeros: 500_000, at_once });
    }
    for at_once in [1, 16] {
        all.push(Attempt::McpLongString { at_once });
        all.push(Attempt::McpManyStrings { at_once });
    }
    // More than the budget of bodies holds at once.
    all.push(Attempt::McpLongString { at_once: 32 });
    for at_once in [1, 4] {
        all.push(Attempt::RestZeros { bytes: ISSUE_REST_BYTES, at_once });
        all.push(Attempt::RestZeros { bytes: rest_cap, at_once });
        all.push(Attempt::RestFullBatch { at_once });
        all.push(Attempt::RestEmptyEvents { bytes: rest_cap, at_once });
    }
    all.push(Attempt::RestFullBatch { at_once: 8 });
    // What a1fceec's gateway-http let through to core (BENCHMARKS.md), and
    // the most a message may be (16 MiB), sent to core directly.
    for items in [1_800_000, 8_000_000] {
        for at_once in [1, 4] {
            all.push(Attempt::GrpcEmptyEvents { items, at_once });
        }
    }
    all.push(Attempt::SseFlood { zeros: false });
    all.push(Attempt::SseFlood { zeros: true });
    all.push(Attempt::SseUnreadReplies);
    all.push(Attempt::SseCrowd);
    all.push(Attempt::SseCrowdRounds);
    all
}

/// `[0,0,…]` with `count` zeros.
fn zeros(count: usize) -> String {
    let mut text = String::with_capacity(count * 2 + 2);
    text.push('[');
    for index in 0..count {
        text.push_str(if index == 0 { "0" } else { ",0" });
    }
    text.push(']');
    text
}

fn tool_call(arguments: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"create_event","arguments":{arguments}}}}}"#
    )
}

/// The body an attempt sends.
fn body(attempt: Attempt) -> Bytes {
    let text = match attempt {
        Attempt::McpZeros { zeros: count, .. } => tool_call(&format!(
            r#"{{"title":"Zeros","due_at":"2027-03-01","pad":{}}}"#,
            zeros(count)
        )),
        Attempt::McpLongString { .. } => {
            let envelope = tool_call(r#"{"title":"","due_at":"2027-03-01"}"#).len();
            tool_call(&format!(
                r#"{{"title":"{}","due_at":"2027-03-01"}}"#,
                "x".repeat(MCP_CAP - envelope)
            ))
        }
        Attempt::McpManyStrings { .. } => {
            let strings = vec!["y".repeat(250); 4_000];
            tool_call(
                &json!({"title": "Strings", "due_at": "2027-03-01", "pad": strings}).to_string(),
            )
        }
        Attempt::RestZeros { bytes, .. } => {
            let envelope = r#"{"events":[{"user":"me","ref":"zeros","title":"Zeros","due_at":"2027-03-01","subtitle":[0]}]}"#.len();
            let count = (bytes - envelope) / 2 + 1;
            format!(
                r#"{{"events":[{{"user":"me","ref":"zeros","title":"Zeros","due_at":"2027-03-01","subtitle":{}}}]}}"#,
                zeros(count)
            )
        }
        Attempt::RestFullBatch { .. } => full_batch(),
        Attempt::RestEmptyEvents { bytes, .. } => {
            let count = (bytes - r#"{"events":[]}"#.len()) / 3;
            let mut text = String::from(r#"{"events":["#);
            for index in 0..count {
                text.push_str(if index == 0 { "{}" } else { ",{}" });
            }
            text.push_str("]}");
            text
        }
        Attempt::GrpcEmptyEvents { .. }
        | Attempt::SseFlood { .. }
        | Attempt::SseUnreadReplies
        | Attempt::SseCrowd
        | Attempt::SseCrowdRounds => String::new(),
    };
    Bytes::from(text)
}

/// A batch of 1,000 events, every field at its most characters, each
/// character as wide as gateway-http's cap counts it (see `MAX_BODY_BYTES`).
fn full_batch() -> String {
    let wide = |count: usize| "\u{1F600}".repeat(count);
    let events: Vec<Value> = (0..1000)
        .map(|index| {
            let reference = format!("{index:04}{}", wide(251));
            json!({
                "user": "m".repeat(64), "ref": reference, "topic": wide(64),
                "title": wide(200), "subtitle": wide(200), "due_at": "2027-03-01T09:00+01:00",
                "fire_at": "2027-02-01", "after_due": "expire", "done_label": wide(64),
                "deep_link": format!("https://example.com/{}", "a".repeat(2048 - 20)),
            })
        })
        .collect();
    json!({ "events": events }).to_string()
}

/// What an attempt saw: the answers, and the gateway's memory.
struct Outcome {
    answers: String,
    before_kib: u64,
    peak_kib: u64,
    after_kib: u64,
    /// Core's peak, which takes every batch the gateway lets through.
    core_peak_kib: u64,
}

/// Counts of each answer, as `3× 200, 1× 413`.
fn tally(statuses: &[String]) -> String {
    let mut counted: Vec<(String, usize)> = Vec::new();
    for status in statuses {
        match counted.iter_mut().find(|(seen, _)| seen == status) {
            Some((_, count)) => *count += 1,
            None => counted.push((status.clone(), 1)),
        }
    }
    counted
        .iter()
        .map(|(status, count)| format!("{count}× {status}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The token `hado` printed for `arguments`.
fn issued(program: &Path, folder: &Path, ports: Ports, arguments: &[&str], prefix: &str) -> String {
    let output = hado_at(program, folder, ports).args(arguments).output().unwrap();
    assert!(
        output.status.success(),
        "hado {arguments:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .unwrap()
        .split_whitespace()
        .find(|word| word.starts_with(prefix))
        .unwrap_or_else(|| panic!("no {prefix}… printed"))
        .to_owned()
}

/// Sends `body` to `url` `at_once` times together, each on its own connection.
async fn send_together(url: &str, token: &str, body: Bytes, at_once: usize) -> Vec<String> {
    let sends: Vec<_> = (0..at_once)
        .map(|_| {
            let (url, token, body) = (url.to_owned(), token.to_owned(), body.clone());
            tokio::spawn(async move {
                let sent = reqwest::Client::new()
                    .post(url)
                    .bearer_auth(token)
                    .header("content-type", "application/json")
                    .header("accept", "application/json, text/event-stream")
                    .header("mcp-protocol-version", "2025-06-18")
                    .body(body)
                    .send()
                    .await;
                match sent {
                    Ok(response) => {
                        let status = response.status().as_u16().to_string();
                        let _ = response.bytes().await;
                        status
                    }
                    Err(error) if error.is_request() => "closed while sending".to_owned(),
                    Err(error) => format!("failed: {error}"),
                }
            })
        })
        .collect();
    let mut statuses = Vec::new();
    for send in sends {
        statuses.push(send.await.unwrap());
    }
    statuses
}

/// Sends `items` empty events to core's `UpsertEvents` `at_once` times
/// together, each on its own connection: the codes answered.
async fn send_to_core(port: u16, items: usize, at_once: usize) -> Vec<String> {
    let message = [0x0a, 0x00].repeat(items);
    let sends: Vec<_> = (0..at_once)
        .map(|_| {
            let message = message.clone();
            tokio::spawn(async move {
                let channel = common::core_on(port);
                let mut grpc =
                    tonic::client::Grpc::new(channel).max_encoding_message_size(usize::MAX);
                if let Err(error) = grpc.ready().await {
                    return format!("failed: {error}");
                }
                let path = "/hado.v1.Ingest/UpsertEvents".parse().unwrap();
                match grpc.unary(tonic::Request::new(message), path, common::RawCodec).await {
                    Ok(_) => "OK".to_owned(),
                    Err(status) => format!("{:?}", status.code()),
                }
            })
        })
        .collect();
    let mut codes = Vec::new();
    for send in sends {
        codes.push(send.await.unwrap());
    }
    codes
}

/// Opens a legacy event stream and reads its first event; the stream (not
/// read again) and the address to post to, or the status it was refused with.
async fn open_stream(
    client: &reqwest::Client,
    base: &str,
    token: &str,
) -> Result<(reqwest::Response, String), String> {
    let mut stream = client.get(format!("{base}/sse")).bearer_auth(token).send().await.unwrap();
    if stream.status() != reqwest::StatusCode::OK {
        return Err(stream.status().as_u16().to_string());
    }
    let first = String::from_utf8(stream.chunk().await.unwrap().unwrap().to_vec()).unwrap();
    let endpoint = first.lines().find_map(|line| line.strip_prefix("data: ")).unwrap().to_owned();
    Ok((stream, format!("{base}{endpoint}")))
}

/// One token's streams, unread, and big pings posted to them in turn.
async fn flood(
    base: &str,
    token: &str,
    zeros_pad: bool,
    tool_lists: usize,
) -> (Vec<String>, Vec<reqwest::Response>) {
    let client = reqwest::Client::new();
    let mut streams = Vec::new();
    for _ in 0..FLOOD_STREAMS {
        streams.push(open_stream(&client, base, token).await.expect("a stream opens"));
    }
    let post = |messages: &str, body: String| {
        client
            .post(messages)
            .bearer_auth(token)
            .header("content-type", "application/json")
            .body(body)
            .timeout(Duration::from_secs(5))
            .send()
    };
    let mut statuses = Vec::new();
    if tool_lists > 0 {
        let initialize = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#;
        for (_, messages) in &streams {
            let answered = post(messages, initialize.to_owned()).await.unwrap();
            statuses.push(answered.status().as_u16().to_string());
            for id in 0..tool_lists {
                let list = format!(r#"{{"jsonrpc":"2.0","id":{},"method":"tools/list"}}"#, id + 1);
                let answered = post(messages, list).await.unwrap();
                statuses.push(answered.status().as_u16().to_string());
            }
        }
    }
    let pad = if zeros_pad {
        zeros(FLOOD_PING_BYTES / 2)
    } else {
        format!("\"{}\"", "p".repeat(FLOOD_PING_BYTES))
    };
    let mut taking = [true; FLOOD_STREAMS];
    for ping in 0..FLOOD_PINGS_EACH {
        for (index, (_, messages)) in streams.iter().enumerate() {
            if !taking[index] {
                continue;
            }
            let body = format!(
                r#"{{"jsonrpc":"2.0","id":{ping},"method":"ping","params":{{"_meta":{{"pad":{pad}}}}}}}"#
            );
            let posted = post(messages, body).await;
            let status = match posted {
                Ok(response) => response.status().as_u16().to_string(),
                Err(error) if error.is_timeout() => "waited 5 s".to_owned(),
                Err(error) => format!("failed: {error}"),
            };
            taking[index] = status == "202";
            statuses.push(status);
        }
    }
    (statuses, streams.into_iter().map(|(stream, _)| stream).collect())
}

/// 33 people open 8 streams each, each person from an address of their
/// own, and read none; then a 34th person opens one.
async fn crowd(base: &str, tokens: &[String]) -> (Vec<String>, Vec<reqwest::Response>) {
    let mut statuses = Vec::new();
    let mut open = Vec::new();
    for (person, token) in tokens.iter().enumerate() {
        let client = reqwest::Client::builder()
            .local_address(IpAddr::from([127, 0, 2, person as u8 + 1]))
            .build()
            .unwrap();
        let wanted = if person < CROWD { STREAMS_EACH } else { 1 };
        for _ in 0..wanted {
            match open_stream(&client, base, token).await {
                Ok((stream, _)) => {
                    statuses.push(if person < CROWD {
                        "200".into()
                    } else {
                        "200 (the newcomer)".into()
                    });
                    open.push(stream);
                }
                Err(status) if person < CROWD => statuses.push(status),
                Err(status) => statuses.push(format!("{status} (the newcomer)")),
            }
        }
    }
    (statuses, open)
}

fn memory_kib(process: &Process) -> (u64, u64) {
    let (now, peak, _) = process.resident_kib();
    (now, peak)
}

/// Runs `attempt` on a fresh `hado up` of `build`.
async fn run(build: &Build, attempt: Attempt) -> Outcome {
    let folder = tempfile::tempdir().unwrap();
    let ports = free_ports();
    // Within the rate limits: the floods post thousands of requests.
    let (up, _) = start_at(&build.program, folder.path(), ports, |command| {
        command.env("HADO_MCP_RATE_LIMIT", "1000");
    });
    let up = Up(up);
    let children = processes(up.0.id());
    let named = |name: &str| children.iter().find(|process| process.name == name).unwrap();
    let (core, gateway) = (named("core"), named(attempt.gateway()));
    let source =
        issued(&build.program, folder.path(), ports, &["source", "create", "bench"], "hado_src_");
    let people =
        if matches!(attempt, Attempt::SseCrowd | Attempt::SseCrowdRounds) { CROWD + 1 } else { 1 };
    let tokens: Vec<String> = (0..people)
        .map(|person| {
            let login = format!("person{person}");
            issued(&build.program, folder.path(), ports, &["agent-token", &login], "hado_agent_")
        })
        .collect();
    let mcp = format!("http://127.0.0.1:{}", ports.mcp);
    let http = format!("http://127.0.0.1:{}", ports.http);
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (before_kib, _) = memory_kib(gateway);
    let (statuses, held) = match attempt {
        Attempt::McpZeros { at_once, .. }
        | Attempt::McpLongString { at_once }
        | Attempt::McpManyStrings { at_once } => (
            send_together(&format!("{mcp}/mcp"), &tokens[0], body(attempt), at_once).await,
            Vec::new(),
        ),
        Attempt::RestZeros { at_once, .. }
        | Attempt::RestFullBatch { at_once }
        | Attempt::RestEmptyEvents { at_once, .. } => (
            send_together(&format!("{http}/api/events"), &source, body(attempt), at_once).await,
            Vec::new(),
        ),
        Attempt::GrpcEmptyEvents { items, at_once } => {
            (send_to_core(ports.grpc, items, at_once).await, Vec::new())
        }
        Attempt::SseFlood { zeros } => flood(&mcp, &tokens[0], zeros, 0).await,
        Attempt::SseUnreadReplies => flood(&mcp, &tokens[0], false, 300).await,
        Attempt::SseCrowd => crowd(&mcp, &tokens).await,
        Attempt::SseCrowdRounds => {
            let mut statuses = Vec::new();
            let mut after_each = Vec::new();
            for _ in 0..4 {
                let (answered, open) = crowd(&mcp, &tokens).await;
                statuses.extend(answered);
                drop(open);
                tokio::time::sleep(Duration::from_secs(3)).await;
                after_each.push(format!("{:.1}", memory_kib(gateway).0 as f64 / 1024.0));
            }
            statuses.push(format!("MiB 3 s after each close: {}", after_each.join(", ")));
            (statuses, Vec::new())
        }
    };
    let (_, peak_kib) = memory_kib(gateway);
    let (_, core_peak_kib) = memory_kib(core);
    drop(held);
    tokio::time::sleep(Duration::from_secs(3)).await;
    let (after_kib, _) = memory_kib(gateway);
    drop(up);
    Outcome { answers: tally(&statuses), before_kib, peak_kib, after_kib, core_peak_kib }
}

#[tokio::main]
async fn main() {
    hado_core::install_tls_provider();
    let mut builds =
        vec![Build { name: "this build".into(), program: PathBuf::from(common::HADO) }];
    if let Ok(reference) = std::env::var("HADO_BENCH_BASE") {
        builds.push(Build { name: format!("reference ({reference})"), program: reference.into() });
    }
    let rounds: usize =
        std::env::var("HADO_BENCH_ROUNDS").ok().and_then(|rounds| rounds.parse().ok()).unwrap_or(1);
    let wanted: Vec<String> =
        std::env::args().skip(1).filter(|argument| !argument.starts_with('-')).collect();
    let mib = |kib: u64| kib as f64 / 1024.0;
    println!("| attempt | build | answers | gateway before | peak | 3 s after | core's peak |");
    println!("|---|---|---|---|---|---|---|");
    for round in 0..rounds {
        for attempt in attempts() {
            let name = attempt.name();
            if !wanted.is_empty() && !wanted.iter().any(|word| name.contains(word.as_str())) {
                continue;
            }
            // Alternate which build goes first, round by round.
            let order: Vec<&Build> = if round % 2 == 0 {
                builds.iter().collect()
            } else {
                builds.iter().rev().collect()
            };
            for build in order {
                let outcome = run(build, attempt).await;
                println!(
                    "| {name} | {} | {} | {:.1} MiB | {:.1} MiB | {:.1} MiB | {:.1} MiB |",
                    build.name,
                    outcome.answers,
                    mib(outcome.before_kib),
                    mib(outcome.peak_kib),
                    mib(outcome.after_kib),
                    mib(outcome.core_peak_kib)
                );
            }
        }
    }
}
