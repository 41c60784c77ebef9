//! What a request body may cost gateway-http: the cap a full batch needs,
//! the count of values a body may hold, the smaller cap of a person's
//! writes, and the budget of bodies held at once. Memory itself is measured
//! in `cli/benches/peaks.rs`; these are the limits, counted.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use crate::common::{self, Gateway};
use hado_gateway_http::MAX_BODY_BYTES;
use hado_testing::{Backend, TestCore};

/// A character that takes four bytes, the widest UTF-8 has.
const WIDE: char = '\u{1F600}';

fn wide(count: usize) -> String {
    std::iter::repeat_n(WIDE, count).collect()
}

/// 1,000 events with every field at its most characters, text as four-byte
/// characters: the batch gateway-http's cap is worked out from.
fn full_batch() -> String {
    let events: Vec<Value> = (0..1000)
        .map(|index| {
            // Two wide characters that differ per event, then the rest.
            let tag: String = [index / 40, index % 40]
                .iter()
                .map(|digit| char::from_u32(0x1F600 + digit).unwrap())
                .collect();
            json!({
                "user": "m".repeat(64), "ref": format!("{tag}{}", wide(253)), "topic": wide(64),
                "title": wide(200), "subtitle": wide(200), "due_at": "2027-03-01T09:00+01:00",
                "fire_at": "2027-02-01", "after_due": "expire", "done_label": wide(64),
                "deep_link": format!("https://example.com/{}", "a".repeat(2048 - 20)),
            })
        })
        .collect();
    json!({ "events": events }).to_string()
}

/// `{"events":[{…"subtitle":[0,0,…]}]}` of `bytes` bytes.
fn zeros_in_a_subtitle(bytes: usize) -> String {
    let head =
        r#"{"events":[{"user":"me","ref":"z","title":"Zeros","due_at":"2027-03-01","subtitle":[0"#;
    let tail = "]}]}";
    let zeros = (bytes - head.len() - tail.len()) / 2;
    format!("{head}{}{tail}", ",0".repeat(zeros))
}

struct Stack {
    core: TestCore,
    gateway: Gateway,
    source: String,
    client: reqwest::Client,
}

impl Stack {
    async fn start(budget: Option<usize>) -> Self {
        let core = TestCore::start(&Backend::Sqlite, "2026-12-01T10:00:00Z").await;
        let mut config = common::config(&core);
        if let Some(bytes) = budget {
            config.limits.body_budget = bytes;
        }
        let gateway = Gateway::start(config).await;
        let source = format!("Bearer {}", core.source_token("docs").await);
        // A connection each: the gateway may close one after refusing an unread body.
        let client = reqwest::Client::builder().pool_max_idle_per_host(0).build().unwrap();
        Self { core, gateway, source, client }
    }

    /// POSTs `body` to `/api/events` as the source; the status and the reply.
    async fn push(&self, body: String) -> (StatusCode, Value) {
        let sent = self
            .client
            .post(format!("{}/api/events", self.gateway.base))
            .header("authorization", &self.source)
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .expect("the gateway answers");
        let status = sent.status();
        (status, sent.json().await.unwrap_or(Value::Null))
    }

