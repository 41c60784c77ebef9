//! Owns the channel-link pages an email carries: GET shows what the link
//! does and one button (a mail scanner that follows links changes
//! nothing), POST does it — confirms the address, pauses the channel, or
//! refuses every later confirmation to the address. A mail app's one-click
//! unsubscribe (RFC 8058) is that POST, with `List-Unsubscribe=One-Click`
//! as its body, which is not read.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;

use hado_proto::v1::{self, ChannelLinkAction};
use hado_words as words;
use hado_words::Words;

use crate::state::AppState;
use crate::web::render::render;
use crate::web::view::Viewer;

use super::links::LinkPage;

fn page(
    reply: &v1::ChannelLinkReply,
    text: fn(&Words) -> &'static str,
    button: Option<fn(&Words) -> &'static str>,
) -> Response {
    let profile = reply.profile.clone().unwrap_or_default();
    let words = words::for_locale(&profile.locale);
    let viewer = Viewer::new(profile);
    let address = reply.channel.as_ref().map(|channel| channel.target.as_str()).unwrap_or_default();
    let expires = viewer.when(words, reply.expires_at.as_ref()).unwrap_or_default();
    render(
        StatusCode::OK,
        LinkPage {
            words,
            nav: None,
            card: None,
            message: text(words).replace("{address}", address),
            button: button.map(|button| button(words).to_owned()),
            expires,
        },
    )
}

/// `GET /c/{token}`.
pub(crate) async fn channel_link_page(
    State(state): State<AppState>,
    Path(token): Path<String>,
) -> Response {
    let reply = match state.links().inspect_channel_link(v1::ChannelLinkRequest { token }).await {
        Ok(reply) => reply.into_inner(),
        Err(status) => return super::links::link_problem(&state, &status),
    };
    let confirmed = reply.channel.as_ref().is_some_and(|channel| channel.confirmed_at.is_some());
    let enabled = reply.channel.as_ref().is_some_and(|channel| channel.enabled);
    match reply.action() {
        ChannelLinkAction::Confirm if confirmed => {
            page(&reply, |words| words.email_confirmed, None)
        }
        ChannelLinkAction::Confirm => page(
            &reply,
            |words| words.email_confirm_question,
            Some(|words| words.email_confirm_button),
        ),
        ChannelLinkAction::Refuse => page(
            &reply,
            |words| words.email_refuse_question,
            Some(|words| words.email_refuse_button),
        ),
        _ if !enabled => page(&reply, |words| words.email_paused, None),
        _ => {
            page(&reply, |words| words.email_pause_question, Some(|words| words.email_pause_button))
        }
    }
}

/// `POST /c/{token}`.
pub(crate) async fn use_channel_link(
    State(state): State<AppState>,
    Path(token): Path<String>,
) -> Response {
    let reply = match state.links().use_channel_link(v1::ChannelLinkRequest { token }).await {
        Ok(reply) => reply.into_inner(),
        Err(status) => return super::links::link_problem(&state, &status),
    };
    match reply.action() {
        ChannelLinkAction::Confirm => page(&reply, |words| words.email_confirmed, None),
        ChannelLinkAction::Refuse => page(&reply, |words| words.email_refused, None),
        _ => page(&reply, |words| words.email_paused, None),
    }
}
