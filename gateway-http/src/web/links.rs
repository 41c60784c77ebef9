//! Owns the action-link pages: GET shows one button (a link previewer
//! closes nothing), POST performs Done or Remember, and a link that does not
//! work says why and never acts.

use hado_proto::v1::LinkAction;

use super::*;

/// A signed link's page: what it is about, what it does or did, and the
/// one button that does it. Email's channel links show it without a card.
#[derive(Template)]
#[template(path = "link.html")]
pub(super) struct LinkPage {
    pub(super) t: &'static Words,
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
    let words: fn(&Words) -> &'static str =
        match status.get_details_error_info().map(|info| info.reason).as_deref() {
            Some("LINK_NOT_VALID") => |t| t.link_not_valid,
            Some("LINK_EXPIRED") => |t| t.link_expired,
            Some("LINK_OUTDATED") => |t| t.link_outdated,
            Some("EVENT_NOT_FOUND") => |t| t.event_not_found,
            Some("EVENT_WITHDRAWN") => |t| t.event_deleted,
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
            let t = words::for_locale(&localized.locale);
            render(
                code,
                MessagePage {
                    t,
                    nav: None,
                    message: localized.message,
                    second: String::new(),
                    second_words: None,
                },
            )
        }
        None => message(code, words(&words::EN), words(&words::RU)),
    }
}

fn link_viewer(reply: &v1::ActionLinkReply) -> (Viewer, &'static Words) {
    let profile = reply.profile.clone().unwrap_or_default();
    let t = words::for_locale(&profile.locale);
    (Viewer::new(profile), t)
}

pub(crate) async fn link_page(
    State(state): State<AppState>,
    Path(token): Path<String>,
) -> Response {
    let reply = match state.links().inspect_action_link(v1::ActionLinkRequest { token }).await {
        Ok(reply) => reply.into_inner(),
        Err(status) => return link_problem(&state, &status),
    };
    let (viewer, t) = link_viewer(&reply);
    let event = reply.event.clone().unwrap_or_default();
    let closed = event.state().is_closed();
    let (text, button) = match (closed, reply.action()) {
        (true, _) => (t.link_already_closed.to_owned(), None),
        (false, LinkAction::Done) => (t.confirm_done.to_owned(), Some(event.done_label.clone())),
        (false, _) => (t.confirm_remember.to_owned(), Some(t.remember.to_owned())),
    };
    let expires = viewer.when(t, reply.expires_at.as_ref()).unwrap_or_default();
    render(
        StatusCode::OK,
        LinkPage {
            t,
            nav: None,
            card: Some(Card::new(&event, &viewer, t)),
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
    let (viewer, t) = link_viewer(&reply);
    let event = reply.event.clone().unwrap_or_default();
    let closed = event.state().is_closed();
    let text = match (reply.action(), closed) {
        (LinkAction::Done, _) => t.link_done,
        (_, true) => t.link_already_closed,
        _ => t.link_remembered,
    };
    render(
        StatusCode::OK,
        LinkPage {
            t,
            nav: None,
            card: Some(Card::new(&event, &viewer, t)),
            message: text.to_owned(),
            button: None,
            expires: String::new(),
        },
    )
}
