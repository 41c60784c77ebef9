//! The storage drills, as an operator meets them: core and both gateways as
//! separate `hado` processes on loopback while their storage breaks under
//! them and comes back.
//!
//! - A full disk (SQLite on a small tmpfs; mounting one needs root, so the
//!   drill is skipped, visibly, without it): writes fail fast with 503 and
//!   `Retry-After` (UNAVAILABLE over gRPC), health goes NOT_SERVING and
//!   `/up` 503, and once space is freed both recover by themselves.
//! - Storage that goes away (Postgres behind a loopback relay the test cuts
//!   and restores, as a restart of Postgres looks to core): every call is
//!   answered within a few seconds, 503 with `Retry-After` over REST,
//!   UNAVAILABLE over gRPC, a JSON-RPC error that says to retry over MCP;
//!   health follows; when the database is back, nothing needs a restart.
//!   The same when the relay goes silent instead: connections hang, as to
//!   a host gone without a word.
//!
//! In both, every write a client saw acknowledged is stored afterwards.

#![cfg(target_os = "linux")]

mod common;

use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

use common::{HADO, Running, STARTING, alive, core_on, free_port, spawn};
use hado_proto::v1;
use hado_testing::wait_until_serving;
use hado_testing::{Backend, TestDatabase, source_event, tool_available};

const ADMIN_TOKEN: &str = "admin-secret-for-the-storage-drills-0123456789";
const GATEWAY_TOKEN: &str = "gateway-secret-for-the-storage-drills-0123456789";
const LINK_SECRET: &str = "link-secret-for-the-storage-drills-0123456789ab";
const DUE: &str = "2031-03-14";
/// The longest a call may take to be answered while storage is broken.
const FAST: Duration = Duration::from_secs(4);
/// The longest health may take to follow storage, either way.
const HEALTH_FOLLOWS: Duration = Duration::from_secs(10);

/// Core, gateway-http and gateway-mcp on `database`, with a source's token.
struct Stack {
    core: Running,
    http: Running,
    mcp: Running,
    grpc_port: u16,
    base: String,
    mcp_url: String,
    client: reqwest::Client,
    source_token: String,
    agent_token: String,
    acknowledged: Vec<String>,
}

impl Stack {
    async fn start(folder: &Path, database: &str) -> Self {
        hado_core::install_tls_provider();
        let (grpc_port, http_port, mcp_port) = (free_port(), free_port(), free_port());
        let core_url = format!("http://127.0.0.1:{grpc_port}");
        let core = spawn(
            "core",
            folder,
            &[
                ("HADO_DATABASE_URL", database.to_owned()),
                ("HADO_GRPC_ADDR", format!("127.0.0.1:{grpc_port}")),
                ("HADO_ADMIN_TOKEN", ADMIN_TOKEN.into()),
                ("HADO_GATEWAY_TOKEN", GATEWAY_TOKEN.into()),
                ("HADO_SECRET", LINK_SECRET.into()),
            ],
        );
        let http = spawn(
            "gateway-http",
            folder,
            &[
                ("HADO_HTTP_ADDR", format!("127.0.0.1:{http_port}")),
                ("HADO_CORE_URL", core_url.clone()),
                ("HADO_GATEWAY_TOKEN", GATEWAY_TOKEN.into()),
            ],
        );
        let mcp = spawn(
            "gateway-mcp",
            folder,
            &[
                ("HADO_MCP_ADDR", format!("127.0.0.1:{mcp_port}")),
                ("HADO_CORE_URL", core_url.clone()),
            ],
        );
        let client = reqwest::Client::builder().timeout(Duration::from_secs(20)).build().unwrap();
        let base = format!("http://127.0.0.1:{http_port}");
        let mut stack = Self {
            core,
            http,
            mcp,
            grpc_port,
            base,
            mcp_url: format!("http://127.0.0.1:{mcp_port}/mcp"),
            client,
            source_token: String::new(),
            agent_token: String::new(),
            acknowledged: Vec::new(),
        };
        stack.wait_for_up(StatusCode::OK, Duration::from_secs(60)).await;
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
        let token = |output: String, prefix: &str| {
            output
                .split_whitespace()
                .find(|word| word.starts_with(prefix))
                .expect("a token")
                .to_owned()
        };
        stack.source_token = token(admin(&["source", "create", "drill"]), "hado_src_");
        stack.agent_token = token(admin(&["agent-token", "anna"]), "hado_agent_");
        stack
    }

