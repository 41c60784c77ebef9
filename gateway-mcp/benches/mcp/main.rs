//! gateway-mcp's benchmarks: tool-call latency (p50/p99) and throughput for
//! `ping`, `get_profile`, `create_event` and `list_events` (200 events) at 1 and 16 concurrent MCP
//! sessions, next to the same Inbox calls made over gRPC directly (the
//! gateway's overhead), next to the official TypeScript reference server's
//! `echo` tool (`@modelcontextprotocol/server-everything`, streamable HTTP)
//! as a peer, and the gateway's resident memory idle and after the load.
//!
//! Core runs in this process on a temporary SQLite file, and then on a
//! fresh Postgres database when `HADO_TEST_POSTGRES_URL` is set (`-- hado`
//! or `-- postgres` runs one); the gateway runs as its own process (the
//! release binary), so its memory is its own. During the wrk runs, wrk is
//! core's only client, so the CPU time of this process and the gateway's
//! over a run is what its calls cost them. The peer
//! runs when `HADO_BENCH_EVERYTHING` names its installed `dist/index.js`.
//! When wrk is installed, the same `ping`, `get_profile`, `create_event`
//! and the peer's `echo` are also driven by wrk (see `wrk.rs`).
//! BENCHMARKS.md records the numbers and the commands.

mod wrk;

use std::future::Future;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, ClientRequest, PingRequest};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

use hado_proto::v1::inbox_client::InboxClient;
use hado_proto::v1::{self, EventFields, ListEventsRequest};
use hado_testing::{Backend, Bearer, TestCore};

const GATEWAY: &str = env!("CARGO_BIN_EXE_hado-gateway-mcp");
const LISTED_EVENTS: usize = 200;
/// Calls per session (or per gRPC task) in each measurement.
const CALLS_ALONE: usize = 300;
const CALLS_EACH_OF_16: usize = 60;

type Client = RunningService<RoleClient, ()>;
type Inbox = InboxClient<InterceptedService<Channel, Bearer>>;

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

async fn mcp_client(url: &str, token: Option<&str>) -> Client {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url);
    if let Some(token) = token {
        config = config.auth_header(token);
    }
    ().serve(StreamableHttpClientTransport::from_config(config))
        .await
        .expect("the MCP client connects")
}

async fn call(client: &Client, tool: &'static str, arguments: Value) {
    let arguments = arguments.as_object().cloned().unwrap();
    let result = client
        .call_tool(CallToolRequestParams::new(tool).with_arguments(arguments))
        .await
        .expect("the call is answered");
    assert_ne!(result.is_error, Some(true), "{tool} failed: {result:?}");
}

/// Latencies of every call and the wall time of the whole run.
struct Run {
    latencies: Vec<Duration>,
    wall: Duration,
}

impl Run {
    /// Prints the run; returns its calls a second and its p50 in ms.
    fn print(mut self, label: &str, sessions: usize) -> (f64, f64) {
        self.latencies.sort();
        let count = self.latencies.len();
        let p50 = self.latencies[count / 2];
        let p99 = self.latencies[(count * 99 / 100).min(count - 1)];
        let per_second = count as f64 / self.wall.as_secs_f64();
        println!(
            "{label:<44} {sessions:>2} session(s)  p50 {:>7.2} ms  p99 {:>7.2} ms  {per_second:>7.0} calls/s  ({count} calls)",
            p50.as_secs_f64() * 1e3,
            p99.as_secs_f64() * 1e3
        );
        (per_second, p50.as_secs_f64() * 1e3)
    }
}

/// CPU time (user and system) a process has used so far, from /proc.
fn cpu_seconds(pid: &str) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command's closing parenthesis: utime and stime are 12th and 13th.
    let fields: Vec<&str> =
        stat.rsplit_once(')').map_or("", |(_, rest)| rest).split_whitespace().collect();
    let ticks: f64 = fields[11..13].iter().map(|field| field.parse::<f64>().unwrap_or(0.0)).sum();
    ticks / clock_ticks_per_second()
}

fn clock_ticks_per_second() -> f64 {
    let output = std::process::Command::new("getconf").arg("CLK_TCK").output();
    output
        .ok()
        .and_then(|output| String::from_utf8(output.stdout).ok()?.trim().parse().ok())
        .unwrap_or(100.0)
}

