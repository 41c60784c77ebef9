//! Owns the action-link pages: GET shows one button (a link previewer
//! closes nothing), POST performs Done or Remember, and a link that does not
//! work says why and never acts.

use super::*;

#[derive(Template)]
#[template(path = "link.html")]
struct LinkPage {
    t: &'static Words,
    nav: Option<Nav>,
    card: Option<Card>,
    message: String,
    button: Option<String>,
    expires: String,
}

/// What a link that does not work shows: never an action.
fn link_problem(state: &AppState, status: &tonic::Status) -> Response {
    match status.code() {
        Code::Unauthenticated => message(StatusCode::BAD_REQUEST, "This link is not valid.", "Эта ссылка недействительна."),
        Code::FailedPrecondition => message(
            StatusCode::GONE,
            &format!("This link has expired ({}). Open the inbox to act on the event.", status.message()),
            "Срок действия ссылки истёк. Откройте входящие, чтобы ответить на событие.",
        ),
        Code::NotFound => message(StatusCode::NOT_FOUND, "This event no longer exists.", "Этого события больше нет."),
        Code::Aborted => message(
            StatusCode::CONFLICT,
            "This reminder is out of date: the event has changed since it was sent, so nothing was done. Open the inbox to see it now.",
            "Это напоминание устарело: событие изменилось после его отправки, поэтому ничего не сделано. Откройте входящие, чтобы увидеть его сейчас.",
        ),
        _ => failure_page(state, &words::EN, status),
    }
}

fn link_viewer(reply: &v1::ActionLinkReply) -> (Viewer, &'static Words) {
    let profile = reply.profile.clone().unwrap_or_default();
    let t = words::for_locale(&profile.locale);
    (Viewer::new(profile), t)
}

pub(crate) async fn link_page(State(state): State<AppState>, Path(token): Path<String>) -> Response {
    let reply = match state.links().inspect_action_link(v1::ActionLinkRequest { token }).await {
        Ok(reply) => reply.into_inner(),
        Err(status) => return link_problem(&state, &status),
    };
    let (viewer, t) = link_viewer(&reply);
    let event = reply.event.clone().unwrap_or_default();
    let closed = event.event_state().is_some_and(EventState::is_closed);
    let (text, button) = match (closed, reply.action.as_str()) {
        (true, _) => (t.link_already_closed.to_owned(), None),
        (false, "done") => (t.confirm_done.to_owned(), Some(event.done_label.clone())),
        (false, _) => (t.confirm_remember.to_owned(), Some(t.remember.to_owned())),
    };
    let expires = viewer.local(&reply.expires_at).unwrap_or_default();
    render(StatusCode::OK, LinkPage { t, nav: None, card: Some(Card::new(&event, &viewer, t)), message: text, button, expires })
}

pub(crate) async fn use_link(State(state): State<AppState>, Path(token): Path<String>) -> Response {
    let reply = match state.links().use_action_link(v1::ActionLinkRequest { token }).await {
        Ok(reply) => reply.into_inner(),
        Err(status) => return link_problem(&state, &status),
    };
    let (viewer, t) = link_viewer(&reply);
    let event = reply.event.clone().unwrap_or_default();
    let closed = event.event_state().is_some_and(EventState::is_closed);
    let text = match (reply.action.as_str(), closed) {
        ("done", _) => t.link_done,
        (_, true) => t.link_already_closed,
        _ => t.link_remembered,
    };
    render(StatusCode::OK, LinkPage { t, nav: None, card: Some(Card::new(&event, &viewer, t)), message: text.to_owned(), button: None, expires: String::new() })
}