    /// Waits until `/up` answers `status`; how long that took.
    async fn wait_for_up(&self, status: StatusCode, within: Duration) -> Duration {
        let started = Instant::now();
        while started.elapsed() < within {
            if self
                .client
                .get(format!("{}/up", self.base))
                .send()
                .await
                .is_ok_and(|response| response.status() == status)
            {
                return started.elapsed();
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("/up did not answer {status} within {within:?}");
    }

    /// gateway-mcp's `/up` says the same as gateway-http's.
    async fn assert_mcp_up_says(&self, status: StatusCode) {
        let answered = self.client.get(self.mcp_url.replace("/mcp", "/up")).send().await.unwrap();
        assert_eq!(answered.status(), status, "gateway-mcp's /up");
    }

    /// Pushes one batch of `size` events over REST; the status, its
    /// `Retry-After`, and how long the answer took. Acknowledged refs are kept.
    async fn push(&mut self, label: &str, size: usize) -> (StatusCode, Option<String>, Duration) {
        let refs: Vec<String> =
            (0..size).map(|item| format!("{label}-{}-{item}", self.acknowledged.len())).collect();
        let events: Vec<Value> = refs
            .iter()
            .map(|source_ref| json!({"user": "anna", "ref": source_ref, "title": format!("Drill {source_ref} {}", "x".repeat(150)), "due_at": DUE}))
            .collect();
        let started = Instant::now();
        let response = self
            .client
            .post(format!("{}/api/events", self.base))
            .bearer_auth(&self.source_token)
            .json(&json!({ "events": events }))
            .send()
            .await
            .unwrap();
        let took = started.elapsed();
        let status = response.status();
        let retry_after =
            response.headers().get("retry-after").map(|value| value.to_str().unwrap().to_owned());
        if status == StatusCode::OK {
            self.acknowledged.extend(refs);
        }
        (status, retry_after, took)
    }

    /// One gRPC upsert straight to core; its status code and how long it took.
    async fn grpc_push(&self) -> (tonic::Code, Duration) {
        let channel =
            tonic::transport::Endpoint::from_shared(format!("http://127.0.0.1:{}", self.grpc_port))
                .unwrap()
                .connect()
                .await
                .unwrap();
        let token: tonic::metadata::MetadataValue<_> =
            format!("Bearer {}", self.source_token).parse().unwrap();
        let mut ingest = v1::ingest_client::IngestClient::with_interceptor(
            channel,
            move |mut request: tonic::Request<()>| {
                request.metadata_mut().insert("authorization", token.clone());
                Ok(request)
            },
        );
        let event = source_event("anna", "grpc-drill", "gRPC drill", DUE);
        let started = Instant::now();
        let code = match ingest.upsert_events(v1::UpsertEventsRequest { events: vec![event] }).await
        {
            Ok(_) => tonic::Code::Ok,
            Err(status) => status.code(),
        };
        (code, started.elapsed())
    }

    /// One MCP tool call that writes; the JSON-RPC reply and how long it took.
    async fn mcp_create(&self) -> (Value, Duration) {
        let request = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "create_event", "arguments": {"title": "MCP drill", "due_at": DUE}}});
        let started = Instant::now();
        let response = self
            .client
            .post(&self.mcp_url)
            .bearer_auth(&self.agent_token)
            .header("accept", "application/json, text/event-stream")
            .json(&request)
            .send()
            .await
            .unwrap();
        (response.json().await.unwrap(), started.elapsed())
    }

    /// Every acknowledged ref is stored.
    async fn assert_nothing_lost(&self) {
        let mut stored = std::collections::HashSet::new();
        for chunk in self.acknowledged.chunks(200) {
            let query: String =
                chunk.iter().map(|source_ref| format!("&ref={source_ref}")).collect();
            let listed: Value = self
                .client
                .get(format!("{}/api/events?user=anna{query}", self.base))
                .bearer_auth(&self.source_token)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            let events = listed["events"]
                .as_array()
                .unwrap_or_else(|| panic!("the source's events are listed: {listed}"));
            stored
                .extend(events.iter().filter_map(|event| event["ref"].as_str().map(str::to_owned)));
        }
        let lost: Vec<&String> =
            self.acknowledged.iter().filter(|source_ref| !stored.contains(*source_ref)).collect();
        assert!(
            lost.is_empty(),
            "{} of {} acknowledged events were lost: {lost:?}",
            lost.len(),
            self.acknowledged.len()
        );
    }

    fn stop(self) {
        for process in [self.core, self.http, self.mcp] {
            process.stop();
        }
    }
}

