//! Owns the web inbox: server-rendered pages (templates compiled into the
//! binary) that work without JavaScript, with plain forms and
//! POST-redirect-GET, in English and Russian; and the action-link pages at
//! `/a/<token>`. Every page is gRPC calls to core as the signed-in person.

pub mod view;
pub mod words;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::LazyLock;

use askama::Template;
use axum::Form;
use axum::extract::{ConnectInfo, FromRequestParts, Path, Query, Request, State};
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Redirect, Response};
use tonic::Code;

use hado_proto::metadata::Credential;
use hado_proto::state::EventState;
use hado_proto::v1::{self, links_client::LinksClient};
use hado_runtime::client::Failure;

use crate::auth::{InboxUser, inbox_user};
use crate::error::ApiError;
use crate::{AppState, Inbox};
use view::{Card, Groups, Viewer};
use words::Words;

static ZONES: LazyLock<Vec<&'static str>> = LazyLock::new(|| chrono_tz::TZ_VARIANTS.iter().map(|zone| zone.name()).collect());

/// The navigation bar: where the person is, and how many events need them.
pub struct Nav {
    pub current: &'static str,
    pub attention: usize,
}

pub struct Section<'a> {
    pub state: &'static str,
    pub heading: &'static str,
    pub cards: &'a [Card],
}

#[derive(Template)]
#[template(path = "inbox.html")]
struct InboxPage {
    t: &'static Words,
    nav: Option<Nav>,
    groups: Groups,
    more_scheduled: bool,
}

impl InboxPage {
    fn sections(&self) -> Vec<Section<'_>> {
        let (t, groups) = (self.t, &self.groups);
        vec![
            Section { state: EventState::Today.as_str(), heading: t.today, cards: &groups.today },
            Section { state: EventState::Overdue.as_str(), heading: t.overdue, cards: &groups.overdue },
            Section { state: EventState::Preparing.as_str(), heading: t.preparing, cards: &groups.preparing },
            Section { state: EventState::Scheduled.as_str(), heading: t.scheduled, cards: &groups.scheduled },
        ]
    }
}

/// One line of an event's delivery log, as the page shows it.
pub struct LogLine {
    pub when: String,
    pub channel: String,
    pub status: String,
    pub attempts: i64,
    pub note: String,
}

#[derive(Template)]
#[template(path = "event.html")]
struct EventPage {
    t: &'static Words,
    nav: Option<Nav>,
    card: Card,
    log: Vec<LogLine>,
}

#[derive(Template)]
#[template(path = "archive.html")]
struct ArchivePage {
    t: &'static Words,
    nav: Option<Nav>,
    cards: Vec<Card>,
}

/// The Add and Edit form, with what was typed and each field's error.
#[derive(Default)]
pub struct EventForm {
    pub id: Option<i64>,
    pub title: String,
    pub subtitle: String,
    pub due_date: String,
    pub due_time: String,
    /// The offset of a fixed-instant due moment, kept as it was.
    pub due_offset: String,
    pub fire_date: String,
    pub after_due: String,
    pub done_label: String,
    pub deep_link: String,
    pub errors: HashMap<String, String>,
    pub general: String,
}

impl EventForm {
    pub fn error(&self, field: &str) -> &str {
        self.errors.get(field).map(String::as_str).unwrap_or("")
    }

    fn from_input(id: Option<i64>, input: &HashMap<String, String>) -> Self {
        let field = |name: &str| input.get(name).map(|value| value.trim().to_owned()).unwrap_or_default();
        Self {
            id,
            title: field("title"),
            subtitle: field("subtitle"),
            due_date: field("due_date"),
            due_time: field("due_time"),
            due_offset: field("due_offset"),
            fire_date: field("fire_date"),
            after_due: field("after_due"),
            done_label: field("done_label"),
            deep_link: field("deep_link"),
            ..Self::default()
        }
    }

    fn from_event(event: &v1::Event) -> Self {
        Self {
            id: Some(event.id),
            title: event.title.clone(),
            subtitle: event.subtitle.clone(),
            due_date: event.due_date.clone(),
            due_time: event.due_time.clone(),
            due_offset: event.due_offset.clone(),
            fire_date: event.fire_at.clone(),
            after_due: event.after_due.clone(),
            done_label: event.done_label.clone(),
            deep_link: event.deep_link.clone(),
            ..Self::default()
        }
    }

