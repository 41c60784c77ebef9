//! Owns the legacy HTTP+SSE transport (MCP 2024-11-05), for clients
//! configured with `"type": "sse"`: `GET /sse` opens an event stream whose
//! first event names the endpoint (`/messages?sessionId=…`), the client
//! POSTs each JSON-RPC message there (answered 202), and the replies come
//! back as `message` events on the stream.
//!
//! rmcp no longer ships this transport, so each stream runs the same tool
//! server as stdio does, with the stream's token fixed, over a pair of
//! channels. Both routes go through the same guard as `/mcp`: `Host`,
//! `Origin`, the bearer token (every POST must carry the token that opened
//! the stream), the rate limits and the body limit. A person holds at most
//! eight streams, whatever tokens they come with; each stream asks core
//! every few seconds whether its token still works, and ends when the
//! person disconnects the app or revokes the token.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Query, Request, State};
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::channel::mpsc;
use futures::{SinkExt, Stream, StreamExt};
use rmcp::ServiceExt;
use rmcp::model::ClientJsonRpcMessage;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use crate::core_link::Core;
use crate::guard::{self, Guard, INVALID_REQUEST};
use crate::metrics::count;
use crate::tools::{HadoMcp, SessionToken};
use hado_gateway::known_tokens::TokenDigest;

/// Open streams at most, over all tokens; each holds a tool server.
const MAX_STREAMS: usize = 256;
/// Open streams at most per person, over all their tokens.
const MAX_STREAMS_PER_PERSON: usize = 8;
/// How often an open stream asks core whether its token still works.
const RECHECK_EVERY: Duration = Duration::from_secs(3);
/// Messages waiting for the tool server of one stream.
const QUEUE: usize = 16;

/// The open streams, by session id.
pub(crate) struct Streams {
    core: Core,
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
    inbound: mpsc::Sender<ClientJsonRpcMessage>,
}

impl Streams {
    pub(crate) fn new(core: Core, guard: Arc<Guard>, stop: CancellationToken) -> Self {
        Self { core, guard, open: Mutex::default(), stop }
    }

    fn open(&self) -> std::sync::MutexGuard<'_, HashMap<String, OpenStream>> {
        self.open.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
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
    let (inbound, received) = mpsc::channel::<ClientJsonRpcMessage>(QUEUE);
    let (replies, outbound) = mpsc::channel(QUEUE);
    {
        let mut open = streams.open();
        let owned = open.values().filter(|stream| stream.person == person).count();
        if open.len() >= MAX_STREAMS || owned >= MAX_STREAMS_PER_PERSON {
            let message = format!(
                "too many open event streams: at most {MAX_STREAMS_PER_PERSON} per person; close one or use /mcp"
            );
            return guard::refusal(StatusCode::TOO_MANY_REQUESTS, &message, None);
        }
        open.insert(
            id.clone(),
            OpenStream { owner: caller.digest, person, token: token.clone(), inbound },
        );
    }
    // This stream's end: the client leaving, the server stopping, or the
    // token no longer working.
    let stop = streams.stop.child_token();

    // The tool server of this stream, as over stdio: it ends when the
    // client's messages end (the stream closed) or the stream stops.
    let server = HadoMcp::new(streams.core.clone(), Some(token.clone()));
    let serving = stop.clone();
    tokio::spawn(async move {
        let Ok(running) = server.serve((replies, received)).await else { return };
        tokio::select! {
            _ = running.waiting() => {}
            _ = serving.cancelled() => {}
        }
    });
    // A disconnected app or a revoked token ends the stream within seconds.
    let (guard, watching) = (streams.guard.clone(), stop.clone());
    tokio::spawn(async move {
        loop {
            tokio::select! {
                () = watching.cancelled() => return,
                () = tokio::time::sleep(RECHECK_EVERY) => {}
            }
            if !guard.still_known(&token.current()).await {
                watching.cancel();
                return;
            }
        }
    });

    let endpoint = Event::default().event("endpoint").data(format!("/messages?sessionId={id}"));
    let closing = Closing { streams: streams.clone(), id, stop: stop.clone() };
    let messages = outbound
        .map(|message| {
            Ok::<_, Infallible>(
                Event::default()
                    .event("message")
                    .json_data(message)
                    .unwrap_or_else(|_| Event::default().comment("unserialisable")),
            )
        })
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
    // Another person's stream is as unknown as a closed one. A new token of
    // the stream's own person (its client refreshed) takes the stream over.
    let found = streams
        .open()
        .get(&session.session_id)
        .map(|stream| (stream.owner == caller.digest, stream.person.clone()));
    let owned = match found {
        Some((true, _)) => true,
        Some((false, person)) => match streams.guard.person(&caller).await {
            Ok(caller_person) if caller_person == person => {
                if let Some(stream) = streams.open().get_mut(&session.session_id) {
                    stream.owner = caller.digest;
                    stream.token.replace(caller.token.clone());
                }
                true
            }
            Ok(_) => false,
            Err(refused) => return refused,
        },
        None => false,
    };
    let inbound = streams
        .open()
        .get(&session.session_id)
        .filter(|_| owned)
        .map(|stream| stream.inbound.clone());
    let Some(mut inbound) = inbound else {
        return guard::refusal(
            StatusCode::NOT_FOUND,
            "no open stream has this sessionId: open one with GET /sse",
            id,
        );
    };
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
    match inbound.send(parsed).await {
        Ok(()) => StatusCode::ACCEPTED.into_response(),
        Err(_) => guard::refusal(
            StatusCode::NOT_FOUND,
            "no open stream has this sessionId: open one with GET /sse",
            id,
        ),
    }
}

/// 128 random bits, in hex: a session id no one can guess.
fn session_id() -> String {
    hex::encode(rand::random::<[u8; 16]>())
}
