//! Owns how a list of events goes out as JSON: `{"events":[…]}` written a
//! couple of hundred events at a time while the body is sent, each turned
//! into its view only when its turn comes. A 10,000-event list is then held
//! once, as core sent it, instead of again as views and again as one JSON
//! buffer of several megabytes.

use axum::body::{Body, Bytes};
use axum::http::HeaderValue;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};

/// Events serialised into each piece of the body.
const EVENTS_PER_PIECE: usize = 200;

/// `{"events": [view of each event, …]}` as a streamed JSON body; `write`
/// serialises one event's view.
pub(crate) fn events_json<E>(events: Vec<E>, write: fn(&E, &mut Vec<u8>) -> serde_json::Result<()>) -> Response
where
    E: Send + 'static,
{
    let mut events = events.into_iter().peekable();
    let mut opened = false;
    let mut closed = false;
    let pieces = std::iter::from_fn(move || {
        if closed {
            return None;
        }
        let mut piece = Vec::with_capacity(EVENTS_PER_PIECE * 512);
        if !opened {
            piece.extend_from_slice(br#"{"events":["#);
        }
        for _ in 0..EVENTS_PER_PIECE {
            let Some(event) = events.next() else { break };
            if opened {
                piece.push(b',');
            }
            opened = true;
            // A view of plain strings, numbers and lists always serialises.
            write(&event, &mut piece).expect("an event view serialises");
        }
        opened = true;
        if events.peek().is_none() {
            piece.extend_from_slice(b"]}");
            closed = true;
        }
        Some(Ok::<_, std::convert::Infallible>(Bytes::from(piece)))
    });
    let mut response = Body::from_stream(futures::stream::iter(pieces)).into_response();
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn text(response: Response) -> String {
        String::from_utf8(axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap().to_vec()).unwrap()
    }

    #[tokio::test]
    async fn the_streamed_list_is_the_json_of_the_whole_list() {
        fn view(number: &usize) -> serde_json::Value {
            serde_json::json!({ "id": number })
        }
        fn write(number: &usize, out: &mut Vec<u8>) -> serde_json::Result<()> {
            serde_json::to_writer(out, &view(number))
        }
        for count in [0, 1, EVENTS_PER_PIECE - 1, EVENTS_PER_PIECE, EVENTS_PER_PIECE + 1, 3 * EVENTS_PER_PIECE + 7] {
            let numbers: Vec<usize> = (0..count).collect();
            let expected = serde_json::json!({ "events": numbers.iter().map(view).collect::<Vec<_>>() });
            let streamed: serde_json::Value = serde_json::from_str(&text(events_json(numbers, write)).await).unwrap();
            assert_eq!(streamed, expected, "{count} events");
        }
    }
}
