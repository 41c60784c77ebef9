//! Owns the settings page's reminder forms: a webhook added, a Telegram chat
//! linked, a channel tested, turned on or off, renamed or removed, and the calendar
//! feed issued or revoked. Each answers with the settings page.

use std::collections::HashMap;

use axum::Form;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use tonic::Code;
use tonic_types::StatusExt;

use hado_proto::v1;

use crate::state::AppState;
use crate::web::render::{message, refusal};
use crate::web::session::{Session, call, call_keeping};

use super::settings_page::{ChannelNotice, SettingsForm, settings_page_with};

pub(crate) async fn issue_calendar_feed(
    State(state): State<AppState>,
    mut session: Session,
) -> Result<Response, Response> {
    let request = v1::IssueCalendarFeedRequest {};
    let token =
        call(&state, session.words, session.inbox.issue_calendar_feed(request)).await?.token;
    let base =
        state.config.public_url.clone().unwrap_or_else(|| format!("http://{}", state.config.addr));
    let notice = ChannelNotice {
        calendar_url: Some(format!("{base}/ics/{token}.ics")),
        ..ChannelNotice::default()
    };
    let form = SettingsForm::from_profile(&session.viewer.profile);
    settings_page_with(&state, &mut session, form, false, None, notice, StatusCode::OK).await
}

pub(crate) async fn link_telegram(
    State(state): State<AppState>,
    mut session: Session,
) -> Result<Response, Response> {
    let request = v1::CreateTelegramLinkRequest {};
    let kept = [Code::FailedPrecondition];
    let notice = match call_keeping(
        &state,
        session.words,
        &kept,
        session.inbox.create_telegram_link(request),
    )
    .await?
    {
        Ok(link) => ChannelNotice { telegram_link: Some(link.url), ..ChannelNotice::default() },
        // No bot: the section says so in the person's words, as it does
        // without a Connect button.
        Err(_) => ChannelNotice::default(),
    };
    let form = SettingsForm::from_profile(&session.viewer.profile);
    settings_page_with(&state, &mut session, form, false, None, notice, StatusCode::OK).await
}

pub(crate) async fn revoke_calendar_feed(
    State(state): State<AppState>,
    mut session: Session,
) -> Result<Response, Response> {
    let request = v1::RevokeCalendarFeedRequest {};
    call(&state, session.words, session.inbox.revoke_calendar_feed(request)).await?;
    Ok(Redirect::to("/settings#calendar").into_response())
}

pub(crate) async fn add_webhook(
    State(state): State<AppState>,
    mut session: Session,
    Form(input): Form<HashMap<String, String>>,
) -> Result<Response, Response> {
    let url = input.get("url").map(|url| url.trim().to_owned()).unwrap_or_default();
    let form = SettingsForm::from_profile(&session.viewer.profile);
    let request = v1::AddWebhookRequest { url: url.clone() };
    let kept = [Code::InvalidArgument];
    match call_keeping(&state, session.words, &kept, session.inbox.add_webhook(request)).await? {
        Ok(added) => {
            let notice =
                ChannelNotice { webhook_secret: Some(added.secret), ..ChannelNotice::default() };
            settings_page_with(&state, &mut session, form, false, None, notice, StatusCode::OK)
                .await
        }
        Err(status) => {
            // The address's refusal in the person's words.
            let (mut errors, general) = refusal(&state, &status);
            let webhook_error = errors.remove("url").unwrap_or(general);
            let notice =
                ChannelNotice { webhook_url: url, webhook_error, ..ChannelNotice::default() };
            settings_page_with(
                &state,
                &mut session,
                form,
                false,
                None,
                notice,
                StatusCode::UNPROCESSABLE_ENTITY,
            )
            .await
        }
    }
}

/// `POST /settings/emails`: an address added (or its confirmation sent
/// again), answered with the settings page saying what happened.
pub(crate) async fn add_email(
    State(state): State<AppState>,
    mut session: Session,
    Form(input): Form<HashMap<String, String>>,
) -> Result<Response, Response> {
    let address = input.get("address").map(|address| address.trim().to_owned()).unwrap_or_default();
    let form = SettingsForm::from_profile(&session.viewer.profile);
    let words = session.words;
    // How long to wait, when the address had its confirmations for the hour.
    let mut wait = None;
    let request = v1::AddEmailRequest { address: address.clone() };
    let kept = [Code::InvalidArgument, Code::ResourceExhausted];
    let (notice, status) =
        match call_keeping(&state, words, &kept, session.inbox.add_email(request)).await? {
            Ok(added) => {
                let channel = added.channel.unwrap_or_default();
                let said = if channel.confirmed_at.is_some() {
                    words.email_already_confirmed
                } else {
                    words.email_confirmation_sent
                };
                let email_said = said.replace("{address}", &channel.target);
                (ChannelNotice { email_said, ..ChannelNotice::default() }, StatusCode::OK)
            }
            Err(status) if status.code() == Code::InvalidArgument => {
                let (mut errors, general) = refusal(&state, &status);
                let email_error = errors.remove("address").unwrap_or(general);
                let notice = ChannelNotice {
                    email_address: address,
                    email_error,
                    ..ChannelNotice::default()
                };
                (notice, StatusCode::UNPROCESSABLE_ENTITY)
            }
            Err(status) => {
                wait = status.get_details_retry_info().and_then(|info| info.retry_delay);
                // Core says which cap it was, in the person's words.
                let email_error = status
                    .get_details_localized_message()
                    .map_or_else(|| status.message().to_owned(), |localized| localized.message);
                let notice = ChannelNotice {
                    email_address: address,
                    email_error,
                    ..ChannelNotice::default()
                };
                (notice, StatusCode::TOO_MANY_REQUESTS)
            }
        };
    let mut page =
        settings_page_with(&state, &mut session, form, false, None, notice, status).await?;
    if let Some(wait) = wait {
        page.headers_mut().insert(
            axum::http::header::RETRY_AFTER,
            axum::http::HeaderValue::from(wait.as_secs().max(1)),
        );
    }
    Ok(page)
}

/// `POST /settings/channels/{id}/name`: a device given the name its person chose.
pub(crate) async fn rename_channel(
    State(state): State<AppState>,
    mut session: Session,
    Path(id): Path<i64>,
    Form(input): Form<HashMap<String, String>>,
) -> Result<Response, Response> {
    let name = input.get("name").cloned().unwrap_or_default();
    call(
        &state,
        session.words,
        session.inbox.rename_channel(v1::RenameChannelRequest { id, name }),
    )
    .await?;
    Ok(Redirect::to(&format!("/settings#channel-{id}")).into_response())
}

/// Test, turn on or off, or remove one of the person's channels.
pub(crate) async fn channel_action(
    State(state): State<AppState>,
    mut session: Session,
    Path((id, action)): Path<(i64, String)>,
) -> Result<Response, Response> {
    let (words, inbox) = (session.words, &mut session.inbox);
    let query = match action.as_str() {
        "test" => {
            call(&state, words, inbox.test_channel(v1::ChannelId { id })).await?;
            "?tested=1"
        }
        "on" | "off" => {
            let request = v1::SetChannelEnabledRequest { id, enabled: action == "on" };
            call(&state, words, inbox.set_channel_enabled(request)).await?;
            ""
        }
        "remove" => {
            call(&state, words, inbox.remove_channel(v1::ChannelId { id })).await?;
            ""
        }
        _ => return Err(message(StatusCode::NOT_FOUND, "no such page", "нет такой страницы")),
    };
    Ok(Redirect::to(&format!("/settings{query}#reminders")).into_response())
}