/// Asserts what a broken storage must answer over each door: REST 503 with
/// `Retry-After`, gRPC UNAVAILABLE, MCP a JSON-RPC error that says to retry;
/// each within [`FAST`].
async fn assert_fails_fast(stack: &mut Stack, label: &str) {
    let (status, retry_after, took) = stack.push(label, 20).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "REST while storage is broken");
    assert!(retry_after.is_some(), "a 503 says when to retry");
    assert!(took < FAST, "REST answered after {took:?}");
    let (code, took) = stack.grpc_push().await;
    assert_eq!(code, tonic::Code::Unavailable, "gRPC while storage is broken");
    assert!(took < FAST, "gRPC answered after {took:?}");
    let (reply, took) = stack.mcp_create().await;
    let message = reply["error"]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("MCP answers a JSON-RPC error: {reply}"));
    assert!(message.contains("retry") || message.contains("try again"), "{reply}");
    assert!(reply["error"]["data"]["retry_after"].is_number(), "{reply}");
    assert!(took < FAST, "MCP answered after {took:?}");
}

/// A tmpfs of `size` mounted on `folder` while it lives.
struct Tmpfs(std::path::PathBuf);

impl Tmpfs {
    fn mount(folder: &Path, size: &str) -> Option<Self> {
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(folder)
            .output()
            .ok()?;
        mounted.status.success().then(|| Self(folder.to_owned()))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).output();
    }
}