    /// `due_at` in one of core's forms: a date, a local time, or as given with its offset.
    fn due_at(&self) -> String {
        match (self.due_time.is_empty(), self.due_offset.is_empty()) {
            (true, _) => self.due_date.clone(),
            (false, true) => format!("{}T{}", self.due_date, self.due_time),
            (false, false) => format!("{}T{}{}", self.due_date, self.due_time, self.due_offset),
        }
    }

    fn optional(value: &str) -> Option<String> {
        (!value.is_empty()).then(|| value.to_owned())
    }

    fn fields(&self) -> v1::EventFields {
        v1::EventFields {
            title: self.title.clone(),
            due_at: self.due_at(),
            subtitle: Self::optional(&self.subtitle),
            fire_at: Self::optional(&self.fire_date),
            after_due: Self::optional(&self.after_due),
            done_label: Self::optional(&self.done_label),
            deep_link: Self::optional(&self.deep_link),
        }
    }

    fn change(&self, id: i64) -> v1::UpdateEventRequest {
        v1::UpdateEventRequest {
            id,
            title: Some(self.title.clone()),
            due_at: Some(self.due_at()),
            // An emptied field is cleared: no details or link, and the
            // default fire day and Done label again.
            subtitle: Some(self.subtitle.clone()),
            fire_at: Some(self.fire_date.clone()),
            after_due: Self::optional(&self.after_due),
            done_label: Some(self.done_label.clone()),
            deep_link: Some(self.deep_link.clone()),
        }
    }
}

#[derive(Template)]
#[template(path = "form.html")]
struct FormPage {
    t: &'static Words,
    nav: Option<Nav>,
    form: EventForm,
}

#[derive(Default)]
pub struct SettingsForm {
    pub tz: String,
    pub tz_is_default: bool,
    pub quiet_start: String,
    pub quiet_end: String,
    pub locale: String,
    pub errors: HashMap<String, String>,
    pub general: String,
}

impl SettingsForm {
    pub fn error(&self, field: &str) -> &str {
        self.errors.get(field).map(String::as_str).unwrap_or("")
    }

    fn from_profile(profile: &v1::Profile) -> Self {
        Self {
            tz: profile.tz.clone(),
            tz_is_default: profile.tz == "UTC",
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
    t: &'static Words,
    nav: Option<Nav>,
    form: SettingsForm,
    zones: &'static [&'static str],
    saved: bool,
    issued: Option<String>,
    agent_issued: bool,
    agent_created: String,
    agent_last_used: String,
    channels: Vec<v1::Channel>,
    webhook_secret: Option<String>,
    webhook_url: String,
    webhook_error: String,
    test_queued: bool,
    calendar_url: Option<String>,
    calendar_created: String,
    telegram_link: Option<String>,
    telegram_error: String,
}

/// What the reminders section of the settings page shows besides the list.
#[derive(Default)]
pub struct ChannelNotice {
    pub webhook_secret: Option<String>,
    pub webhook_url: String,
    pub webhook_error: String,
    pub test_queued: bool,
    /// The calendar feed's URL, right after it was made.
    pub calendar_url: Option<String>,
    /// A one-time Telegram link, right after it was made, or why there is none.
    pub telegram_link: Option<String>,
    pub telegram_error: String,
}

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

#[derive(Template)]
#[template(path = "message.html")]
struct MessagePage {
    t: &'static Words,
    nav: Option<Nav>,
    message: String,
    second: String,
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

/// A page with one message, in both languages when the person is unknown.
fn message(status: StatusCode, english: &str, russian: &str) -> Response {
    render(status, MessagePage { t: &words::EN, nav: None, message: english.to_owned(), second: russian.to_owned() })
}

/// What a failed call to core shows on a page.
fn failure_page(state: &AppState, t: &'static Words, status: &tonic::Status) -> Response {
    match state.core.explain(status) {
        Failure::Unreachable(_) => render(StatusCode::SERVICE_UNAVAILABLE, MessagePage { t, nav: None, message: t.core_down.into(), second: String::new() }),
        failure => {
            let error = ApiError::from_core(&state.core, status);
            render(error.status, MessagePage { t, nav: None, message: failure.message().to_owned(), second: String::new() })
        }
    }
}

/// The signed-in person of a page, with their profile and an Inbox client.
pub struct Session {
    pub viewer: Viewer,
    pub t: &'static Words,
    pub inbox: Inbox,
}

/// Every page's person: a request without one gets the signed-out page.
impl FromRequestParts<AppState> for Session {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let peer = parts.extensions.get::<ConnectInfo<SocketAddr>>().map(|info| info.0);
        let peer = peer.ok_or_else(|| message(StatusCode::INTERNAL_SERVER_ERROR, "the peer address is unknown", ""))?;
        Session::start(state, peer, &parts.headers).await
    }
}

impl Session {
    async fn start(state: &AppState, peer: SocketAddr, headers: &HeaderMap) -> Result<Self, Response> {
        let InboxUser(login) = inbox_user(state, peer, headers).map_err(|_| message(StatusCode::UNAUTHORIZED, words::EN.signed_out, words::RU.signed_out))?;
        let mut inbox = state.inbox(&login).map_err(|error| message(error.status, &error.body.error, ""))?;
        let profile = inbox.get_profile(v1::GetProfileRequest {}).await.map_err(|status| failure_page(state, &words::EN, &status))?.into_inner();
        let t = words::for_locale(&profile.locale);
        Ok(Self { viewer: Viewer::new(login, profile), t, inbox })
    }

