//! Owns `hado up`: Hado on one machine with local defaults. Core and both
//! gateways run as child processes of this one (the same binary: `hado
//! core`, `hado gateway-mcp`, `hado gateway-http`), core on an embedded
//! SQLite file, the web inbox for one local user on loopback; the secrets are
//! generated once into the data folder. Ctrl-C, SIGTERM, or any child dying
//! stops every child.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use tokio::process::Command;

use crate::settings::Settings;

/// How long core may take to answer its health check at start.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a child may take to stop after SIGTERM before it is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(10);

struct Process {
    name: &'static str,
    child: tokio::process::Child,
}

/// One child of `hado up`: `hado <role>` with `set` given, each of
/// `defaults` given unless the operator set it, its own metrics address,
/// and when it counts as started.
struct Launch {
    role: &'static str,
    set: Vec<(&'static str, String)>,
    defaults: Vec<(String, Option<String>)>,
    metrics: &'static str,
    ready: Ready,
}

/// When a child has started.
enum Ready {
    /// Its gRPC health check answers SERVING.
    Healthy,
    /// It accepts connections on this address.
    Listening(String),
}

impl Launch {
    /// Starts the child, adds it to `processes` and waits until it is ready.
    async fn start(
        self,
        executable: &std::path::Path,
        settings: &Settings,
        processes: &mut Vec<Process>,
    ) -> anyhow::Result<()> {
        let mut command = Command::new(executable);
        command.arg(self.role).envs(self.set).kill_on_drop(true);
        for (variable, value) in self.defaults {
            let unset = std::env::var(&variable).map(|set| set.trim().is_empty()).unwrap_or(true);
            if let Some(value) = value.filter(|_| unset) {
                command.env(variable, value);
            }
        }
        metrics_address(&mut command, self.metrics);
        let child = command.spawn().with_context(|| format!("cannot start {}", self.role))?;
        processes.push(Process { name: self.role, child });
        let process = processes.last_mut().expect("just pushed");
        match self.ready {
            Ready::Healthy => wait_until_healthy(settings, process).await,
            Ready::Listening(addr) => wait_until_listening(&addr, process).await,
        }
    }
}

pub(crate) async fn run(settings: &Settings) -> anyhow::Result<ExitCode> {
    let grpc_addr = settings.grpc_addr();
    let http_addr = settings.http_addr();
    // A port another program holds would only show when a child failed
    // after the banner; say so before anything starts or is written.
    for (flag, addr) in [
        ("--grpc-addr", &grpc_addr),
        ("--mcp-addr", &settings.mcp_addr()),
        ("--http-addr", &http_addr),
    ] {
        ensure_free(flag, addr)?;
    }
    let secrets = settings.ensure_secrets()?;
    let executable =
        std::env::current_exe().context("cannot find the hado executable to start core")?;
    let database_url = settings.database_url();
    let launches = launches(settings, &secrets);
    // Ctrl-C and SIGTERM are taken from now on: one that came while the
    // children start, or just after the banner, would otherwise end this
    // process at once and leave them running.
    let (stopping, stop) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        hado_runtime::process::shutdown_signal().await;
        let _ = stopping.send(());
    });
    tokio::task::yield_now().await;
    // The admin commands run from this folder find this core by it: written
    // before any child listens, so that a script which waits for a port and
    // then runs one finds it.
    settings.record_listening(&settings.core_url(), &http_addr, &settings.mcp_addr())?;
    let mut processes = Vec::new();
    eprintln!("hado: starting core on {grpc_addr} with {database_url} …");
    for launch in launches {
        if let Err(error) = launch.start(&executable, settings, &mut processes).await {
            stop_all(&mut processes).await;
            settings.forget_listening();
            return Err(error);
        }
    }

    print_banner(settings, &executable);

    let exit = tokio::select! {
        _ = stop => {
            eprintln!("hado: stopping …");
            ExitCode::SUCCESS
        }
        (name, status) = first_exit(&mut processes) => {
            eprintln!("hado: {name} stopped ({status}); stopping the rest");
            ExitCode::FAILURE
        }
    };
    stop_all(&mut processes).await;
    settings.forget_listening();
    Ok(exit)
}