/// Runs `calls` calls on each of the workers at once, timing each call.
async fn measure<W, F, Fut>(workers: Vec<W>, calls: usize, operation: F) -> Run
where
    W: Clone + Send + 'static,
    F: Fn(W, usize) -> Fut + Send + Sync + Clone + 'static,
    Fut: Future<Output = ()> + Send,
{
    let started = Instant::now();
    let tasks: Vec<_> = workers
        .into_iter()
        .enumerate()
        .map(|(index, worker)| {
            let operation = operation.clone();
            tokio::spawn(async move {
                let mut latencies = Vec::with_capacity(calls);
                for call in 0..calls {
                    let began = Instant::now();
                    operation(worker.clone(), index * calls + call).await;
                    latencies.push(began.elapsed());
                }
                (worker, latencies)
            })
        })
        .collect();
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await.unwrap().1);
    }
    Run { latencies, wall: started.elapsed() }
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

async fn wait_for_port(port: u16) {
    for _ in 0..400 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("nothing listens on {port}");
}

async fn sessions(url: &str, token: Option<&str>, count: usize) -> Vec<Arc<Client>> {
    let mut clients = Vec::with_capacity(count);
    for _ in 0..count {
        clients.push(Arc::new(mcp_client(url, token).await));
    }
    clients
}