    /// The navigation bar, with core's count of the events that need attention.
    fn nav(&self, current: &'static str) -> Option<Nav> {
        Some(Nav { current, attention: self.viewer.profile.attention as usize })
    }
}

/// Refuses form posts that another site's page sends in the person's name:
/// the browser's `Sec-Fetch-Site` or `Origin` must say the form is ours.
pub async fn same_origin_forms(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let peer = request.extensions().get::<ConnectInfo<SocketAddr>>().map(|info| info.0);
    if request.method() != Method::GET && request.method() != Method::HEAD && crate::edge::cross_site(&state, peer, request.headers()).is_some() {
        return message(
            StatusCode::FORBIDDEN,
            "This form was sent from another site, so it was not accepted.",
            "Эта форма отправлена с другого сайта, поэтому не принята.",
        );
    }
    next.run(request).await
}

/// How many scheduled events the inbox shows before "show all": the
/// page's cost follows what needs attention soon, not everything stored.
pub const SCHEDULED_SHOWN: u32 = 50;

#[derive(serde::Deserialize)]
pub struct InboxQuery {
    all: Option<String>,
}

pub async fn inbox_page(State(state): State<AppState>, mut session: Session, Query(query): Query<InboxQuery>) -> Response {
    let show_all = query.all.is_some();
    let mut events = Vec::new();
    let mut more_scheduled = false;
    for group in EventState::ACTIVE {
        let limit = (group == EventState::Scheduled && !show_all).then_some(SCHEDULED_SHOWN + 1);
        match session.inbox.list_events(v1::ListEventsRequest { state: Some(group.as_str().into()), archive: false, limit }).await {
            Ok(list) => {
                let mut list = list.into_inner().events;
                if limit.is_some() && list.len() > SCHEDULED_SHOWN as usize {
                    list.truncate(SCHEDULED_SHOWN as usize);
                    more_scheduled = true;
                }
                events.extend(list);
            }
            Err(status) => return failure_page(&state, session.t, &status),
        }
    }
    let groups = Groups::new(&events, &session.viewer, session.t);
    let nav = session.nav("inbox");
    render(StatusCode::OK, InboxPage { t: session.t, nav, groups, more_scheduled })
}

pub async fn archive_page(State(state): State<AppState>, mut session: Session) -> Response {
    let list = match session.inbox.list_events(v1::ListEventsRequest { state: None, archive: true, limit: None }).await {
        Ok(list) => list.into_inner(),
        Err(status) => return failure_page(&state, session.t, &status),
    };
    let cards = list.events.iter().map(|event| Card::new(event, &session.viewer, session.t)).collect();
    let nav = session.nav("archive");
    render(StatusCode::OK, ArchivePage { t: session.t, nav, cards })
}

pub async fn new_page(session: Session) -> Response {
    let nav = session.nav("new");
    render(StatusCode::OK, FormPage { t: session.t, nav, form: EventForm { after_due: "keep".into(), ..EventForm::default() } })
}

pub async fn event_page(State(state): State<AppState>, mut session: Session, Path(id): Path<i64>) -> Response {
    let event = match session.inbox.get_event(v1::EventId { id }).await {
        Ok(event) => event.into_inner(),
        Err(status) => return failure_page(&state, session.t, &status),
    };
    let log = event
        .deliveries
        .iter()
        .map(|line| LogLine {
            when: session.viewer.local(&line.due_at).unwrap_or_default(),
            channel: if line.channel.is_empty() { "—".into() } else { line.channel.clone() },
            status: line.status.clone(),
            attempts: line.attempts,
            note: line.note.clone().unwrap_or_default(),
        })
        .collect();
    let card = Card::new(&event, &session.viewer, session.t);
    let nav = session.nav("");
    render(StatusCode::OK, EventPage { t: session.t, nav, card, log })
}

pub async fn edit_page(State(state): State<AppState>, mut session: Session, Path(id): Path<i64>) -> Response {
    let event = match session.inbox.get_event(v1::EventId { id }).await {
        Ok(event) => event.into_inner(),
        Err(status) => return failure_page(&state, session.t, &status),
    };
    let nav = session.nav("");
    render(StatusCode::OK, FormPage { t: session.t, nav, form: EventForm::from_event(&event) })
}

/// Puts core's refusal next to the fields it names, or above the form.
fn refusal(state: &AppState, status: &tonic::Status) -> (HashMap<String, String>, String) {
    let error = ApiError::from_core(&state.core, status);
    if error.body.violations.is_empty() {
        return (HashMap::new(), error.body.error);
    }
    (error.body.violations.into_iter().map(|violation| (violation.field, violation.message)).collect(), String::new())
}

async fn save_event(state: AppState, mut session: Session, id: Option<i64>, input: HashMap<String, String>) -> Response {
    let mut form = EventForm::from_input(id, &input);
    let saved = match id {
        None => session.inbox.create_event(form.fields()).await,
        Some(id) => session.inbox.update_event(form.change(id)).await,
    };
    match saved {
        Ok(event) => Redirect::to(&format!("/#event-{}", event.get_ref().id)).into_response(),
        Err(status) if matches!(status.code(), Code::InvalidArgument | Code::FailedPrecondition) => {
            (form.errors, form.general) = refusal(&state, &status);
            let nav = session.nav(if id.is_some() { "" } else { "new" });
            render(StatusCode::UNPROCESSABLE_ENTITY, FormPage { t: session.t, nav, form })
        }
        Err(status) => failure_page(&state, session.t, &status),
    }
}

pub async fn create(State(state): State<AppState>, session: Session, Form(input): Form<HashMap<String, String>>) -> Response {
    save_event(state, session, None, input).await
}

pub async fn update(State(state): State<AppState>, session: Session, Path(id): Path<i64>, Form(input): Form<HashMap<String, String>>) -> Response {
    save_event(state, session, Some(id), input).await
}

/// What a card's buttons do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CardAction {
    Done,
    Remember,
    Delete,
}

