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
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::header::CONNECTION;
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use hado_proto::process::{ConfigError, Lookup, positive_number};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
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
        Self {
            header_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(60),
            max_connections: 512,
        }
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

async fn connection(stream: TcpStream, peer: SocketAddr, router: Router, limits: Limits, stopping: CancellationToken, _permit: OwnedSemaphorePermit) {
    let started = Instant::now();
    let activity = Arc::new(AtomicU64::new(0));
    let io = TokioIo::new(Watched { inner: stream, activity: activity.clone(), started });
    let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
        request.extensions_mut().insert(ConnectInfo(peer));
        let router = router.clone();
        async move { Ok::<_, Infallible>(router.oneshot(request.map(axum::body::Body::new)).await.unwrap_or_else(|never| match never {})) }
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
    let connection = builder.serve_connection_with_upgrades(io, service);
    tokio::pin!(connection);
    let idle_after = limits.idle_timeout;
    // After a graceful close starts, requests in flight get their deadline
    // and a little more; then the connection is dropped.
    let close_within = limits.request_timeout + Duration::from_secs(5);
    let mut closing_since: Option<Instant> = None;
    loop {
        let since_activity = started.elapsed().saturating_sub(Duration::from_millis(activity.load(Ordering::Relaxed)));
        let wake = match closing_since {
            Some(since) => close_within.saturating_sub(since.elapsed()),
            None => idle_after.saturating_sub(since_activity),
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
            () = tokio::time::sleep(wake.max(Duration::from_millis(10))) => {
                match closing_since {
                    Some(since) if since.elapsed() >= close_within => return,
                    Some(_) => {}
                    None => {
                        let since_activity = started.elapsed().saturating_sub(Duration::from_millis(activity.load(Ordering::Relaxed)));
                        if since_activity >= idle_after {
                            connection.as_mut().graceful_shutdown();
                            closing_since = Some(Instant::now());
                        }
                    }
                }
            }
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

/// A connection's stream that notes when bytes last moved, in
/// milliseconds since the connection began.
struct Watched {
    inner: TcpStream,
    activity: Arc<AtomicU64>,
    started: Instant,
}

impl Watched {
    fn touch(&self) {
        self.activity.store(self.started.elapsed().as_millis() as u64, Ordering::Relaxed);
    }
}

impl AsyncRead for Watched {
    fn poll_read(mut self: Pin<&mut Self>, context: &mut Context<'_>, buffer: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let before = buffer.filled().len();
        let poll = Pin::new(&mut self.inner).poll_read(context, buffer);
        if buffer.filled().len() > before {
            self.touch();
        }
        poll
    }
}

impl AsyncWrite for Watched {
    fn poll_write(mut self: Pin<&mut Self>, context: &mut Context<'_>, data: &[u8]) -> Poll<std::io::Result<usize>> {
        let poll = Pin::new(&mut self.inner).poll_write(context, data);
        if matches!(poll, Poll::Ready(Ok(written)) if written > 0) {
            self.touch();
        }
        poll
    }

    fn poll_write_vectored(mut self: Pin<&mut Self>, context: &mut Context<'_>, buffers: &[std::io::IoSlice<'_>]) -> Poll<std::io::Result<usize>> {
        let poll = Pin::new(&mut self.inner).poll_write_vectored(context, buffers);
        if matches!(poll, Poll::Ready(Ok(written)) if written > 0) {
            self.touch();
        }
        poll
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(context)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(context)
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
