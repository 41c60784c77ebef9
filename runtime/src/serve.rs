//! Owns how a gateway serves HTTP so that slow or idle clients cannot hold
//! it: a deadline for a request's headers, one for the whole request (its
//! body included), an idle timeout for kept-alive HTTP/1 and HTTP/2
//! connections, and a cap on open connections past which a newcomer is
//! answered 503 at once instead of waiting for `accept` to fail. axum's own
//! `serve` has none of these knobs, so the accept loop is written here on
//! hyper-util's connection builder, as axum's "serve with hyper" example does.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::process::{ConfigError, Lookup, positive_number};
use axum::Router;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::header::CONNECTION;
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use hyper::body::{Body as _, Incoming};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower::ServiceExt;

/// How long a client may take and how many may be connected at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// From a connection's first byte of a request to the end of its
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
}

impl Default for Limits {
    fn default() -> Self {
        Self { header_timeout: Duration::from_secs(10), request_timeout: Duration::from_secs(30), idle_timeout: Duration::from_secs(60), max_connections: 512 }
    }
}

impl Limits {
    pub fn from_lookup(lookup: Lookup<'_>) -> Result<Self, ConfigError> {
        let defaults = Self::default();
        let seconds = |variable: &'static str, default: Duration| -> Result<Duration, ConfigError> {
            Ok(Duration::from_secs(u64::from(positive_number(lookup, variable, default.as_secs() as u32)?)))
        };
        Ok(Self {
            header_timeout: seconds("HADO_HEADER_TIMEOUT", defaults.header_timeout)?,
            request_timeout: seconds("HADO_REQUEST_TIMEOUT", defaults.request_timeout)?,
            idle_timeout: seconds("HADO_IDLE_TIMEOUT", defaults.idle_timeout)?,
            max_connections: positive_number(lookup, "HADO_MAX_CONNECTIONS", defaults.max_connections as u32)? as usize,
        })
    }
}

/// Serves `router` on `listener` within `limits` until `shutdown`
/// resolves; then stops accepting, lets requests in flight finish (each is
/// bounded by the request timeout) and returns. Handlers see the peer's
/// address as `ConnectInfo<SocketAddr>`.
pub async fn serve(listener: TcpListener, router: Router, limits: Limits, shutdown: impl Future<Output = ()> + Send + 'static) -> std::io::Result<()> {
    let router = router.layer(axum::middleware::from_fn_with_state(limits.request_timeout, request_deadline));
    let permits = Arc::new(Semaphore::new(limits.max_connections));
    let connections = TaskTracker::new();
    let stopping = CancellationToken::new();
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of file descriptors, or the peer left before we
                    // took it: wait a moment rather than spin.
                    tracing::warn!(%error, "could not accept a connection");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        // Replies go out whole at once: no waiting on the client's delayed ACK.
        let _ = stream.set_nodelay(true);
        match permits.clone().try_acquire_owned() {
            Ok(permit) => {
                connections.spawn(connection(stream, peer, router.clone(), limits, stopping.clone(), permit));
            }
            Err(_) => {
                metrics::counter!("hado_http_connections_shed_total").increment(1);
                connections.spawn(shed(stream));
            }
        }
    }
    stopping.cancel();
    connections.close();
    connections.wait().await;
    Ok(())
}