/// Writes zeros to `file` until the file system is full.
fn fill(file: &Path) {
    use std::io::Write;
    let mut filler = std::fs::File::create(file).unwrap();
    let block = vec![0u8; 64 * 1024];
    while filler.write_all(&block).is_ok() {}
    let small = vec![0u8; 512];
    while filler.write_all(&small).is_ok() {}
    let _ = filler.sync_all();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_fails_writes_fast_and_recovers_by_itself() {
    let test = "storage_faults::a_full_disk_fails_writes_fast_and_recovers_by_itself";
    let folder = tempfile::tempdir().unwrap();
    let disk = folder.path().join("disk");
    std::fs::create_dir(&disk).unwrap();
    let mounted = Tmpfs::mount(&disk, "8m");
    if !tool_available(test, mounted.is_some(), "root, to mount a small tmpfs for the database") {
        return;
    }
    let mut stack =
        Stack::start(folder.path(), &format!("sqlite://{}/hado.db", disk.display())).await;
    for round in 0..5 {
        assert_eq!(stack.push(&format!("before{round}"), 50).await.0, StatusCode::OK);
    }

    fill(&disk.join("filler"));
    // The first writes may still fit in pages SQLite already has; then they fail.
    let mut refused = None;
    for round in 0..200 {
        let (status, retry_after, took) = stack.push(&format!("full{round}"), 50).await;
        assert!(took < FAST, "a write on a full disk was answered after {took:?}");
        if status == StatusCode::SERVICE_UNAVAILABLE {
            assert!(retry_after.is_some(), "a 503 says when to retry");
            refused = Some(round);
            break;
        }
        assert_eq!(status, StatusCode::OK, "a write either succeeds or is refused as unavailable");
    }
    assert!(refused.is_some(), "writes never failed on a full disk");
    let down_after = stack.wait_for_up(StatusCode::SERVICE_UNAVAILABLE, HEALTH_FOLLOWS).await;
    stack.assert_mcp_up_says(StatusCode::SERVICE_UNAVAILABLE).await;
    assert_fails_fast(&mut stack, "full").await;
    // Reads still work.
    let listed = stack
        .client
        .get(format!("{}/api/events?user=anna&ref=before0-0-0", stack.base))
        .bearer_auth(&stack.source_token)
        .send()
        .await
        .unwrap();
    assert_eq!(listed.status(), StatusCode::OK, "reads go on while the disk is full");

    std::fs::remove_file(disk.join("filler")).unwrap();
    let up_after = stack.wait_for_up(StatusCode::OK, HEALTH_FOLLOWS).await;
    stack.assert_mcp_up_says(StatusCode::OK).await;
    let mut recovered = false;
    for round in 0..50 {
        if stack.push(&format!("after{round}"), 50).await.0 == StatusCode::OK {
            recovered = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(recovered, "writes did not succeed again once space was back");
    assert_eq!(stack.grpc_push().await.0, tonic::Code::Ok);
    assert!(stack.mcp_create().await.0["result"]["structuredContent"]["id"].is_number());
    stack.assert_nothing_lost().await;
    eprintln!(
        "full-disk drill: {} events acknowledged; /up said 503 {down_after:?} after the first refusal and 200 {up_after:?} after space was freed",
        stack.acknowledged.len()
    );
    stack.stop();
    drop(mounted);
}

/// A loopback relay in front of Postgres that the test can cut (every
/// connection dropped, new ones refused) and restore, as a restart of the
/// database looks to core.
struct Relay {
    port: u16,
    upstream: String,
    tasks: Arc<Mutex<Vec<JoinHandle<()>>>>,
    /// While true, nothing is relayed and nothing is closed: what a host
    /// that went away, or a network that drops packets, looks like.
    silent: tokio::sync::watch::Sender<bool>,
    /// The client ends of the connections silenced, kept open.
    held: Arc<Mutex<Vec<TcpStream>>>,
}

impl Relay {
    /// A relay to `database`'s Postgres that refuses connections until
    /// [`Relay::restore`], and the database's URL through it.
    fn closed(database: &TestDatabase) -> (Self, String) {
        let port = free_port();
        let (before_host, name) = database.url.rsplit_once('/').unwrap();
        let upstream = before_host
            .rsplit_once('@')
            .map_or(before_host, |(_, host)| host)
            .trim_start_matches("postgres://")
            .to_owned();
        let upstream = if upstream.contains(':') { upstream } else { format!("{upstream}:5432") };
        let user = before_host
            .trim_start_matches("postgres://")
            .split_once('@')
            .map_or("postgres", |(user, _)| user);
        (
            Self {
                port,
                upstream,
                tasks: Arc::default(),
                silent: tokio::sync::watch::Sender::new(false),
                held: Arc::default(),
            },
            format!("postgres://{user}@127.0.0.1:{port}/{name}"),
        )
    }

    async fn restore(&self) {
        let listener = TcpListener::bind(("127.0.0.1", self.port)).await.unwrap();
        let (upstream, tasks) = (self.upstream.clone(), self.tasks.clone());
        let (silent, held) = (self.silent.clone(), self.held.clone());
        let accepting = tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                if *silent.borrow() {
                    held.lock().unwrap().push(client);
                    continue;
                }
                let (upstream, held) = (upstream.clone(), held.clone());
                let mut silenced = silent.subscribe();
                let pipe = tokio::spawn(async move {
                    let Ok(mut server) = TcpStream::connect(&upstream).await else { return };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
                        _ = silenced.wait_for(|silent| *silent) => held.lock().unwrap().push(client),
                    }
                });
                tasks.lock().unwrap().push(pipe);
            }
        });
        self.tasks.lock().unwrap().push(accepting);
    }

    /// Stops relaying without closing anything: every connection open, and
    /// every one opened from now, is accepted and never answered.
    fn silence(&self) {
        self.silent.send_replace(true);
    }

    /// Relays again; the connections silenced are closed, as a network that
    /// comes back finds them reset.
    fn speak(&self) {
        self.silent.send_replace(false);
        self.held.lock().unwrap().clear();
    }

    fn cut(&self) {
        for task in self.tasks.lock().unwrap().drain(..) {
            task.abort();
        }
    }
}