/// Done, Remember and Delete: one call, then back to the inbox.
async fn act(state: AppState, mut session: Session, id: i64, action: CardAction) -> Response {
    let done = match action {
        CardAction::Done => session.inbox.mark_done(v1::EventId { id }).await.map(|_| ()),
        CardAction::Remember => session.inbox.mark_ack(v1::EventId { id }).await.map(|_| ()),
        CardAction::Delete => session.inbox.delete_event(v1::EventId { id }).await.map(|_| ()),
    };
    match done {
        Ok(()) if action == CardAction::Delete => Redirect::to("/").into_response(),
        Ok(()) => Redirect::to(&format!("/#event-{id}")).into_response(),
        Err(status) => failure_page(&state, session.t, &status),
    }
}

pub async fn done(State(state): State<AppState>, session: Session, Path(id): Path<i64>) -> Response {
    act(state, session, id, CardAction::Done).await
}

pub async fn ack(State(state): State<AppState>, session: Session, Path(id): Path<i64>) -> Response {
    act(state, session, id, CardAction::Remember).await
}

pub async fn delete(State(state): State<AppState>, session: Session, Path(id): Path<i64>) -> Response {
    act(state, session, id, CardAction::Delete).await
}

async fn settings_page_for(session: &mut Session, form: SettingsForm, saved: bool, issued: Option<String>, status: StatusCode) -> Response {
    settings_page_with(session, form, saved, issued, ChannelNotice::default(), status).await
}

