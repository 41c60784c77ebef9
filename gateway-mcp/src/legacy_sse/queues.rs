//! Owns a legacy stream's two queues, counted in bytes: the messages its
//! client posted that its tool server has not taken yet, and the replies
//! the tool server gave that the client has not read yet. They are the
//! transport the stream's tool server runs on.
//!
//! How a stream nobody reads stops costing: its tool server takes the next
//! message only while fewer than [`REPLIES_WAITING_BYTES`] of replies wait
//! and fewer than [`UNANSWERED`] requests are being answered, so the
//! replies an unread stream holds are bounded; its posted messages then
//! wait, and a post past [`POSTED_WAITING_BYTES`] (or its person's
//! [`PERSON_POSTED_BYTES`]) is refused at once instead of waiting; and a
//! stream whose replies have waited unread for [`STALLED`] is closed
//! (`Queues::stalled`). Each posted message keeps the bytes it took of the
//! gateway's budget of bodies (`hado_gateway::bodies`) until its tool
//! server takes it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, JsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::{Notify, OwnedSemaphorePermit, mpsc};

/// Bytes of posted messages waiting for one stream's tool server; a
/// message of the largest body always fits a stream with none waiting.
pub(crate) const POSTED_WAITING_BYTES: usize = crate::guard::MAX_BODY_BYTES;
/// Bytes of posted messages waiting over all of one person's streams.
pub(crate) const PERSON_POSTED_BYTES: usize = 2 * POSTED_WAITING_BYTES;
/// Bytes of replies waiting to be read on one stream before its tool
/// server stops taking messages.
pub(crate) const REPLIES_WAITING_BYTES: usize = 1024 * 1024;
/// Requests one stream's tool server answers at once.
pub(crate) const UNANSWERED: usize = 4;
/// How long replies may wait unread before their stream is closed.
pub(crate) const STALLED: Duration = Duration::from_secs(30);

/// A message posted to a stream, with what it holds of the budget.
pub(crate) struct Posted {
    pub(crate) message: ClientJsonRpcMessage,
    pub(crate) bytes: usize,
    pub(crate) budget: Option<OwnedSemaphorePermit>,
}

/// A reply for the stream, as the event's data.
pub(crate) struct Reply {
    pub(crate) data: String,
}

/// What the route, the tool server and the stream's writer share.
#[derive(Debug)]
pub(crate) struct Queues {
    posted_bytes: AtomicUsize,
    reply_bytes: AtomicUsize,
    unanswered: AtomicUsize,
    /// Since when replies wait unread: set when one is queued with none
    /// waiting and moved on each time the writer takes one.
    waiting_since: Mutex<Option<Instant>>,
    /// Wakes the tool server when a reply is read or a request answered.
    room: Notify,
}

impl Queues {
    fn new() -> Self {
        Self {
            posted_bytes: AtomicUsize::new(0),
            reply_bytes: AtomicUsize::new(0),
            unanswered: AtomicUsize::new(0),
            waiting_since: Mutex::new(None),
            room: Notify::new(),
        }
    }

    /// Bytes posted and not yet taken.
    pub(crate) fn posted(&self) -> usize {
        self.posted_bytes.load(Ordering::Acquire)
    }

    /// Counts `bytes` posted.
    pub(crate) fn post(&self, bytes: usize) {
        self.posted_bytes.fetch_add(bytes, Ordering::AcqRel);
    }

    /// Forgets `bytes` posted to a tool server that had already ended.
    pub(crate) fn unpost(&self, bytes: usize) {
        self.posted_bytes.fetch_sub(bytes, Ordering::AcqRel);
    }

    /// Bytes of replies not yet read.
    #[cfg(test)]
    fn replies(&self) -> usize {
        self.reply_bytes.load(Ordering::Acquire)
    }

    /// Whether replies have waited unread for [`STALLED`] by `now`.
    pub(crate) fn stalled(&self, now: Instant) -> bool {
        let since = *self.waiting_since.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        since.is_some_and(|since| now.duration_since(since) >= STALLED)
    }

    fn has_room(&self) -> bool {
        self.reply_bytes.load(Ordering::Acquire) < REPLIES_WAITING_BYTES
            && self.unanswered.load(Ordering::Acquire) < UNANSWERED
    }

    /// The writer took a reply of `bytes`.
    fn read(&self, bytes: usize) {
        let left = self.reply_bytes.fetch_sub(bytes, Ordering::AcqRel) - bytes;
        *self.waiting_since.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) =
            (left > 0).then(Instant::now);
        self.room.notify_one();
    }
}

/// A stream's queues: the side the route posts to, the tool server's
/// transport, and the replies for the writer.
pub(crate) fn queues() -> (Arc<Queues>, mpsc::UnboundedSender<Posted>, Tools, Replies) {
    let queues = Arc::new(Queues::new());
    let (post, posted) = mpsc::unbounded_channel();
    let (reply, replies) = mpsc::unbounded_channel();
    let tools = Tools { queues: queues.clone(), posted, replies: reply };
    (queues.clone(), post, tools, Replies { queues, replies })
}

