//! Owns the confirmation pages. A destructive action (Delete, Turn off,
//! Remove, Revoke, Disconnect) is a plain link to a page that says what will happen and
//! holds the one button that does it, so that nothing is lost to a stray
//! click, with or without JavaScript. The button posts to the same address.

use super::*;

#[derive(Template)]
#[template(path = "confirm.html")]
struct ConfirmPage {
    t: &'static Words,
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
        ConfirmPage { t: session.t, nav, question, subject, detail, button, back },
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
    let t = session.t;
    Ok(confirm(
        &session,
        t.delete_confirm,
        event.title,
        t.delete_detail,
        t.delete,
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
    let t = session.t;
    let (question, detail, button) = match action.as_str() {
        "off" => (t.channel_off_question, t.channel_off_detail, t.turn_off),
        "remove" => (t.channel_remove_question, t.channel_remove_detail, t.remove),
        _ => return Ok(Redirect::to("/settings#reminders").into_response()),
    };
    let channels =
        call(&state, t, session.inbox.list_channels(v1::ListChannelsRequest {})).await?.channels;
    let Some(channel) = channels.into_iter().find(|channel| channel.id == id) else {
        return Ok(Redirect::to("/settings#reminders").into_response());
    };
    Ok(confirm(&session, question, channel.target, detail, button, "/settings#reminders".into()))
}

/// `GET /settings/agent-token/revoke`.
pub(crate) async fn confirm_revoke_agent_token(session: Session) -> Response {
    let t = session.t;
    confirm(
        &session,
        t.agent_revoke_question,
        String::new(),
        t.agent_revoke_detail,
        t.agent_revoke,
        "/settings#agent".into(),
    )
}

/// `GET /settings/calendar/revoke`.
pub(crate) async fn confirm_revoke_calendar_feed(session: Session) -> Response {
    let t = session.t;
    confirm(
        &session,
        t.calendar_revoke_question,
        String::new(),
        t.calendar_revoke_detail,
        t.calendar_revoke,
        "/settings#calendar".into(),
    )
}

/// `GET /settings/apps/{id}/disconnect`.
pub(crate) async fn confirm_app_disconnect(
    State(state): State<AppState>,
    mut session: Session,
    Path(id): Path<i64>,
) -> Result<Response, Response> {
    let t = session.t;
    let request = v1::ListConnectedAppsRequest {};
    let apps = call(&state, t, session.inbox.list_connected_apps(request)).await?.apps;
    let Some(app) = apps.into_iter().find(|app| app.id == id) else {
        return Ok(Redirect::to("/settings#apps").into_response());
    };
    Ok(confirm(
        &session,
        t.app_disconnect_question,
        format!("{} · {}", app.name, app.redirect_host),
        t.app_disconnect_detail,
        t.app_disconnect,
        "/settings#apps".into(),
    ))
}
