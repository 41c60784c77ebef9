//! Owns the legacy HTTP+SSE transport (MCP 2024-11-05), for clients
//! configured with `"type": "sse"`: `GET /sse` opens an event stream whose
//! first event names the endpoint (`/messages?sessionId=…`), the client
//! POSTs each JSON-RPC message there (answered 202), and the replies come
//! back as `message` events on the stream.
//!
//! rmcp no longer ships this transport, so each stream runs the same tool
//! server as stdio does, with the stream's token fixed, over its own
//! transport (`queues`). Both routes go through the same guard as `/mcp`: `Host`,
//! `Origin`, the bearer token (every POST must carry the token that opened
//! the stream), the rate limits and the body limit. Each stream asks core
//! every few seconds whether its token still works, and ends when the
//! person disconnects the app or revokes the token.
//!
//! Who gets a stream when many are open is `room`'s to decide; what each
//! stream queues is counted in bytes, and a stream nobody reads is closed
//! once its replies wait too long (`queues`).

mod queues;
mod room;

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{Query, Request, State};
use axum::http::header::RETRY_AFTER;
use axum::http::{HeaderValue, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::{Stream, StreamExt};
use rmcp::ServiceExt;
use rmcp::model::ClientJsonRpcMessage;
use serde::Deserialize;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::guard::{self, Guard, INVALID_REQUEST};
use crate::legacy_sse::queues::{PERSON_POSTED_BYTES, POSTED_WAITING_BYTES, Posted, Queues};
use crate::legacy_sse::room::{Room, make_room};
use crate::metrics::count;
use crate::tools::{HadoMcp, SessionToken};
use hado_gateway::bodies::Share;
use hado_gateway::known_tokens::TokenDigest;

/// How often an open stream asks core whether its token still works, and
/// whether its replies wait unread too long.
const RECHECK_EVERY: Duration = Duration::from_secs(3);

/// The open streams, by session id.
pub(crate) struct Streams {
    /// The tool server each stream's is made from, sharing its tool list.
    tools: HadoMcp,
    guard: Arc<Guard>,
    open: Mutex<HashMap<String, OpenStream>>,
    stop: CancellationToken,
}

/// One open stream: whose token and person it is, and where its messages go.
struct OpenStream {
    owner: TokenDigest,
    person: String,
    /// The token the stream's tool server acts with.
    token: SessionToken,
    post: mpsc::UnboundedSender<Posted>,
    queues: Arc<Queues>,
    /// When it was opened or last posted to.
    used: Instant,
    /// Ends the stream and what serves it.
    stop: CancellationToken,
}

impl Streams {
    pub(crate) fn new(tools: HadoMcp, guard: Arc<Guard>, stop: CancellationToken) -> Self {
        Self { tools, guard, open: Mutex::default(), stop }
    }

    fn open(&self) -> std::sync::MutexGuard<'_, HashMap<String, OpenStream>> {
        self.open.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Whether `caller` may post to the stream `id`. Another person's
    /// stream is as unknown as a closed one; a new token of the stream's
    /// own person (its client refreshed) takes the stream over.
    async fn owned_by(&self, id: &str, caller: &guard::Caller) -> Result<bool, Response> {
        let found = self
            .open()
            .get(id)
            .map(|stream| (stream.owner == caller.digest, stream.person.clone()));
        match found {
            Some((true, _)) => Ok(true),
            Some((false, person)) => {
                if self.guard.person(caller).await? != person {
                    return Ok(false);
                }
                if let Some(stream) = self.open().get_mut(id) {
                    stream.owner = caller.digest;
                    stream.token.replace(caller.token.clone());
                }
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// A message of `bytes` counted into the stream `id`'s queue, and where
    /// to post it; `None` when the stream is gone, why not when it does not
    /// fit.
    #[allow(clippy::type_complexity, reason = "a pair, named at its one caller")]
    fn room_for(
        &self,
        id: &str,
        bytes: usize,
    ) -> Result<Option<(mpsc::UnboundedSender<Posted>, Arc<Queues>)>, String> {
        let mut open = self.open();
        let person_waiting = |person: &str| -> usize {
            open.values().filter(|stream| stream.person == person).map(|s| s.queues.posted()).sum()
        };
        let Some(stream) = open.get(id) else { return Ok(None) };
        no_room(stream.queues.posted(), person_waiting(&stream.person), bytes)
            .map_or(Ok(()), Err)?;
        let Some(stream) = open.get_mut(id) else { return Ok(None) };
        stream.queues.post(bytes);
        stream.used = Instant::now();
        Ok(Some((stream.post.clone(), stream.queues.clone())))
    }
}

/// Removes its stream when the client goes away (the response body is
/// dropped), and stops what serves it.
struct Closing {
    streams: Arc<Streams>,
    id: String,
    stop: CancellationToken,
}

impl Drop for Closing {
    fn drop(&mut self) {
        self.streams.open().remove(&self.id);
        self.stop.cancel();
    }
}

/// `GET /sse`: opens a stream for the caller's token.
pub(crate) async fn open(State(streams): State<Arc<Streams>>, request: Request) -> Response {
    let response = open_stream(streams, request).await;
    count("/sse", "GET".into(), &response);
    response
}

async fn open_stream(streams: Arc<Streams>, request: Request) -> Response {
    let caller = match streams.guard.caller(request.headers(), request.uri()).await {
        Ok(caller) => caller,
        Err(refused) => return refused,
    };
    let person = match streams.guard.person(&caller).await {
        Ok(person) => person,
        Err(refused) => return refused,
    };
    let id = session_id();
    let token = SessionToken::new(caller.token.clone());
    let (queues, post, transport, replies) = queues::queues();
    // This stream's end: the client leaving, the server stopping, its
    // place taken, its replies unread too long, or its token no longer
    // working.
    let stop = streams.stop.child_token();
    {
        let mut open = streams.open();
        let listed =
            open.iter().map(|(id, stream)| (id.as_str(), stream.person.as_str(), stream.used));
        let room = match make_room(listed, &person) {
            Room::Free => None,
            Room::InPlaceOf(taken) => Some(taken.to_owned()),
            Room::Refused(message) => {
                return guard::refusal(StatusCode::TOO_MANY_REQUESTS, &message, None);
            }
        };
        if let Some(taken) = room.and_then(|taken| open.remove(&taken)) {
            tracing::info!("an event stream gave its place to another person's");
            taken.stop.cancel();
        }
        open.insert(
            id.clone(),
            OpenStream {
                owner: caller.digest,
                person,
                token: token.clone(),
                post,
                queues: queues.clone(),
                used: Instant::now(),
                stop: stop.clone(),
            },
        );
    }

    tokio::spawn(serve_tools(streams.tools.for_session(token.clone()), transport, stop.clone()));
    tokio::spawn(watch(streams.guard.clone(), queues, token, stop.clone()));
    let closing = Closing { streams: streams.clone(), id, stop: stop.clone() };
    event_stream(closing, replies, stop)
}

/// The tool server of a stream, as over stdio: it ends when the stream
/// stops, and the stream ends with it (a client whose first message was
/// not `initialize`).
async fn serve_tools(server: HadoMcp, transport: queues::Tools, serving: CancellationToken) {
    if let Ok(running) = server.serve(transport).await {
        tokio::select! {
            _ = running.waiting() => {}
            _ = serving.cancelled() => {}
        }
    }
    serving.cancel();
}

/// Ends a stream within seconds of its app's disconnection or its token's
/// revocation, or once its replies are left unread.
async fn watch(
    guard: Arc<Guard>,
    queues: Arc<Queues>,
    token: SessionToken,
    watching: CancellationToken,
) {
    loop {
        tokio::select! {
            () = watching.cancelled() => return,
            () = tokio::time::sleep(RECHECK_EVERY) => {}
        }
        if queues.stalled(Instant::now()) {
            tracing::info!("an event stream closed: its replies were not read");
            watching.cancel();
            return;
        }
        if !guard.still_known(&token.current()).await {
            watching.cancel();
            return;
        }
    }
}

/// The stream's events: first the endpoint its messages are posted to,
/// then each reply, until it stops.
fn event_stream(closing: Closing, replies: queues::Replies, stop: CancellationToken) -> Response {
    let endpoint =
        Event::default().event("endpoint").data(format!("/messages?sessionId={}", closing.id));
    let messages = futures::stream::unfold(replies, |mut replies| async move {
        let reply = replies.next().await?;
        Some((reply, replies))
    });
    let messages = messages
        .map(|reply| Ok::<_, Infallible>(Event::default().event("message").data(reply.data)))
        .take_until(async move { stop.cancelled().await });
    let events =
        futures::stream::once(async move { Ok(endpoint) }).chain(messages).map(move |event| {
            let _keep = &closing;
            event
        });
    Sse::new(
        Box::pin(events) as std::pin::Pin<Box<dyn Stream<Item = Result<Event, Infallible>> + Send>>
    )
    .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
    .into_response()
}

#[derive(Deserialize)]
pub(crate) struct Session {
    #[serde(rename = "sessionId")]
    session_id: String,
}

/// `POST /messages?sessionId=…`: one JSON-RPC message for a stream's tool
/// server; the reply goes out on the stream.
pub(crate) async fn message(State(streams): State<Arc<Streams>>, request: Request) -> Response {
    let response = take_message(streams, request).await;
    count("/messages", "POST".into(), &response);
    response
}

async fn take_message(streams: Arc<Streams>, request: Request) -> Response {
    let session = Query::<Session>::try_from_uri(request.uri()).ok();
    let caller = match streams.guard.caller(request.headers(), request.uri()).await {
        Ok(caller) => caller,
        Err(refused) => return refused,
    };
    let (parts, body): (_, Body) = request.into_parts();
    let message = match streams.guard.message(&caller, &parts.headers, body).await {
        Ok(message) => message,
        Err(refused) => return refused,
    };
    let id = message.id.as_ref();
    let Some(Query(session)) = session else {
        return guard::refusal(
            StatusCode::BAD_REQUEST,
            "sessionId is required: open a stream with GET /sse first",
            id,
        );
    };
    let owned = match streams.owned_by(&session.session_id, &caller).await {
        Ok(owned) => owned,
        Err(refused) => return refused,
    };
    let gone = || {
        guard::refusal(
            StatusCode::NOT_FOUND,
            "no open stream has this sessionId: open one with GET /sse",
            id,
        )
    };
    if !owned {
        return gone();
    }
    let parsed = match serde_json::from_slice::<ClientJsonRpcMessage>(&message.body) {
        Ok(parsed) => parsed,
        Err(error) => {
            return guard::refusal_with(
                StatusCode::BAD_REQUEST,
                INVALID_REQUEST,
                &format!("the body is not a JSON-RPC message: {error}"),
                id,
                None,
            );
        }
    };
    let bytes = message.body.len();
    let (post, queues) = match streams.room_for(&session.session_id, bytes) {
        Ok(Some(room)) => room,
        Ok(None) => return gone(),
        Err(refused) => return too_many(&refused, id),
    };
    let budget = parts.extensions.get::<Share>().and_then(Share::take);
    match post.send(Posted { message: parsed, bytes, budget }) {
        Ok(()) => StatusCode::ACCEPTED.into_response(),
        Err(_) => {
            queues.unpost(bytes);
            gone()
        }
    }
}

/// Why a message of `bytes` does not fit, with `stream` bytes waiting on
/// its stream and `person` over all its person's: none when it does. A
/// message always fits where nothing waits.
fn no_room(stream: usize, person: usize, bytes: usize) -> Option<String> {
    let kib = |bytes: usize| bytes / 1024;
    if stream > 0 && stream + bytes > POSTED_WAITING_BYTES {
        return Some(format!(
            "this stream's tool server has not taken {} KiB of messages (at most {} KiB wait): read the replies on its event stream",
            kib(stream),
            kib(POSTED_WAITING_BYTES)
        ));
    }
    if person > 0 && person + bytes > PERSON_POSTED_BYTES {
        return Some(format!(
            "your event streams have {} KiB of messages waiting (at most {} KiB): read their replies",
            kib(person),
            kib(PERSON_POSTED_BYTES)
        ));
    }
    None
}

/// A 429 that says to retry once the stream's replies are read.
fn too_many(message: &str, id: Option<&serde_json::Value>) -> Response {
    let retry_after = hado_gateway::client::RETRY_AFTER_SECONDS;
    let mut response = guard::refusal_with(
        StatusCode::TOO_MANY_REQUESTS,
        guard::REFUSED,
        message,
        id,
        Some(serde_json::json!({ "retry_after": retry_after })),
    );
    response.headers_mut().insert(RETRY_AFTER, HeaderValue::from(retry_after));
    response
}

/// 128 random bits, in hex: a session id no one can guess.
fn session_id() -> String {
    hex::encode(rand::random::<[u8; 16]>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_fits_where_nothing_waits_and_no_more_past_the_caps() {
        assert_eq!(no_room(0, 0, POSTED_WAITING_BYTES), None);
        assert!(no_room(1, 1, POSTED_WAITING_BYTES).is_some(), "the stream's cap");
        assert_eq!(no_room(1000, 1000, 1000), None);
        let person = no_room(0, PERSON_POSTED_BYTES - 10, 100).unwrap();
        assert!(person.starts_with("your event streams have 2047 KiB"), "{person}");
    }
}
