//! The inbox page and a Done click as a browser makes them, for one person
//! with 20,000 stored events, timed from the request's send to its last byte
//! and counted with core's own request counter (`hado_grpc_requests_total`
//! on its metrics endpoint, read before and after one of each).
//!
//! `hado core` and `hado gateway-http` (the release binary) run as their own
//! processes on a fresh database: a SQLite file, then a Postgres database
//! when `HADO_TEST_POSTGRES_URL` is set. Two stores of the person's 20,000:
//! most of them closed (a long history: 19,700 done or expired, 300 open),
//! and all of them open (spread over three years, as a source pushing a
//! calendar would); and, as the reference for the first, its 300 open
//! events alone. A Done click is `POST /events/<id>/done` and the page it
//! redirects to, with the cookie it sets; each click closes an event due
//! today.
//!
//! With `HADO_BENCH_BASE` naming another build's `hado` binary (such as
//! main's), that build runs beside this one, each on a database of its own
//! seeded alike, and their requests alternate one by one, so that both
//! meet the same machine; each figure is printed for both, with their
//! ratio. `HADO_BENCH_ROUNDS` sets the requests of each kind (40 unless set).
//!
//! `cargo bench -p hado --bench pages`

#![cfg(target_os = "linux")]

#[path = "../tests/common/mod.rs"]
mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use hado_proto::v1::SourceName;
use hado_proto::v1::admin_client::AdminClient;
use hado_testing::{
    ADMIN_TOKEN, Backend, Bearer, GATEWAY_TOKEN, LINK_SECRET, TestDatabase, wait_until_serving,
};
use reqwest::redirect::Policy;
use serde_json::{Value, json};

use common::{HADO, Running, STARTING, core_on, free_port};

const STORED: usize = 20_000;
/// Of a long history: what stays open.
const OPEN_IN_HISTORY: usize = 300;

/// What the person has stored.
#[derive(Clone, Copy, Debug)]
enum Store {
    /// The 300 open events of `MostlyClosed` alone: the reference a long
    /// history is measured against.
    OpenOnly,
    MostlyClosed,
    AllOpen,
}

impl Store {
    fn name(self) -> &'static str {
        match self {
            Self::OpenOnly => "300 stored, all open (the next one's open events, no history)",
            Self::MostlyClosed => "20,000 stored, 19,700 of them closed",
            Self::AllOpen => "20,000 stored, all open",
        }
    }

    fn stored(self) -> usize {
        match self {
            Self::OpenOnly => OPEN_IN_HISTORY,
            Self::MostlyClosed | Self::AllOpen => STORED,
        }
    }
}

/// One build's `hado core` and `hado gateway-http` on a database of its own.
struct Build {
    name: &'static str,
    _processes: Vec<Running>,
    metrics: String,
    web: String,
    /// The events due today that the Done clicks close, one each.
    today: Vec<i64>,
    pages: Vec<Duration>,
    clicks: Vec<Duration>,
    page_calls: BTreeMap<String, u64>,
    click_calls: BTreeMap<String, u64>,
}

fn spawn(binary: &str, role: &str, folder: &Path, environment: &[(&str, String)]) -> Running {
    let log = std::fs::File::create(folder.join(format!("{role}.log"))).unwrap();
    let mut command = std::process::Command::new(binary);
    command.arg(role).current_dir(folder).stdout(std::process::Stdio::null()).stderr(log);
    for variable in ["HADO_LOCAL_USER", "HADO_DATABASE_URL", "HADO_CORE_URL", "HADO_METRICS_ADDR"] {
        command.env_remove(variable);
    }
    for (name, value) in environment {
        command.env(name, value);
    }
    Running(command.spawn().expect("hado starts"))
}

/// Core's count of each `hado.v1` method it answered.
async fn calls(client: &reqwest::Client, metrics: &str) -> BTreeMap<String, u64> {
    let text = client.get(metrics).send().await.unwrap().text().await.unwrap();
    let mut counted = BTreeMap::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix(r#"hado_grpc_requests_total{method="/hado.v1."#) {
            let method = rest.split('"').next().unwrap().to_owned();
            *counted.entry(method).or_default() +=
                rest.rsplit(' ').next().unwrap().parse::<u64>().unwrap();
        }
    }
    counted
}

fn made(before: &BTreeMap<String, u64>, after: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    after
        .iter()
        .map(|(method, count)| (method.clone(), count - before.get(method).copied().unwrap_or(0)))
        .filter(|(_, count)| *count > 0)
        .collect()
}

