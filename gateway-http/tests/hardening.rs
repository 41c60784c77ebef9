//! gateway-http as an attacker meets it: real HTTP requests (and raw TCP
//! where a client must misbehave) against the gateway in front of a real
//! core. One test per finding of the security review: DNS rebinding,
//! cross-site writes, slow, silent and surplus connections (per address and
//! per client behind a proxy), bodies read before the
//! token is known, browser headers and error bodies, and the case of a
//! sign-in provider's user names.

mod common;

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use common::Gateway;
use hado_gateway::Limits;
use hado_gateway::TrustedProxies;
use hado_gateway_http::config::{HttpConfig, Secret};
use hado_testing::{Backend, TestCore};

const NOW: &str = "2026-12-01T10:00:00Z";

struct Stack {
    core: TestCore,
    gateway: Gateway,
    client: reqwest::Client,
}

impl Stack {
    async fn start(change: impl FnOnce(&mut HttpConfig)) -> Self {
        let core = TestCore::start(&Backend::Sqlite, NOW).await;
        let mut config = common::config(&core);
        change(&mut config);
        let gateway = Gateway::start(config).await;
        Self { core, gateway, client: reqwest::Client::new() }
    }

    /// `hado up`'s shape: one local user on loopback.
    async fn local() -> Self {
        Self::start(|config| config.local_user = Some("me".into())).await
    }

    async fn send(
        &self,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&str>,
    ) -> (StatusCode, reqwest::header::HeaderMap, String) {
        let mut request = self.client.request(method, format!("{}{path}", self.gateway.base));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        if let Some(body) = body {
            request = request.body(body.to_owned());
        }
        let response = request.send().await.expect("the gateway answers");
        let status = response.status();
        let headers = response.headers().clone();
        (status, headers, response.text().await.unwrap())
    }

    fn port(&self) -> u16 {
        self.gateway.addr.port()
    }

