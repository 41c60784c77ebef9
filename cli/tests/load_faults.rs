//! The load-and-fault check: the three processes as separate `hado`
//! children on loopback, mixed traffic for a bounded time (REST batch
//! pushes, inbox pages, MCP tool calls, action links) while core is killed
//! with SIGKILL and restarted twice. Every write a client saw acknowledged
//! must be stored afterwards: zero lost. `HADO_FAULT_SECONDS` sets how long
//! the traffic runs (default 60); the numbers are printed, and
//! BENCHMARKS.md records a run.

#![cfg(target_os = "linux")]

mod common;

use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use chrono::Utc;
use serde_json::{Value, json};
use tokio::sync::Mutex;

use common::{HADO, Running, Signal, free_port, signal, spawn};
use hado_engine::links::{LinkAction, LinkSigner};
use hado_testing::{Backend, TestDatabase};

const ADMIN_TOKEN: &str = "admin-secret-for-the-fault-check-0123456789";
const GATEWAY_TOKEN: &str = "gateway-secret-for-the-fault-check-0123456789";
const LINK_SECRET: &str = "link-secret-for-the-fault-check-0123456789abc";
const DUE: &str = "2031-03-14";

struct Ports {
    grpc: u16,
    http: u16,
    mcp: u16,
}

fn start_core(folder: &Path, ports: &Ports, database: &str) -> Running {
    spawn(
        "core",
        folder,
        &[
            ("HADO_DATABASE_URL", database.to_owned()),
            ("HADO_GRPC_ADDR", format!("127.0.0.1:{}", ports.grpc)),
            ("HADO_ADMIN_TOKEN", ADMIN_TOKEN.into()),
            ("HADO_GATEWAY_TOKEN", GATEWAY_TOKEN.into()),
            ("HADO_SECRET", LINK_SECRET.into()),
            ("HADO_PUBLIC_URL", format!("http://127.0.0.1:{}", ports.http)),
        ],
    )
}

