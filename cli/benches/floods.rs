//! Resident memory of each of `hado up`'s three processes (the release
//! binary, on its SQLite default) idle and after each flood a hostile
//! client can send: 600 silent sockets held on each gateway, 2,000 gRPC
//! paths core does not serve, 1,280 client registrations from 128
//! addresses, and one person's event streams opened past their cap. Each
//! step also checks that the flood was answered as it must be (`/up` still
//! answers, unknown paths are UNIMPLEMENTED, a newcomer can still register,
//! the streams past the cap get 429). BENCHMARKS.md records the numbers.

#![cfg(target_os = "linux")]

#[path = "../tests/common/mod.rs"]
mod common;
mod support;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::net::{TcpSocket, TcpStream};

use common::{Ports, RawCodec, free_ports, hado, start_with};
use support::{Up, processes, report};

const SILENT_SOCKETS: usize = 600;
const UNKNOWN_PATHS: usize = 2_000;
const REGISTERING_ADDRESSES: u8 = 128;
const REGISTRATIONS_EACH: usize = 10;
const STREAMS_TRIED: usize = 32;

/// A connection to `target` from the loopback address `source`.
async fn connect_from(source: [u8; 4], target: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(SocketAddr::from((source, 0))).unwrap();
    socket.connect(target).await.unwrap()
}

/// How long `GET /up` took from another address, and its status line.
async fn up_from_elsewhere(target: SocketAddr) -> (Duration, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let started = Instant::now();
    let mut stream = connect_from([127, 0, 0, 2], target).await;
    stream
        .write_all(b"GET /up HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut reply = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut reply)).await;
    (
        started.elapsed(),
        String::from_utf8_lossy(&reply).lines().next().unwrap_or_default().to_owned(),
    )
}

fn printed(folder: &std::path::Path, ports: Ports, arguments: &[&str]) -> String {
    let output = hado(folder, ports).args(arguments).output().unwrap();
    assert!(
        output.status.success(),
        "hado {arguments:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[tokio::main]
async fn main() {
    hado_core::install_tls_provider();
    let folder = tempfile::tempdir().unwrap();
    let ports = free_ports();
    let (up, _) = start_with(folder.path(), ports, |_| {});
    let up = Up(up);
    let processes = processes(up.0.id());
    tokio::time::sleep(Duration::from_secs(2)).await;
    report("Idle, after start", &processes);

    // Silent sockets: opened from one address, held, then another client asks /up.
    for (gateway, port) in [("gateway-http", ports.http), ("gateway-mcp", ports.mcp)] {
        let target = SocketAddr::from(([127, 0, 0, 1], port));
        let mut silent = Vec::with_capacity(SILENT_SOCKETS);
        for _ in 0..SILENT_SOCKETS {
            silent.push(connect_from([127, 0, 0, 1], target).await);
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        let (took, status) = up_from_elsewhere(target).await;
        println!(
            "\n{gateway}: {SILENT_SOCKETS} silent sockets open; GET /up from another address answered {status:?} in {:.0} ms",
            took.as_secs_f64() * 1000.0
        );
        report(&format!("With {SILENT_SOCKETS} silent sockets on {gateway}"), &processes);
        drop(silent);
    }

    // Paths core does not serve.
    let channel =
        tonic::transport::Endpoint::from_shared(format!("http://127.0.0.1:{}", ports.grpc))
            .unwrap()
            .connect()
            .await
            .unwrap();
    let started = Instant::now();
    for index in 0..UNKNOWN_PATHS {
        let mut grpc = tonic::client::Grpc::new(channel.clone());
        grpc.ready().await.unwrap();
        let path: tonic::codegen::http::uri::PathAndQuery =
            format!("/hado.v1.Inbox/Invented{index}").parse().unwrap();
        let status = grpc.unary(tonic::Request::new(Vec::new()), path, RawCodec).await.unwrap_err();
        assert_eq!(status.code(), tonic::Code::Unimplemented);
    }
    println!(
        "\n{UNKNOWN_PATHS} unknown gRPC paths answered UNIMPLEMENTED in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    report(&format!("After {UNKNOWN_PATHS} unknown gRPC paths"), &processes);

    // Registrations from many addresses, each within its own allowance.
    let started = Instant::now();
    let mut registered = 0;
    for address in 1..=REGISTERING_ADDRESSES {
        let client = reqwest::Client::builder()
            .local_address(std::net::IpAddr::from([127, 0, 1, address]))
            .build()
            .unwrap();
        for _ in 0..REGISTRATIONS_EACH {
            let reply = client
                .post(format!("http://127.0.0.1:{}/register", ports.mcp))
                .json(&json!({"redirect_uris": ["http://127.0.0.1/cb"]}))
                .send()
                .await
                .unwrap();
            assert_eq!(
                reply.status(),
                reqwest::StatusCode::CREATED,
                "a newcomer can always register"
            );
            registered += 1;
        }
    }
    println!(
        "\n{registered} registrations from {REGISTERING_ADDRESSES} addresses in {:.1} s, every one accepted",
        started.elapsed().as_secs_f64()
    );
    report("After the registrations", &processes);

    // One person's event streams, past the cap.
    let agent = printed(folder.path(), ports, &["agent-token", "me"])
        .split_whitespace()
        .find(|word| word.starts_with("hado_agent_"))
        .unwrap()
        .to_owned();
    let client = reqwest::Client::new();
    let mut open = Vec::new();
    let mut refused = 0;
    for _ in 0..STREAMS_TRIED {
        let response = client
            .get(format!("http://127.0.0.1:{}/sse", ports.mcp))
            .bearer_auth(&agent)
            .send()
            .await
            .unwrap();
        match response.status() {
            reqwest::StatusCode::OK => open.push(response),
            reqwest::StatusCode::TOO_MANY_REQUESTS => refused += 1,
            other => panic!("GET /sse answered {other}"),
        }
    }
    println!(
        "\n{STREAMS_TRIED} event streams asked for by one person: {} open, {refused} refused",
        open.len()
    );
    report("With one person's streams open", &processes);
    drop(open);
    drop(up);
}
