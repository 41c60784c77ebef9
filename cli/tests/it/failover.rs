//! Three `hado core` processes on one Postgres database behind one name, as
//! `compose up --scale core=3` runs them, and a writer going through the
//! gateways' own channel (`hado_gateway::client::Core`) at a steady rate.
//! One core is killed with SIGKILL mid-load and started again, then another
//! is stopped: no write fails, and every acknowledged event is stored. A
//! SQLite file is one core's: a second `hado core` on it exits at once.

use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hado_gateway::client::{Core, Resolve};
use hado_proto::metadata::Credential;
use hado_proto::v1::ingest_client::IngestClient;
use hado_proto::v1::{IngestListRequest, UpsertEventsRequest};
use hado_testing::{ADMIN_TOKEN, Backend, GATEWAY_TOKEN, LINK_SECRET, TestDatabase, source_event};

use crate::common::{
    HADO, Running, STARTING, Signal, core_on, free_port, signal, spawn, wait_with_timeout,
};
use hado_testing::wait_until_serving;

/// How often the writer pushes one event.
const EVERY: Duration = Duration::from_millis(20);

pub(crate) fn start_core(folder: &Path, database: &str, port: u16) -> Running {
    let folder = folder.join(format!("core-{port}"));
    std::fs::create_dir_all(&folder).unwrap();
    spawn(
        "core",
        &folder,
        &[
            ("HADO_DATABASE_URL", database.to_owned()),
            ("HADO_GRPC_ADDR", format!("127.0.0.1:{port}")),
            ("HADO_ADMIN_TOKEN", ADMIN_TOKEN.into()),
            ("HADO_GATEWAY_TOKEN", GATEWAY_TOKEN.into()),
            ("HADO_SECRET", LINK_SECRET.into()),
        ],
    )
}

async fn failover(backend: Backend) {
    let database = TestDatabase::create(&backend).await;
    let folder = tempfile::tempdir().unwrap();
    let ports = [free_port(), free_port(), free_port()];
    let mut cores: Vec<Option<Running>> = Vec::new();
    // One at a time: the first runs the migrations.
    for port in ports {
        cores.push(Some(start_core(folder.path(), &database.url, port)));
        wait_until_serving(core_on(port), STARTING).await;
    }
    let output = Command::new(HADO)
        .args(["source", "create", "writer"])
        .env("HADO_CORE_URL", format!("http://127.0.0.1:{}", ports[0]))
        .env("HADO_ADMIN_TOKEN", ADMIN_TOKEN)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let token = String::from_utf8(output.stdout)
        .unwrap()
        .split_whitespace()
        .find(|word| word.starts_with("hado_src_"))
        .unwrap()
        .to_owned();

    // The name resolves to all three, as a compose network's DNS answers.
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
    let acknowledged = Arc::new(Mutex::new(Vec::<String>::new()));
    let failures = Arc::new(Mutex::new(Vec::<String>::new()));
    let longest = Arc::new(Mutex::new(Duration::ZERO));
    let writer = {
        let (stop, acknowledged, failures, longest, mut ingest) =
            (stop.clone(), acknowledged.clone(), failures.clone(), longest.clone(), ingest.clone());
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(EVERY);
            let mut index = 0;
            while !stop.load(Ordering::Relaxed) {
                ticks.tick().await;
                index += 1;
                let reference = format!("write-{index}");
                let started = Instant::now();
                let event = source_event("anna", &reference, "Steady write", "2027-01-10");
                match ingest.upsert_events(UpsertEventsRequest { events: vec![event] }).await {
                    Ok(_) => acknowledged.lock().unwrap().push(reference),
                    Err(status) => {
                        failures.lock().unwrap().push(format!("{reference}: {status:?}"))
                    }
                }
                let took = started.elapsed();
                let mut longest = longest.lock().unwrap();
                *longest = (*longest).max(took);
            }
        })
    };
    let settle = || tokio::time::sleep(Duration::from_secs(1));
    settle().await;
    // The second core dies without a word, mid-load.
    let killed = cores[1].take().unwrap();
    signal(killed.id(), Signal::SIGKILL);
    drop(killed);
    settle().await;
    settle().await;
    // It comes back on the same address and takes calls again.
    cores[1] = Some(start_core(folder.path(), &database.url, ports[1]));
    wait_until_serving(core_on(ports[1]), STARTING).await;
    settle().await;
    // The third is stopped the polite way.
    cores[2].take().unwrap().stop();
    settle().await;
    stop.store(true, Ordering::Relaxed);
    writer.await.unwrap();

    let failures = failures.lock().unwrap().clone();
    let acknowledged = acknowledged.lock().unwrap().clone();
    eprintln!(
        "{} writes acknowledged, {} failed; the longest took {:?}",
        acknowledged.len(),
        failures.len(),
        *longest.lock().unwrap()
    );
    assert!(failures.is_empty(), "writes failed while a core went away: {failures:#?}");
    assert!(acknowledged.len() > 100, "the writer kept writing ({} writes)", acknowledged.len());
    let mut ingest = ingest;
    let stored = ingest
        .list_events(IngestListRequest { user: "anna".into(), refs: Vec::new() })
        .await
        .unwrap()
        .into_inner()
        .events;
    let missing: Vec<&String> = acknowledged
        .iter()
        .filter(|reference| !stored.iter().any(|event| &event.r#ref == *reference))
        .collect();
    assert!(missing.is_empty(), "acknowledged writes are missing: {missing:?}");

    drop(core);
    for core in cores.into_iter().flatten() {
        core.stop();
    }
    database.drop_now().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_core_on_a_sqlite_file_exits_at_once_until_the_first_is_gone() {
    let folder = tempfile::tempdir().unwrap();
    let file = folder.path().join("data").join("hado.db");
    let database = format!("sqlite://{}", file.display());
    let ports = [free_port(), free_port()];
    let first = start_core(folder.path(), &database, ports[0]);
    wait_until_serving(core_on(ports[0]), STARTING).await;

    let mut second = start_core(folder.path(), &database, ports[1]);
    let status = wait_with_timeout(&mut second.0);
    let said =
        std::fs::read_to_string(folder.path().join(format!("core-{}/core.log", ports[1]))).unwrap();
    assert!(!status.success(), "the second core exits with a failure: {status}; it said {said}");
    for words in [
        &format!("another core is serving the SQLite file {}", file.display()),
        "stop that core first, or use Postgres to run several cores",
    ] {
        assert!(said.contains(words), "the second core says {words:?}; it said {said}");
    }

    // Stopped, the first leaves the file to the next; killed, so does that one.
    first.stop();
    let next = start_core(folder.path(), &database, ports[1]);
    wait_until_serving(core_on(ports[1]), STARTING).await;
    signal(next.id(), Signal::SIGKILL);
    drop(next);
    let last = start_core(folder.path(), &database, ports[0]);
    wait_until_serving(core_on(ports[0]), STARTING).await;
    last.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_through_three_cores_survive_one_killed_and_one_stopped_on_postgres() {
    if let Some(backend) =
        Backend::postgres("writes_through_three_cores_survive_one_killed_and_one_stopped")
    {
        failover(backend).await;
    }
}
