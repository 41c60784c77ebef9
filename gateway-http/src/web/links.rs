//! Owns the action-link pages: GET shows one button (a link previewer
//! closes nothing), POST performs Done or Remember, and a link that does not
//! work says why and never acts.

use askama::Template;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use tonic::Code;
use tonic_types::StatusExt;

use hado_proto::v1::{self, LinkAction};
use hado_words as words;
use hado_words::Words;

use crate::state::AppState;
use crate::web::nav::Nav;
use crate::web::render::{MessagePage, failure_page, message, render};
use crate::web::view::{Card, Viewer};

/// A signed link's page: what it is about, what it does or did, and the
/// one button that does it. Email's channel links show it without a card.
#[derive(Template)]
#[template(path = "link.html")]
pub(super) struct LinkPage {
    pub(super) words: &'static Words,
    pub(super) nav: Option<Nav>,
    pub(super) card: Option<Card>,
    pub(super) message: String,
    pub(super) button: Option<String>,
    pub(super) expires: String,
}

/// What a link that does not work shows: never an action. Core says why
/// with a stable reason, in the language of the person the link was for
/// when it knows them (a genuine link); otherwise the page says it in both.
pub(super) fn link_problem(state: &AppState, status: &tonic::Status) -> Response {
    let pick: fn(&Words) -> &'static str =
        match status.get_details_error_info().map(|info| info.reason).as_deref() {
            Some("LINK_NOT_VALID") => |words| words.link_not_valid,
            Some("LINK_EXPIRED") => |words| words.link_expired,
            Some("LINK_OUTDATED") => |words| words.link_outdated,
            Some("EVENT_NOT_FOUND") => |words| words.event_not_found,
            Some("EVENT_WITHDRAWN") => |words| words.event_deleted,
            _ => return failure_page(state, &words::EN, status),
        };
    let code = match status.code() {
        Code::Unauthenticated => StatusCode::BAD_REQUEST,
        Code::FailedPrecondition => StatusCode::GONE,
        Code::Aborted => StatusCode::CONFLICT,
        _ => StatusCode::NOT_FOUND,
    };
    match status.get_details_localized_message() {
        Some(localized) => {
            let words = words::for_locale(&localized.locale);
            render(
                code,
                MessagePage {
                    words,
                    nav: None,
                    message: localized.message,
                    second: String::new(),
                    second_words: None,
                },
            )
        }
        None => message(code, pick(&words::EN), pick(&words::RU)),
    }
}

fn link_viewer(reply: &v1::ActionLinkReply) -> (Viewer, &'static Words) {
    let profile = reply.profile.clone().unwrap_or_default();
    let words = words::for_locale(&profile.locale);
    (Viewer::new(profile), words)
}

pub(crate) async fn link_page(
    State(state): State<AppState>,
    Path(token): Path<String>,
) -> Response {
    let reply = match state.links().inspect_action_link(v1::ActionLinkRequest { token }).await {
        Ok(reply) => reply.into_inner(),
        Err(status) => return link_problem(&state, &status),
    };
    let (viewer, words) = link_viewer(&reply);
    let event = reply.event.clone().unwrap_or_default();
    let closed = event.state().is_closed();
    let (text, button) = match (closed, reply.action()) {
        (true, _) => (words.link_already_closed.to_owned(), None),
        (false, LinkAction::Done) => {
            (words.confirm_done.to_owned(), Some(event.done_label.clone()))
        }
        (false, _) => (words.confirm_remember.to_owned(), Some(words.remember.to_owned())),
    };
    let expires = viewer.when(words, reply.expires_at.as_ref()).unwrap_or_default();
    render(
        StatusCode::OK,
        LinkPage {
            words,
            nav: None,
            card: Some(Card::new(&event, &viewer, words)),
            message: text,
            button,
            expires,
        },
    )
}

pub(crate) async fn use_link(State(state): State<AppState>, Path(token): Path<String>) -> Response {
    let reply = match state.links().use_action_link(v1::ActionLinkRequest { token }).await {
        Ok(reply) => reply.into_inner(),
        Err(status) => return link_problem(&state, &status),
    };
    let (viewer, words) = link_viewer(&reply);
    let event = reply.event.clone().unwrap_or_default();
    let closed = event.state().is_closed();
    let text = match (reply.action(), closed) {
        (LinkAction::Done, _) => words.link_done,
        (_, true) => words.link_already_closed,
        _ => words.link_remembered,
    };
    render(
        StatusCode::OK,
        LinkPage {
            words,
            nav: None,
            card: Some(Card::new(&event, &viewer, words)),
            message: text.to_owned(),
            button: None,
            expires: String::new(),
        },
    )
}
