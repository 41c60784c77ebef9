//! Owns how a gateway serves HTTP so that slow, idle or many clients cannot
//! hold it: a deadline for a connection's first request that starts at
//! accept (a socket that never sends a byte is closed too), a deadline for
//! each later request's headers, one for the whole request (its body
//! included), an idle timeout between requests on kept-alive HTTP/1 and
//! HTTP/2 connections, and caps on open connections, in all and per client
//! address. Past a cap, the oldest connection that has not yet sent a whole
//! request makes room for the newcomer; only when there is none is the
//! newcomer answered 503 at once. axum's own `serve` has none of these
//! knobs, and hyper-util's builder and tower's timeouts start their clocks
//! only once bytes arrive or a request exists, so the accept loop is
//! written here on hyper-util's connection builder, as axum's "serve with
//! hyper" example does.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::proxies::TrustedProxies;
use hado_runtime::settings::{ConfigError, Lookup, positive_number};

mod bodies;
mod caps;
mod linger;
mod requests;

pub use requests::ClientAddress;
use requests::{AT_LIMIT, Requests};

use axum::Router;
use axum::extract::{Request, State};
use axum::http::header::CONNECTION;
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use caps::{Entry, Registry};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// How long a client may take and how many may be connected at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// From accept to the end of a connection's first request's headers,
    /// and from the first byte of each later request to the end of its
    /// headers (`HADO_HEADER_TIMEOUT`, seconds).
    pub header_timeout: Duration,
    /// From the end of the headers to the end of the reply, the body's
    /// reading included (`HADO_REQUEST_TIMEOUT`, seconds).
    pub request_timeout: Duration,
    /// How long a connection may carry no bytes either way before it is
    /// closed (`HADO_IDLE_TIMEOUT`, seconds).
    pub idle_timeout: Duration,
    /// Open connections at most; more are answered 503
    /// (`HADO_MAX_CONNECTIONS`). Keep it below the process's open-file limit.
    pub max_connections: usize,
    /// Open connections from one client address at most, and requests at
    /// once from one client behind a trusted proxy
    /// (`HADO_MAX_CONNECTIONS_PER_ADDRESS`).
    pub max_per_address: usize,
    /// Once told to stop, how long `/up` answers 503 while every other
    /// request is still served, so that a proxy that checks `/up` (or an
    /// orchestrator taking the process out of its endpoints) stops sending
    /// here before the port closes (`HADO_DRAIN_SECONDS`, 0 by default).
    pub drain: Duration,
    /// Request-body bytes held at once over every request; a body that
    /// does not fit is answered 503 (`HADO_BODY_BUDGET_MIB`, in MiB).
    pub body_budget: usize,
}

/// `HADO_BODY_BUDGET_MIB`'s default: four full REST batches, or 24
/// agent calls of 1 MiB, at once (BENCHMARKS.md, "Memory bounded by bytes").
const BODY_BUDGET_MIB: u32 = 24;

impl Default for Limits {
    fn default() -> Self {
        Self {
            header_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(60),
            max_connections: 512,
            max_per_address: 64,
            drain: Duration::ZERO,
            body_budget: BODY_BUDGET_MIB as usize * 1024 * 1024,
        }
    }
}

impl Limits {
    pub fn from_lookup(lookup: Lookup<'_>) -> Result<Self, ConfigError> {
        let defaults = Self::default();
        let seconds =
            |variable: &'static str, default: Duration| -> Result<Duration, ConfigError> {
                Ok(Duration::from_secs(u64::from(positive_number(
                    lookup,
                    variable,
                    default.as_secs() as u32,
                )?)))
            };
        Ok(Self {
            header_timeout: seconds("HADO_HEADER_TIMEOUT", defaults.header_timeout)?,
            request_timeout: seconds("HADO_REQUEST_TIMEOUT", defaults.request_timeout)?,
            idle_timeout: seconds("HADO_IDLE_TIMEOUT", defaults.idle_timeout)?,
            drain: drain_seconds(lookup)?,
            max_connections: positive_number(
                lookup,
                "HADO_MAX_CONNECTIONS",
                defaults.max_connections as u32,
            )? as usize,
            max_per_address: positive_number(
                lookup,
                "HADO_MAX_CONNECTIONS_PER_ADDRESS",
                defaults.max_per_address as u32,
            )? as usize,
            body_budget: positive_number(lookup, "HADO_BODY_BUDGET_MIB", BODY_BUDGET_MIB)? as usize
                * 1024
                * 1024,
        })
    }
}

