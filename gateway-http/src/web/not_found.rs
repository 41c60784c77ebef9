//! Owns what an unknown address answers: a page for a browser, the JSON
//! error for a program.

use std::net::SocketAddr;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use hado_words as words;

use crate::state::AppState;
use crate::web::render::{MessagePage, message, render};
use crate::web::session::Session;

/// What an unknown address answers: for a browser (one that asks for
/// HTML), a whole page with a way back, in the person's language when they
/// are signed in and in both languages otherwise; the JSON error for a
/// program.
pub(crate) async fn not_found(State(state): State<AppState>, request: Request) -> Response {
    let (headers, uri) = (request.headers(), request.uri());
    let peer = request.extensions().get::<ConnectInfo<SocketAddr>>().map(|info| info.0);
    let browser = headers
        .get(axum::http::header::ACCEPT)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|accept| accept.contains("text/html"));
    let api = ["/api/", "/me", "/a/", "/c/", "/ics/", "/hooks/"]
        .iter()
        .any(|prefix| uri.path().starts_with(prefix));
    if !browser || api {
        return crate::error::ApiError::new(StatusCode::NOT_FOUND, "no such page").into_response();
    }
    let session = match peer {
        Some(peer) => Session::start(&state, peer, headers, None).await.ok(),
        None => None,
    };
    match session {
        Some(session) => {
            let (words, nav) = (session.words, session.nav(""));
            let message = words.no_page.to_owned();
            let page =
                MessagePage { words, nav, message, second: String::new(), second_words: None };
            render(StatusCode::NOT_FOUND, page)
        }
        None => message(StatusCode::NOT_FOUND, words::EN.no_page, words::RU.no_page),
    }
}