/// Waits until `url` answers 200 (gateway-http's `/up` follows core's health).
async fn wait_for_ok(client: &reqwest::Client, url: &str) {
    for _ in 0..600 {
        if client.get(url).send().await.is_ok_and(|response| response.status().is_success()) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{url} did not answer 200");
}

#[derive(Default)]
struct Acknowledged {
    /// Refs of events a REST batch stored (status 200).
    rest_refs: Mutex<Vec<String>>,
    /// Ids of events MCP's create_event stored.
    mcp_ids: Mutex<Vec<i64>>,
    /// Ids of events an action link closed.
    done_ids: Mutex<Vec<i64>>,
    pages: AtomicUsize,
    refused: AtomicUsize,
}

async fn load_and_faults(backend: Backend) {
    let seconds: u64 =
        std::env::var("HADO_FAULT_SECONDS").ok().and_then(|value| value.parse().ok()).unwrap_or(60);
    let folder = tempfile::tempdir().unwrap();
    let database = TestDatabase::create(&backend).await;
    let ports = Ports { grpc: free_port(), http: free_port(), mcp: free_port() };
    let core_url = format!("http://127.0.0.1:{}", ports.grpc);
    let mut core = start_core(folder.path(), &ports, &database.url);
    let http = spawn(
        "gateway-http",
        folder.path(),
        &[
            ("HADO_HTTP_ADDR", format!("127.0.0.1:{}", ports.http)),
            ("HADO_CORE_URL", core_url.clone()),
            ("HADO_GATEWAY_TOKEN", GATEWAY_TOKEN.into()),
            ("HADO_LOCAL_USER", "me".into()),
        ],
    );
    let mcp = spawn(
        "gateway-mcp",
        folder.path(),
        &[
            ("HADO_MCP_ADDR", format!("127.0.0.1:{}", ports.mcp)),
            ("HADO_CORE_URL", core_url.clone()),
            ("HADO_MCP_RATE_LIMIT", "1000000".into()),
        ],
    );
    let client = reqwest::Client::builder().timeout(Duration::from_secs(10)).build().unwrap();
    let base = format!("http://127.0.0.1:{}", ports.http);
    wait_for_ok(&client, &format!("{base}/up")).await;

    // The person's agent token first, so that "me" is the first user (id 1).
    let admin = |command: &[&str]| {
        let output = Command::new(HADO)
            .args(command)
            .env("HADO_CORE_URL", &core_url)
            .env("HADO_ADMIN_TOKEN", ADMIN_TOKEN)
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).unwrap()
    };
    let agent_token = admin(&["agent-token", "me"])
        .split_whitespace()
        .find(|word| word.starts_with("hado_agent_"))
        .expect("a token")
        .to_owned();
    let source_token = admin(&["source", "create", "loadcheck"])
        .split_whitespace()
        .find(|word| word.starts_with("hado_src_"))
        .expect("a token")
        .to_owned();
    let signer = LinkSigner::new(LINK_SECRET);
    let database_url = database.url.clone();

    let acknowledged = Arc::new(Acknowledged::default());
    let running = Arc::new(AtomicBool::new(true));
    let mut workers = Vec::new();

    // REST batch pushes: 10 events a batch, each ref unique.
    for worker in 0..2 {
        let (client, base, token, acknowledged, running) = (
            client.clone(),
            base.clone(),
            source_token.clone(),
            acknowledged.clone(),
            running.clone(),
        );
        workers.push(tokio::spawn(async move {
            let mut batch_number = 0;
            while running.load(Ordering::Relaxed) {
                batch_number += 1;
                let refs: Vec<String> = (0..10).map(|item| format!("w{worker}-b{batch_number}-i{item}")).collect();
                let events: Vec<Value> = refs.iter().map(|source_ref| json!({"user": "me", "ref": source_ref, "title": "Load", "due_at": DUE})).collect();
                let sent = client.post(format!("{base}/api/events")).bearer_auth(&token).json(&json!({ "events": events })).send().await;
                match sent {
                    Ok(response) if response.status() == reqwest::StatusCode::OK => acknowledged.rest_refs.lock().await.extend(refs),
                    _ => {
                        acknowledged.refused.fetch_add(1, Ordering::Relaxed);
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                }
            }
        }));
    }

    // MCP create_event, then an action link closes every other event made.
    {
        let (client, base, mcp_port, token, acknowledged, running) = (
            client.clone(),
            base.clone(),
            ports.mcp,
            agent_token.clone(),
            acknowledged.clone(),
            running.clone(),
        );
        let (signer, database_url) = (signer.clone(), database_url.clone());
        workers.push(tokio::spawn(async move {
            let mut call = 0;
            while running.load(Ordering::Relaxed) {
                call += 1;
                let request = json!({"jsonrpc": "2.0", "id": call, "method": "tools/call", "params": {"name": "create_event", "arguments": {"title": format!("Agent {call}"), "due_at": DUE}}});
                let sent = client
                    .post(format!("http://127.0.0.1:{mcp_port}/mcp"))
                    .bearer_auth(&token)
                    .header("accept", "application/json, text/event-stream")
                    .json(&request)
                    .send()
                    .await;
                let reply: Option<Value> = match sent {
                    Ok(response) if response.status().is_success() => response.json().await.ok(),
                    _ => None,
                };
                let id = reply.as_ref().filter(|reply| reply["result"]["isError"] != true).and_then(|reply| reply["result"]["structuredContent"]["id"].as_i64());
                let Some(id) = id else {
                    acknowledged.refused.fetch_add(1, Ordering::Relaxed);
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                };
                acknowledged.mcp_ids.lock().await.push(id);
                if call % 2 == 0 {
                    let event = hado_testing::linked_event(&database_url, id).await;
                    let link = signer.issue(event, LinkAction::Done, Utc::now());
                    let page = match client.post(format!("{base}/a/{link}")).send().await {
                        Ok(response) if response.status().is_success() => response.text().await.unwrap_or_default(),
                        _ => String::new(),
                    };
                    if page.contains("Marked as done.") {
                        acknowledged.done_ids.lock().await.push(id);
                    } else {
                        acknowledged.refused.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        }));
    }

    // Inbox pages.
    {
        let (client, base, acknowledged, running) =
            (client.clone(), base.clone(), acknowledged.clone(), running.clone());
        workers.push(tokio::spawn(async move {
            while running.load(Ordering::Relaxed) {
                match client.get(format!("{base}/")).send().await {
                    Ok(response) if response.status().is_success() => {
                        acknowledged.pages.fetch_add(1, Ordering::Relaxed);
                    }
                    _ => {
                        acknowledged.refused.fetch_add(1, Ordering::Relaxed);
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                }
            }
        }));
    }

    // Core is killed with SIGKILL at a third and two thirds of the time, and
    // started again at once on the same database.
    let started = Instant::now();
    let total = Duration::from_secs(seconds);
    for kill in 1..=2u32 {
        let at = total * kill / 3;
        tokio::time::sleep(at.saturating_sub(started.elapsed())).await;
        signal(core.id(), Signal::SIGKILL);
        let _ = core.0.wait();
        core = start_core(folder.path(), &ports, &database.url);
    }
    tokio::time::sleep(total.saturating_sub(started.elapsed())).await;
    running.store(false, Ordering::Relaxed);
    for worker in workers {
        worker.await.unwrap();
    }
    wait_for_ok(&client, &format!("{base}/up")).await;

    // Every acknowledged write is stored.
    let rest_refs = acknowledged.rest_refs.lock().await.clone();
    let mut stored_refs = std::collections::HashSet::new();
    for chunk in rest_refs.chunks(200) {
        let query: String = chunk.iter().map(|source_ref| format!("&ref={source_ref}")).collect();
        let stored: Value = client
            .get(format!("{base}/api/events?user=me{query}"))
            .bearer_auth(&source_token)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let events = stored["events"]
            .as_array()
            .unwrap_or_else(|| panic!("the source's events are listed: {stored}"));
        stored_refs
            .extend(events.iter().filter_map(|event| event["ref"].as_str().map(str::to_owned)));
    }
    let lost_rest: Vec<&String> =
        rest_refs.iter().filter(|source_ref| !stored_refs.contains(*source_ref)).collect();
    let mcp_ids = acknowledged.mcp_ids.lock().await.clone();
    let done_ids = acknowledged.done_ids.lock().await.clone();
    let mut lost_mcp = Vec::new();
    let mut lost_done = Vec::new();
    for id in &mcp_ids {
        let event = client.get(format!("{base}/me/events/{id}")).send().await.unwrap();
        if !event.status().is_success() {
            lost_mcp.push(*id);
            continue;
        }
        let event: Value = event.json().await.unwrap();
        if done_ids.contains(id) && event["state"] != "done" {
            lost_done.push(*id);
        }
    }
    let pages = acknowledged.pages.load(Ordering::Relaxed);
    let refused = acknowledged.refused.load(Ordering::Relaxed);
    let backend_name = match backend {
        Backend::Sqlite => "SQLite",
        Backend::Postgres(_) => "Postgres",
    };
    // Written past the test runner's capture, so CI's log keeps the numbers.
    let _ = writeln!(
        std::io::stderr(),
        "load-and-fault ({backend_name}, {seconds} s, core killed twice): {} REST events in {} batches, {} MCP creates, {} action links, {pages} inbox pages acknowledged; {refused} requests refused while core was down; lost: {} REST, {} MCP, {} links",
        rest_refs.len(),
        rest_refs.len() / 10,
        mcp_ids.len(),
        done_ids.len(),
        lost_rest.len(),
        lost_mcp.len(),
        lost_done.len(),
    );
    assert!(
        lost_rest.is_empty() && lost_mcp.is_empty() && lost_done.is_empty(),
        "lost writes: {lost_rest:?} {lost_mcp:?} {lost_done:?}"
    );
    assert!(
        !rest_refs.is_empty() && !mcp_ids.is_empty() && !done_ids.is_empty() && pages > 0,
        "every kind of traffic got through"
    );

    for child in [core, http, mcp] {
        child.stop();
    }
    database.drop_now().await;
}

hado_testing::on_both_backends!(load_and_faults);