/// The tool server's transport.
pub(crate) struct Tools {
    queues: Arc<Queues>,
    posted: mpsc::UnboundedReceiver<Posted>,
    replies: mpsc::UnboundedSender<(Reply, usize)>,
}

#[derive(Debug, thiserror::Error)]
#[error("the event stream is closed")]
pub(crate) struct Closed;

impl Transport<RoleServer> for Tools {
    type Error = Closed;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Closed>> + Send + 'static {
        let queues = &self.queues;
        if matches!(item, JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_)) {
            let _ = queues
                .unanswered
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |count| count.checked_sub(1));
        }
        let sent = match serde_json::to_string(&item) {
            Ok(data) => {
                let bytes = data.len();
                if queues.reply_bytes.fetch_add(bytes, Ordering::AcqRel) == 0 {
                    let mut since = queues
                        .waiting_since
                        .lock()
                        .unwrap_or_else(|poisoned| poisoned.into_inner());
                    since.get_or_insert_with(Instant::now);
                }
                self.replies.send((Reply { data }, bytes)).map_err(|_| Closed)
            }
            Err(error) => {
                tracing::warn!(%error, "a reply could not be written as JSON");
                Ok(())
            }
        };
        queues.room.notify_one();
        std::future::ready(sent)
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            let room = self.queues.room.notified();
            if self.queues.has_room() {
                break;
            }
            room.await;
        }
        let posted = self.posted.recv().await?;
        self.queues.posted_bytes.fetch_sub(posted.bytes, Ordering::AcqRel);
        if matches!(posted.message, JsonRpcMessage::Request(_)) {
            self.queues.unanswered.fetch_add(1, Ordering::AcqRel);
        }
        drop(posted.budget);
        Some(posted.message)
    }

    async fn close(&mut self) -> Result<(), Closed> {
        Ok(())
    }
}

/// The replies, for the stream's writer.
pub(crate) struct Replies {
    queues: Arc<Queues>,
    replies: mpsc::UnboundedReceiver<(Reply, usize)>,
}

impl Replies {
    /// The next reply, counted as read.
    pub(crate) async fn next(&mut self) -> Option<Reply> {
        let (reply, bytes) = self.replies.recv().await?;
        self.queues.read(bytes);
        Some(reply)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{EmptyResult, NumberOrString, ServerResult};

    fn ping(id: i64) -> Posted {
        let message: ClientJsonRpcMessage = serde_json::from_value(
            serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "ping"}),
        )
        .unwrap();
        Posted { message, bytes: 100, budget: None }
    }

    fn answer(id: i64) -> ServerJsonRpcMessage {
        ServerJsonRpcMessage::response(
            ServerResult::EmptyResult(EmptyResult {}),
            NumberOrString::Number(id),
        )
    }

    #[tokio::test]
    async fn an_unread_stream_stops_taking_requests_and_is_stalled_in_time() {
        let (queues, post, mut tools, mut replies) = queues();
        for id in 0..10 {
            queues.post(100);
            post.send(ping(id)).unwrap();
        }
        for id in 0..UNANSWERED as i64 {
            assert!(tools.receive().await.is_some(), "request {id} is taken");
        }
        let taken = tokio::time::timeout(Duration::from_millis(50), tools.receive()).await;
        assert!(taken.is_err(), "no more than {UNANSWERED} requests are answered at once");
        assert_eq!(queues.posted(), 600, "what was not taken still waits, counted");

        tools.send(answer(0)).await.unwrap();
        assert!(tools.receive().await.is_some(), "an answer makes room for one more");
        assert!(queues.replies() > 0 && !queues.stalled(Instant::now()));
        assert!(queues.stalled(Instant::now() + STALLED), "replies unread for {STALLED:?}");
        replies.next().await.unwrap();
        assert_eq!(queues.replies(), 0);
        assert!(!queues.stalled(Instant::now() + STALLED), "read replies are not waiting");
    }

    #[tokio::test]
    async fn replies_waiting_past_their_bytes_stop_the_tool_server() {
        let (queues, post, mut tools, mut replies) = queues();
        queues.reply_bytes.store(REPLIES_WAITING_BYTES, Ordering::Release);
        post.send(ping(1)).unwrap();
        let taken = tokio::time::timeout(Duration::from_millis(50), tools.receive()).await;
        assert!(taken.is_err(), "a stream with a megabyte of replies unread takes nothing");
        tools.replies.send((Reply { data: String::new() }, REPLIES_WAITING_BYTES)).unwrap();
        replies.next().await.unwrap();
        assert!(tools.receive().await.is_some(), "a read reply makes room");
    }
}