/// The person's events: `store`'s 20,000, and `clicks` more due today.
fn events(store: Store, clicks: usize) -> Vec<Value> {
    // Days from the person's today (UTC, the deployment's default zone).
    let today = chrono::Utc::now().date_naive();
    let day = |offset: i64| (today + chrono::Duration::days(offset)).format("%Y-%m-%d").to_string();
    let mut events = Vec::with_capacity(store.stored() + clicks);
    for index in 0..store.stored() {
        let event = match store {
            Store::MostlyClosed if index >= OPEN_IN_HISTORY => {
                json!({"ref": format!("old-{index}"), "title": format!("Done long ago {index}"), "due_at": day(-1 - (index % 700) as i64), "after_due": "expire"})
            }
            // Open: a few overdue, then spread over what follows.
            _ => {
                let offset = if index < 8 { -1 - index as i64 } else { (index % 1100) as i64 };
                json!({"ref": format!("open-{index}"), "title": format!("Open {index}"), "subtitle": "From the benchmark", "due_at": day(offset)})
            }
        };
        events.push(event);
    }
    for index in 0..clicks {
        events.push(json!({"ref": format!("click-{index}"), "title": format!("Today {index}"), "due_at": day(0)}));
    }
    for event in &mut events {
        event["user"] = json!("anna");
    }
    events
}