    async fn stop(self) {
        self.gateway.stop().await;
        self.core.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_batch_at_every_fields_limit_fits_the_cap_and_a_kib_more_does_not() {
    let stack = Stack::start(None).await;
    let batch = full_batch();
    assert!(
        batch.len() <= MAX_BODY_BYTES && MAX_BODY_BYTES - batch.len() < 1024,
        "{}",
        batch.len()
    );
    let (status, reply) = stack.push(batch).await;
    assert_eq!(status, StatusCode::OK, "{reply}");
    assert_eq!(reply["results"].as_array().map(Vec::len), Some(1000));

    let over = format!(r#"{{"events":[],"pad":"{}"}}"#, "x".repeat(MAX_BODY_BYTES));
    let over = over[..MAX_BODY_BYTES + 1].to_owned();
    let (status, reply) = stack.push(over).await;
    assert_eq!(
        (status, reply["error"].as_str()),
        (StatusCode::PAYLOAD_TOO_LARGE, Some("the request body is over 5284 KiB"))
    );
    stack.stop().await;
}

/// The issue's push: a subtitle of zeros, 8 MB of it, and the same just
/// under the cap; and a body of empty events. Each was read into a tree of
/// values before the typed checks; each is refused before anything is
/// built, by its size or by its count of values.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arrays_of_nothing_are_refused_before_anything_is_built() {
    let stack = Stack::start(None).await;
    let (status, reply) = stack.push(zeros_in_a_subtitle(8_000_000)).await;
    assert_eq!(
        (status, &reply["error"]),
        (StatusCode::PAYLOAD_TOO_LARGE, &json!("the request body is over 5284 KiB"))
    );

    let values = "the body holds more than 11002 JSON values, more than any request here needs";
    let (status, reply) = stack.push(zeros_in_a_subtitle(MAX_BODY_BYTES - 10)).await;
    assert_eq!((status, reply["error"].as_str()), (StatusCode::PAYLOAD_TOO_LARGE, Some(values)));
    let empty = format!(r#"{{"events":[{}{{}}]}}"#, "{},".repeat(20_000));
    let (status, reply) = stack.push(empty).await;
    assert_eq!((status, reply["error"].as_str()), (StatusCode::PAYLOAD_TOO_LARGE, Some(values)));

    // Within the count, a wrong shape is still named by its field.
    let (status, reply) = stack.push(zeros_in_a_subtitle(200)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{reply}");
    assert_eq!(
        reply["violations"][0],
        json!({"index": 0, "field": "subtitle", "message": "invalid type: sequence, expected a string"})
    );
    stack.stop().await;
}

/// A person's writes (the inbox's forms and `/me`) take at most 64 KiB.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_persons_write_takes_at_most_64_kib() {
    let core = TestCore::start(&Backend::Sqlite, "2026-12-01T10:00:00Z").await;
    let mut config = common::config(&core);
    config.local_user = Some("me".into());
    let gateway = Gateway::start(config).await;
    let client = reqwest::Client::builder().pool_max_idle_per_host(0).build().unwrap();
    let long = |bytes: usize| {
        let body = format!(
            r#"{{"title":"Visa","due_at":"2027-03-01","subtitle":"{}"}}"#,
            "x".repeat(bytes)
        );
        client
            .post(format!("{}/me/events", gateway.base))
            .header("content-type", "application/json")
            .header("sec-fetch-site", "same-origin")
            .body(body)
            .send()
    };
    let refused = long(64 * 1024).await.unwrap();
    assert_eq!(refused.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(refused.json::<Value>().await.unwrap()["error"], "the request body is over 64 KiB");
    let form = "title=Visa&due_at=2027-03-01&subtitle=";
    let refused = client
        .post(format!("{}/events", gateway.base))
        .header("content-type", "application/x-www-form-urlencoded")
        .header("sec-fetch-site", "same-origin")
        .body(format!("{form}{}", "x".repeat(64 * 1024)))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), StatusCode::PAYLOAD_TOO_LARGE);
    // Within it, core reads the fields and names the one too long.
    let taken = long(1000).await.unwrap();
    assert_eq!(taken.status(), StatusCode::UNPROCESSABLE_ENTITY);
    gateway.stop().await;
    core.stop().await;
}

/// Starts a push of `declared` bytes and sends `sent` of them, holding the
/// rest back: a body in flight for as long as the stream is held.
async fn hold_a_push(stack: &Stack, declared: usize, sent: usize) -> TcpStream {
    let mut stream = TcpStream::connect(stack.gateway.addr).await.unwrap();
    let head = format!(
        "POST /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: {}\r\nContent-Type: application/json\r\nContent-Length: {declared}\r\n\r\n",
        stack.source
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(&vec![b' '; sent]).await.unwrap();
    stream
}

/// How long a test waits for the gateway to have read, or let go of, a
/// body held in flight.
const PATIENCE: Duration = Duration::from_secs(20);

/// Bodies are read only while their bytes fit the gateway's budget: past it
/// a push is answered 503 with `Retry-After`, and once the bodies in flight
/// are done the next is taken again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_past_the_budget_wait_for_a_retry() {
    let stack = Stack::start(Some(1024 * 1024)).await;
    let held = hold_a_push(&stack, 1_000_000, 900_000).await;
    let small = || {
        json!({"events": [{"user": "anna", "ref": "visa", "title": "Visa", "due_at": "2027-03-01", "subtitle": "x".repeat(200_000)}]}).to_string()
    };
    // The held body is read as it arrives; a push that does not fit beside
    // it is refused once it has been read. On a loaded machine that reading
    // can lag, so the pushes go on until a deadline, not a count of tries.
    let deadline = tokio::time::Instant::now() + PATIENCE;
    let mut refused = None;
    while tokio::time::Instant::now() < deadline {
        let sent = stack
            .client
            .post(format!("{}/api/events", stack.gateway.base))
            .header("authorization", &stack.source)
            .header("content-type", "application/json")
            .body(small())
            .send()
            .await
            .unwrap();
        if sent.status() == StatusCode::SERVICE_UNAVAILABLE {
            refused = Some(sent);
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let refused = refused.expect("a push past the budget is refused");
    assert_eq!(refused.headers()["retry-after"], "2");
    assert_eq!(
        refused.json::<Value>().await.unwrap()["error"],
        "this gateway is reading as many request bodies as it holds at once (1 MiB); try again in 2 s"
    );
    drop(held);
    let deadline = tokio::time::Instant::now() + PATIENCE;
    let mut taken = false;
    while tokio::time::Instant::now() < deadline {
        let (status, reply) = stack.push(small()).await;
        if status == StatusCode::UNPROCESSABLE_ENTITY {
            assert!(reply["error"].as_str().unwrap().contains("subtitle"), "{reply}");
            taken = true;
            break;
        }
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(taken, "the budget is given back once the held body is gone");
    stack.stop().await;
}

/// A body refused by its declared length is answered before it is read;
/// the client, still sending it, must still read that answer. The gateway
/// reads on and throws away what follows instead of resetting the
/// connection, so the writes succeed and the 413 arrives whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_refused_before_it_is_read_can_still_be_sent_and_its_answer_read() {
    use tokio::io::AsyncReadExt;

    let stack = Stack::start(None).await;
    let declared = MAX_BODY_BYTES + 1;
    let mut stream = hold_a_push(&stack, declared, 64 * 1024).await;
    // The answer comes before the body is done.
    let mut answer = Vec::new();
    let mut piece = [0u8; 4096];
    while !String::from_utf8_lossy(&answer).contains("\r\n\r\n") {
        let read = stream.read(&mut piece).await.unwrap();
        assert!(read > 0, "closed before answering");
        answer.extend_from_slice(&piece[..read]);
    }
    assert!(answer.starts_with(b"HTTP/1.1 413"), "{}", String::from_utf8_lossy(&answer));
    // The rest of the body, after the gateway has answered and closed its side.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let rest = vec![b' '; declared - 64 * 1024];
    for chunk in rest.chunks(64 * 1024) {
        stream.write_all(chunk).await.expect("the gateway reads on after answering");
    }
    stream.shutdown().await.unwrap();
    stream.read_to_end(&mut answer).await.expect("the connection ends cleanly");
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.contains("connection: close"), "{answer}");
    assert!(answer.contains("the request body is over 5284 KiB"), "{answer}");
    stack.stop().await;
}
