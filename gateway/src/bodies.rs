//! Owns how a gateway reads request bodies: a budget of body bytes held at
//! once over every request (`HADO_BODY_BUDGET_MIB`), taken as each piece
//! of a body arrives and given back when its request has been answered,
//! and a reader that fills one buffer of the declared length instead of
//! gathering pieces and copying them into a second one.
//!
//! Why a budget: each body is capped, but a cap bounds one request, not
//! thirty of them at once. The budget bounds their sum, so a gateway's
//! memory for bodies is the budget times what one byte costs (BENCHMARKS.md,
//! "Memory bounded by bytes"), whoever sends them.
//!
//! Why refuse past it rather than queue: a body waiting for room still
//! holds its connection, its headers and the client's patience, and a
//! flood would fill the queue as it fills the budget. The refusal is 503
//! with `Retry-After`, as for core being away: the gateway is busy, which
//! no client caused alone (429 says the caller went past its own limit),
//! and every source already sends again after a 503.

use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};

use axum::body::Body;
use axum::extract::Request;
use bytes::{Bytes, BytesMut};
use http::HeaderMap;
use http::header::CONTENT_LENGTH;
use hyper::body::{Body as _, Frame, SizeHint};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The body bytes one gateway holds at once, over all its requests.
#[derive(Clone, Debug)]
pub struct BodyBudget {
    permits: Arc<Semaphore>,
    bytes: usize,
}

impl BodyBudget {
    pub fn new(bytes: usize) -> Self {
        Self { permits: Arc::new(Semaphore::new(bytes)), bytes }
    }

    /// The budget, in bytes.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The bytes free now.
    pub fn free(&self) -> usize {
        self.permits.available_permits()
    }

    /// `request` with its body counted against the budget as it is read,
    /// and the share the request holds: keep it until the request is
    /// answered. A piece that does not fit ends the body with an error and
    /// marks the share refused; answer such a request with [`Self::busy`].
    pub fn meter(&self, request: Request) -> (Request, Share) {
        let share = Share::default();
        let (parts, body) = request.into_parts();
        let metered = Metered { inner: body, permits: self.permits.clone(), share: share.clone() };
        (Request::from_parts(parts, Body::new(metered)), share)
    }

    /// What a refused request is told.
    pub fn busy(&self) -> String {
        format!(
            "this gateway is reading as many request bodies as it holds at once ({} MiB); try again in {} s",
            self.bytes / (1024 * 1024),
            crate::client::RETRY_AFTER_SECONDS
        )
    }
}

/// The part of the budget one request holds: the bytes of its body read
/// so far. Its bytes go back when the last clone is dropped, or pass on
/// with [`Share::take`] to whatever keeps the body longer (a queued
/// message).
#[derive(Clone, Debug, Default)]
pub struct Share(Arc<Mutex<Held>>);

#[derive(Debug, Default)]
struct Held {
    permits: Option<OwnedSemaphorePermit>,
    refused: bool,
}

impl Share {
    fn held(&self) -> MutexGuard<'_, Held> {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Whether a piece of the body did not fit in the budget.
    pub fn refused(&self) -> bool {
        self.held().refused
    }

    /// The bytes held now.
    pub fn bytes(&self) -> usize {
        self.held().permits.as_ref().map_or(0, OwnedSemaphorePermit::num_permits)
    }

    /// Takes the bytes held, to keep them beyond the request.
    pub fn take(&self) -> Option<OwnedSemaphorePermit> {
        self.held().permits.take()
    }

    /// Takes `bytes` more of the budget, or marks the share refused.
    fn grow(&self, permits: &Arc<Semaphore>, bytes: usize) -> bool {
        let taken = u32::try_from(bytes)
            .ok()
            .and_then(|bytes| permits.clone().try_acquire_many_owned(bytes).ok());
        let mut held = self.held();
        match (taken, held.permits.as_mut()) {
            (Some(taken), Some(permits)) => permits.merge(taken),
            (Some(taken), None) => held.permits = Some(taken),
            (None, _) => held.refused = true,
        }
        !held.refused
    }
}

/// The budget's refusal, as the body's error.
#[derive(Debug, thiserror::Error)]
#[error("the gateway's budget of request bodies is taken")]
struct OverBudget;

/// A request body whose every piece takes its bytes from the budget.
struct Metered {
    inner: Body,
    permits: Arc<Semaphore>,
    share: Share,
}

