//! Owns how a list of events goes out as JSON: `{"events":[…]}` (and the
//! cursor of the page that follows, `"next"`) written a couple of hundred
//! events at a time while the body is sent, each turned into its view only
//! when its turn comes, and read from core a page at a time. A list of a
//! thousand events is then never held as views, nor as one JSON buffer of
//! several hundred kilobytes.

use std::pin::Pin;

use axum::body::{Body, Bytes};
use axum::http::HeaderValue;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use futures::{Stream, StreamExt};

/// Events serialised into each piece of the body.
const EVENTS_PER_PIECE: usize = 200;

/// Pages of events as core sends them; a failed page ends the body there.
pub(crate) type Pages<E> = Pin<Box<dyn Stream<Item = Result<Vec<E>, tonic::Status>> + Send>>;

/// One page: the whole list, read at once.
pub(crate) fn one_page<E: Send + 'static>(events: Vec<E>) -> Pages<E> {
    Box::pin(futures::stream::once(async move { Ok(events) }))
}

/// What is left to write.
struct Writer<E> {
    pages: Pages<E>,
    current: std::vec::IntoIter<E>,
    /// The cursor written after the list, when more follow it.
    next: Option<String>,
    opened: bool,
    wrote_one: bool,
    done: bool,
}

/// `{"events": [view of each event, …]}` as a streamed JSON body, reading
/// the next page of `pages` only when the last one is written out; `write`
/// serialises one event's view; with `next`, `"next": next` follows the
/// list. A page that fails after the reply began cuts the body short (the
/// client sees an incomplete reply, never a complete-looking shorter list).
pub(crate) fn events_json<E>(
    pages: Pages<E>,
    write: fn(&E, &mut Vec<u8>) -> serde_json::Result<()>,
    next: Option<String>,
) -> Response
where
    E: Send + 'static,
{
    let writer = Writer {
        pages,
        current: Vec::new().into_iter(),
        next,
        opened: false,
        wrote_one: false,
        done: false,
    };
    let pieces = futures::stream::unfold(writer, move |mut writer| async move {
        if writer.done {
            return None;
        }
        let mut piece = Vec::with_capacity(EVENTS_PER_PIECE * 512);
        if !writer.opened {
            piece.extend_from_slice(br#"{"events":["#);
            writer.opened = true;
        }
        let mut written = 0;
        while written < EVENTS_PER_PIECE {
            match writer.current.next() {
                Some(event) => {
                    if writer.wrote_one {
                        piece.push(b',');
                    }
                    writer.wrote_one = true;
                    // A view of plain strings, numbers and lists always serialises.
                    write(&event, &mut piece).expect("an event view serialises");
                    written += 1;
                }
                None => match writer.pages.next().await {
                    Some(Ok(page)) => writer.current = page.into_iter(),
                    Some(Err(status)) => {
                        tracing::warn!(code = ?status.code(), "a later page of a list failed; the reply is cut short");
                        writer.done = true;
                        return Some((Err(status), writer));
                    }
                    None => {
                        piece.push(b']');
                        if let Some(next) = writer.next.take() {
                            piece.extend_from_slice(br#","next":"#);
                            // A string always serialises.
                            serde_json::to_writer(&mut piece, &next).expect("a string serialises");
                        }
                        piece.push(b'}');
                        writer.done = true;
                        break;
                    }
                },
            }
        }
        Some((Ok(Bytes::from(piece)), writer))
    });
    // Fused: a layer over the body (compression) may ask again after the end.
    let mut response = Body::from_stream(futures::StreamExt::fuse(pieces)).into_response();
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn text(response: Response) -> String {
        String::from_utf8(
            axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap().to_vec(),
        )
        .unwrap()
    }

    #[tokio::test]
    async fn the_streamed_list_is_the_json_of_the_whole_list() {
        fn view(number: &usize) -> serde_json::Value {
            serde_json::json!({ "id": number })
        }
        fn write(number: &usize, out: &mut Vec<u8>) -> serde_json::Result<()> {
            serde_json::to_writer(out, &view(number))
        }
        for count in [
            0,
            1,
            EVENTS_PER_PIECE - 1,
            EVENTS_PER_PIECE,
            EVENTS_PER_PIECE + 1,
            3 * EVENTS_PER_PIECE + 7,
        ] {
            let numbers: Vec<usize> = (0..count).collect();
            let expected =
                serde_json::json!({ "events": numbers.iter().map(view).collect::<Vec<_>>() });
            let streamed: serde_json::Value = serde_json::from_str(
                &text(events_json(one_page(numbers.clone()), write, None)).await,
            )
            .unwrap();
            assert_eq!(streamed, expected, "{count} events");
            // With the next page's cursor after the list.
            let with_next: serde_json::Value = serde_json::from_str(
                &text(events_json(one_page(numbers.clone()), write, Some("9.\"7".into()))).await,
            )
            .unwrap();
            let mut expected_next = expected.clone();
            expected_next["next"] = serde_json::json!("9.\"7");
            assert_eq!(with_next, expected_next, "{count} events and a cursor");
            // The same list in pages of 150, an empty page among them.
            let mut pages: Vec<Vec<usize>> = numbers.chunks(150).map(<[usize]>::to_vec).collect();
            pages.insert(pages.len() / 2, Vec::new());
            let paged = Box::pin(futures::stream::iter(pages.into_iter().map(Ok)));
            let streamed: serde_json::Value =
                serde_json::from_str(&text(events_json(paged, write, None)).await).unwrap();
            assert_eq!(streamed, expected, "{count} events in pages");
        }
    }
}