async fn bench_hado(backend: Backend) -> Option<f64> {
    let name = match backend {
        Backend::Sqlite => "SQLite",
        Backend::Postgres(_) => "Postgres",
    };
    println!("\n=== Hado on {name} ===");
    let core = TestCore::start(&backend, "2026-12-01T10:00:00Z").await;
    let token_of = |login: &'static str| {
        let mut admin = core.admin();
        async move {
            admin
                .issue_agent_token(v1::UserLogin { login: login.into() })
                .await
                .unwrap()
                .into_inner()
                .token
        }
    };
    let (lister, creator) = (token_of("anna").await, token_of("bob").await);

    let port = free_port();
    let mut gateway = tokio::process::Command::new(GATEWAY)
        .env("HADO_CORE_URL", core.url())
        .env("HADO_MCP_ADDR", format!("127.0.0.1:{port}"))
        .env("HADO_MCP_RATE_LIMIT", "100000000")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("the gateway starts");
    let pid = gateway.id().unwrap();
    wait_for_port(port).await;
    let url = format!("http://127.0.0.1:{port}/mcp");

    let mut anna: Inbox = core.agent(&lister);
    for index in 0..LISTED_EVENTS {
        let fields = EventFields {
            title: format!("Event {index}"),
            due_at: format!("2027-{:02}-{:02}", index % 12 + 1, index % 28 + 1),
            ..Default::default()
        };
        anna.create_event(fields).await.unwrap();
    }
    let warm = mcp_client(&url, Some(&lister)).await;
    call(&warm, "list_events", json!({"limit": LISTED_EVENTS})).await;
    println!("gateway-mcp resident memory, idle: {} KiB", resident_kib(pid, "VmRSS:"));
    warm.cancel().await.unwrap();

    println!(
        "\nHado, ping (no tool; the gateway still checks the token) and get_profile (one read in core)"
    );
    let mut pinged = [0.0; 2];
    for (index, (sessions_count, calls)) in
        [(1, CALLS_ALONE), (16, CALLS_EACH_OF_16)].into_iter().enumerate()
    {
        let clients = sessions(&url, Some(&creator), sessions_count).await;
        pinged[index] = measure(clients, calls, |client: Arc<Client>, _| async move {
            client
                .send_request(ClientRequest::PingRequest(PingRequest::default()))
                .await
                .expect("ping is answered");
        })
        .await
        .print("MCP ping", sessions_count)
        .0;
        let clients = sessions(&url, Some(&creator), sessions_count).await;
        measure(clients, calls, |client: Arc<Client>, _| async move {
            call(&client, "get_profile", json!({})).await
        })
        .await
        .print("MCP tools/call get_profile", sessions_count);
    }

    println!("\nHado, create_event (a new manual event each call)");
    for (index, (sessions_count, calls)) in
        [(1, CALLS_ALONE), (16, CALLS_EACH_OF_16)].into_iter().enumerate()
    {
        let clients = sessions(&url, Some(&creator), sessions_count).await;
        let (created, p50) = measure(clients, calls, |client: Arc<Client>, index| {
            let arguments =
                json!({"title": format!("Bench {index}"), "due_at": "2027-03-01T09:00"});
            async move { call(&client, "create_event", arguments).await }
        })
        .await
        .print("MCP tools/call create_event", sessions_count);
        println!(
            "{name}: create_event at {sessions_count} session(s) is {:.2} of ping, p50 {p50:.2} ms",
            created / pinged[index]
        );
        let inboxes: Vec<Inbox> = (0..sessions_count).map(|_| core.agent(&creator)).collect();
        measure(inboxes, calls, |mut inbox: Inbox, index| {
            let fields = EventFields {
                title: format!("Bench {index}"),
                due_at: "2027-03-01T09:00".into(),
                ..Default::default()
            };
            async move {
                inbox.create_event(fields).await.unwrap();
            }
        })
        .await
        .print("gRPC Inbox.CreateEvent directly", sessions_count);
    }

    println!("\nHado, list_events ({LISTED_EVENTS} active events)");
    for (sessions_count, calls) in [(1, CALLS_ALONE), (16, CALLS_EACH_OF_16)] {
        let clients = sessions(&url, Some(&lister), sessions_count).await;
        measure(clients, calls, |client: Arc<Client>, _| async move {
            call(&client, "list_events", json!({"limit": LISTED_EVENTS})).await
        })
        .await
        .print("MCP tools/call list_events", sessions_count);
        let inboxes: Vec<Inbox> = (0..sessions_count).map(|_| core.agent(&lister)).collect();
        measure(inboxes, calls, |mut inbox: Inbox, _| async move {
            let listed = inbox
                .list_events(ListEventsRequest {
                    state: None,
                    archive: false,
                    limit: None,
                    after: None,
                    ..Default::default()
                })
                .await
                .unwrap();
            assert_eq!(listed.get_ref().events.len(), LISTED_EVENTS);
        })
        .await
        .print("gRPC Inbox.ListEvents directly", sessions_count);
    }
    println!(
        "\ngateway-mcp resident memory after the load: {} KiB now, {} KiB at its peak",
        resident_kib(pid, "VmRSS:"),
        resident_kib(pid, "VmHWM:")
    );

    let created = if wrk::available().await {
        Some(wrk_hado(&core, &url, &token_of("carol").await, &pid.to_string()).await)
    } else {
        println!("\nwrk runs skipped: wrk is not installed (Debian's wrk)");
        None
    };
    println!(
        "gateway-mcp resident memory at the end: {} KiB now, {} KiB at its peak",
        resident_kib(pid, "VmRSS:"),
        resident_kib(pid, "VmHWM:")
    );

    let _ = gateway.start_kill();
    let _ = gateway.wait().await;
    core.stop().await;
    created
}

/// Hado's `ping`, `get_profile` and `create_event` driven by wrk; returns
/// `create_event`'s calls a second at 16 connections. Every call wrk
/// counts as answered must have made its event.
async fn wrk_hado(core: &TestCore, url: &str, token: &str, gateway: &str) -> f64 {
    println!("\nHado driven by wrk (each connection its own session where the server keeps them)");
    let server = wrk::Server { url, token: Some(token) };
    let mut answered = 0;
    let mut rates = [0.0; 2];
    for (index, connections) in [1, 16].into_iter().enumerate() {
        let ping = server.run("MCP ping (wrk)", connections, &wrk::ping()).await;
        server
            .run(
                "MCP tools/call get_profile (wrk)",
                connections,
                &wrk::tool_call("get_profile", json!({})),
            )
            .await;
        let arguments = json!({"title": "Bench", "due_at": "2027-03-01T09:00"});
        // Core runs in this process, and wrk is the only client while it runs.
        let spent = cpu_seconds("self") + cpu_seconds(gateway);
        let created = server
            .run(
                "MCP tools/call create_event (wrk)",
                connections,
                &wrk::tool_call("create_event", arguments),
            )
            .await;
        let spent = cpu_seconds("self") + cpu_seconds(gateway) - spent;
        println!(
            "CPU per create_event, gateway and core together, at {connections} connection(s): {:.0} µs ({} calls)",
            spent / created.requests.max(1) as f64 * 1e6,
            created.requests
        );
        answered += created.requests;
        rates[index] = created.per_second;
        println!(
            "create_event at {connections} connection(s): {:.0} % of ping",
            created.per_second / ping.per_second * 100.0
        );
    }
    let mut inbox: Inbox = core.agent(token);
    let (mut stored, mut after) = (0, None);
    loop {
        let page = inbox
            .list_events(ListEventsRequest { limit: Some(5_000), after, ..Default::default() })
            .await
            .unwrap()
            .into_inner();
        stored += page.events.len() as u64;
        match page.next {
            Some(next) => after = Some(next),
            None => break,
        }
    }
    assert!(
        stored >= answered,
        "{answered} create_event calls were answered, {stored} events stored"
    );
    println!("{stored} events stored for {answered} answered create_event calls");
    rates[1]
}