/// What `hado up` starts, in order: core, then the gateways once it answers.
fn launches(settings: &Settings, secrets: &BTreeMap<String, String>) -> [Launch; 3] {
    let (grpc_addr, http_addr) = (settings.grpc_addr(), settings.http_addr());
    let database_url = settings.database_url();
    let (mcp_addr, local_user) = (settings.mcp_addr(), settings.local_user());
    let mcp_url = format!("http://{mcp_addr}/mcp");
    let web_url = format!("http://{http_addr}");
    [
        Launch {
            role: "core",
            set: vec![
                ("HADO_DATABASE_URL", database_url.clone()),
                ("HADO_GRPC_ADDR", grpc_addr.clone()),
            ],
            // Action links in reminders point at this machine's web inbox.
            defaults: [("HADO_PUBLIC_URL".to_owned(), Some(web_url.clone()))]
                .into_iter()
                .chain(
                    secrets
                        .iter()
                        .map(|(variable, value)| (variable.to_string(), Some(value.clone()))),
                )
                .collect(),
            metrics: "HADO_CORE_METRICS_ADDR",
            ready: Ready::Healthy,
        },
        Launch {
            role: "gateway-mcp",
            set: vec![("HADO_CORE_URL", settings.core_url()), ("HADO_MCP_ADDR", mcp_addr.clone())],
            // Agents sign in on the web inbox's page.
            defaults: vec![("HADO_WEB_URL".to_owned(), Some(web_url.clone()))],
            metrics: "HADO_MCP_METRICS_ADDR",
            ready: Ready::Listening(mcp_addr.clone()),
        },
        Launch {
            role: "gateway-http",
            set: vec![
                ("HADO_CORE_URL", settings.core_url()),
                ("HADO_HTTP_ADDR", http_addr.clone()),
                ("HADO_LOCAL_USER", local_user.clone()),
                ("HADO_MCP_URL", mcp_url.clone()),
            ],
            defaults: vec![(
                "HADO_GATEWAY_TOKEN".to_owned(),
                secrets.get("HADO_GATEWAY_TOKEN").cloned(),
            )],
            metrics: "HADO_HTTP_METRICS_ADDR",
            ready: Ready::Listening(http_addr.clone()),
        },
    ]
}

/// Where everything listens, and what to try next.
fn print_banner(settings: &Settings, executable: &std::path::Path) {
    let (grpc_addr, http_addr, mcp_addr) =
        (settings.grpc_addr(), settings.http_addr(), settings.mcp_addr());
    let (database_url, local_user) = (settings.database_url(), settings.local_user());
    let mcp_url = format!("http://{mcp_addr}/mcp");
    println!();
    println!("Hado is running.");
    println!("  {:<30}http://{http_addr}/", format!("web inbox (as {local_user})"));
    println!(
        "  REST API for sources          http://{http_addr}/api/events  (OpenAPI: http://{http_addr}/openapi.json)"
    );
    println!("  MCP for agents                {mcp_url}");
    println!("  core (gRPC, with reflection)  {grpc_addr}");
    println!("  database                      {database_url}");
    println!("  secrets                       {}", settings.secrets_path().display());
    println!();
    println!("Try, in another terminal:");
    println!(
        "  cargo run -q -p hado -- source create docs     # a token for a service that pushes events"
    );
    println!(
        "  {:<47}# a token for your AI agent (or use Settings in the inbox)",
        format!("cargo run -q -p hado -- agent-token {local_user}")
    );
    println!("  grpcurl -plaintext {grpc_addr} list");
    println!();
    println!("Connect your agent (Claude Code) with that token:");
    println!(
        "  claude mcp add --transport http hado {mcp_url} --header \"Authorization: Bearer hado_agent_…\""
    );
    println!(
        "or let a client that signs in (MCP authorization) connect with no token: give it {mcp_url}"
    );
    println!("and press Allow on the page it opens in this browser;");
    println!("or, for a client that starts its servers as processes (stdio), with this binary:");
    println!(
        "  claude mcp add hado --env HADO_AGENT_TOKEN=hado_agent_… --env HADO_CORE_URL={} -- {} gateway-mcp --stdio",
        settings.core_url(),
        executable.display()
    );
    println!();
    println!("Ctrl-C stops Hado.");
}

