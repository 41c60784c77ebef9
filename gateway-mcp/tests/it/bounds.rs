//! What an agent's requests may cost gateway-mcp: the count of values a
//! message may hold, and the budget of bodies held at once. Memory itself is measured in `cli/benches/peaks.rs`; these are the
//! limits, counted.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use crate::mcp::{Stack, error_body};
use hado_core::testing::Backend;

/// A `tools/call` of `create_event` whose arguments hold `pad`.
fn call_with(pad: &Value) -> String {
    json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "create_event", "arguments": {"title": "Pad", "due_at": "2027-03-01", "pad": pad}}}).to_string()
}

fn post(url: &str, token: &str, body: String) -> reqwest::RequestBuilder {
    reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap()
        .post(url)
        .bearer_auth(token)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .body(body)
}

/// The call: 500,000 zeros in a 1 MB `tools/call`, which rmcp
/// read into trees costing a hundred times its bytes. It is refused before
/// anything is built of it; a call with the values any call needs is not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_of_half_a_million_zeros_is_refused_before_it_is_built() {
    let stack = Stack::start_with(&Backend::Sqlite, |_| {}).await;
    let token = stack.agent_token("anna").await;
    let zeros = call_with(&json!(vec![0; 500_000]));
    assert!(zeros.len() < 1024 * 1024);
    let (status, _, body) = error_body(post(&stack.url, &token, zeros).send().await.unwrap()).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    assert_eq!(
        body["error"],
        json!({"code": -32600, "message": "the body holds more than 4096 JSON values, more than any request here needs"})
    );

    let fits = post(&stack.url, &token, call_with(&json!(vec![0; 4000]))).send().await.unwrap();
    assert_eq!(fits.status(), StatusCode::OK);
    let reply: Value = fits.json().await.unwrap();
    assert_eq!(
        reply["result"]["isError"],
        json!(true),
        "pad is no argument of create_event: {reply}"
    );
    stack.stop().await;
}

/// Bodies are read only while their bytes fit the gateway's budget: past
/// it a request is answered 503 with `Retry-After`, and once the bodies in
/// flight are done the next is taken again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_past_the_budget_wait_for_a_retry() {
    let stack = Stack::start_with(&Backend::Sqlite, |config| {
        config.limits.body_budget = 1024 * 1024;
    })
    .await;
    let token = stack.agent_token("anna").await;
    let address = stack.url.trim_start_matches("http://").trim_end_matches("/mcp").to_owned();
    let mut held = TcpStream::connect(&address).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n"
    );
    held.write_all(head.as_bytes()).await.unwrap();
    held.write_all(&vec![b' '; 900_000]).await.unwrap();

    let beside = || call_with(&json!("x".repeat(200_000)));
    let mut refused = None;
    for _ in 0..100 {
        let sent = post(&stack.url, &token, beside()).send().await.unwrap();
        if sent.status() == StatusCode::SERVICE_UNAVAILABLE {
            refused = Some(sent);
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let refused = refused.expect("a body past the budget is refused");
    assert_eq!(refused.headers()["retry-after"], "2");
    let (_, _, body) = error_body(refused).await;
    assert_eq!(
        body["error"],
        json!({"code": -32000, "message": "this gateway is reading as many request bodies as it holds at once (1 MiB); try again in 2 s", "data": {"retry_after": 2}})
    );
    drop(held);
    let mut taken = false;
    for _ in 0..100 {
        let status = post(&stack.url, &token, beside()).send().await.unwrap().status();
        if status == StatusCode::OK {
            taken = true;
            break;
        }
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(taken, "the budget is given back once the held body is gone");
    stack.stop().await;
}
