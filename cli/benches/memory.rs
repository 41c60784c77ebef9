//! Resident memory of each of `hado up`'s three processes (the release
//! binary, on its SQLite default), idle and after the heaviest loads each
//! takes: 10,000 events pushed in batches of 500 through REST, the inbox
//! page, a whole group and the largest page of the list read through
//! gateway-http, `list_events`' largest page through MCP, the calendar
//! feed of all 10,000, and 16 agents' `create_event` calls at once.
//! BENCHMARKS.md records the numbers.

#![cfg(target_os = "linux")]

#[path = "../tests/common/mod.rs"]
mod common;
mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use common::{Ports, free_ports, hado, start_with};
use support::{Up, processes, report};

const EVENTS: usize = 10_000;
const BATCH: usize = 500;
const AGENTS: usize = 16;
const CREATES_EACH: usize = 500;

/// What `hado` printed on its standard output, checked to have succeeded.
fn printed(folder: &Path, ports: Ports, arguments: &[&str]) -> String {
    let output = hado(folder, ports).args(arguments).output().unwrap();
    assert!(
        output.status.success(),
        "hado {arguments:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

fn token(text: &str, prefix: &str) -> String {
    text.split_whitespace()
        .find(|word| word.starts_with(prefix))
        .unwrap_or_else(|| panic!("no {prefix}… in {text}"))
        .to_owned()
}

/// A JSON-RPC call to gateway-mcp; panics unless it succeeded.
async fn mcp(
    client: &reqwest::Client,
    url: &str,
    agent: &str,
    method: &str,
    params: Value,
) -> Value {
    let response = client
        .post(url)
        .bearer_auth(agent)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
        .send()
        .await
        .unwrap();
    assert!(response.status().is_success(), "{method}: {}", response.status());
    let answer: Value = response.json().await.unwrap();
    assert!(
        answer["result"].is_object() && answer["result"]["isError"] != json!(true),
        "{method}: {answer}"
    );
    answer
}

/// GETs `url` five times, each answer a success, and returns the size of
/// the last body in bytes.
async fn get_five_times(client: &reqwest::Client, url: &str, what: &str) -> usize {
    let mut bytes = 0;
    for _ in 0..5 {
        let response = client.get(url).send().await.unwrap();
        assert!(response.status().is_success(), "GET {what}: {}", response.status());
        bytes = response.bytes().await.unwrap().len();
    }
    bytes
}

#[tokio::main]
async fn main() {
    hado_core::install_tls_provider();
    let folder = tempfile::tempdir().unwrap();
    let ports = free_ports();
    // Sixteen agents at once would soon meet the per-agent rate limit.
    let (up, _) = start_with(folder.path(), ports, |command| {
        command.env("HADO_MCP_RATE_LIMIT", "100000000");
    });
    let up = Up(up);
    let processes = processes(up.0.id());
    tokio::time::sleep(Duration::from_secs(2)).await;
    report("Idle, after start", &processes);

    let source = token(&printed(folder.path(), ports, &["source", "create", "bench"]), "hado_src_");
    let agent = token(&printed(folder.path(), ports, &["agent-token", "me"]), "hado_agent_");
    let client = reqwest::Client::new();
    let web = format!("http://127.0.0.1:{}", ports.http);
    let mcp_url = format!("http://127.0.0.1:{}/mcp", ports.mcp);

    let started = Instant::now();
    for batch in 0..EVENTS / BATCH {
        let events: Vec<Value> = (batch * BATCH..(batch + 1) * BATCH)
            .map(|index| {
                let day = chrono::NaiveDate::from_ymd_opt(2026, 11, 20).unwrap() + chrono::Duration::days((index % 1100) as i64);
                json!({"user": "me", "ref": format!("bench-{index}"), "title": format!("Event {index}"), "subtitle": "From the benchmark", "due_at": day.to_string()})
            })
            .collect();
        let response = client
            .post(format!("{web}/api/events"))
            .bearer_auth(&source)
            .json(&json!({ "events": events }))
            .send()
            .await
            .unwrap();
        assert!(response.status().is_success(), "POST /api/events: {}", response.status());
    }
    println!(
        "\n{EVENTS} events pushed in batches of {BATCH} in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    report("After the pushes", &processes);

    for (path, what) in [
        ("/", "the inbox page"),
        ("/?all=scheduled", "Scheduled in full"),
        ("/me/events?limit=1000", "/me/events, its largest page"),
    ] {
        let bytes = get_five_times(&client, &format!("{web}{path}"), path).await;
        report(&format!("After GET {path} ({what}, {} KiB) five times", bytes / 1024), &processes);
    }
    let mut listed = 0;
    for _ in 0..5 {
        listed = mcp(
            &client,
            &mcp_url,
            &agent,
            "tools/call",
            json!({"name": "list_events", "arguments": {"limit": 1000}}),
        )
        .await
        .to_string()
        .len();
    }
    report(
        &format!(
            "After list_events through MCP, its largest page (1,000 events, {} KiB) five times",
            listed / 1024
        ),
        &processes,
    );

    let settings = client
        .post(format!("{web}/settings/calendar"))
        .header("sec-fetch-site", "same-origin")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let feed = settings
        .find("/ics/")
        .map(|at| &settings[at..at + settings[at..].find(".ics").unwrap() + 4])
        .expect("the calendar feed's address");
    let bytes = get_five_times(&client, &format!("{web}{feed}"), "the calendar feed").await;
    report(
        &format!("After the calendar feed ({EVENTS} events, {} KiB) five times", bytes / 1024),
        &processes,
    );

    let started = Instant::now();
    let agents: Vec<_> = (0..AGENTS)
        .map(|_| {
            let (client, url, agent) = (client.clone(), mcp_url.clone(), agent.clone());
            tokio::spawn(async move {
                for _ in 0..CREATES_EACH {
                    mcp(&client, &url, &agent, "tools/call", json!({"name": "create_event", "arguments": {"title": "Bench", "due_at": "2027-03-01T09:00"}}))
                        .await;
                }
            })
        })
        .collect();
    for agent in agents {
        agent.await.unwrap();
    }
    println!(
        "\n{} create_event calls from {AGENTS} agents at once in {:.1} s",
        AGENTS * CREATES_EACH,
        started.elapsed().as_secs_f64()
    );
    report("After the creates", &processes);
    drop(up);
}