async fn wait_until_healthy(settings: &Settings, process: &mut Process) -> anyhow::Result<()> {
    use tonic_health::pb::health_client::HealthClient;
    use tonic_health::pb::{HealthCheckRequest, health_check_response::ServingStatus};

    let url = settings.core_url();
    let channel = tonic::transport::Channel::from_shared(url.clone())
        .with_context(|| format!("HADO_CORE_URL {url:?} is not a URL"))?
        .connect_lazy();
    let mut client = HealthClient::new(channel);
    let started = tokio::time::Instant::now();
    loop {
        if let Some(status) = process.child.try_wait()? {
            bail!("{} exited during start ({status}); its log above says why", process.name);
        }
        let request = HealthCheckRequest { service: String::new() };
        if let Ok(reply) = client.check(request).await
            && reply.get_ref().status == ServingStatus::Serving as i32
        {
            return Ok(());
        }
        if started.elapsed() > START_TIMEOUT {
            bail!(
                "{} did not answer its health check at {url} within {}s",
                process.name,
                START_TIMEOUT.as_secs()
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Fails with one clear line, naming the flag to change (and its
/// variable), when `addr` cannot be listened on.
fn ensure_free(flag: &str, addr: &str) -> anyhow::Result<()> {
    let variable =
        format!("HADO_{}", flag.trim_start_matches("--").replace('-', "_").to_uppercase());
    match std::net::TcpListener::bind(addr) {
        Ok(_) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::AddrInUse => {
            bail!(
                "{addr} is already in use (another Hado, or another program): stop it, or give {flag} a free address (or set {variable})"
            )
        }
        Err(error) => bail!("cannot listen on {addr} ({flag}, {variable}): {error}"),
    }
}

/// Each child serves metrics on its own address, when one is set for it
/// (`HADO_CORE_METRICS_ADDR`, …); one shared HADO_METRICS_ADDR would clash.
fn metrics_address(command: &mut Command, variable: &str) {
    command.env_remove("HADO_METRICS_ADDR");
    if let Ok(addr) = std::env::var(variable)
        && !addr.trim().is_empty()
    {
        command.env("HADO_METRICS_ADDR", addr.trim());
    }
}

/// Waits until a gateway accepts connections on `addr`.
async fn wait_until_listening(addr: &str, process: &mut Process) -> anyhow::Result<()> {
    let started = tokio::time::Instant::now();
    loop {
        if let Some(status) = process.child.try_wait()? {
            bail!("{} exited during start ({status}); its log above says why", process.name);
        }
        if tokio::net::TcpStream::connect(addr).await.is_ok() {
            return Ok(());
        }
        if started.elapsed() > START_TIMEOUT {
            bail!("{} did not listen on {addr} within {}s", process.name, START_TIMEOUT.as_secs());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Resolves when the first child exits, with its name and status.
async fn first_exit(processes: &mut [Process]) -> (&'static str, String) {
    let waits = processes.iter_mut().map(|process| {
        Box::pin(async move {
            let status = process
                .child
                .wait()
                .await
                .map(|status| status.to_string())
                .unwrap_or_else(|error| error.to_string());
            (process.name, status)
        })
    });
    futures::future::select_all(waits).await.0
}

/// Asks every child to stop (SIGTERM), then kills what has not stopped in time.
async fn stop_all(processes: &mut [Process]) {
    for process in processes.iter_mut() {
        terminate(&process.child);
    }
    for process in processes.iter_mut() {
        match tokio::time::timeout(STOP_TIMEOUT, process.child.wait()).await {
            Ok(_) => {}
            Err(_) => {
                eprintln!(
                    "hado: {} did not stop within {}s; killing it",
                    process.name,
                    STOP_TIMEOUT.as_secs()
                );
                let _ = process.child.kill().await;
            }
        }
    }
}

#[cfg(unix)]
fn terminate(child: &tokio::process::Child) {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    if let Some(pid) = child.id().and_then(|pid| i32::try_from(pid).ok()) {
        let _ = kill(Pid::from_raw(pid), Signal::SIGTERM);
    }
}

#[cfg(not(unix))]
fn terminate(_child: &Child) {}