async fn settings_page_with(
    session: &mut Session,
    form: SettingsForm,
    saved: bool,
    issued: Option<String>,
    notice: ChannelNotice,
    status: StatusCode,
) -> Response {
    let agent = session.inbox.get_agent_token(v1::GetAgentTokenRequest {}).await.map(|reply| reply.into_inner()).unwrap_or_default();
    let channels = session.inbox.list_channels(v1::ListChannelsRequest {}).await.map(|reply| reply.into_inner().channels).unwrap_or_default();
    let calendar = session.inbox.get_calendar_feed(v1::GetCalendarFeedRequest {}).await.map(|reply| reply.into_inner()).unwrap_or_default();
    let nav = session.nav("settings");
    render(
        status,
        SettingsPage {
            t: session.t,
            nav,
            form,
            zones: ZONES.as_slice(),
            saved,
            issued,
            agent_issued: agent.issued,
            agent_created: agent.created_at.as_deref().and_then(|instant| session.viewer.local(instant)).unwrap_or_default(),
            agent_last_used: agent.last_used_at.as_deref().and_then(|instant| session.viewer.local(instant)).unwrap_or_default(),
            channels,
            webhook_secret: notice.webhook_secret,
            webhook_url: notice.webhook_url,
            webhook_error: notice.webhook_error,
            test_queued: notice.test_queued,
            calendar_url: notice.calendar_url,
            telegram_link: notice.telegram_link,
            telegram_error: notice.telegram_error,
            calendar_created: calendar.created_at.as_deref().and_then(|instant| session.viewer.local(instant)).unwrap_or_default(),
        },
    )
}

pub async fn issue_calendar_feed(State(state): State<AppState>, mut session: Session) -> Response {
    let token = match session.inbox.issue_calendar_feed(v1::IssueCalendarFeedRequest {}).await {
        Ok(issued) => issued.into_inner().token,
        Err(status) => return failure_page(&state, session.t, &status),
    };
    let base = state.config.public_url.clone().unwrap_or_else(|| format!("http://{}", state.config.addr));
    let notice = ChannelNotice { calendar_url: Some(format!("{base}/ics/{token}.ics")), ..ChannelNotice::default() };
    let form = SettingsForm::from_profile(&session.viewer.profile);
    settings_page_with(&mut session, form, false, None, notice, StatusCode::OK).await
}

pub async fn link_telegram(State(state): State<AppState>, mut session: Session) -> Response {
    let notice = match session.inbox.create_telegram_link(v1::CreateTelegramLinkRequest {}).await {
        Ok(link) => ChannelNotice { telegram_link: Some(link.into_inner().url), ..ChannelNotice::default() },
        Err(status) if status.code() == Code::FailedPrecondition => ChannelNotice { telegram_error: status.message().to_owned(), ..ChannelNotice::default() },
        Err(status) => return failure_page(&state, session.t, &status),
    };
    let form = SettingsForm::from_profile(&session.viewer.profile);
    settings_page_with(&mut session, form, false, None, notice, StatusCode::OK).await
}

pub async fn revoke_calendar_feed(State(state): State<AppState>, mut session: Session) -> Response {
    match session.inbox.revoke_calendar_feed(v1::RevokeCalendarFeedRequest {}).await {
        Ok(_) => Redirect::to("/settings#calendar").into_response(),
        Err(status) => failure_page(&state, session.t, &status),
    }
}

pub async fn add_webhook(State(state): State<AppState>, mut session: Session, Form(input): Form<HashMap<String, String>>) -> Response {
    let url = input.get("url").map(|url| url.trim().to_owned()).unwrap_or_default();
    let form = SettingsForm::from_profile(&session.viewer.profile);
    match session.inbox.add_webhook(v1::AddWebhookRequest { url: url.clone() }).await {
        Ok(added) => {
            let notice = ChannelNotice { webhook_secret: Some(added.into_inner().secret), ..ChannelNotice::default() };
            settings_page_with(&mut session, form, false, None, notice, StatusCode::OK).await
        }
        Err(status) if status.code() == Code::InvalidArgument => {
            let notice = ChannelNotice { webhook_url: url, webhook_error: status.message().to_owned(), ..ChannelNotice::default() };
            settings_page_with(&mut session, form, false, None, notice, StatusCode::UNPROCESSABLE_ENTITY).await
        }
        Err(status) => failure_page(&state, session.t, &status),
    }
}

/// Test, turn on or off, or remove one of the person's channels.
pub async fn channel_action(State(state): State<AppState>, mut session: Session, Path((id, action)): Path<(i64, String)>) -> Response {
    let done = match action.as_str() {
        "test" => session.inbox.test_channel(v1::ChannelId { id }).await.map(|_| "?tested=1"),
        "on" | "off" => session.inbox.set_channel_enabled(v1::SetChannelEnabledRequest { id, enabled: action == "on" }).await.map(|_| ""),
        "remove" => session.inbox.remove_channel(v1::ChannelId { id }).await.map(|_| ""),
        _ => return message(StatusCode::NOT_FOUND, "no such page", "нет такой страницы"),
    };
    match done {
        Ok(query) => Redirect::to(&format!("/settings{query}#reminders")).into_response(),
        Err(status) => failure_page(&state, session.t, &status),
    }
}

