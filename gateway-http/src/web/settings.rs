//! Owns the settings page's forms: time zone, quiet hours and language,
//! the agent token and the apps signed in with OAuth. The page itself is
//! `settings_page`'s; the reminder channels' and the calendar feed's forms
//! are `channels`'.

use std::collections::HashMap;

use axum::Form;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use tonic::Code;

use hado_proto::v1;

use crate::state::AppState;
use crate::web::render::refusal;
use crate::web::session::{Session, call, call_keeping};
use crate::web::settings_page::{SettingsForm, settings_page_for};

pub(crate) async fn save_settings(
    State(state): State<AppState>,
    mut session: Session,
    Form(input): Form<HashMap<String, String>>,
) -> Result<Response, Response> {
    let field = |name: &str| {
        input.get(name).map(|value| value.trim().to_owned()).filter(|value| !value.is_empty())
    };
    let request = v1::UpdateProfileRequest {
        tz: field("tz"),
        quiet_start: field("quiet_start"),
        quiet_end: field("quiet_end"),
        locale: field("locale"),
    };
    let kept = [Code::InvalidArgument];
    match call_keeping(&state, session.words, &kept, session.inbox.update_profile(request.clone()))
        .await?
    {
        Ok(_) => Ok(Redirect::to("/settings?saved=1").into_response()),
        Err(status) => {
            let mut form = SettingsForm {
                tz: request.tz.unwrap_or_default(),
                quiet_start: request.quiet_start.unwrap_or_default(),
                quiet_end: request.quiet_end.unwrap_or_default(),
                locale: request.locale.unwrap_or_else(|| session.viewer.profile.locale.clone()),
                ..SettingsForm::default()
            };
            (form.errors, form.general) = refusal(&state, &status);
            settings_page_for(
                &state,
                &mut session,
                form,
                false,
                None,
                StatusCode::UNPROCESSABLE_ENTITY,
            )
            .await
        }
    }
}

/// `POST /settings/zone`: the answer to the offer every page makes while
/// the person's zone is the deployment's default: the browser's zone, or
/// the default kept, either of them the person's choice from then on. Back
/// to the page the offer was on (only a path of this site).
pub(crate) async fn save_zone(
    State(state): State<AppState>,
    mut session: Session,
    Form(input): Form<HashMap<String, String>>,
) -> Result<Response, Response> {
    let tz = input.get("tz").map(|zone| zone.trim().to_owned()).filter(|zone| !zone.is_empty());
    let Some(tz) = tz else {
        return Ok(Redirect::to("/settings").into_response());
    };
    let request = v1::UpdateProfileRequest { tz: Some(tz), ..Default::default() };
    let kept = [Code::InvalidArgument];
    match call_keeping(&state, session.words, &kept, session.inbox.update_profile(request)).await? {
        Ok(_) => Ok(Redirect::to(local_path(input.get("back"))).into_response()),
        // A zone core does not know: Settings, to pick one.
        Err(_) => Ok(Redirect::to("/settings").into_response()),
    }
}

/// `back` when it is a path on this site, otherwise the inbox: never
/// another site (`//host`, `/\host`, a scheme), never a control character.
fn local_path(back: Option<&String>) -> &str {
    match back.map(String::as_str) {
        Some(path)
            if path.starts_with('/')
                && !path.starts_with("//")
                && !path.starts_with("/\\")
                && path.len() <= 2048
                && !path.chars().any(|c| c.is_control() || c == '\\') =>
        {
            path
        }
        _ => "/",
    }
}

pub(crate) async fn issue_agent_token(
    State(state): State<AppState>,
    mut session: Session,
) -> Result<Response, Response> {
    let request = v1::IssueMyAgentTokenRequest {};
    let issued = call(&state, session.words, session.inbox.issue_agent_token(request)).await?;
    let form = SettingsForm::from_profile(&session.viewer.profile);
    settings_page_for(&state, &mut session, form, false, Some(issued.token), StatusCode::OK).await
}

/// `POST /settings/apps/{id}/disconnect`: the app's tokens stop at once.
pub(crate) async fn disconnect_app(
    State(state): State<AppState>,
    mut session: Session,
    Path(id): Path<i64>,
) -> Result<Response, Response> {
    call(&state, session.words, session.inbox.disconnect_app(v1::ConnectedAppId { id })).await?;
    Ok(Redirect::to("/settings#apps").into_response())
}

pub(crate) async fn revoke_agent_token(
    State(state): State<AppState>,
    mut session: Session,
) -> Result<Response, Response> {
    let request = v1::RevokeMyAgentTokenRequest {};
    call(&state, session.words, session.inbox.revoke_agent_token(request)).await?;
    Ok(Redirect::to("/settings#agent").into_response())
}

#[cfg(test)]
mod tests {
    use super::local_path;

    #[test]
    fn the_zone_offer_comes_back_only_to_a_page_of_this_site() {
        let cases = [
            (Some("/archive?q=visa"), "/archive?q=visa"),
            (Some("/"), "/"),
            (None, "/"),
            (Some(""), "/"),
            (Some("//evil.example/"), "/"),
            (Some("/\\evil.example/"), "/"),
            (Some("https://evil.example/"), "/"),
            (Some("javascript:alert(1)"), "/"),
            (Some("/a\r\nSet-Cookie: x=1"), "/"),
            (Some("/a\\b"), "/"),
        ];
        for (back, expected) in cases {
            let back = back.map(str::to_owned);
            assert_eq!(local_path(back.as_ref()), expected, "{back:?}");
        }
    }
}