async fn start(
    name: &'static str,
    binary: &str,
    database: &str,
    store: Store,
    clicks: usize,
    folder: &Path,
    client: &reqwest::Client,
) -> Build {
    let folder = folder.join(name);
    std::fs::create_dir_all(&folder).unwrap();
    let (grpc, metrics, web) = (free_port(), free_port(), free_port());
    let core = spawn(
        binary,
        "core",
        &folder,
        &[
            ("HADO_DATABASE_URL", database.to_owned()),
            ("HADO_GRPC_ADDR", format!("127.0.0.1:{grpc}")),
            ("HADO_METRICS_ADDR", format!("127.0.0.1:{metrics}")),
            ("HADO_ADMIN_TOKEN", ADMIN_TOKEN.into()),
            ("HADO_GATEWAY_TOKEN", GATEWAY_TOKEN.into()),
            ("HADO_SECRET", LINK_SECRET.into()),
            ("HADO_DEFAULT_TZ", "UTC".into()),
        ],
    );
    wait_until_serving(core_on(grpc), STARTING).await;
    let gateway = spawn(
        binary,
        "gateway-http",
        &folder,
        &[
            ("HADO_CORE_URL", format!("http://127.0.0.1:{grpc}")),
            ("HADO_HTTP_ADDR", format!("127.0.0.1:{web}")),
            ("HADO_GATEWAY_TOKEN", GATEWAY_TOKEN.into()),
            ("HADO_LOCAL_USER", "anna".into()),
        ],
    );
    let web = format!("http://127.0.0.1:{web}");
    let deadline = Instant::now() + STARTING;
    while !client
        .get(format!("{web}/up"))
        .send()
        .await
        .is_ok_and(|reply| reply.status().is_success())
    {
        assert!(Instant::now() < deadline, "{name}'s gateway did not come up");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut admin = AdminClient::with_interceptor(core_on(grpc), Bearer::new(ADMIN_TOKEN, None));
    let token = admin.create_source(SourceName { name: "bench".into() }).await.unwrap();
    let token = token.into_inner().token;
    for batch in events(store, clicks).chunks(1000) {
        let pushed = client
            .post(format!("{web}/api/events"))
            .bearer_auth(&token)
            .json(&json!({ "events": batch }))
            .send()
            .await
            .unwrap();
        assert!(pushed.status().is_success(), "{name}: {}", pushed.text().await.unwrap());
    }
    let refs: String = (0..clicks).map(|index| format!("&ref=click-{index}")).collect();
    let listed: Value = client
        .get(format!("{web}/api/events?user=anna{refs}"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let today: Vec<i64> = listed["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|event| event["id"].as_i64().unwrap())
        .collect();
    assert_eq!(today.len(), clicks);
    Build {
        name,
        _processes: vec![core, gateway],
        metrics: format!("http://127.0.0.1:{metrics}/metrics"),
        web,
        today,
        pages: Vec::new(),
        clicks: Vec::new(),
        page_calls: BTreeMap::new(),
        click_calls: BTreeMap::new(),
    }
}

/// The inbox page: its time, and its size.
async fn page(client: &reqwest::Client, build: &Build, cookie: Option<&str>) -> (Duration, usize) {
    let started = Instant::now();
    let mut request = client.get(format!("{}/", build.web));
    if let Some(cookie) = cookie {
        request = request.header("cookie", cookie);
    }
    let reply = request.send().await.unwrap();
    assert!(reply.status().is_success(), "{}: GET / {}", build.name, reply.status());
    let bytes = reply.bytes().await.unwrap().len();
    (started.elapsed(), bytes)
}

/// Done on `id` and the page it leads to, as a browser follows the redirect.
async fn click(client: &reqwest::Client, build: &Build, id: i64) -> Duration {
    let started = Instant::now();
    let done = client
        .post(format!("{}/events/{id}/done", build.web))
        .header("sec-fetch-site", "same-origin")
        .send()
        .await
        .unwrap();
    assert_eq!(done.status().as_u16(), 303, "{}: Done", build.name);
    let cookie =
        done.headers()["set-cookie"].to_str().unwrap().split(';').next().unwrap().to_owned();
    let (_, _) = page(client, build, Some(&cookie)).await;
    started.elapsed()
}

fn p50_p99(samples: &[Duration]) -> (f64, f64) {
    let mut sorted = samples.to_vec();
    sorted.sort();
    let at = |share: usize| {
        sorted[(sorted.len() * share / 100).min(sorted.len() - 1)].as_secs_f64() * 1e3
    };
    (at(50), at(99))
}

fn total(calls: &BTreeMap<String, u64>) -> u64 {
    calls.values().sum()
}

async fn measure(backend: &Backend, store: Store, base: Option<&str>, rounds: usize) {
    let client = reqwest::Client::builder().redirect(Policy::none()).build().unwrap();
    let folder = tempfile::tempdir().unwrap();
    let mut databases = Vec::new();
    let mut builds = Vec::new();
    let binaries: Vec<(&'static str, &str)> =
        std::iter::once(("this build", HADO)).chain(base.map(|base| ("base", base))).collect();
    for (name, binary) in binaries {
        let database = TestDatabase::create(backend).await;
        let clicks = rounds + 1;
        builds
            .push(start(name, binary, &database.url, store, clicks, folder.path(), &client).await);
        databases.push(database);
    }
    // One of each, counted, and a warm-up.
    for build in &mut builds {
        let before = calls(&client, &build.metrics).await;
        page(&client, build, None).await;
        build.page_calls = made(&before, &calls(&client, &build.metrics).await);
        let before = calls(&client, &build.metrics).await;
        let id = build.today.pop().unwrap();
        click(&client, build, id).await;
        build.click_calls = made(&before, &calls(&client, &build.metrics).await);
    }
    // The builds take turns, request by request.
    let mut bytes = vec![0; builds.len()];
    for _ in 0..rounds {
        for (build, bytes) in builds.iter_mut().zip(&mut bytes) {
            let (took, size) = page(&client, build, None).await;
            build.pages.push(took);
            *bytes = size;
        }
    }
    for _ in 0..rounds {
        for build in &mut builds {
            let id = build.today.pop().unwrap();
            let took = click(&client, build, id).await;
            build.clicks.push(took);
        }
    }
    let backend_name = match backend {
        Backend::Sqlite => "SQLite",
        Backend::Postgres(_) => "Postgres",
    };
    println!("\n{backend_name}, {} ({rounds} of each, taking turns)", store.name());
    for (build, bytes) in builds.iter().zip(&bytes) {
        let ((page50, page99), (click50, click99)) =
            (p50_p99(&build.pages), p50_p99(&build.clicks));
        println!(
            "  {:<10}  GET /  p50 {page50:>7.2} ms  p99 {page99:>7.2} ms  {:>4} KiB  {} gRPC calls {:?}",
            build.name,
            bytes / 1024,
            total(&build.page_calls),
            build.page_calls,
        );
        println!(
            "  {:<10}  Done and its page  p50 {click50:>7.2} ms  p99 {click99:>7.2} ms  {} gRPC calls {:?}",
            build.name,
            total(&build.click_calls),
            build.click_calls,
        );
    }
    if let [this, base] = builds.as_slice() {
        let ratio = |this: &[Duration], base: &[Duration]| p50_p99(base).0 / p50_p99(this).0;
        println!(
            "  base / this build, p50: GET / {:.2}x, Done and its page {:.2}x",
            ratio(&this.pages, &base.pages),
            ratio(&this.clicks, &base.clicks),
        );
    }
    drop(builds);
    for database in databases {
        database.drop_now().await;
    }
}

#[tokio::main]
async fn main() {
    hado_core::install_tls_provider();
    let base = std::env::var("HADO_BENCH_BASE").ok();
    let rounds =
        std::env::var("HADO_BENCH_ROUNDS").ok().and_then(|text| text.parse().ok()).unwrap_or(40);
    let mut backends = vec![Backend::Sqlite];
    backends.extend(Backend::postgres("pages"));
    for backend in &backends {
        for store in [Store::OpenOnly, Store::MostlyClosed, Store::AllOpen] {
            measure(backend, store, base.as_deref(), rounds).await;
        }
    }
}