impl hyper::body::Body for Metered {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_frame(context) {
            Poll::Ready(Some(Ok(frame))) => {
                let bytes = frame.data_ref().map_or(0, Bytes::len);
                if bytes > 0 && !this.share.grow(&this.permits, bytes) {
                    return Poll::Ready(Some(Err(axum::Error::new(OverBudget))));
                }
                Poll::Ready(Some(Ok(frame)))
            }
            other => other,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// Why a body could not be read whole.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unread {
    /// Longer than `limit` bytes, declared or as sent.
    #[error("the request body is over {} KiB", .limit / 1024)]
    TooLarge { limit: usize },
    /// The client went away, or the budget refused it.
    #[error("the request body could not be read")]
    Failed,
}

/// The length a request declares, if it declares one.
pub fn declared_length(headers: &HeaderMap) -> Option<usize> {
    headers.get(CONTENT_LENGTH).and_then(|value| value.to_str().ok()?.parse().ok())
}

/// Reads a body of at most `limit` bytes into one buffer: of the declared
/// length when there is one (a longer declaration is refused before a byte
/// is read), otherwise grown as pieces arrive.
pub async fn read(body: Body, declared: Option<usize>, limit: usize) -> Result<Bytes, Unread> {
    if declared.is_some_and(|length| length > limit) {
        return Err(Unread::TooLarge { limit });
    }
    let mut buffer = BytesMut::with_capacity(declared.unwrap_or(0));
    let mut body = std::pin::pin!(body);
    while let Some(frame) = std::future::poll_fn(|context| body.as_mut().poll_frame(context)).await
    {
        let Ok(data) = frame.map_err(|_| Unread::Failed)?.into_data() else { continue };
        if buffer.len() + data.len() > limit {
            return Err(Unread::TooLarge { limit });
        }
        buffer.extend_from_slice(&data);
    }
    Ok(buffer.freeze())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A body sent in pieces.
    struct Pieces(std::collections::VecDeque<Bytes>);

    impl hyper::body::Body for Pieces {
        type Data = Bytes;
        type Error = std::convert::Infallible;

        fn poll_frame(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
            Poll::Ready(self.0.pop_front().map(|piece| Ok(Frame::data(piece))))
        }
    }

    /// A body sent in pieces of `piece` bytes, `total` in all.
    fn pieces(total: usize, piece: usize) -> Body {
        let chunks = (0..total)
            .step_by(piece)
            .map(|start| Bytes::from(vec![b'x'; piece.min(total - start)]))
            .collect();
        Body::new(Pieces(chunks))
    }

    fn request(body: Body) -> Request {
        Request::builder().method("POST").uri("/").body(body).unwrap()
    }

    #[tokio::test]
    async fn a_body_takes_its_bytes_while_its_request_lasts() {
        let budget = BodyBudget::new(1000);
        let (request, share) = budget.meter(request(pieces(600, 100)));
        let read = read(request.into_body(), Some(600), 1000).await.unwrap();
        assert_eq!((read.len(), share.bytes(), budget.free()), (600, 600, 400));
        drop(share);
        assert_eq!(budget.free(), 1000, "the bytes go back with the request");
    }

    #[tokio::test]
    async fn a_body_past_the_budget_is_refused_and_gives_back_what_it_took() {
        let budget = BodyBudget::new(1000);
        let (first, held) = budget.meter(request(pieces(700, 100)));
        read(first.into_body(), None, 1000).await.unwrap();
        let (second, refused) = budget.meter(request(pieces(700, 100)));
        assert_eq!(read(second.into_body(), None, 1000).await, Err(Unread::Failed));
        assert!(refused.refused() && !held.refused());
        drop(refused);
        assert_eq!(budget.free(), 300, "only the first body's bytes are held");
        let kept = held.take().unwrap();
        drop(held);
        assert_eq!((kept.num_permits(), budget.free()), (700, 300), "taken bytes stay taken");
        drop(kept);
        assert_eq!(budget.free(), 1000);
    }

    #[tokio::test]
    async fn a_body_longer_than_its_limit_is_refused() {
        assert_eq!(
            read(pieces(10, 10), Some(11), 10).await,
            Err(Unread::TooLarge { limit: 10 }),
            "by its declared length"
        );
        assert_eq!(
            read(pieces(11, 4), None, 10).await,
            Err(Unread::TooLarge { limit: 10 }),
            "as it is sent"
        );
        assert_eq!(read(pieces(10, 4), None, 10).await.unwrap().len(), 10);
    }
}
