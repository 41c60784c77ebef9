//! Owns the confirmation pages. A destructive action (Delete, Turn off,
//! Remove, Revoke, Disconnect) is a plain link to a page that says what will happen and
//! holds the one button that does it, so that nothing is lost to a stray
//! click, with or without JavaScript. The button posts to the same address.

use askama::Template;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};

use hado_proto::v1;
use hado_words::Words;

use crate::state::AppState;
use crate::web::nav::Nav;
use crate::web::render::render;
use crate::web::session::{Session, call};

#[derive(Template)]
#[template(path = "confirm.html")]
struct ConfirmPage {
    words: &'static Words,
    nav: Option<Nav>,
    question: &'static str,
    /// What it is about (the event's title, the channel's target), if anything.
    subject: String,
    detail: &'static str,
    button: &'static str,
    /// Where Cancel goes.
    back: String,
}

fn confirm(
    session: &Session,
    question: &'static str,
    subject: String,
    detail: &'static str,
    button: &'static str,
    back: String,
) -> Response {
    let nav = session.nav("");
    render(
        StatusCode::OK,
        ConfirmPage { words: session.words, nav, question, subject, detail, button, back },
    )
}

/// `GET /events/{id}/delete`.
pub(crate) async fn confirm_delete(
    State(state): State<AppState>,
    mut session: Session,
    Path(id): Path<i64>,
) -> Result<Response, Response> {
    let event = session.event(&state, id).await?;
    if !event.editable {
        return Ok(Redirect::to(&format!("/events/{id}")).into_response());
    }
    let words = session.words;
    Ok(confirm(
        &session,
        words.delete_confirm,
        event.title,
        words.delete_detail,
        words.delete,
        format!("/events/{id}/edit"),
    ))
}

/// `GET /settings/channels/{id}/{action}`: Turn off and Remove ask first;
/// Turn on and Test need no asking.
pub(crate) async fn confirm_channel(
    State(state): State<AppState>,
    mut session: Session,
    Path((id, action)): Path<(i64, String)>,
) -> Result<Response, Response> {
    let words = session.words;
    let (question, detail, button) = match action.as_str() {
        "off" => (words.channel_off_question, words.channel_off_detail, words.turn_off),
        "remove" => (words.channel_remove_question, words.channel_remove_detail, words.remove),
        _ => return Ok(Redirect::to("/settings#reminders").into_response()),
    };
    let channels = call(&state, words, session.inbox.list_channels(v1::ListChannelsRequest {}))
        .await?
        .channels;
    let Some(channel) = channels.into_iter().find(|channel| channel.id == id) else {
        return Ok(Redirect::to("/settings#reminders").into_response());
    };
    Ok(confirm(&session, question, channel.target, detail, button, "/settings#reminders".into()))
}

/// `GET /settings/agent-token/revoke`.
pub(crate) async fn confirm_revoke_agent_token(session: Session) -> Response {
    let words = session.words;
    confirm(
        &session,
        words.agent_revoke_question,
        String::new(),
        words.agent_revoke_detail,
        words.agent_revoke,
        "/settings#agent".into(),
    )
}

/// `GET /settings/calendar/revoke`.
pub(crate) async fn confirm_revoke_calendar_feed(session: Session) -> Response {
    let words = session.words;
    confirm(
        &session,
        words.calendar_revoke_question,
        String::new(),
        words.calendar_revoke_detail,
        words.calendar_revoke,
        "/settings#calendar".into(),
    )
}

/// `GET /settings/apps/{id}/disconnect`.
pub(crate) async fn confirm_app_disconnect(
    State(state): State<AppState>,
    mut session: Session,
    Path(id): Path<i64>,
) -> Result<Response, Response> {
    let words = session.words;
    let request = v1::ListConnectedAppsRequest {};
    let apps = call(&state, words, session.inbox.list_connected_apps(request)).await?.apps;
    let Some(app) = apps.into_iter().find(|app| app.id == id) else {
        return Ok(Redirect::to("/settings#apps").into_response());
    };
    Ok(confirm(
        &session,
        words.app_disconnect_question,
        format!("{} · {}", app.name, app.redirect_host),
        words.app_disconnect_detail,
        words.app_disconnect,
        "/settings#apps".into(),
    ))
}
