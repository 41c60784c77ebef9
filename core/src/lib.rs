//! Hado's core: the one home of event logic and storage, served over gRPC.
//! See ARCHITECTURE.md for the map.

pub mod config;
pub mod delivery;

mod grpc;
pub mod scheduler;
mod status;
mod storage_watch;
pub mod telegram;
mod wire;

use std::future::Future;
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio::sync::watch;

use hado_engine::{self as engine, clock, error, links, loops, network, targets, web_push as push};
use hado_storage::{self as storage, Store};

use clock::Clock;
use config::CoreConfig;
use engine::Engine;

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("HADO_DATABASE_URL: {0}")]
    Database(#[from] storage::StoreError),
    #[error("core could not start: {0}")]
    Engine(#[from] error::CoreError),
    #[error("gRPC server failed: {0}")]
    Serve(#[from] tonic::transport::Error),
}

/// Opens the database (running migrations) and builds the engine, which
/// reaches the network (webhook checks, agents' metadata documents) through
/// [`network::Internet`]. A SQLite file is locked first, for as long as the
/// engine is open: another core serving it is refused here, before this one
/// migrates, serves or sends anything.
pub async fn open(config: &CoreConfig, clock: Arc<dyn Clock>) -> Result<Arc<Engine>, RunError> {
    let policy = targets::TargetPolicy { allow_private: config.webhook_allow_private };
    open_with_network(config, clock, Arc::new(network::Internet::new(policy))).await
}

/// [`open`], with the engine's way to the network given: tests hand it a
/// stand-in that opens no socket.
pub async fn open_with_network(
    config: &CoreConfig,
    clock: Arc<dyn Clock>,
    network: Arc<dyn network::Network>,
) -> Result<Arc<Engine>, RunError> {
    let core_lock = storage::CoreLock::take(&config.database_url)?;
    let store = Store::connect(&config.database_url).await?;
    let (subject, given_key) = match &config.push {
        Some(push) => (Some(push.subject.as_str()), push.private_key.as_deref()),
        None => (None, None),
    };
    let now_millis = clock.now().timestamp_millis();
    let push = push::set_up(subject, given_key, async |name: &str, made: &str| {
        store.keep_server_key(name, made, now_millis).await
    })
    .await?;
    let outbound = engine::Outbound {
        public_url: config.public_url.clone(),
        allow_private: config.webhook_allow_private,
        push,
    };
    Ok(Arc::new(
        Engine::new(
            store,
            clock,
            (config.default_zone, config.default_locale),
            links::LinkSigner::new(&config.secret),
            outbound,
            network,
        )
        .await?
        .holding(core_lock),
    ))
}

/// Serves `engine` on `listener` with its scheduler and delivery loop until
/// `shutdown` resolves; then stops both and closes the database.
pub async fn serve(
    engine: Arc<Engine>,
    config: &CoreConfig,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), RunError> {
    let (stop, stopped) = watch::channel(false);
    let scheduler = tokio::spawn(scheduler::run(engine.clone(), stopped.clone()));
    let bot = telegram::Bot::of(config);
    let mailer = delivery::Mailer::of(config);
    let email = mailer.is_some();
    let deliveries = tokio::spawn(delivery::run(
        delivery::Deliverer::new(engine.clone(), bot.clone(), config.delivery_concurrency)
            .with_mailer(mailer),
        stopped.clone(),
    ));
    let polling = match bot.clone() {
        Some(bot) if !bot.webhook => {
            Some(tokio::spawn(telegram::poll(engine.clone(), bot, stopped.clone())))
        }
        _ => None,
    };
    let (storage, probing) = storage_watch::start(engine.clone(), stopped);
    let credentials = grpc::Credentials {
        admin_token: config.admin_token.clone(),
        gateway_token: config.gateway_token.clone(),
    };
    let served =
        grpc::serve(engine.clone(), credentials, bot, email, storage, listener, shutdown).await;
    let _ = stop.send(true);
    // The loops finish what they hold, within LOOPS_GRACE: a reminder whose
    // send is cut off stays leased, and a core sends it after the lease.
    let loops = async {
        let _ = probing.await;
        let _ = scheduler.await;
        let _ = deliveries.await;
        if let Some(polling) = polling {
            let _ = polling.await;
        }
    };
    if tokio::time::timeout(LOOPS_GRACE, loops).await.is_err() {
        tracing::warn!(grace = ?LOOPS_GRACE, "the scheduler or the delivery loop was still busy; stopping anyway");
    }
    // A connection still held by what was cut off would keep the pool's
    // close waiting; every write is one transaction, so none is half-done.
    if tokio::time::timeout(CLOSE_GRACE, engine.close()).await.is_err() {
        tracing::warn!(grace = ?CLOSE_GRACE, "the database did not close in time; stopping anyway");
    }
    Ok(served?)
}

/// How long the scheduler and the delivery loop may take to stop, after
/// the calls in flight have had theirs (10 s), and then the database to
/// close: core exits within 15 s of being told to stop.
const LOOPS_GRACE: std::time::Duration = std::time::Duration::from_secs(3);
const CLOSE_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// Opens the database and serves until `shutdown`: what `hado-core` runs.
pub async fn run(
    config: CoreConfig,
    listener: TcpListener,
    clock: Arc<dyn Clock>,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), RunError> {
    let engine = open(&config, clock).await?;
    serve(engine, &config, listener, shutdown).await
}

pub use hado_runtime::process::shutdown_signal;

pub use hado_engine::outbound_tls::install_tls_provider;

/// Opens the database, waiting while a Postgres server cannot be reached
/// yet: it may be starting beside core (compose starts both at once), or
/// restarting, or its name may not resolve yet. It tries again every few
/// seconds at most, and says so at once and then once a minute, naming the
/// host and the error; a wrong password or URL ends the wait at once; a
/// stop signal ends it with `None`.
async fn open_when_reachable(config: &CoreConfig) -> Result<Option<Arc<Engine>>, RunError> {
    const LONGEST_PAUSE: std::time::Duration = std::time::Duration::from_secs(2);
    let mut pause = std::time::Duration::from_millis(250);
    let host = database_host(&config.database_url);
    let mut waiting = loops::Reminder::new(WAITING_SAID_EVERY);
    let stop = shutdown_signal();
    tokio::pin!(stop);
    loop {
        let opened = tokio::select! {
            opened = open(config, Arc::new(clock::SystemClock)) => opened,
            _ = &mut stop => return Ok(None),
        };
        match opened {
            Err(RunError::Database(error))
                if error.may_come_up()
                    && storage::Backend::from_url(&config.database_url)
                        .is_ok_and(storage::Backend::is_a_server) =>
            {
                if let Some(waited) = waiting.due(std::time::Instant::now()) {
                    tracing::warn!(%host, %error, waited = ?waited, retry_every = ?LONGEST_PAUSE, "waiting for the database to answer");
                }
                tokio::select! {
                    _ = tokio::time::sleep(pause) => {}
                    _ = &mut stop => return Ok(None),
                }
                pause = (pause * 2).min(LONGEST_PAUSE);
            }
            opened => return opened.map(Some),
        }
    }
}

/// Connections the kernel holds for core before it accepts them.
const LISTEN_BACKLOG: u32 = 1024;

/// A socket bound to `address` that does not listen yet.
fn bound(address: std::net::SocketAddr) -> std::io::Result<tokio::net::TcpSocket> {
    let socket = if address.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(address)?;
    Ok(socket)
}

/// How often core says it still waits for its database.
const WAITING_SAID_EVERY: std::time::Duration = std::time::Duration::from_secs(60);

/// The host (and port) a database URL names, for messages: never its
/// user or password.
fn database_host(url: &str) -> String {
    url::Url::parse(url)
        .ok()
        .and_then(|url| {
            let host = url.host_str()?.to_owned();
            Some(url.port().map_or(host.clone(), |port| format!("{host}:{port}")))
        })
        .unwrap_or_else(|| "the database".to_owned())
}

/// The whole `hado-core` process: configuration from the environment, one
/// clear line on any failure to start.
pub async fn main_entry() -> std::process::ExitCode {
    if let Err(error) = hado_runtime::process::init_logging() {
        eprintln!("hado-core: {error}");
        return std::process::ExitCode::from(2);
    }
    match hado_runtime::metrics_endpoint::start(&hado_runtime::settings::environment).await {
        Ok(Some(metrics)) => tracing::info!(%metrics, "core serves metrics at /metrics"),
        Ok(None) => {}
        Err(error) => {
            eprintln!("hado-core: {error}");
            return std::process::ExitCode::from(2);
        }
    }
    let config = match CoreConfig::from_env() {
        Ok(config) => config,
        Err(error) => {
            eprintln!("hado-core: {error}");
            return std::process::ExitCode::from(2);
        }
    };
    // The address is taken now, so that a port in use stops core at once;
    // connections are taken only once core can answer them. A port that
    // listened while the database opened would take a gateway's call and
    // hold it unanswered (a core waiting for Postgres, or behind another
    // core's migrations), where a refused connection sends it to another
    // core at once.
    let socket = match bound(config.grpc_addr) {
        Ok(socket) => socket,
        Err(error) => {
            eprintln!("hado-core: HADO_GRPC_ADDR: cannot listen on {}: {error}", config.grpc_addr);
            return std::process::ExitCode::from(2);
        }
    };
    tracing::info!(addr = %config.grpc_addr, "core starting");
    let engine = match open_when_reachable(&config).await {
        Ok(Some(engine)) => engine,
        Ok(None) => return std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("hado-core: {error}");
            return std::process::ExitCode::from(2);
        }
    };
    let listener = match socket.listen(LISTEN_BACKLOG) {
        Ok(listener) => listener,
        Err(error) => {
            eprintln!("hado-core: HADO_GRPC_ADDR: cannot listen on {}: {error}", config.grpc_addr);
            return std::process::ExitCode::from(2);
        }
    };
    tracing::info!(addr = %config.grpc_addr, backend = ?engine.backend(), "core listening");
    match serve(engine, &config, listener, shutdown_signal()).await {
        Ok(()) => {
            tracing::info!("core stopped");
            std::process::ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("hado-core: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}
