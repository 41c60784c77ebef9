//! What a rolling update does to Hado's processes, with real processes:
//! Kubernetes takes a pod out of its Service and sends it SIGTERM at about
//! the same moment, so a process told to stop must take no new work at
//! once, finish what it has, and exit within its bound (docs/operators.md,
//! "Kubernetes"). One of three cores is sent SIGTERM under a steady writer
//! going through the gateways' own channel: it must say NOT_SERVING or
//! close its port at once. Then one of two gateway-http processes behind a
//! real Caddy that, like a Service, sends only to gateways whose /up says
//! 200, under a steady writer through Caddy: the gateway must answer 503
//! on /up at once, keep serving for its drain, then close its port. No
//! write may fail, and every acknowledged one must be stored.

use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hado_gateway::client::{Core, Resolve};
use hado_proto::metadata::Credential;
use hado_proto::v1::ingest_client::IngestClient;
use hado_proto::v1::{IngestListRequest, UpsertEventsRequest};
use hado_testing::{
    ADMIN_TOKEN, Backend, GATEWAY_TOKEN, TestDatabase, runs, source_event, tool_available,
};
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};

use crate::common::{HADO, Running, STARTING, Signal, core_on, free_port, signal, spawn};
use crate::failover::start_core;
use hado_testing::wait_until_serving;

/// A core's bound from SIGTERM to its exit: calls in flight 10 s, its loops
/// 3 s, the database's close 2 s.
const CORE_BOUND: Duration = Duration::from_secs(15);
/// How soon after SIGTERM a process must take no new work.
const AT_ONCE: Duration = Duration::from_secs(1);

/// What a steady writer saw.
#[derive(Default)]
struct Seen {
    acknowledged: Vec<String>,
    failures: Vec<String>,
}

/// Writes one event every `every` with `write` until `stop`, keeping what
/// each write answered.
fn steady_writer<F, Fut>(
    every: Duration,
    stop: Arc<AtomicBool>,
    seen: Arc<Mutex<Seen>>,
    write: F,
) -> tokio::task::JoinHandle<()>
where
    F: Fn(String) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = Result<(), String>> + Send,
{
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(every);
        let mut index = 0;
        while !stop.load(Ordering::Relaxed) {
            ticks.tick().await;
            index += 1;
            let reference = format!("rolling-{index}");
            let answer = write(reference.clone()).await;
            let mut seen = seen.lock().unwrap();
            match answer {
                Ok(()) => seen.acknowledged.push(reference),
                Err(error) => seen.failures.push(format!("{reference}: {error}")),
            }
        }
    })
}

fn create_source(core_port: u16) -> String {
    let output = Command::new(HADO)
        .args(["source", "create", "rolling"])
        .env("HADO_CORE_URL", format!("http://127.0.0.1:{core_port}"))
        .env("HADO_ADMIN_TOKEN", ADMIN_TOKEN)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout)
        .unwrap()
        .split_whitespace()
        .find(|word| word.starts_with("hado_src_"))
        .unwrap()
        .to_owned()
}