/// Answers a connection over the cap with 503 and closes it.
async fn shed(mut stream: TcpStream) {
    const BODY: &str = r#"{"error":"this server is at its connection limit; try again in a moment"}"#;
    let reply = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: {}\r\nretry-after: 1\r\nconnection: close\r\n\r\n{BODY}",
        BODY.len()
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

/// What a connection is doing: requests open now, and when one last
/// started or finished (milliseconds since the connection began). A
/// connection is idle when no request is open and none has moved for the
/// idle timeout; bytes alone do not count, since HTTP/2 keep-alive pings
/// flow on a connection that carries no requests.
struct Activity {
    started: Instant,
    open_requests: AtomicUsize,
    last_change: AtomicU64,
}

impl Activity {
    fn touch(&self) {
        self.last_change.store(self.started.elapsed().as_millis() as u64, Ordering::Relaxed);
    }

    /// How long the connection has had no request open, or zero while one is.
    fn idle_for(&self) -> Duration {
        if self.open_requests.load(Ordering::Relaxed) > 0 {
            return Duration::ZERO;
        }
        self.started.elapsed().saturating_sub(Duration::from_millis(self.last_change.load(Ordering::Relaxed)))
    }
}

/// A request body that records whether it was read to its end. A reply
/// sent with the body left unread (a refusal before reading it: a wrong
/// token, a body too large) ends the HTTP/1 connection, since hyper cannot
/// find the next request behind the unread bytes; the reply then says
/// `Connection: close`, so that the client sends its next request (the
/// retry with a token, say) on a new connection instead of losing it on
/// this one.
struct ReadToEnd {
    body: Incoming,
    read: Arc<AtomicBool>,
}

impl hyper::body::Body for ReadToEnd {
    type Data = hyper::body::Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        context: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        let polled = std::pin::Pin::new(&mut self.body).poll_frame(context);
        if matches!(polled, std::task::Poll::Ready(None)) || self.body.is_end_stream() {
            self.read.store(true, Ordering::Release);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}

async fn connection(stream: TcpStream, peer: SocketAddr, router: Router, limits: Limits, stopping: CancellationToken, _permit: OwnedSemaphorePermit) {
    let activity = Arc::new(Activity { started: Instant::now(), open_requests: AtomicUsize::new(0), last_change: AtomicU64::new(0) });
    let watched = activity.clone();
    let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
        request.extensions_mut().insert(ConnectInfo(peer));
        let router = router.clone();
        let activity = watched.clone();
        activity.open_requests.fetch_add(1, Ordering::Relaxed);
        activity.touch();
        let http1 = request.version() < axum::http::Version::HTTP_2;
        let read = Arc::new(AtomicBool::new(request.body().is_end_stream()));
        let request = request.map(|body| axum::body::Body::new(ReadToEnd { body, read: read.clone() }));
        async move {
            let mut response = router.oneshot(request).await.unwrap_or_else(|never| match never {});
            if http1 && !read.load(Ordering::Acquire) {
                response.headers_mut().insert(CONNECTION, HeaderValue::from_static("close"));
            }
            activity.touch();
            activity.open_requests.fetch_sub(1, Ordering::Relaxed);
            Ok::<_, Infallible>(response)
        }
    });
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder.http1().timer(TokioTimer::new()).header_read_timeout(limits.header_timeout).keep_alive(true);
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(64)
        .max_header_list_size(64 * 1024)
        .keep_alive_interval(Some(limits.idle_timeout / 2))
        .keep_alive_timeout(Duration::from_secs(20));
    let connection = builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
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
        let wake = match closing_since {
            Some(since) => close_within.saturating_sub(since.elapsed()),
            None => limits.idle_timeout.saturating_sub(activity.idle_for()),
        };
        tokio::select! {
            result = connection.as_mut() => {
                if let Err(error) = result {
                    tracing::debug!(%error, "connection ended with an error");
                }
                return;
            }
            () = stopping.cancelled(), if closing_since.is_none() => {
                connection.as_mut().graceful_shutdown();
                closing_since = Some(Instant::now());
            }
            () = tokio::time::sleep(wake.max(Duration::from_millis(10))) => match closing_since {
                Some(since) if since.elapsed() >= close_within => return,
                Some(_) => {}
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
            let message = format!("the request was not complete within {} seconds", limit.as_secs());
            let mut response = (StatusCode::REQUEST_TIMEOUT, axum::Json(serde_json::json!({ "error": message }))).into_response();
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
        let error = Limits::from_lookup(&|variable| (variable == "HADO_MAX_CONNECTIONS").then(|| "lots".to_owned())).unwrap_err();
        assert_eq!(error.variable, "HADO_MAX_CONNECTIONS");
        let error = Limits::from_lookup(&|variable| (variable == "HADO_IDLE_TIMEOUT").then(|| "0".to_owned())).unwrap_err();
        assert_eq!(error.variable, "HADO_IDLE_TIMEOUT");
    }
}