    async fn stop(self) {
        self.gateway.stop().await;
        self.core.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rebound_host_is_refused_on_every_route() {
    let stack = Stack::local().await;
    let foreign = format!("attacker.example:{}", stack.port());
    let routes = [
        (Method::GET, "/me"),
        (Method::POST, "/me/agent-token"),
        (Method::POST, "/settings/calendar"),
        (Method::GET, "/"),
        (Method::GET, "/up"),
        (Method::POST, "/api/events"),
        (Method::GET, "/a/anything"),
        (Method::GET, "/static/hado.css"),
        (Method::GET, "/no/such/page"),
    ];
    for (method, path) in &routes {
        let (status, _, body) = stack.send(method.clone(), path, &[("host", &foreign)], None).await;
        assert_eq!(status, StatusCode::MISDIRECTED_REQUEST, "{method} {path}: {body}");
        assert!(body.contains("attacker.example is not served here"), "{body}");
    }
    // No token was made for the rebinding page to read.
    let (_, _, token) = stack.send(Method::GET, "/me/agent-token", &[], None).await;
    assert_eq!(serde_json::from_str::<Value>(&token).unwrap()["issued"], false);
    // The names the person really uses still work.
    for host in [format!("127.0.0.1:{}", stack.port()), format!("localhost:{}", stack.port())] {
        assert_eq!(
            stack.send(Method::GET, "/up", &[("host", &host)], None).await.0,
            StatusCode::OK,
            "{host}"
        );
    }
    stack.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_public_host_and_listed_hosts_are_served() {
    let stack = Stack::start(|config| {
        config.allowed_hosts =
            hado_runtime::AllowedHosts::from_lookup(&|variable| match variable {
                "HADO_PUBLIC_URL" => Some("https://hado.example.com".into()),
                "HADO_ALLOWED_HOSTS" => Some("inbox.example.org".into()),
                _ => None,
            })
            .unwrap();
    })
    .await;
    for host in ["hado.example.com", "inbox.example.org:8443"] {
        assert_eq!(
            stack.send(Method::GET, "/up", &[("host", host)], None).await.0,
            StatusCode::OK,
            "{host}"
        );
    }
    assert_eq!(
        stack.send(Method::GET, "/up", &[("host", "other.example.com")], None).await.0,
        StatusCode::MISDIRECTED_REQUEST
    );
    stack.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cross_site_writes_are_refused_everywhere_under_me_and_the_pages() {
    let stack = Stack::local().await;
    let own = format!("http://127.0.0.1:{}", stack.port());
    let json = ("content-type", "application/json");
    let (status, _, created) = stack
        .send(
            Method::POST,
            "/me/events",
            &[json, ("origin", &own)],
            Some(r#"{"title": "Dentist", "due_at": "2026-12-20"}"#),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let id = serde_json::from_str::<Value>(&created).unwrap()["id"].as_i64().unwrap();

    let other_port = format!("http://127.0.0.1:{}", stack.port() + 1);
    let cross_site: [&[(&str, &str)]; 4] = [
        &[json, ("origin", "http://attacker.example")],
        &[json, ("origin", &other_port)],
        &[json, ("origin", "https://127.0.0.1")],
        &[json, ("sec-fetch-site", "cross-site")],
    ];
    for headers in cross_site {
        for (method, path) in [
            (Method::POST, format!("/me/events/{id}/done")),
            (Method::POST, format!("/me/events/{id}/ack")),
            (Method::DELETE, format!("/me/events/{id}")),
            (Method::POST, "/me/agent-token".into()),
            (Method::PATCH, "/me".into()),
        ] {
            let (status, _, body) = stack.send(method.clone(), &path, headers, Some("{}")).await;
            assert_eq!(status, StatusCode::FORBIDDEN, "{method} {path} with {headers:?}: {body}");
        }
        for path in ["/settings/calendar", "/settings/agent-token", &format!("/events/{id}/done")] {
            let form = [("content-type", "application/x-www-form-urlencoded"), headers[1]];
            assert_eq!(
                stack.send(Method::POST, path, &form, Some("")).await.0,
                StatusCode::FORBIDDEN,
                "{path} with {headers:?}"
            );
        }
    }
    // A form (no Origin, as some browsers send none) cannot post to the JSON routes.
    for path in [format!("/me/events/{id}/done"), "/me/agent-token".into()] {
        let (status, _, body) = stack
            .send(
                Method::POST,
                &path,
                &[("content-type", "application/x-www-form-urlencoded")],
                Some("a=b"),
            )
            .await;
        assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{path}: {body}");
    }
    // Nothing changed.
    let (_, _, event) = stack.send(Method::GET, &format!("/me/events/{id}"), &[], None).await;
    assert_eq!(serde_json::from_str::<Value>(&event).unwrap()["state"], "preparing");
    let (_, _, token) = stack.send(Method::GET, "/me/agent-token", &[], None).await;
    assert_eq!(serde_json::from_str::<Value>(&token).unwrap()["issued"], false);
    // The same requests from this site's own pages go through.
    let same_site = [json, ("origin", own.as_str()), ("sec-fetch-site", "same-origin")];
    assert_eq!(
        stack.send(Method::POST, &format!("/me/events/{id}/done"), &same_site, None).await.0,
        StatusCode::OK
    );
    assert_eq!(
        stack.send(Method::POST, "/me/agent-token", &same_site, None).await.0,
        StatusCode::OK
    );
    stack.stop().await;
}

/// Short limits, so that the test waits seconds, not minutes.
fn short_limits(config: &mut HttpConfig) {
    config.limits = Limits {
        header_timeout: Duration::from_secs(1),
        request_timeout: Duration::from_secs(2),
        idle_timeout: Duration::from_secs(2),
        max_connections: 4,
        ..Limits::default()
    };
}

/// Reads until the server closes the connection (or `limit` passes) and
/// returns what it sent and how long it took.
async fn read_until_closed(stream: &mut TcpStream, limit: Duration) -> (String, Duration) {
    let started = Instant::now();
    let mut received = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        match tokio::time::timeout(
            limit.saturating_sub(started.elapsed()),
            stream.read(&mut buffer),
        )
        .await
        {
            Ok(Ok(0)) | Ok(Err(_)) => break,
            Ok(Ok(read)) => received.extend_from_slice(&buffer[..read]),
            Err(_) => panic!(
                "the server kept the connection open for {limit:?}; it sent {:?}",
                String::from_utf8_lossy(&received)
            ),
        }
    }
    (String::from_utf8_lossy(&received).into_owned(), started.elapsed())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_headers_slow_bodies_and_idle_connections_are_closed() {
    let stack = Stack::start(short_limits).await;
    let token = stack.core.source_token("docs").await;

    // Headers that never end.
    let mut slow_headers = TcpStream::connect(stack.gateway.addr).await.unwrap();
    slow_headers.write_all(b"GET /up HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ").await.unwrap();
    let (_, took) = read_until_closed(&mut slow_headers, Duration::from_secs(10)).await;
    assert!(took < Duration::from_secs(5), "closed after {took:?}");

    // A body that never comes: 408 after the request deadline.
    let mut slow_body = TcpStream::connect(stack.gateway.addr).await.unwrap();
    let head = format!(
        "POST /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{\"events\": ["
    );
    slow_body.write_all(head.as_bytes()).await.unwrap();
    let (reply, took) = read_until_closed(&mut slow_body, Duration::from_secs(10)).await;
    assert!(reply.starts_with("HTTP/1.1 408"), "{reply}");
    assert!(took < Duration::from_secs(6), "answered after {took:?}");

    // A kept-alive connection that goes quiet after its request.
    let mut idle = TcpStream::connect(stack.gateway.addr).await.unwrap();
    idle.write_all(b"GET /up HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").await.unwrap();
    let (reply, took) = read_until_closed(&mut idle, Duration::from_secs(10)).await;
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    assert!(
        took >= Duration::from_secs(1) && took < Duration::from_secs(6),
        "closed after {took:?}"
    );

    // HTTP/2 (prior knowledge) that says nothing after the preface.
    let mut quiet_h2 = TcpStream::connect(stack.gateway.addr).await.unwrap();
    quiet_h2
        .write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00")
        .await
        .unwrap();
    let (_, took) = read_until_closed(&mut quiet_h2, Duration::from_secs(10)).await;
    assert!(took < Duration::from_secs(6), "closed after {took:?}");
    stack.stop().await;
}

/// Sends `GET /up` on a kept-alive connection and reads the answer.
async fn use_connection(stream: &mut TcpStream) -> String {
    stream.write_all(b"GET /up HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").await.unwrap();
    let mut buffer = [0u8; 4096];
    let read = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buffer))
        .await
        .expect("answered")
        .unwrap();
    String::from_utf8_lossy(&buffer[..read]).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_over_the_cap_are_answered_503_and_health_recovers() {
    let stack = Stack::start(short_limits).await;
    let mut held = Vec::new();
    for _ in 0..4 {
        let mut connection = TcpStream::connect(stack.gateway.addr).await.unwrap();
        assert!(use_connection(&mut connection).await.starts_with("HTTP/1.1 200"));
        held.push(connection);
    }
    // Every place is taken by a connection in use: the fifth is refused.
    let mut over = TcpStream::connect(stack.gateway.addr).await.unwrap();
    over.write_all(b"GET /up HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").await.unwrap();
    let (reply, _) = read_until_closed(&mut over, Duration::from_secs(5)).await;
    assert!(reply.starts_with("HTTP/1.1 503"), "{reply}");
    assert!(
        reply.contains("connection limit") && reply.to_lowercase().contains("retry-after: 1"),
        "{reply}"
    );
    // The kept-alive connections are closed by the idle timeout; then /up answers.
    for mut connection in held {
        read_until_closed(&mut connection, Duration::from_secs(10)).await;
    }
    assert_eq!(stack.send(Method::GET, "/up", &[], None).await.0, StatusCode::OK);
    stack.stop().await;
}

/// Opens a connection from `source` (a loopback address) to `target`.
async fn connect_from(source: &str, target: std::net::SocketAddr) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(format!("{source}:0").parse().unwrap()).unwrap();
    socket.connect(target).await.unwrap()
}

/// Sends `GET /up` on a new connection from `source` and reads the status line.
async fn up_from(source: &str, target: std::net::SocketAddr) -> String {
    let mut stream = connect_from(source, target).await;
    use_connection(&mut stream).await.lines().next().unwrap_or_default().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn six_hundred_silent_sockets_from_one_address_cannot_hold_the_gateway() {
    // The default limits, but for a header deadline short enough to wait for.
    let stack = Stack::start(|config| config.limits.header_timeout = Duration::from_secs(3)).await;
    let target = stack.gateway.addr;
    let opened = Instant::now();
    let mut silent = Vec::new();
    for _ in 0..600 {
        silent.push(connect_from("127.0.0.1", target).await);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Another client is answered at once, and so is a newcomer from the
    // flooding address: the oldest silent socket makes room for it.
    for source in ["127.0.0.2", "127.0.0.1"] {
        let asked = Instant::now();
        let status = up_from(source, target).await;
        assert!(status.starts_with("HTTP/1.1 200"), "{source}: {status}");
        assert!(asked.elapsed() < Duration::from_secs(2), "{source} waited {:?}", asked.elapsed());
    }
    // Every silent socket is closed by the header deadline, counted from accept.
    for mut stream in silent {
        let (sent, _) = read_until_closed(&mut stream, Duration::from_secs(10)).await;
        assert!(sent.is_empty() || sent.starts_with("HTTP/1.1 503"), "{sent}");
    }
    assert!(
        opened.elapsed() < Duration::from_secs(9),
        "the silent sockets were held for {:?}",
        opened.elapsed()
    );
    stack.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_address_may_hold_only_its_share_of_connections() {
    let stack = Stack::start(|config| config.limits.max_per_address = 3).await;
    let target = stack.gateway.addr;
    let mut held = Vec::new();
    for _ in 0..3 {
        let mut connection = connect_from("127.0.0.3", target).await;
        assert!(use_connection(&mut connection).await.starts_with("HTTP/1.1 200"));
        held.push(connection);
    }
    assert!(
        up_from("127.0.0.3", target).await.starts_with("HTTP/1.1 503"),
        "a fourth connection in use from one address is over its cap"
    );
    assert!(
        up_from("127.0.0.4", target).await.starts_with("HTTP/1.1 200"),
        "another address has its own cap"
    );
    drop(held);
    stack.stop().await;
}

/// Sends `GET /up` as the proxy would for `client` and reads the answer.
async fn up_for(client: &str, connection: &mut TcpStream) -> String {
    let request =
        format!("GET /up HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Forwarded-For: {client}\r\n\r\n");
    connection.write_all(request.as_bytes()).await.unwrap();
    let mut buffer = [0u8; 4096];
    let read = tokio::time::timeout(Duration::from_secs(5), connection.read(&mut buffer))
        .await
        .expect("answered")
        .unwrap();
    String::from_utf8_lossy(&buffer[..read]).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn behind_a_trusted_proxy_the_cap_counts_each_forwarded_client() {
    let stack = Stack::start(|config| {
        config.trusted_proxies = TrustedProxies::parse("127.0.0.1").unwrap();
        config.limits.max_per_address = 2;
        config.limits.request_timeout = Duration::from_secs(3);
    })
    .await;
    let target = stack.gateway.addr;
    // The proxy's own connections are not capped by its address.
    let mut pooled = Vec::new();
    for _ in 0..4 {
        let mut connection = connect_from("127.0.0.1", target).await;
        assert!(use_connection(&mut connection).await.starts_with("HTTP/1.1 200"));
        pooled.push(connection);
    }
    // One client holds two requests open (bodies that never come)...
    let token = stack.core.source_token("docs").await;
    for connection in pooled.iter_mut().take(2) {
        let head = format!(
            "POST /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Forwarded-For: 203.0.113.9\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{"
        );
        connection.write_all(head.as_bytes()).await.unwrap();
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    // ...so its third waits its turn, while another client behind the same proxy is served.
    let over = up_for("203.0.113.9", &mut pooled[2]).await;
    assert!(
        over.starts_with("HTTP/1.1 503") && over.to_lowercase().contains("retry-after"),
        "{over}"
    );
    assert!(up_for("198.51.100.7", &mut pooled[3]).await.starts_with("HTTP/1.1 200"));
    stack.stop().await;
}

/// Sends a request's headers and the first KiB of a large declared body,
/// then reads the answer, which must come without the rest of the body.
async fn answer_before_the_body(stack: &Stack, path: &str, headers: &str) -> String {
    let mut stream = TcpStream::connect(stack.gateway.addr).await.unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{headers}Content-Type: application/json\r\nContent-Length: 8000000\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(&[b' '; 1024]).await.unwrap();
    let mut buffer = vec![0u8; 4096];
    let read = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buffer))
        .await
        .expect("answered before the body was sent")
        .unwrap();
    String::from_utf8_lossy(&buffer[..read]).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_token_or_secret_is_refused_before_the_body_is_read() {
    let stack = Stack::start(|config| {
        config.telegram_webhook_secret = Some(Secret("telegram-webhook-secret-0123456789".into()))
    })
    .await;
    let unknown = format!("Authorization: Bearer hado_src_{}\r\n", "0".repeat(64));
    for path in ["/api/events", "/api/events/withdraw"] {
        let reply = answer_before_the_body(&stack, path, &unknown).await;
        assert!(reply.starts_with("HTTP/1.1 401"), "{path}: {reply}");
        assert!(reply.contains("unknown source token"), "{reply}");
    }
    let reply = answer_before_the_body(
        &stack,
        "/hooks/telegram",
        "X-Telegram-Bot-Api-Secret-Token: wrong\r\n",
    )
    .await;
    assert!(reply.starts_with("HTTP/1.1 401"), "{reply}");
    // A known token's batch is read and written as before.
    let token = stack.core.source_token("docs").await;
    let batch = json!({"events": [{"user": "anna", "ref": "visa", "title": "Visa", "due_at": "2026-12-14"}]}).to_string();
    let (status, _, body) = stack
        .send(
            Method::POST,
            "/api/events",
            &[("authorization", &format!("Bearer {token}")), ("content-type", "application/json")],
            Some(&batch),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    stack.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_reply_carries_the_security_headers_and_errors_are_never_plain_text() {
    let stack = Stack::local().await;
    for (method, path) in [
        (Method::GET, "/"),
        (Method::GET, "/up"),
        (Method::GET, "/nowhere"),
        (Method::POST, "/api/events"),
        (Method::GET, "/static/hado.js"),
    ] {
        let (_, headers, _) = stack.send(method.clone(), path, &[], None).await;
        let policy = headers
            .get("content-security-policy")
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default();
        assert!(
            policy.contains("frame-ancestors 'none'") && policy.contains("script-src 'self'"),
            "{path}: {policy}"
        );
        assert!(!policy.contains("unsafe-inline"), "{policy}");
        assert_eq!(headers.get("x-content-type-options").unwrap(), "nosniff", "{path}");
        assert_eq!(headers.get("referrer-policy").unwrap(), "same-origin", "{path}");
    }
    // A token shown once is never kept by a cache (RFC 6749 section 5.1).
    let same_site = [("content-type", "application/json"), ("sec-fetch-site", "same-origin")];
    let (status, headers, _) = stack.send(Method::POST, "/me/agent-token", &same_site, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers.get("cache-control").unwrap(), "no-store");
    let (_, headers, _) = stack.send(Method::GET, "/static/hado.js", &[], None).await;
    assert_ne!(
        headers.get("cache-control").unwrap(),
        "no-store",
        "static files keep their own caching"
    );
    // axum's own rejections (a path that is not a number, a method a route
    // does not take) come back as JSON that does not repeat the input.
    for (method, path) in [
        (Method::GET, "/me/events/%3Cscript%3Ealert(1)%3C%2Fscript%3E"),
        (Method::PUT, "/me"),
        (Method::GET, "/events/<b>x</b>"),
    ] {
        let (status, headers, body) = stack.send(method.clone(), path, &[], None).await;
        assert!(status.is_client_error(), "{path}: {status}");
        let kind =
            headers.get("content-type").and_then(|value| value.to_str().ok()).unwrap_or_default();
        assert!(
            kind.starts_with("application/json") || kind.starts_with("text/html"),
            "{path}: {kind}"
        );
        assert!(!body.contains("<script>") && !body.contains("<b>"), "{path}: {body}");
    }
    stack.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_absolute_form_target_cannot_smuggle_a_second_host() {
    let stack = Stack::local().await;
    let ask = |target: String| {
        let addr = stack.gateway.addr;
        async move {
            let mut stream = TcpStream::connect(addr).await.unwrap();
            let request =
                format!("GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
            stream.write_all(request.as_bytes()).await.unwrap();
            let (reply, _) = read_until_closed(&mut stream, Duration::from_secs(5)).await;
            reply
        }
    };
    let smuggled = ask("http://attacker.example/me".to_owned()).await;
    assert!(smuggled.starts_with("HTTP/1.1 421"), "{smuggled}");
    let same = ask(format!("http://127.0.0.1:{}/up", stack.port())).await;
    assert!(same.starts_with("HTTP/1.1 200"), "{same}");
    stack.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sign_in_providers_mixed_case_name_is_one_user() {
    let stack = Stack::start(|config| {
        config.trusted_proxies = TrustedProxies::parse("127.0.0.0/8").unwrap()
    })
    .await;
    let json = ("content-type", "application/json");
    let (status, _, body) = stack
        .send(
            Method::POST,
            "/me/events",
            &[("x-remote-user", "Anna"), json],
            Some(r#"{"title": "Visa", "due_at": "2026-12-14"}"#),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (_, _, list) =
        stack.send(Method::GET, "/me/events", &[("x-remote-user", "anna")], None).await;
    assert_eq!(
        serde_json::from_str::<Value>(&list).unwrap()["events"][0]["title"],
        "Visa",
        "{list}"
    );
    let (_, _, list) =
        stack.send(Method::GET, "/me/events", &[("x-remote-user", "ANNA")], None).await;
    assert_eq!(
        serde_json::from_str::<Value>(&list).unwrap()["events"].as_array().unwrap().len(),
        1
    );
    let users = stack
        .core
        .admin()
        .list_users(hado_proto::v1::ListUsersRequest {})
        .await
        .unwrap()
        .into_inner();
    let logins: Vec<&str> = users.users.iter().map(|user| user.login.as_str()).collect();
    assert_eq!(logins, ["anna"]);
    stack.stop().await;
}
