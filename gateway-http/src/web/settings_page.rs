//! Owns the settings page: what it shows of the person's profile (the
//! form of their zone, quiet hours and language), their agent token,
//! reminder channels, calendar feed and the apps signed in with OAuth.
//! The forms' posts are `settings`' and `channels`'.

use std::collections::HashMap;
use std::sync::LazyLock;

use askama::Template;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;

use hado_proto::v1;
use hado_words::Words;

use crate::state::AppState;
use crate::web::nav::Nav;
use crate::web::render::render;
use crate::web::session::{Session, call};

/// The zones Settings offers: UTC and the current names in the areas people
/// live in, never an old alias (`Europe/Kiev`, `US/Eastern`, `Japan`).
static ZONES: LazyLock<Vec<chrono_tz::Tz>> = LazyLock::new(|| {
    chrono_tz::TZ_VARIANTS
        .iter()
        .filter(|zone| hado_words::wording::is_current_zone(zone.name()))
        .copied()
        .collect()
});

/// A zone offered in Settings, with its offset from UTC now.
pub(super) struct ZoneChoice {
    pub name: &'static str,
    pub offset: String,
}

fn zone_choices() -> Vec<ZoneChoice> {
    let now = chrono::Utc::now();
    ZONES
        .iter()
        .map(|zone| ZoneChoice {
            name: zone.name(),
            offset: now.with_timezone(zone).format("UTC%:z").to_string(),
        })
        .collect()
}

#[derive(Default)]
pub(super) struct SettingsForm {
    pub tz: String,
    pub tz_is_default: bool,
    pub quiet_start: String,
    pub quiet_end: String,
    pub locale: String,
    pub errors: HashMap<String, String>,
    pub general: String,
}

impl SettingsForm {
    pub(super) fn error(&self, field: &str) -> &str {
        self.errors.get(field).map(String::as_str).unwrap_or("")
    }

    pub(super) fn from_profile(profile: &v1::Profile) -> Self {
        Self {
            tz: profile.tz.clone(),
            tz_is_default: profile.tz_is_default,
            quiet_start: profile.quiet_start.clone(),
            quiet_end: profile.quiet_end.clone(),
            locale: profile.locale.clone(),
            ..Self::default()
        }
    }
}

