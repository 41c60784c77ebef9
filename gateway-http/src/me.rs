//! Owns the inbox's JSON API under `/me`: the signed-in person's profile,
//! events (a page at a time), archive, actions and agent token. Each request
//! is one `hado.v1.Inbox` call made with the gateway credential for that
//! person.

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use hado_proto::v1;
use hado_views::{Deleted, Profile, UserEvent};
use hado_words::fields::AFTER;

use crate::auth::InboxUser;
use crate::error::{ApiError, ApiJson};
use crate::state::AppState;

type Reply<T> = Result<axum::Json<T>, ApiError>;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProfileChange {
    pub tz: Option<String>,
    pub quiet_start: Option<String>,
    pub quiet_end: Option<String>,
    /// `en` or `ru`.
    pub locale: Option<String>,
}

/// What `GET /me/events` takes: a group, and a page of it, as gateway-mcp's
/// `list_events` does. Its schema is the OpenAPI document's parameters.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct EventsQuery {
    /// Only active events in this state: overdue, today, preparing or scheduled.
    pub state: Option<String>,
    /// At most this many events, the most urgent first: 1 to 1000, 100 when unset.
    #[schemars(range(min = 1, max = LARGEST_PAGE))]
    pub limit: Option<u32>,
    #[schemars(length(max = AFTER.max), description = AFTER.description())]
    pub after: Option<String>,
}

/// Events a page of `GET /me/events` holds when the request does not say.
pub(crate) const DEFAULT_PAGE: u32 = 100;
/// The most a page may hold: a page is one reply from core, held whole by
/// core and by the gateway.
pub(crate) const LARGEST_PAGE: u32 = 1000;

/// A page of the person's active events, as `GET /me/events` writes it
/// (streamed, by `lists::events_json`; this type gives its schema).
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct EventPage {
    pub events: Vec<UserEvent>,
    /// Set when more events follow this page: pass it as `after` for them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
}

/// A new event of the person's own (`manual`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NewEventBody {
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub due_at: String,
    pub subtitle: Option<String>,
    pub fire_at: Option<String>,
    pub after_due: Option<String>,
    pub done_label: Option<String>,
    pub deep_link: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct EventChangeBody {
    pub title: Option<String>,
    pub due_at: Option<String>,
    pub subtitle: Option<String>,
    pub fire_at: Option<String>,
    pub after_due: Option<String>,
    pub done_label: Option<String>,
    pub deep_link: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct AgentTokenStatus {
    pub issued: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_used_at: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct IssuedAgentToken {
    /// `hado_agent_…`, shown this once; any earlier token stopped working.
    pub token: String,
    /// The `claude mcp add` line that connects Claude Code with it.
    pub connect: String,
    /// Set when gateway-http does not know gateway-mcp's address: the line
    /// then has a placeholder for it, and this says how to fill it in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Revoked {
    pub revoked: bool,
}

pub(crate) async fn profile(
    State(state): State<AppState>,
    InboxUser(login): InboxUser,
) -> Reply<Profile> {
    let profile =
        state.call(state.inbox(&login)?.get_profile(v1::GetProfileRequest::default())).await?;
    Ok(axum::Json(Profile::from(&profile)))
}

pub(crate) async fn update_profile(
    State(state): State<AppState>,
    InboxUser(login): InboxUser,
    ApiJson(change): ApiJson<ProfileChange>,
) -> Reply<Profile> {
    let request = v1::UpdateProfileRequest {
        tz: change.tz,
        quiet_start: change.quiet_start,
        quiet_end: change.quiet_end,
        locale: change.locale,
    };
    let profile = state.call(state.inbox(&login)?.update_profile(request)).await?;
    Ok(axum::Json(Profile::from(&profile)))
}

/// `GET /me/events`: a page of the person's active events, the most
/// urgent first, with the cursor of the next when more follow; never every
/// event at once, however many the person has.
pub(crate) async fn events(
    State(state): State<AppState>,
    InboxUser(login): InboxUser,
    query: Result<Query<EventsQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<axum::response::Response, ApiError> {
    let Query(query) = query.map_err(|rejection| {
        ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, rejection.body_text())
    })?;
    let limit = query.limit.unwrap_or(DEFAULT_PAGE);
    if !(1..=LARGEST_PAGE).contains(&limit) {
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("limit {limit} is not from 1 to {LARGEST_PAGE}; ask for the rest with after"),
        ));
    }
    let request = v1::ListEventsRequest {
        state: query.state,
        limit: Some(limit),
        after: query.after,
        ..Default::default()
    };
    let page = state.call(state.inbox(&login)?.list_events(request)).await?;
    Ok(crate::lists::events_json(crate::lists::one_page(page.events), write_event, page.next))
}

/// `GET /me/archive`: the archive's latest 100, most recently closed first.
pub(crate) async fn archive(
    State(state): State<AppState>,
    InboxUser(login): InboxUser,
) -> Result<axum::response::Response, ApiError> {
    let request = v1::ListEventsRequest { archive: true, ..Default::default() };
    let list = state.call(state.inbox(&login)?.list_events(request)).await?;
    Ok(crate::lists::events_json(crate::lists::one_page(list.events), write_event, None))
}

/// One event as the person's JSON view.
fn write_event(event: &v1::Event, out: &mut Vec<u8>) -> serde_json::Result<()> {
    serde_json::to_writer(out, &UserEvent::from(event))
}