/// Compose starts core and Postgres together, and its `depends_on` health
/// condition is not honoured everywhere (podman-compose on Podman 4): core
/// waits for a database that does not answer yet instead of exiting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn core_waits_for_a_postgres_that_is_not_up_yet() {
    let Some(backend) =
        Backend::postgres("storage_faults::core_waits_for_a_postgres_that_is_not_up_yet")
    else {
        return;
    };
    let database = TestDatabase::create(&backend).await;
    let (relay, url) = Relay::closed(&database);
    let folder = tempfile::tempdir().unwrap();
    let port = free_port();
    let core = spawn(
        "core",
        folder.path(),
        &[
            ("HADO_DATABASE_URL", url),
            ("HADO_GRPC_ADDR", format!("127.0.0.1:{port}")),
            ("HADO_ADMIN_TOKEN", ADMIN_TOKEN.into()),
            ("HADO_GATEWAY_TOKEN", GATEWAY_TOKEN.into()),
            ("HADO_SECRET", LINK_SECRET.into()),
        ],
    );
    let log = || std::fs::read_to_string(folder.path().join("core.log")).unwrap_or_default();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !log().contains("waiting for the database to answer") {
        assert!(Instant::now() < deadline, "core does not say it waits:\n{}", log());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // It goes on trying, and says so once a minute, not at every try.
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(log().matches("waiting for the database to answer").count(), 1, "{}", log());
    assert!(alive(core.id()), "core is still there:\n{}", log());
    relay.restore().await;
    wait_until_serving(core_on(port), STARTING).await;
    // Killed, not stopped: how core stops is other tests' business, and
    // this one only asks whether it waited.
    drop(core);
    relay.cut();
    database.drop_now().await;
}

/// A database host that does not resolve (a typo, a service not created
/// yet): core waits for it as for one that is down, and says so at once and
/// then once a minute, naming the host and the error, never the password.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn core_names_a_database_host_that_does_not_resolve_while_it_waits() {
    let folder = tempfile::tempdir().unwrap();
    let port = free_port();
    let core = spawn(
        "core",
        folder.path(),
        &[
            (
                "HADO_DATABASE_URL",
                "postgres://hado:do-not-print@no-such-host.invalid:5432/hado".to_owned(),
            ),
            ("HADO_GRPC_ADDR", format!("127.0.0.1:{port}")),
            ("HADO_ADMIN_TOKEN", ADMIN_TOKEN.into()),
            ("HADO_GATEWAY_TOKEN", GATEWAY_TOKEN.into()),
            ("HADO_SECRET", LINK_SECRET.into()),
        ],
    );
    let log = || std::fs::read_to_string(folder.path().join("core.log")).unwrap_or_default();
    let deadline = Instant::now() + Duration::from_secs(30);
    let said = loop {
        if let Some(line) =
            log().lines().find(|line| line.contains("waiting for the database")).map(str::to_owned)
        {
            break line;
        }
        assert!(Instant::now() < deadline, "core does not say it waits:\n{}", log());
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(said.contains("no-such-host.invalid:5432"), "the host is named: {said}");
    assert!(said.contains("lookup") || said.contains("resolve"), "the error is named: {said}");
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert!(alive(core.id()), "core waits:\n{}", log());
    assert_eq!(log().matches("waiting for the database").count(), 1, "once a minute:\n{}", log());
    assert!(!log().contains("do-not-print"), "no password in the log");
    // Nothing listens while core cannot serve: a gateway's call is refused
    // at once and goes to another core, instead of waiting on this one.
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err(), "core's port refuses");
    drop(core);
}