/// The peer: the official TypeScript reference server's `echo` tool.
async fn bench_everything(script: &str) -> Option<f64> {
    let port = free_port();
    let mut server = tokio::process::Command::new("node")
        .arg(script)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("node starts the reference server");
    let pid = server.id().unwrap();
    wait_for_port(port).await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    println!("\nPeer: @modelcontextprotocol/server-everything, echo");
    println!("reference server resident memory, idle: {} KiB", resident_kib(pid, "VmRSS:"));
    for (sessions_count, calls) in [(1, CALLS_ALONE), (16, CALLS_EACH_OF_16)] {
        let clients = sessions(&url, None, sessions_count).await;
        measure(clients, calls, |client: Arc<Client>, index| {
            let arguments = json!({"message": format!("hello {index}")});
            async move { call(&client, "echo", arguments).await }
        })
        .await
        .print("MCP tools/call echo (reference server)", sessions_count);
        let clients = sessions(&url, None, sessions_count).await;
        measure(clients, calls, |client: Arc<Client>, _| async move {
            client
                .send_request(ClientRequest::PingRequest(PingRequest::default()))
                .await
                .expect("ping is answered");
        })
        .await
        .print("MCP ping (reference server)", sessions_count);
    }
    let echoed = if wrk::available().await {
        println!("\nPeer driven by wrk");
        let server = wrk::Server { url: &url, token: None };
        let mut rate = 0.0;
        for connections in [1, 16] {
            rate = server
                .run(
                    "MCP tools/call echo (wrk, reference server)",
                    connections,
                    &wrk::tool_call("echo", json!({"message": "hello"})),
                )
                .await
                .per_second;
            server.run("MCP ping (wrk, reference server)", connections, &wrk::ping()).await;
        }
        Some(rate)
    } else {
        None
    };
    println!(
        "reference server resident memory after the load: {} KiB now, {} KiB at its peak",
        resident_kib(pid, "VmRSS:"),
        resident_kib(pid, "VmHWM:")
    );
    let _ = server.start_kill();
    let _ = server.wait().await;
    echoed
}

#[tokio::main]
async fn main() {
    let filter: Vec<String> =
        std::env::args().skip(1).filter(|arg| !arg.starts_with('-')).collect();
    let wants = |group: &str| {
        filter.is_empty() || filter.iter().any(|wanted| group.contains(wanted.as_str()))
    };
    let created = if wants("hado") { bench_hado(Backend::Sqlite).await } else { None };
    if wants("postgres")
        && let Some(backend) = Backend::postgres("the MCP benchmark")
    {
        bench_hado(backend).await;
    }
    let echoed = if wants("everything") {
        match std::env::var("HADO_BENCH_EVERYTHING") {
            Ok(script) if !script.is_empty() => bench_everything(&script).await,
            _ => {
                println!(
                    "\nPeer skipped: set HADO_BENCH_EVERYTHING to the reference server's dist/index.js (npm install @modelcontextprotocol/server-everything)"
                );
                None
            }
        }
    } else {
        None
    };
    if let (Some(created), Some(echoed)) = (created, echoed) {
        println!(
            "\nwrk, 16 connections: Hado's create_event {created:.0}/s (SQLite) is {:.1}x the reference server's echo {echoed:.0}/s",
            created / echoed
        );
    }
}