/// `HADO_DRAIN_SECONDS`: whole seconds, 0 (the default) to 300.
fn drain_seconds(lookup: Lookup<'_>) -> Result<Duration, ConfigError> {
    let Some(value) = hado_runtime::settings::read(lookup, "HADO_DRAIN_SECONDS") else {
        return Ok(Duration::ZERO);
    };
    match value.parse::<u64>() {
        Ok(seconds) if seconds <= 300 => Ok(Duration::from_secs(seconds)),
        _ => Err(ConfigError {
            variable: "HADO_DRAIN_SECONDS",
            problem: format!("{value:?} is not a whole number of seconds from 0 to 300"),
        }),
    }
}

/// Serves `router` on `listener` within `limits` until `shutdown`
/// resolves; then, for `limits.drain`, answers `/up` with 503 while it
/// serves everything else (HTTP/1 replies close their connections); then
/// stops accepting, lets requests in flight finish (each is bounded by the
/// request timeout) and returns. Handlers see the peer's
/// address as `ConnectInfo<SocketAddr>` and the client's as
/// [`ClientAddress`]; connections from `proxies` are not capped per
/// address, their requests are, per forwarded client.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    proxies: TrustedProxies,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let router = router
        .layer(axum::middleware::from_fn_with_state(limits.request_timeout, request_deadline));
    let registry = Arc::new(Registry::new(limits, proxies));
    let connections = TaskTracker::new();
    let stopping = CancellationToken::new();
    let draining = Arc::new(AtomicBool::new(false));
    let take = |stream: TcpStream, peer: SocketAddr| {
        // Replies go out whole at once: no waiting on the client's delayed ACK.
        let _ = stream.set_nodelay(true);
        match registry.open(peer.ip()) {
            Some(entry) => {
                connections.spawn(connection(
                    stream,
                    peer,
                    router.clone(),
                    limits,
                    stopping.clone(),
                    draining.clone(),
                    entry,
                ));
            }
            None => {
                metrics::counter!("hado_http_connections_shed_total").increment(1);
                connections.spawn(shed(stream));
            }
        }
    };
    tokio::pin!(shutdown);
    let mut drain_until: Option<Instant> = None;
    loop {
        let drained = async {
            match drain_until {
                Some(until) => tokio::time::sleep_until(until.into()).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = &mut shutdown, if drain_until.is_none() => {
                if limits.drain.is_zero() {
                    break;
                }
                tracing::info!(drain = ?limits.drain, "stopping: /up answers 503 while proxies stop sending here");
                draining.store(true, Ordering::Release);
                drain_until = Some(Instant::now() + limits.drain);
            }
            () = drained => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => take(stream, peer),
                Err(error) => {
                    // Out of file descriptors, or the peer left before we
                    // took it: wait a moment rather than spin.
                    tracing::warn!(%error, "could not accept a connection");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
        }
    }
    // Closed at once, not when the last request is done: a connection
    // the kernel would still complete would wait unread until then, while
    // a refused one tells a proxy to try again elsewhere or a moment later.
    drop(listener);
    stopping.cancel();
    connections.close();
    connections.wait().await;
    Ok(())
}

/// Answers a connection over the cap with 503 and closes it.
async fn shed(mut stream: TcpStream) {
    let body = serde_json::json!({ "error": AT_LIMIT }).to_string();
    let reply = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: {}\r\nretry-after: 1\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = tokio::time::timeout(Duration::from_secs(2), async {
        stream.write_all(reply.as_bytes()).await?;
        stream.shutdown().await?;
        // Read what the client sent until it closes, so the close is clean.
        let mut sink = [0u8; 1024];
        while stream.read(&mut sink).await? > 0 {}
        Ok::<(), std::io::Error>(())
    })
    .await;
}

/// hyper's connection builder, for HTTP/1 and HTTP/2, within `limits`.
fn builder(limits: &Limits) -> auto::Builder<TokioExecutor> {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .keep_alive(true);
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(64)
        .max_header_list_size(64 * 1024)
        .keep_alive_interval(Some(limits.idle_timeout / 2))
        .keep_alive_timeout(Duration::from_secs(20));
    builder
}

/// Serves one connection until it ends, is evicted, or its deadlines
/// close it.
async fn connection(
    stream: TcpStream,
    peer: SocketAddr,
    router: Router,
    limits: Limits,
    stopping: CancellationToken,
    draining: Arc<AtomicBool>,
    entry: Entry,
) {
    let activity = entry.activity.clone();
    let requests = Requests {
        peer,
        router,
        draining,
        registry: entry.registry.clone(),
        activity: activity.clone(),
    };
    let service = hyper::service::service_fn(move |request| requests.answer(request));
    let builder = builder(&limits);
    let connection = builder
        .serve_connection_with_upgrades(TokioIo::new(linger::Lingering::new(stream)), service);
    tokio::pin!(connection);
    // After a graceful close starts, requests in flight get their deadline
    // and a little more; an idle connection gets a moment to say goodbye
    // (HTTP/2 waits for the peer to acknowledge its GOAWAY). Then the
    // connection is dropped.
    let in_flight_grace = limits.request_timeout + Duration::from_secs(5);
    let idle_grace = Duration::from_secs(1);
    let mut close_within = in_flight_grace;
    let mut closing_since: Option<Instant> = None;
    loop {
        // Until its first request's headers are in, a connection has the
        // header deadline from accept; after that, the idle timeout.
        let wake = match closing_since {
            Some(since) => close_within.saturating_sub(since.elapsed()),
            None if !activity.has_requested() => {
                limits.header_timeout.saturating_sub(activity.started.elapsed())
            }
            None => limits.idle_timeout.saturating_sub(activity.idle_for()),
        };
        tokio::select! {
            result = connection.as_mut() => {
                if let Err(error) = result {
                    tracing::debug!(%error, "connection ended with an error");
                }
                return;
            }
            () = entry.evict.cancelled() => return,
            () = stopping.cancelled(), if closing_since.is_none() => {
                connection.as_mut().graceful_shutdown();
                closing_since = Some(Instant::now());
            }
            () = tokio::time::sleep(wake.max(Duration::from_millis(10))) => match closing_since {
                Some(since) if since.elapsed() >= close_within => return,
                Some(_) => {}
                // Nothing whole was asked: there is nobody to say goodbye to.
                None if !activity.has_requested() && activity.started.elapsed() >= limits.header_timeout => return,
                None if activity.idle_for() >= limits.idle_timeout => {
                    connection.as_mut().graceful_shutdown();
                    closing_since = Some(Instant::now());
                    close_within = idle_grace;
                }
                None => {}
            },
        }
    }
}

/// Answers 408 when a request (its body's reading included) is not done
/// within the limit, and closes the connection after it.
async fn request_deadline(State(limit): State<Duration>, request: Request, next: Next) -> Response {
    match tokio::time::timeout(limit, next.run(request)).await {
        Ok(response) => response,
        Err(_) => {
            let message =
                format!("the request was not complete within {} seconds", limit.as_secs());
            let mut response =
                (StatusCode::REQUEST_TIMEOUT, axum::Json(serde_json::json!({ "error": message })))
                    .into_response();
            response.headers_mut().insert(CONNECTION, HeaderValue::from_static("close"));
            response
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_have_safe_defaults_and_name_a_bad_setting() {
        let limits = Limits::from_lookup(&|_| None).unwrap();
        assert_eq!(limits, Limits::default());
        assert_eq!(limits.header_timeout, Duration::from_secs(10));
        let error = Limits::from_lookup(&|variable| {
            (variable == "HADO_MAX_CONNECTIONS").then(|| "lots".to_owned())
        })
        .unwrap_err();
        assert_eq!(error.variable, "HADO_MAX_CONNECTIONS");
        let error = Limits::from_lookup(&|variable| {
            (variable == "HADO_IDLE_TIMEOUT").then(|| "0".to_owned())
        })
        .unwrap_err();
        assert_eq!(error.variable, "HADO_IDLE_TIMEOUT");
        let error = Limits::from_lookup(&|variable| {
            (variable == "HADO_MAX_CONNECTIONS_PER_ADDRESS").then(|| "-1".to_owned())
        })
        .unwrap_err();
        assert_eq!(error.variable, "HADO_MAX_CONNECTIONS_PER_ADDRESS");
    }

    #[test]
    fn the_body_budget_is_read_in_mib() {
        assert_eq!(Limits::default().body_budget, 24 * 1024 * 1024);
        let limits = Limits::from_lookup(&|variable| {
            (variable == "HADO_BODY_BUDGET_MIB").then(|| "64".to_owned())
        })
        .unwrap();
        assert_eq!(limits.body_budget, 64 * 1024 * 1024);
        for wrong in ["0", "a lot", "-1"] {
            let error = Limits::from_lookup(&|variable| {
                (variable == "HADO_BODY_BUDGET_MIB").then(|| wrong.to_owned())
            })
            .unwrap_err();
            assert_eq!(error.variable, "HADO_BODY_BUDGET_MIB", "{wrong}");
        }
    }
}