/// A stack on a database of its own through a relay, and five pushes of
/// `size` events taken.
async fn relayed(
    backend: &Backend,
    size: usize,
) -> (TestDatabase, Relay, tempfile::TempDir, Stack) {
    let database = TestDatabase::create(backend).await;
    let (relay, through_relay) = Relay::closed(&database);
    relay.restore().await;
    let folder = tempfile::tempdir().unwrap();
    let mut stack = Stack::start(folder.path(), &through_relay).await;
    for round in 0..5 {
        assert_eq!(stack.push(&format!("before{round}"), size).await.0, StatusCode::OK);
    }
    (database, relay, folder, stack)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn storage_that_goes_away_is_answered_fast_and_needs_no_restart() {
    let Some(backend) = Backend::postgres(
        "storage_faults::storage_that_goes_away_is_answered_fast_and_needs_no_restart",
    ) else {
        return;
    };
    let (database, relay, _folder, mut stack) = relayed(&backend, 50).await;

    relay.cut();
    assert_fails_fast(&mut stack, "down").await;
    let down_after = stack.wait_for_up(StatusCode::SERVICE_UNAVAILABLE, HEALTH_FOLLOWS).await;
    stack.assert_mcp_up_says(StatusCode::SERVICE_UNAVAILABLE).await;
    assert_fails_fast(&mut stack, "still-down").await;

    relay.restore().await;
    let up_after = stack.wait_for_up(StatusCode::OK, HEALTH_FOLLOWS).await;
    stack.assert_mcp_up_says(StatusCode::OK).await;
    for round in 0..5 {
        let (status, _, _) = stack.push(&format!("after{round}"), 50).await;
        assert_eq!(
            status,
            StatusCode::OK,
            "writes succeed again once the database is back, with no restart"
        );
    }
    assert_eq!(stack.grpc_push().await.0, tonic::Code::Ok);
    assert!(stack.mcp_create().await.0["result"]["structuredContent"]["id"].is_number());
    stack.assert_nothing_lost().await;
    eprintln!(
        "storage-down drill: {} events acknowledged; /up said 503 {down_after:?} after the cut and 200 {up_after:?} after the restore",
        stack.acknowledged.len()
    );
    stack.stop();
    relay.cut();
    database.drop_now().await;
}

/// How soon after the first write refused while the database is silent
/// `/up` says 503: the probe's write waits for a connection no longer than
/// the write did.
const SILENT_UP_FOLLOWS: Duration = Duration::from_secs(2);

/// A database that stops answering without a word (its host gone, a
/// network that drops packets, a container stopped before its address was
/// forgotten): connections to it hang instead of being refused. `/up` says
/// 503 within moments of the first write refused, stays so while the
/// silence lasts, and never says 200 while a write is refused; when the
/// database answers again, writes succeed with no restart. (The probe's
/// write finds no connection within the pool's 2 s and fails, as every
/// call does.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_that_goes_silent_is_reported_down_within_seconds() {
    let Some(backend) = Backend::postgres(
        "storage_faults::a_database_that_goes_silent_is_reported_down_within_seconds",
    ) else {
        return;
    };
    let (database, relay, _folder, mut stack) = relayed(&backend, 20).await;

    relay.silence();
    let (status, retry_after, took) = stack.push("silent", 5).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "a write while the database is silent");
    assert!(retry_after.is_some() && took < FAST, "answered 503 with Retry-After in {took:?}");
    let refused_at = Instant::now();
    while stack.up_status().await != StatusCode::SERVICE_UNAVAILABLE {
        assert!(
            refused_at.elapsed() < SILENT_UP_FOLLOWS,
            "/up still said 200 {SILENT_UP_FOLLOWS:?} after a write was refused by a silent database"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let followed = refused_at.elapsed();
    let watched = Instant::now();
    while watched.elapsed() < Duration::from_secs(3) {
        assert_eq!(
            stack.up_status().await,
            StatusCode::SERVICE_UNAVAILABLE,
            "/up said 200 while the database was silent"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_fails_fast(&mut stack, "silent").await;

    relay.speak();
    let up_after = stack.wait_for_up(StatusCode::OK, HEALTH_FOLLOWS).await;
    let watched = Instant::now();
    while watched.elapsed() < Duration::from_secs(2) {
        if stack.up_status().await == StatusCode::OK {
            let (status, _, _) = stack.push("answering", 1).await;
            assert_eq!(status, StatusCode::OK, "/up said 200 and a write was refused");
        }
    }
    assert!(stack.mcp_create().await.0["result"]["structuredContent"]["id"].is_number());
    stack.assert_nothing_lost().await;
    eprintln!(
        "silent-database drill: /up said 503 {followed:?} after the first refused write, and 200 {up_after:?} after the database answered again"
    );
    stack.stop();
    relay.cut();
    database.drop_now().await;
}

/// A Postgres cluster of the test's own (`initdb` and `pg_ctl` in a
/// temporary folder, on a free loopback port), which it may stop and start
/// as an operator restarts theirs; the shared cluster is never touched.
/// Runs as the `postgres` user when the test runs as root, since Postgres
/// refuses to run as root.
struct PrivatePostgres {
    bin: std::path::PathBuf,
    folder: tempfile::TempDir,
    port: u16,
}

impl PrivatePostgres {
    /// A running cluster, or `None` (said on stderr, and a failure under
    /// CI) when Postgres's server programs are not installed here.
    fn start(test: &str) -> Option<Self> {
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .ok()
            .and_then(|versions| versions.filter_map(Result::ok).map(|entry| entry.path()).max())
            .map(|version| version.join("bin"))
            .filter(|bin| bin.join("initdb").exists() && bin.join("pg_ctl").exists());
        let found = bin.is_some() && (!running_as_root() || postgres_user().is_some());
        if !tool_available(test, found, "PostgreSQL's server (apt-get install postgresql)") {
            return None;
        }
        let folder = tempfile::tempdir().unwrap();
        if let Some((uid, gid)) = running_as_root().then(postgres_user).flatten() {
            std::os::unix::fs::chown(folder.path(), Some(uid), Some(gid)).unwrap();
        }
        let cluster = Self { bin: bin.unwrap(), folder, port: free_port() };
        let data = cluster.data();
        cluster.run("initdb", &["-D", &data, "-U", "postgres", "--auth=trust", "-N"]);
        cluster.start_again();
        Some(cluster)
    }

    fn data(&self) -> String {
        self.folder.path().join("data").display().to_string()
    }

    /// `program` of Postgres's with `arguments`, as the user that owns the
    /// cluster; panics with its output when it fails.
    fn run(&self, program: &str, arguments: &[&str]) {
        let path = self.bin.join(program);
        let mut command = if running_as_root() {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(&path);
            command
        } else {
            Command::new(&path)
        };
        let output = command.args(arguments).current_dir(self.folder.path()).output().unwrap();
        assert!(
            output.status.success(),
            "{program} {arguments:?}: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }

    /// Starts the cluster and returns once it accepts connections.
    fn start_again(&self) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            self.port,
            self.folder.path().display()
        );
        let log = self.folder.path().join("postgres.log").display().to_string();
        self.run("pg_ctl", &["-D", &self.data(), "-o", &options, "-l", &log, "-w", "start"]);
    }

    /// Stops the cluster: `fast` (what a container's stop sends: every
    /// session is ended and the server shuts down cleanly) or `immediate`
    /// (as a crash: the next start recovers from the log).
    fn stop(&self, mode: &str) {
        self.run("pg_ctl", &["-D", &self.data(), "-m", mode, "-w", "stop"]);
    }

    fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }
}

impl Drop for PrivatePostgres {
    fn drop(&mut self) {
        let path = self.bin.join("pg_ctl");
        let data = self.data();
        let arguments = ["-D", data.as_str(), "-m", "immediate", "stop"];
        let _ = if running_as_root() {
            Command::new("runuser")
                .args(["-u", "postgres", "--"])
                .arg(path)
                .args(arguments)
                .output()
        } else {
            Command::new(path).args(arguments).output()
        };
    }
}

fn running_as_root() -> bool {
    nix::unistd::Uid::effective().is_root()
}

/// The `postgres` user's ids, from the password file.
fn postgres_user() -> Option<(u32, u32)> {
    let users = std::fs::read_to_string("/etc/passwd").ok()?;
    let line = users.lines().find(|line| line.starts_with("postgres:"))?;
    let fields: Vec<&str> = line.split(':').collect();
    Some((fields.get(2)?.parse().ok()?, fields.get(3)?.parse().ok()?))
}

/// How soon after Postgres accepts connections again every core must write.
const WRITES_AGAIN_WITHIN: Duration = Duration::from_secs(2);
/// How soon after a write was refused for want of storage `/up` says 503.
const UP_FOLLOWS: Duration = Duration::from_millis(500);

impl Stack {
    /// A second core on the same database, as a replica is, with its gRPC port.
    fn second_core(&self, folder: &Path, database: &str) -> (Running, u16) {
        let port = free_port();
        let folder = folder.join("second-core");
        std::fs::create_dir_all(&folder).unwrap();
        let core = spawn(
            "core",
            &folder,
            &[
                ("HADO_DATABASE_URL", database.to_owned()),
                ("HADO_GRPC_ADDR", format!("127.0.0.1:{port}")),
                ("HADO_ADMIN_TOKEN", ADMIN_TOKEN.into()),
                ("HADO_GATEWAY_TOKEN", GATEWAY_TOKEN.into()),
                ("HADO_SECRET", LINK_SECRET.into()),
            ],
        );
        (core, port)
    }

    /// Pushes one event over gRPC to the core on `port` until one is taken;
    /// how long that took.
    async fn grpc_writes_again(&mut self, port: u16) -> Duration {
        let started = Instant::now();
        let saved = self.grpc_port;
        self.grpc_port = port;
        while self.grpc_push().await.0 != tonic::Code::Ok {
            assert!(started.elapsed() < HEALTH_FOLLOWS, "the core on {port} never wrote again");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        self.grpc_port = saved;
        started.elapsed()
    }

    async fn up_status(&self) -> StatusCode {
        match self.client.get(format!("{}/up", self.base)).send().await {
            Ok(response) => response.status(),
            Err(_) => StatusCode::BAD_GATEWAY,
        }
    }
}

/// A real restart of Postgres, clean and as after a crash, with two cores
/// on it: while it is down every call is answered fast and `/up` follows
/// the first refused write at once; within two seconds of Postgres
/// accepting connections again, both cores write again; and `/up` never
/// says 200 while a write is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_postgres_takes_writes_again_on_every_core_within_two_seconds() {
    let test =
        "storage_faults::a_restarted_postgres_takes_writes_again_on_every_core_within_two_seconds";
    let Some(postgres) = PrivatePostgres::start(test) else { return };
    let folder = tempfile::tempdir().unwrap();
    let mut stack = Stack::start(folder.path(), &postgres.url()).await;
    let (second, second_port) = stack.second_core(folder.path(), &postgres.url());
    wait_until_serving(core_on(second_port), STARTING).await;
    let first_port = stack.grpc_port;
    for round in 0..3 {
        assert_eq!(stack.push(&format!("before{round}"), 20).await.0, StatusCode::OK);
    }

    for (round, mode) in ["fast", "immediate", "fast"].into_iter().enumerate() {
        postgres.stop(mode);
        // The first write refused makes /up say so at once, not a probe later.
        let (status, retry_after, took) = stack.push(&format!("down{round}"), 5).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "a write while Postgres is down");
        assert!(retry_after.is_some() && took < FAST, "answered 503 with Retry-After in {took:?}");
        let refused_at = Instant::now();
        while stack.up_status().await != StatusCode::SERVICE_UNAVAILABLE {
            assert!(
                refused_at.elapsed() < UP_FOLLOWS,
                "/up still said 200 {UP_FOLLOWS:?} after a write was refused (a {mode} stop)"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let followed = refused_at.elapsed();
        assert_fails_fast(&mut stack, &format!("still-down{round}")).await;

        postgres.start_again();
        let accepting = Instant::now();
        let (first, second_took) =
            (stack.grpc_writes_again(first_port).await, stack.grpc_writes_again(second_port).await);
        let both = accepting.elapsed();
        assert!(
            both <= WRITES_AGAIN_WITHIN,
            "after a {mode} stop, the cores wrote again {first:?} and {second_took:?} after Postgres accepted connections (both within {both:?})"
        );
        // From here on, whenever /up says 200 a write is taken.
        let watched = Instant::now();
        while watched.elapsed() < Duration::from_secs(2) {
            if stack.up_status().await == StatusCode::OK {
                let (status, _, _) = stack.push(&format!("up{round}"), 1).await;
                assert_eq!(status, StatusCode::OK, "/up said 200 and a write was refused");
            }
        }
        eprintln!(
            "restart drill ({mode} stop): /up said 503 {followed:?} after the first refused write; the cores wrote again {first:?} and {second_took:?} after Postgres accepted connections"
        );
    }
    assert!(stack.mcp_create().await.0["result"]["structuredContent"]["id"].is_number());
    stack.assert_nothing_lost().await;
    second.stop();
    stack.stop();
}
