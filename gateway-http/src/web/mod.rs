//! Owns the web inbox: server-rendered pages (templates compiled into the
//! binary) that work without JavaScript, with plain forms and
//! POST-redirect-GET, in English and Russian; and the action-link pages at
//! `/a/<token>`. Every page is gRPC calls to core as the signed-in person.
//!
//! One file per page family: `inbox` (the groups and the archive, with
//! `finder`, their search form), `events` (an event's page, Add and Edit),
//! `answers` (the card buttons),
//! `quick` (the
//! Add page and its one-line quick add), `said` (what the inbox says after
//! an answer), `settings`,
//! `confirm` (the confirmation pages), `authorize` (letting an app sign
//! in), `links` (action links) and `nav` (what tops every page); `session`
//! is who a page is for; this file holds what they share: rendering, the
//! failure pages, the cross-site
//! guard and the static files.

mod answers;
mod app;
mod authorize;
mod channel_links;
mod channels;
mod confirm;
mod events;
mod finder;
mod inbox;
mod links;
mod nav;
mod quick;
pub(crate) mod said;
mod session;
mod settings;
pub(crate) mod view;

pub(crate) use hado_words as words;

pub(crate) use answers::{delete, done, remember, reopen, take_back_remember};
pub(crate) use app::{THEME_DARK, THEME_LIGHT, icon, manifest, offline, service_worker};
pub(crate) use authorize::{
    MAX_REQUEST_BYTES as MAX_AUTHORIZE_BYTES, authorize, authorize_page, limits as authorize_limits,
};
pub(crate) use channel_links::{channel_link_page, use_channel_link};
pub(crate) use channels::{
    add_email, add_webhook, channel_action, issue_calendar_feed, link_telegram, rename_channel,
    revoke_calendar_feed,
};
pub(crate) use confirm::{
    confirm_app_disconnect, confirm_channel, confirm_delete, confirm_revoke_agent_token,
    confirm_revoke_calendar_feed,
};
pub(crate) use events::{create, edit_page, event_page, update};
pub(crate) use inbox::{archive_page, inbox_page};
pub(crate) use links::{link_page, use_link};
pub(crate) use quick::{new_page, read_line};
pub(crate) use settings::{
    disconnect_app, issue_agent_token, revoke_agent_token, save_settings, save_zone, settings_page,
};

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::LazyLock;

use askama::Template;
use axum::Form;
use axum::extract::{ConnectInfo, Path, Query, Request, State};
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Redirect, Response};
use tonic::Code;
use tonic_types::StatusExt;

use hado_gateway::client::Failure;
use hado_proto::v1;
use hado_proto::v1::EventState;

use crate::error::ApiError;
use crate::state::AppState;
use nav::Nav;
use said::{Said, redirect_saying};
pub(crate) use session::{Person, Session};
use view::{Card, Groups, Viewer};
use words::Words;

#[derive(Template)]
#[template(path = "message.html")]
struct MessagePage {
    words: &'static Words,
    nav: Option<Nav>,
    message: String,
    /// The message again in Russian, for someone whose language is unknown,
    /// and the words of that second language.
    second: String,
    second_words: Option<&'static Words>,
}

fn render(status: StatusCode, page: impl Template) -> Response {
    match page.render() {
        Ok(html) => {
            let mut response = (status, Html(html)).into_response();
            response.headers_mut().insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
            response
        }
        Err(error) => {
            tracing::error!(%error, "a page failed to render");
            (StatusCode::INTERNAL_SERVER_ERROR, "the page failed to render").into_response()
        }
    }
}

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

/// A page with one message, in both languages when the person is unknown.
fn message(status: StatusCode, english: &str, russian: &str) -> Response {
    render(
        status,
        MessagePage {
            words: &words::EN,
            nav: None,
            message: english.to_owned(),
            second: russian.to_owned(),
            second_words: Some(&words::RU),
        },
    )
}

/// What a failed call to core shows on a page.
fn failure_page(state: &AppState, words: &'static Words, status: &tonic::Status) -> Response {
    match state.core.explain(status) {
        Failure::Unreachable(_) => {
            let mut page = render(
                StatusCode::SERVICE_UNAVAILABLE,
                MessagePage {
                    words,
                    nav: None,
                    message: words.core_down.into(),
                    second: String::new(),
                    second_words: None,
                },
            );
            page.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                axum::http::HeaderValue::from(hado_gateway::client::RETRY_AFTER_SECONDS),
            );
            page
        }
        failure => {
            let error = ApiError::from_core(&state.core, status);
            // Core's words for the person when it gave them, else its message.
            let message = status
                .get_details_localized_message()
                .map_or_else(|| failure.message().to_owned(), |localized| localized.message);
            let mut page = render(
                error.status,
                MessagePage {
                    words,
                    nav: None,
                    message,
                    second: String::new(),
                    second_words: None,
                },
            );
            // A refusal for asking too often says when to ask again.
            if failure.code().retry_helps()
                && let Some(wait) =
                    status.get_details_retry_info().and_then(|info| info.retry_delay)
            {
                page.headers_mut().insert(
                    axum::http::header::RETRY_AFTER,
                    axum::http::HeaderValue::from(wait.as_secs().max(1)),
                );
            }
            page
        }
    }
}