pub(crate) async fn create(
    State(state): State<AppState>,
    InboxUser(login): InboxUser,
    ApiJson(new): ApiJson<NewEventBody>,
) -> Result<(StatusCode, axum::Json<UserEvent>), ApiError> {
    let fields = v1::EventFields {
        title: new.title,
        due_at: new.due_at,
        subtitle: new.subtitle,
        fire_at: new.fire_at,
        after_due: new.after_due,
        done_label: new.done_label,
        deep_link: new.deep_link,
    };
    let event =
        state.call(state.inbox(&login)?.create_event(hado_gateway::cores::once(fields))).await?;
    Ok((StatusCode::CREATED, axum::Json(UserEvent::from(&event))))
}

pub(crate) async fn event(
    State(state): State<AppState>,
    InboxUser(login): InboxUser,
    Path(id): Path<i64>,
) -> Reply<UserEvent> {
    let event = state.call(state.inbox(&login)?.get_event(v1::EventId { id })).await?;
    Ok(axum::Json(UserEvent::from(&event)))
}

pub(crate) async fn update(
    State(state): State<AppState>,
    InboxUser(login): InboxUser,
    Path(id): Path<i64>,
    ApiJson(change): ApiJson<EventChangeBody>,
) -> Reply<UserEvent> {
    let request = v1::UpdateEventRequest {
        id,
        title: change.title,
        due_at: change.due_at,
        subtitle: change.subtitle,
        fire_at: change.fire_at,
        after_due: change.after_due,
        done_label: change.done_label,
        deep_link: change.deep_link,
    };
    let event = state.call(state.inbox(&login)?.update_event(request)).await?;
    Ok(axum::Json(UserEvent::from(&event)))
}

pub(crate) async fn delete(
    State(state): State<AppState>,
    InboxUser(login): InboxUser,
    Path(id): Path<i64>,
) -> Reply<Deleted> {
    let reply = state.call(state.inbox(&login)?.delete_event(v1::EventId { id })).await?;
    Ok(axum::Json(Deleted::from(&reply)))
}

pub(crate) async fn done(
    State(state): State<AppState>,
    InboxUser(login): InboxUser,
    Path(id): Path<i64>,
) -> Reply<UserEvent> {
    let event = state.call(state.inbox(&login)?.mark_done(v1::EventId { id })).await?;
    Ok(axum::Json(UserEvent::from(&event)))
}

/// What Remember may say: until when (empty, `{}`, is until the next checkpoint).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RememberChoice {
    /// next_checkpoint (the default), tomorrow, next_week, or a day YYYY-MM-DD: quiet until that morning, which then reminds.
    #[serde(default)]
    until: Option<String>,
}

pub(crate) async fn remember(
    State(state): State<AppState>,
    InboxUser(login): InboxUser,
    Path(id): Path<i64>,
    ApiJson(choice): ApiJson<RememberChoice>,
) -> Reply<UserEvent> {
    let event = state
        .call(state.inbox(&login)?.mark_ack(v1::MarkAckRequest { id, until: choice.until }))
        .await?;
    Ok(axum::Json(UserEvent::from(&event)))
}

pub(crate) async fn take_back_remember(
    State(state): State<AppState>,
    InboxUser(login): InboxUser,
    Path(id): Path<i64>,
) -> Reply<UserEvent> {
    let event = state.call(state.inbox(&login)?.take_back_ack(v1::EventId { id })).await?;
    Ok(axum::Json(UserEvent::from(&event)))
}

pub(crate) async fn reopen(
    State(state): State<AppState>,
    InboxUser(login): InboxUser,
    Path(id): Path<i64>,
) -> Reply<UserEvent> {
    let event = state.call(state.inbox(&login)?.reopen_event(v1::EventId { id })).await?;
    Ok(axum::Json(UserEvent::from(&event)))
}

pub(crate) async fn agent_token(
    State(state): State<AppState>,
    InboxUser(login): InboxUser,
) -> Reply<AgentTokenStatus> {
    let status =
        state.call(state.inbox(&login)?.get_agent_token(v1::GetAgentTokenRequest {})).await?;
    Ok(axum::Json(AgentTokenStatus {
        issued: status.issued,
        created_at: status.created_at.as_ref().map(hado_proto::convert::rfc3339_at),
        last_used_at: status.last_used_at.as_ref().map(hado_proto::convert::rfc3339_at),
    }))
}

/// How to fill in the connect line's MCP address.
const MCP_URL_NOTE: &str = "gateway-http does not know gateway-mcp's address: use the URL agents reach /mcp at, and set HADO_MCP_URL on gateway-http to show it here";

pub(crate) async fn issue_agent_token(
    State(state): State<AppState>,
    InboxUser(login): InboxUser,
) -> Reply<IssuedAgentToken> {
    let issued =
        state.call(state.inbox(&login)?.issue_agent_token(v1::IssueMyAgentTokenRequest {})).await?;
    let connect = crate::clients::connect_line(&state.config, &issued.token);
    let note = (!crate::clients::knows_mcp_url(&state.config)).then(|| MCP_URL_NOTE.to_owned());
    Ok(axum::Json(IssuedAgentToken { token: issued.token, connect, note }))
}

pub(crate) async fn revoke_agent_token(
    State(state): State<AppState>,
    InboxUser(login): InboxUser,
) -> Reply<Revoked> {
    let reply = state
        .call(state.inbox(&login)?.revoke_agent_token(v1::RevokeMyAgentTokenRequest {}))
        .await?;
    Ok(axum::Json(Revoked { revoked: reply.revoked }))
}