#[derive(serde::Deserialize)]
pub struct SettingsQuery {
    saved: Option<String>,
    tested: Option<String>,
}

pub async fn settings_page(mut session: Session, Query(query): Query<SettingsQuery>) -> Response {
    let form = SettingsForm::from_profile(&session.viewer.profile);
    let notice = ChannelNotice { test_queued: query.tested.is_some(), ..ChannelNotice::default() };
    settings_page_with(&mut session, form, query.saved.is_some(), None, notice, StatusCode::OK).await
}

pub async fn save_settings(State(state): State<AppState>, mut session: Session, Form(input): Form<HashMap<String, String>>) -> Response {
    let field = |name: &str| input.get(name).map(|value| value.trim().to_owned()).filter(|value| !value.is_empty());
    let request = v1::UpdateProfileRequest { tz: field("tz"), quiet_start: field("quiet_start"), quiet_end: field("quiet_end"), locale: field("locale") };
    match session.inbox.update_profile(request.clone()).await {
        Ok(_) => Redirect::to("/settings?saved=1").into_response(),
        Err(status) if status.code() == Code::InvalidArgument => {
            let mut form = SettingsForm {
                tz: request.tz.unwrap_or_default(),
                quiet_start: request.quiet_start.unwrap_or_default(),
                quiet_end: request.quiet_end.unwrap_or_default(),
                locale: request.locale.unwrap_or_else(|| session.viewer.profile.locale.clone()),
                ..SettingsForm::default()
            };
            (form.errors, form.general) = refusal(&state, &status);
            settings_page_for(&mut session, form, false, None, StatusCode::UNPROCESSABLE_ENTITY).await
        }
        Err(status) => failure_page(&state, session.t, &status),
    }
}

pub async fn issue_agent_token(State(state): State<AppState>, mut session: Session) -> Response {
    let issued = match session.inbox.issue_agent_token(v1::IssueMyAgentTokenRequest {}).await {
        Ok(issued) => issued.into_inner(),
        Err(status) => return failure_page(&state, session.t, &status),
    };
    let form = SettingsForm::from_profile(&session.viewer.profile);
    let connect = state.connect_line(&issued.token);
    settings_page_for(&mut session, form, false, Some(connect), StatusCode::OK).await
}

pub async fn revoke_agent_token(State(state): State<AppState>, mut session: Session) -> Response {
    match session.inbox.revoke_agent_token(v1::RevokeMyAgentTokenRequest {}).await {
        Ok(_) => Redirect::to("/settings").into_response(),
        Err(status) => failure_page(&state, session.t, &status),
    }
}

fn links(state: &AppState) -> Option<LinksClient<tonic::service::interceptor::InterceptedService<tonic::transport::Channel, Credential>>> {
    Credential::bearer(&state.config.gateway_token.0).map(|credential| LinksClient::with_interceptor(state.core.channel(), credential))
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
    (Viewer::new(profile.login.clone(), profile), t)
}

pub async fn link_page(State(state): State<AppState>, Path(token): Path<String>) -> Response {
    let Some(mut client) = links(&state) else { return message(StatusCode::INTERNAL_SERVER_ERROR, "the gateway credential is unusable", "") };
    let reply = match client.inspect_action_link(v1::ActionLinkRequest { token }).await {
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

pub async fn use_link(State(state): State<AppState>, Path(token): Path<String>) -> Response {
    let Some(mut client) = links(&state) else { return message(StatusCode::INTERNAL_SERVER_ERROR, "the gateway credential is unusable", "") };
    let reply = match client.use_action_link(v1::ActionLinkRequest { token }).await {
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

pub async fn stylesheet() -> impl IntoResponse {
    ([(CONTENT_TYPE, "text/css; charset=utf-8"), (CACHE_CONTROL, "public, max-age=3600")], include_str!("../../static/hado.css"))
}

pub async fn script() -> impl IntoResponse {
    ([(CONTENT_TYPE, "text/javascript; charset=utf-8"), (CACHE_CONTROL, "public, max-age=3600")], include_str!("../../static/hado.js"))
}
