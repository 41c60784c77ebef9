//! Owns the bodies a connection's requests and replies travel in: a
//! request body that records whether it was read to its end, and a reply
//! body that holds its request open until it has been sent.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use hyper::body::Incoming;

use super::caps::{Activity, ProxiedRequest};

/// A request body that records whether it was read to its end. A reply
/// sent with the body left unread (a refusal before reading it: a wrong
/// token, a body too large) ends the HTTP/1 connection, since hyper cannot
/// find the next request behind the unread bytes; the reply then says
/// `Connection: close`, so that the client sends its next request (the
/// retry with a token, say) on a new connection instead of losing it on
/// this one.
pub(super) struct ReadToEnd {
    pub(super) body: Incoming,
    pub(super) read: Arc<AtomicBool>,
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

/// A request open on a connection until its reply's body has been sent
/// (or dropped): a streamed reply, such as an event stream, keeps its
/// connection from counting as idle for as long as it flows.
pub(super) struct OpenRequest {
    pub(super) activity: Arc<Activity>,
    /// Held, to count the request against its client until it is done.
    pub(super) _proxied: Option<ProxiedRequest>,
}

impl Drop for OpenRequest {
    fn drop(&mut self) {
        self.activity.end_request();
    }
}

/// A reply's body that holds its request open until it is done.
pub(super) struct ReplyBody {
    pub(super) body: axum::body::Body,
    /// Held until the body is done or dropped.
    pub(super) _open: OpenRequest,
}

impl hyper::body::Body for ReplyBody {
    type Data = hyper::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        context: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        std::pin::Pin::new(&mut self.body).poll_frame(context)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}