/// Sends SIGTERM and returns how long the process took to exit (or panics
/// past `bound`), having checked on the way that `stopped_taking_work`
/// held within [`AT_ONCE`].
async fn terminate<F, Fut>(
    process: &mut Running,
    bound: Duration,
    stopped_taking_work: F,
) -> Duration
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let sent = Instant::now();
    signal(process.id(), Signal::SIGTERM);
    let mut refused_after = None;
    loop {
        if refused_after.is_none() && stopped_taking_work().await {
            refused_after = Some(sent.elapsed());
        }
        if let Some(status) = process.0.try_wait().unwrap() {
            let took = sent.elapsed();
            assert!(status.success(), "the process exited with {status}");
            let refused_after = refused_after.unwrap_or(took);
            assert!(
                refused_after <= AT_ONCE,
                "it took new work for {refused_after:?} after SIGTERM"
            );
            return took;
        }
        assert!(sent.elapsed() < bound, "it did not exit within {bound:?} of SIGTERM");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Whether the core on `port` takes no new call: its port is closed, or its
/// health says NOT_SERVING.
async fn core_refuses(port: u16) -> bool {
    let channel = tonic::transport::Channel::from_shared(format!("http://127.0.0.1:{port}"))
        .unwrap()
        .connect_timeout(Duration::from_millis(200));
    let Ok(channel) = channel.connect().await else { return true };
    let answer =
        HealthClient::new(channel).check(HealthCheckRequest { service: String::new() }).await;
    !answer.is_ok_and(|reply| reply.into_inner().status == ServingStatus::Serving as i32)
}

/// The refs of every event the source `token` has stored for anna, read
/// from the core on `port`.
async fn stored_refs(port: u16, token: &str) -> Vec<String> {
    let channel = tonic::transport::Channel::from_shared(format!("http://127.0.0.1:{port}"))
        .unwrap()
        .connect_lazy();
    let mut ingest = IngestClient::with_interceptor(channel, Credential::bearer(token).unwrap());
    ingest
        .list_events(IngestListRequest { user: "anna".into(), refs: Vec::new() })
        .await
        .unwrap()
        .into_inner()
        .events
        .into_iter()
        .map(|event| event.r#ref)
        .collect()
}

async fn a_core_sent_sigterm_drops_no_write(backend: Backend) {
    let database = TestDatabase::create(&backend).await;
    let folder = tempfile::tempdir().unwrap();
    let ports = [free_port(), free_port(), free_port()];
    let mut cores = Vec::new();
    for port in ports {
        cores.push(start_core(folder.path(), &database.url, port));
        wait_until_serving(core_on(port), STARTING).await;
    }
    let token = create_source(ports[0]);
    // What a liveness probe asks: the process, whatever its storage says.
    let channel = tonic::transport::Channel::from_shared(format!("http://127.0.0.1:{}", ports[0]))
        .unwrap()
        .connect_lazy();
    let liveness = HealthClient::new(channel)
        .check(HealthCheckRequest { service: "liveness".into() })
        .await
        .unwrap();
    assert_eq!(liveness.into_inner().status, ServingStatus::Serving as i32);
    let addresses: Vec<SocketAddr> =
        ports.iter().map(|port| SocketAddr::from(([127, 0, 0, 1], *port))).collect();
    let resolve: Resolve = Arc::new(move |_, _| {
        let found = addresses.clone();
        Box::pin(async move { Ok(found) })
    });
    let core =
        Core::connect_balanced("http://core:50051", resolve, Duration::from_millis(200)).unwrap();
    let ingest =
        IngestClient::with_interceptor(core.channel(), Credential::bearer(&token).unwrap());

    let stop = Arc::new(AtomicBool::new(false));
    let seen = Arc::new(Mutex::new(Seen::default()));
    let writer = {
        let ingest = ingest.clone();
        steady_writer(Duration::from_millis(20), stop.clone(), seen.clone(), move |reference| {
            let mut ingest = ingest.clone();
            async move {
                let event = source_event("anna", &reference, "Steady write", "2027-01-10");
                ingest
                    .upsert_events(UpsertEventsRequest { events: vec![event] })
                    .await
                    .map(|_| ())
                    .map_err(|status| format!("{status:?}"))
            }
        })
    };
    tokio::time::sleep(Duration::from_secs(1)).await;
    let port = ports[1];
    let took = terminate(&mut cores[1], CORE_BOUND, || core_refuses(port)).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    stop.store(true, Ordering::Relaxed);
    writer.await.unwrap();

    let Seen { acknowledged, failures } = std::mem::take(&mut *seen.lock().unwrap());
    eprintln!(
        "a core stopped {took:?} after SIGTERM; {} writes acknowledged, {} failed",
        acknowledged.len(),
        failures.len()
    );
    assert!(failures.is_empty(), "writes failed while a core stopped: {failures:#?}");
    assert!(acknowledged.len() > 50, "the writer kept writing ({})", acknowledged.len());
    let stored = stored_refs(ports[0], &token).await;
    let lost: Vec<&String> = acknowledged.iter().filter(|r| !stored.contains(r)).collect();
    assert!(lost.is_empty(), "acknowledged writes are missing: {lost:?}");

    drop(core);
    for core in cores {
        core.stop();
    }
    database.drop_now().await;
}

/// How long a gateway told to stop answers 503 on /up while it still
/// serves, before it closes its port (`HADO_DRAIN_SECONDS`).
const DRAIN: Duration = Duration::from_secs(1);

async fn a_gateway_sent_sigterm_drops_no_write(backend: Backend) {
    if !tool_available(
        "a gateway sent SIGTERM behind Caddy",
        runs("caddy", &["version"]),
        "apt-get install caddy",
    ) {
        return;
    }
    let database = TestDatabase::create(&backend).await;
    let folder = tempfile::tempdir().unwrap();
    let core_port = free_port();
    let core = start_core(folder.path(), &database.url, core_port);
    wait_until_serving(core_on(core_port), STARTING).await;
    let token = create_source(core_port);
    let gateway_ports = [free_port(), free_port()];
    let mut gateways: Vec<Running> = gateway_ports
        .iter()
        .map(|port| {
            let home = folder.path().join(format!("gateway-{port}"));
            std::fs::create_dir_all(&home).unwrap();
            spawn(
                "gateway-http",
                &home,
                &[
                    ("HADO_CORE_URL", format!("http://127.0.0.1:{core_port}")),
                    ("HADO_HTTP_ADDR", format!("127.0.0.1:{port}")),
                    ("HADO_GATEWAY_TOKEN", GATEWAY_TOKEN.into()),
                    ("HADO_DRAIN_SECONDS", DRAIN.as_secs().to_string()),
                ],
            )
        })
        .collect();

    // Caddy in front of both, as a Service in front of ready pods: it asks
    // each gateway's /up and sends only to those that answer 200, as
    // Kubernetes keeps only ready pods in a Service's endpoints.
    let caddy_port = free_port();
    let caddyfile = format!(
        "{{\n\tadmin off\n}}\nhttp://127.0.0.1:{caddy_port} {{\n\treverse_proxy 127.0.0.1:{} 127.0.0.1:{} {{\n\t\tlb_policy round_robin\n\t\tlb_try_duration 10s\n\t\tlb_try_interval 250ms\n\t\thealth_uri /up\n\t\thealth_interval 250ms\n\t\thealth_timeout 1s\n\t}}\n}}\n",
        gateway_ports[0], gateway_ports[1]
    );
    std::fs::write(folder.path().join("Caddyfile"), caddyfile).unwrap();
    let caddy = Running(
        Command::new("caddy")
            .args(["run", "--config", "Caddyfile", "--adapter", "caddyfile"])
            .current_dir(folder.path())
            .env("HOME", folder.path())
            .env("XDG_DATA_HOME", folder.path())
            .env("XDG_CONFIG_HOME", folder.path())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(folder.path().join("caddy.log")).unwrap())
            .spawn()
            .expect("caddy starts"),
    );
    let base = format!("http://127.0.0.1:{caddy_port}");
    let client = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let up = client.get(format!("{base}/up")).send().await;
        if up.is_ok_and(|reply| reply.status() == reqwest::StatusCode::OK) {
            break;
        }
        assert!(Instant::now() < deadline, "the gateways did not answer /up through Caddy");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let stop = Arc::new(AtomicBool::new(false));
    let seen = Arc::new(Mutex::new(Seen::default()));
    let writer = {
        let (client, base, token) = (client.clone(), base.clone(), token.clone());
        steady_writer(Duration::from_millis(20), stop.clone(), seen.clone(), move |reference| {
            let (client, base, token) = (client.clone(), base.clone(), token.clone());
            async move {
                let body = serde_json::json!({"events": [
                    {"user": "anna", "ref": reference, "title": "Steady write", "due_at": "2027-01-10"}
                ]});
                let reply = client
                    .post(format!("{base}/api/events"))
                    .bearer_auth(&token)
                    .json(&body)
                    .timeout(Duration::from_secs(30))
                    .send()
                    .await
                    .map_err(|error| format!("{error:?}"))?;
                match reply.status() {
                    reqwest::StatusCode::OK => Ok(()),
                    status => Err(format!("{status}: {}", reply.text().await.unwrap_or_default())),
                }
            }
        })
    };
    tokio::time::sleep(Duration::from_secs(1)).await;
    let port = gateway_ports[0];
    let up = format!("http://127.0.0.1:{port}/up");
    let took = terminate(&mut gateways[0], DRAIN + Duration::from_secs(5), || {
        let (client, up) = (client.clone(), up.clone());
        async move {
            let answer = client.get(&up).timeout(Duration::from_millis(500)).send().await;
            !answer.is_ok_and(|reply| reply.status() == reqwest::StatusCode::OK)
        }
    })
    .await;
    assert!(took >= DRAIN, "it kept serving for its drain ({took:?})");
    tokio::time::sleep(Duration::from_secs(1)).await;
    stop.store(true, Ordering::Relaxed);
    writer.await.unwrap();

    let Seen { acknowledged, failures } = std::mem::take(&mut *seen.lock().unwrap());
    eprintln!(
        "a gateway stopped {took:?} after SIGTERM behind Caddy; {} writes acknowledged, {} failed",
        acknowledged.len(),
        failures.len()
    );
    if !failures.is_empty() {
        let log = std::fs::read_to_string(folder.path().join("caddy.log")).unwrap_or_default();
        eprintln!("Caddy's log:\n{log}");
    }
    assert!(failures.is_empty(), "writes failed while a gateway stopped: {failures:#?}");
    assert!(acknowledged.len() > 50, "the writer kept writing ({})", acknowledged.len());
    let stored = stored_refs(core_port, &token).await;
    let lost: Vec<&String> = acknowledged.iter().filter(|r| !stored.contains(r)).collect();
    assert!(lost.is_empty(), "acknowledged writes are missing: {lost:?}");

    drop(caddy);
    for gateway in gateways {
        gateway.stop();
    }
    core.stop();
    database.drop_now().await;
}

hado_testing::on_both_backends!(a_gateway_sent_sigterm_drops_no_write);

/// Several cores share a database only on Postgres: a SQLite file is one
/// core's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_core_sent_sigterm_drops_no_write_on_postgres() {
    if let Some(backend) = Backend::postgres("rolling::a_core_sent_sigterm_drops_no_write") {
        a_core_sent_sigterm_drops_no_write(backend).await;
    }
}