/// Core's reply to one of a page's calls, or the page that says why it
/// failed, in `words`'s words: the step every page takes with a call, as
/// `AppState::call` is for the JSON routes.
pub(crate) async fn call<T>(
    state: &AppState,
    words: &'static Words,
    reply: impl Future<Output = Result<tonic::Response<T>, tonic::Status>>,
) -> Result<T, Response> {
    reply
        .await
        .map(tonic::Response::into_inner)
        .map_err(|status| failure_page(state, words, &status))
}

/// As [`call`], but a refusal with one of the `kept` codes comes back for
/// the page to show beside its form; any other failure is its own page.
pub(crate) async fn call_keeping<T>(
    state: &AppState,
    words: &'static Words,
    kept: &[Code],
    reply: impl Future<Output = Result<tonic::Response<T>, tonic::Status>>,
) -> Result<Result<T, tonic::Status>, Response> {
    match reply.await {
        Ok(reply) => Ok(Ok(reply.into_inner())),
        Err(status) if kept.contains(&status.code()) => Ok(Err(status)),
        Err(status) => Err(failure_page(state, words, &status)),
    }
}

/// Puts core's refusal next to the fields it names, or above the form.
fn refusal(state: &AppState, status: &tonic::Status) -> (HashMap<String, String>, String) {
    let error = ApiError::from_core(&state.core, status);
    if error.body.violations.is_empty() {
        return (HashMap::new(), error.body.error);
    }
    let words =
        |violation: crate::error::Violation| violation.localized.unwrap_or(violation.message);
    (
        error
            .body
            .violations
            .into_iter()
            .map(|violation| (violation.field.clone(), words(violation)))
            .collect(),
        String::new(),
    )
}

/// Refuses form posts that another site's page sends in the person's name:
/// the browser's `Sec-Fetch-Site` or `Origin` must say the form is ours.
pub(crate) async fn same_origin_forms(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let peer = request.extensions().get::<ConnectInfo<SocketAddr>>().map(|info| info.0);
    if request.method() != Method::GET
        && request.method() != Method::HEAD
        && crate::edge::cross_site(&state, peer, request.headers()).is_some()
    {
        return message(
            StatusCode::FORBIDDEN,
            "This form was sent from another site, so it was not accepted.",
            "Эта форма отправлена с другого сайта, поэтому не принята.",
        );
    }
    next.run(request).await
}

const STYLESHEET: &str = include_str!("../../static/hado.css");
const SCRIPT: &str = include_str!("../../static/hado.js");

/// A fingerprint of the static files, which pages add to their addresses
/// (`/static/hado.css?v=…`): a new build's files have a new address, so a
/// browser may keep each one for a year without asking again.
pub(crate) static ASSETS: LazyLock<String> = LazyLock::new(|| {
    use sha2::{Digest, Sha256};
    let digest = Sha256::new().chain_update(STYLESHEET).chain_update(SCRIPT).finalize();
    hex::encode(&digest[..6])
});

/// How long a browser keeps a static file: a year when asked for by this
/// build's fingerprint, an hour otherwise.
fn cache_for(query: &HashMap<String, String>) -> &'static str {
    if query.get("v").is_some_and(|version| *version == *ASSETS) {
        "public, max-age=31536000, immutable"
    } else {
        "public, max-age=3600"
    }
}

pub(crate) async fn stylesheet(Query(query): Query<HashMap<String, String>>) -> impl IntoResponse {
    ([(CONTENT_TYPE, "text/css; charset=utf-8"), (CACHE_CONTROL, cache_for(&query))], STYLESHEET)
}

pub(crate) async fn script(Query(query): Query<HashMap<String, String>>) -> impl IntoResponse {
    ([(CONTENT_TYPE, "text/javascript; charset=utf-8"), (CACHE_CONTROL, cache_for(&query))], SCRIPT)
}

/// The static files' fingerprint, for the pages' addresses of them.
pub(crate) fn assets() -> &'static str {
    &ASSETS
}
