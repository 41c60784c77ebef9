//! Owns one request's way through a connection: the client it is from
//! (behind a trusted proxy, the one it forwarded for), the cap on the
//! requests a proxy has open, `/up`'s 503 while the gateway drains, and the
//! close of an HTTP/1 connection whose request body was not read to its
//! end.

use std::convert::Infallible;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::Router;
use axum::extract::ConnectInfo;
use axum::http::header::{CONNECTION, RETRY_AFTER};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use hyper::body::{Body as _, Incoming};
use tower::ServiceExt;

use crate::serve::bodies::{OpenRequest, ReadToEnd, ReplyBody};
use crate::serve::caps::{Activity, Registry};

/// What a request refused for a proxy's cap, or a connection over the
/// cap, is told.
pub(super) const AT_LIMIT: &str = "this server is at its connection limit; try again in a moment";

/// The client a request comes from: the peer, or behind a trusted proxy
/// the address it forwarded for. Every request carries it as an extension,
/// so that the gateways' per-address limits count clients, not the proxy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientAddress(pub IpAddr);

/// What answers the requests of one connection.
pub(super) struct Requests {
    pub(super) peer: SocketAddr,
    pub(super) router: Router,
    /// Set while the gateway drains before it stops.
    pub(super) draining: Arc<AtomicBool>,
    pub(super) registry: Arc<Registry>,
    pub(super) activity: Arc<Activity>,
}

impl Requests {
    /// The router's answer to `request`, counted as the connection's
    /// activity (and a proxy's open request) until its reply is sent.
    pub(super) fn answer(
        &self,
        mut request: hyper::Request<Incoming>,
    ) -> impl Future<Output = Result<Response, Infallible>> + Send + use<> {
        let (peer, registry) = (self.peer, &self.registry);
        let client = registry.proxies.client(peer.ip(), request.headers());
        request.extensions_mut().insert(ConnectInfo(peer));
        request.extensions_mut().insert(ClientAddress(client));
        let router = self.router.clone();
        let activity = self.activity.clone();
        activity.begin_request();
        let proxied = registry.proxies.trusts(peer.ip()).then(|| registry.proxied_request(client));
        let http1 = request.version() < axum::http::Version::HTTP_2;
        let draining = self.draining.load(Ordering::Acquire);
        let health = request.uri().path() == "/up";
        let read = Arc::new(AtomicBool::new(request.body().is_end_stream()));
        let request =
            request.map(|body| axum::body::Body::new(ReadToEnd { body, read: read.clone() }));
        async move {
            if draining && health {
                drop(OpenRequest { activity, _proxied: proxied.flatten() });
                let status = serde_json::json!({ "status": "stopping" });
                return Ok(unavailable(status, http1));
            }
            let open = match proxied {
                Some(None) => {
                    drop(OpenRequest { activity, _proxied: None });
                    return Ok(unavailable(serde_json::json!({ "error": AT_LIMIT }), false));
                }
                Some(Some(counted)) => OpenRequest { activity, _proxied: Some(counted) },
                None => OpenRequest { activity, _proxied: None },
            };
            let mut response = router.oneshot(request).await.unwrap_or_else(|never| match never {});
            if http1 && (draining || !read.load(Ordering::Acquire)) {
                response.headers_mut().insert(CONNECTION, HeaderValue::from_static("close"));
            }
            Ok(response.map(|body| axum::body::Body::new(ReplyBody { body, _open: open })))
        }
    }
}

/// A 503 with `body`, to be asked again in a second; with `close`, the
/// HTTP/1 connection closes after it.
fn unavailable(body: serde_json::Value, close: bool) -> Response {
    let mut response = (StatusCode::SERVICE_UNAVAILABLE, axum::Json(body)).into_response();
    response.headers_mut().insert(RETRY_AFTER, HeaderValue::from_static("1"));
    if close {
        response.headers_mut().insert(CONNECTION, HeaderValue::from_static("close"));
    }
    response
}