#[derive(Template)]
#[template(path = "settings.html")]
struct SettingsPage {
    words: &'static Words,
    nav: Option<Nav>,
    form: SettingsForm,
    zones: Vec<ZoneChoice>,
    saved: bool,
    issued: Option<String>,
    /// The same token in each client's configuration, right after it was issued.
    configurations: Vec<(&'static str, String)>,
    /// Whether the connect line names gateway-mcp's address.
    knows_mcp_url: bool,
    agent_issued: bool,
    agent_created: String,
    agent_last_used: String,
    channels: Vec<ChannelRow>,
    webhook_secret: Option<String>,
    webhook_url: String,
    webhook_error: String,
    test_queued: bool,
    calendar_url: Option<String>,
    calendar_created: String,
    telegram_link: Option<String>,
    /// Whether this Hado has a Telegram bot; without one, Connect is not offered.
    telegram_available: bool,
    email_available: bool,
    email_address: String,
    email_error: String,
    email_said: String,
    /// The VAPID public key this device subscribes with; empty when this
    /// Hado has no push, which is then not offered.
    push_key: String,
    /// What Settings says of a device whose subscription ended, if any.
    push_gone: String,
    apps: Vec<AppRow>,
}

/// A reminder channel as the page lists it: core's record, and when its
/// last attempt failed in the person's local time.
pub(super) struct ChannelRow {
    pub channel: v1::Channel,
    pub failed_at: String,
    /// A Telegram chat, whose target is a chat id that needs a word before it.
    pub telegram: bool,
    /// An email address, which says so, and whether it waits for its confirmation.
    pub email: bool,
    pub unconfirmed: bool,
    /// A device (push), shown by its name, which can be changed.
    pub push: bool,
}

/// An app the person signed in with, as the page lists it.
pub(super) struct AppRow {
    pub id: i64,
    pub name: String,
    pub redirect_host: String,
    pub connected: String,
    pub last_used: String,
}

/// What the reminders section of the settings page shows besides the list.
#[derive(Default)]
pub(super) struct ChannelNotice {
    pub webhook_secret: Option<String>,
    pub webhook_url: String,
    pub webhook_error: String,
    pub test_queued: bool,
    /// The calendar feed's URL, right after it was made.
    pub calendar_url: Option<String>,
    /// A one-time Telegram link, right after it was made.
    pub telegram_link: Option<String>,
    /// The email form's address and its refusal, and what adding it did.
    pub email_address: String,
    pub email_error: String,
    pub email_said: String,
}

/// What Settings says of a device whose push service ended its
/// subscription, or nothing.
fn push_gone(session: &Session, listed: &v1::ChannelList) -> String {
    if listed.push_gone.is_empty() {
        return String::new();
    }
    let when = session.when(listed.push_gone_at.as_ref());
    session.words.push_gone.replace("{device}", &listed.push_gone).replace("{when}", &when)
}

impl ChannelRow {
    fn of(session: &Session, channel: v1::Channel) -> Self {
        let failed_at = session.when(channel.last_error_at.as_ref());
        let telegram = channel.kind() == v1::ChannelKind::Telegram;
        let email = channel.kind() == v1::ChannelKind::Email;
        let push = channel.kind() == v1::ChannelKind::Push;
        let unconfirmed = channel.confirmed_at.is_none();
        Self { channel, failed_at, telegram, email, unconfirmed, push }
    }
}

impl AppRow {
    fn of(session: &Session, app: v1::ConnectedApp) -> Self {
        Self {
            id: app.id,
            connected: session.when(app.connected_at.as_ref()),
            last_used: session.when(app.last_used_at.as_ref()),
            name: app.name,
            redirect_host: app.redirect_host,
        }
    }
}

pub(super) async fn settings_page_for(
    state: &AppState,
    session: &mut Session,
    form: SettingsForm,
    saved: bool,
    issued: Option<String>,
    status: StatusCode,
) -> Result<Response, Response> {
    settings_page_with(state, session, form, saved, issued, ChannelNotice::default(), status).await
}

/// The settings page. A section core cannot answer for is not shown empty:
/// the page says what went wrong instead.
pub(super) async fn settings_page_with(
    state: &AppState,
    session: &mut Session,
    form: SettingsForm,
    saved: bool,
    issued: Option<String>,
    notice: ChannelNotice,
    status: StatusCode,
) -> Result<Response, Response> {
    let words = session.words;
    let agent =
        call(state, words, session.inbox.get_agent_token(v1::GetAgentTokenRequest {})).await?;
    let listed =
        call(state, words, session.inbox.list_channels(v1::ListChannelsRequest {})).await?;
    let push_gone = push_gone(session, &listed);
    let channels =
        listed.channels.into_iter().map(|channel| ChannelRow::of(session, channel)).collect();
    let calendar =
        call(state, words, session.inbox.get_calendar_feed(v1::GetCalendarFeedRequest {})).await?;
    let apps =
        call(state, words, session.inbox.list_connected_apps(v1::ListConnectedAppsRequest {}))
            .await?
            .apps;
    let apps = apps.into_iter().map(|app| AppRow::of(session, app)).collect();
    let nav = session.nav("settings");
    Ok(render(
        status,
        SettingsPage {
            words: session.words,
            nav,
            form,
            zones: zone_choices(),
            saved,
            configurations: issued
                .as_deref()
                .map(|token| crate::clients::client_configurations(&state.config, token))
                .unwrap_or_default(),
            issued: issued
                .as_deref()
                .map(|token| crate::clients::connect_line(&state.config, token)),
            knows_mcp_url: crate::clients::knows_mcp_url(&state.config),
            agent_issued: agent.issued,
            agent_created: session.when(agent.created_at.as_ref()),
            agent_last_used: session.when(agent.last_used_at.as_ref()),
            channels,
            webhook_secret: notice.webhook_secret,
            webhook_url: notice.webhook_url,
            webhook_error: notice.webhook_error,
            test_queued: notice.test_queued,
            calendar_url: notice.calendar_url,
            telegram_link: notice.telegram_link,
            telegram_available: listed.telegram_available,
            email_available: listed.email_available,
            push_key: listed.push_public_key,
            push_gone,
            email_address: notice.email_address,
            email_error: notice.email_error,
            email_said: notice.email_said,
            apps,
            calendar_created: session.when(calendar.created_at.as_ref()),
        },
    ))
}

#[derive(serde::Deserialize)]
pub(crate) struct SettingsQuery {
    saved: Option<String>,
    tested: Option<String>,
}

pub(crate) async fn settings_page(
    State(state): State<AppState>,
    mut session: Session,
    Query(query): Query<SettingsQuery>,
) -> Result<Response, Response> {
    let form = SettingsForm::from_profile(&session.viewer.profile);
    let notice = ChannelNotice { test_queued: query.tested.is_some(), ..ChannelNotice::default() };
    settings_page_with(
        &state,
        &mut session,
        form,
        query.saved.is_some(),
        None,
        notice,
        StatusCode::OK,
    )
    .await
}
