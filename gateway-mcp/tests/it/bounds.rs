//! What an agent's requests and streams may cost gateway-mcp: the count of
//! values a message may hold, the budget of bodies held at once, what an
//! unread legacy stream may queue, and streams left unread keeping no one
//! out. Memory itself is measured in `cli/benches/peaks.rs`; these are the
//! limits, counted.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use crate::mcp::{INITIALIZE, Stack, error_body};
use hado_testing::Backend;

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

/// The issue's call: 500,000 zeros in a 1 MB `tools/call`, which rmcp
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

/// A legacy stream: its response, never read past the endpoint, and where
/// its messages go.
async fn open_stream(
    client: &reqwest::Client,
    base: &str,
    token: &str,
) -> (reqwest::Response, String) {
    let mut stream = client.get(format!("{base}/sse")).bearer_auth(token).send().await.unwrap();
    assert_eq!(stream.status(), StatusCode::OK);
    let first = String::from_utf8(stream.chunk().await.unwrap().unwrap().to_vec()).unwrap();
    let endpoint = first.lines().find_map(|line| line.strip_prefix("data: ")).unwrap().to_owned();
    (stream, format!("{base}{endpoint}"))
}

/// 33 people open eight streams each and read none of them; a 34th person
/// still gets one, in place of the least recently used stream of someone
/// who holds eight, and that stream ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_left_unread_keep_no_one_out() {
    let stack = Stack::start_with(&Backend::Sqlite, |config| {
        config.limits.max_connections = 1024;
        config.limits.max_per_address = 1024;
    })
    .await;
    let base = stack.url.trim_end_matches("/mcp").to_owned();
    let client = reqwest::Client::new();
    let mut open = Vec::new();
    let mut refused = Vec::new();
    for person in 0..33 {
        let token = stack.agent_token(&format!("person{person}")).await;
        for stream in 0..8 {
            let response =
                client.get(format!("{base}/sse")).bearer_auth(&token).send().await.unwrap();
            match response.status() {
                StatusCode::OK => open.push(response),
                StatusCode::TOO_MANY_REQUESTS => refused.push((person, stream)),
                other => panic!("person{person}'s stream {stream}: {other}"),
            }
        }
    }
    // The 33rd person's eighth would only swap places with someone's eighth.
    assert_eq!(refused, [(32, 7)]);
    let newcomer = stack.agent_token("newcomer").await;
    let (_stream, messages) = open_stream(&client, &base, &newcomer).await;
    let accepted = client
        .post(&messages)
        .bearer_auth(&newcomer)
        .header("content-type", "application/json")
        .body(INITIALIZE)
        .send()
        .await
        .unwrap();
    assert_eq!(accepted.status(), StatusCode::ACCEPTED);
    // The stream whose place was taken first, person0's first, has ended.
    let first = &mut open[0];
    let ended = tokio::time::timeout(Duration::from_secs(10), async {
        while let Ok(Some(_)) = first.chunk().await {}
    })
    .await;
    assert!(ended.is_ok(), "the stream that gave its place ends");
    drop(open);
    stack.stop().await;
}

/// A stream whose replies nobody reads stops taking messages, and a post
/// past what may wait is refused at once (429), where it used to wait for
/// a room that never came.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unread_stream_refuses_posts_instead_of_holding_them() {
    let stack = Stack::start_with(&Backend::Sqlite, |config| config.calls_per_minute = 1000).await;
    let base = stack.url.trim_end_matches("/mcp").to_owned();
    let token = stack.agent_token("anna").await;
    let client = reqwest::Client::new();
    let (stream, messages) = open_stream(&client, &base, &token).await;
    let send = |body: String| {
        client
            .post(&messages)
            .bearer_auth(&token)
            .header("content-type", "application/json")
            .body(body)
            .timeout(Duration::from_secs(20))
            .send()
    };
    assert_eq!(send(INITIALIZE.into()).await.unwrap().status(), StatusCode::ACCEPTED);
    // Each tool list is a few KiB of reply, and none is read: together they
    // fill what the sockets hold and then the stream's megabyte of replies.
    for id in 0..300 {
        let list = format!(r#"{{"jsonrpc":"2.0","id":{},"method":"tools/list"}}"#, 100 + id);
        assert_eq!(send(list).await.unwrap().status(), StatusCode::ACCEPTED);
    }
    let pad = "p".repeat(480_000);
    let mut answers = Vec::new();
    for id in 0..8 {
        let ping = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"ping","params":{{"_meta":{{"pad":"{pad}"}}}}}}"#
        );
        let response = send(ping).await.expect("a post is answered, not held");
        answers.push(response.status());
        if response.status() == StatusCode::TOO_MANY_REQUESTS {
            assert_eq!(response.headers()["retry-after"], "2");
            let (_, _, body) = error_body(response).await;
            let message = body["error"]["message"].as_str().unwrap().to_owned();
            assert!(message.starts_with("this stream's tool server has not taken"), "{message}");
            break;
        }
    }
    assert_eq!(answers.last(), Some(&StatusCode::TOO_MANY_REQUESTS), "{answers:?}");
    assert!(answers.len() <= 3, "at most a megabyte waits: {answers:?}");
    drop(stream);
    stack.stop().await;
}
