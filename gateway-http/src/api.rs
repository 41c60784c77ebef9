//! Owns the sources' REST API under `/api`: batch upsert, batch withdraw and
//! reading back. Each request is one `hado.v1.Ingest` call with the source's
//! own token; core validates, decides and answers.

use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use std::sync::LazyLock;

use hado_proto::v1;
use hado_views::ClientEvent;
use hado_words::fields::{
    AFTER_DUE, DEEP_LINK, DONE_LABEL, DUE_AT, FIRE_AT, REF, SUBTITLE, TITLE, TOPIC, USER,
};

use crate::auth::SourceCredential;
use crate::bodies::MAX_BATCH;
use crate::error::{ApiError, ApiJson};
use crate::state::AppState;

/// One event a source pushes. Every field is checked by core, which names
/// each bad one by its item's index; a missing required field reads as
/// empty, so that core reports it with all the others.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("required" = ["user", "ref", "title", "due_at"]))]
pub(crate) struct PushedEvent {
    #[serde(default)]
    #[schemars(pattern(LOGIN_PATTERN.as_str()), description = USER.description())]
    pub user: String,
    #[serde(rename = "ref")]
    #[serde(default)]
    #[schemars(length(min = REF.min, max = REF.max), pattern(r"\S"), description = REF.description())]
    pub source_ref: String,
    #[serde(default)]
    #[schemars(length(max = TOPIC.max), description = TOPIC.description())]
    pub topic: Option<String>,
    #[serde(default)]
    #[schemars(
        length(min = TITLE.min, max = TITLE.max),
        pattern(r"\S"),
        description = TITLE.description()
    )]
    pub title: String,
    #[serde(default)]
    #[schemars(length(max = SUBTITLE.max), description = SUBTITLE.description())]
    pub subtitle: Option<String>,
    #[serde(default)]
    #[schemars(
        pattern(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}(Z|[+-][0-9]{2}:[0-9]{2})?)?$"),
        description = DUE_AT.description()
    )]
    pub due_at: String,
    #[serde(default)]
    #[schemars(pattern(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"), description = FIRE_AT.description())]
    pub fire_at: Option<String>,
    #[serde(default)]
    #[schemars(pattern(r"^(keep|expire)$"), description = AFTER_DUE.description())]
    pub after_due: Option<String>,
    #[serde(default)]
    #[schemars(
        length(min = 1, max = DONE_LABEL.max),
        pattern(r"\S"),
        description = DONE_LABEL.description()
    )]
    pub done_label: Option<String>,
    #[serde(default)]
    #[schemars(
        length(max = DEEP_LINK.max),
        pattern(r"^https?://[^\s/?#@\\]+[^\s\\]*$"),
        description = DEEP_LINK.description()
    )]
    pub deep_link: Option<String>,
}

/// A login as JSON Schema reads it: letters of either case, since logins
/// are not case sensitive, up to `fields::USER`'s limit.
pub(crate) static LOGIN_PATTERN: LazyLock<String> =
    LazyLock::new(|| format!(r"^[A-Za-z0-9][A-Za-z0-9._@-]{{0,{}}}$", USER.max - 1));

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct UpsertBody {
    /// At most 1000 events, validated whole and written in one transaction.
    #[schemars(length(max = MAX_BATCH))]
    pub events: Vec<PushedEvent>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct UpsertResult {
    pub id: i64,
    /// created, updated, rescheduled, unchanged or revived.
    pub outcome: String,
    pub state: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct UpsertReply {
    /// One result per event, in the order sent.
    pub results: Vec<UpsertResult>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("required" = ["user", "ref"]))]
pub(crate) struct SourceKey {
    #[serde(default)]
    #[schemars(pattern(LOGIN_PATTERN.as_str()), description = USER.description())]
    pub user: String,
    #[serde(rename = "ref")]
    #[serde(default)]
    #[schemars(length(min = REF.min, max = REF.max), pattern(r"\S"), description = REF.description())]
    pub source_ref: String,
    #[serde(default)]
    #[schemars(length(max = TOPIC.max), description = TOPIC.description())]
    pub topic: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WithdrawBody {
    /// At most 1000 keys.
    #[schemars(length(max = MAX_BATCH))]
    pub events: Vec<SourceKey>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct WithdrawResult {
    /// False when the source has no event with this key.
    pub found: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct WithdrawReply {
    pub results: Vec<WithdrawResult>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ClientEventList {
    pub events: Vec<ClientEvent>,
}

fn source_event(item: PushedEvent) -> v1::SourceEvent {
    v1::SourceEvent {
        user: item.user,
        r#ref: item.source_ref,
        topic: item.topic.unwrap_or_default(),
        fields: Some(v1::EventFields {
            title: item.title,
            due_at: item.due_at,
            subtitle: item.subtitle,
            fire_at: item.fire_at,
            after_due: item.after_due,
            done_label: item.done_label,
            deep_link: item.deep_link,
        }),
    }
}

pub(crate) async fn upsert(
    State(state): State<AppState>,
    SourceCredential(credential): SourceCredential,
    ApiJson(body): ApiJson<UpsertBody>,
) -> Result<axum::Json<UpsertReply>, ApiError> {
    let request =
        v1::UpsertEventsRequest { events: body.events.into_iter().map(source_event).collect() };
    let reply = state.call(state.ingest(credential).upsert_events(request)).await?;
    let results = reply
        .results
        .into_iter()
        .map(|result| UpsertResult {
            id: result.id,
            outcome: result.outcome().word().to_owned(),
            state: result.state().word().to_owned(),
        })
        .collect();
    Ok(axum::Json(UpsertReply { results }))
}

pub(crate) async fn withdraw(
    State(state): State<AppState>,
    SourceCredential(credential): SourceCredential,
    ApiJson(body): ApiJson<WithdrawBody>,
) -> Result<axum::Json<WithdrawReply>, ApiError> {
    let keys = body
        .events
        .into_iter()
        .map(|key| v1::EventKey {
            user: key.user,
            r#ref: key.source_ref,
            topic: key.topic.unwrap_or_default(),
        })
        .collect();
    let reply = state
        .call(state.ingest(credential).withdraw_events(v1::WithdrawEventsRequest { keys }))
        .await?;
    let results = reply
        .results
        .into_iter()
        .map(|result| WithdrawResult {
            found: result.found,
            id: result.found.then_some(result.id),
            state: result.found.then(|| result.state().word().to_owned()),
        })
        .collect();
    Ok(axum::Json(WithdrawReply { results }))
}

/// `GET /api/events?user=anna&ref=visa&ref=passport`: the source's events
/// for one user, optionally only those refs.
pub(crate) async fn list(
    State(state): State<AppState>,
    SourceCredential(credential): SourceCredential,
    RawQuery(query): RawQuery,
) -> Result<axum::response::Response, ApiError> {
    let mut user = None;
    let mut refs = Vec::new();
    for (key, value) in form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
        match key.as_ref() {
            "user" => user = Some(value.into_owned()),
            "ref" => refs.push(value.into_owned()),
            other => {
                return Err(ApiError::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    format!("unknown query parameter {other:?}; use user and ref"),
                ));
            }
        }
    }
    let user = user.ok_or_else(|| {
        ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "the user query parameter is required")
    })?;
    let reply = state
        .call(state.ingest(credential).list_events(v1::IngestListRequest { user, refs }))
        .await?;
    let events = crate::lists::one_page(reply.events);
    Ok(crate::lists::events_json(
        events,
        |event, out| serde_json::to_writer(out, &ClientEvent::from(event)),
        None,
    ))
}
