//! Owns the card buttons: Done, Remember (until when), Delete, Reopen and
//! taking Remember back, each one call to core and then back to the inbox,
//! which says what happened with the event the call returned: a click and
//! the page it leads to are two calls.

use axum::extract::{Path, State};
use axum::response::Response;

use hado_proto::v1;
use hado_proto::v1::EventState;

use crate::quick_add;
use crate::state::AppState;
use crate::web::said::{Said, redirect_saying};
use crate::web::session::Person;
use crate::web::view::Viewer;

/// What a card's buttons do.
#[derive(Clone, Debug, PartialEq, Eq)]
enum CardAction {
    Done,
    /// Remember, until the next checkpoint or the morning the person chose
    /// (`tomorrow`, `next_week`, a day), which core reads.
    Remember(Option<String>),
    Delete,
    Reopen,
    TakeBackRemember,
}

/// The inbox at an event's card, with Scheduled unfolded when the card is
/// there.
pub(super) fn at_card(event: &v1::Event) -> String {
    let id = event.id;
    let open = if event.state() == EventState::Scheduled { "?open=scheduled" } else { "" };
    format!("/{open}#event-{id}")
}

/// Done, Remember, Delete, Reopen and taking Remember back: one call, then
/// back to the inbox, which says what happened (`said`, with the event the
/// call returned): at the card when it is still there, at the top when it
/// left.
async fn act(
    state: AppState,
    mut person: Person,
    id: i64,
    action: CardAction,
) -> Result<Response, Response> {
    let inbox = &mut person.inbox;
    let (reply, said) = match action {
        CardAction::Done => (inbox.mark_done(v1::EventId { id }).await, Said::Done),
        CardAction::Delete => {
            let reply = inbox.delete_event(v1::EventId { id }).await;
            // A core of the release before names only the id.
            let deleted = reply.map(|reply| {
                reply.map(|deleted| deleted.event.unwrap_or(v1::Event { id, ..Default::default() }))
            });
            (deleted, Said::Deleted)
        }
        CardAction::Remember(until) => {
            (inbox.mark_ack(v1::MarkAckRequest { id, until }).await, Said::Remembered)
        }
        CardAction::Reopen => (inbox.reopen_event(v1::EventId { id }).await, Said::Reopened),
        CardAction::TakeBackRemember => {
            (inbox.take_back_ack(v1::EventId { id }).await, Said::Unremembered)
        }
    };
    let event = person.reply(&state, reply).await?;
    // Done and Delete take the event out of the inbox: back to its top.
    let to = match said {
        Said::Done | Said::Deleted => "/".to_owned(),
        _ => at_card(&event),
    };
    Ok(redirect_saying(&state.said_key, &person.login, &to, said, &event))
}

pub(crate) async fn done(
    State(state): State<AppState>,
    person: Person,
    Path(id): Path<i64>,
) -> Result<Response, Response> {
    act(state, person, id, CardAction::Done).await
}

/// Whether core reads a Remember choice as it is: its words, or a day as
/// `YYYY-MM-DD`.
fn core_reads(until: &str) -> bool {
    matches!(until, "tomorrow" | "next_week" | "next_checkpoint")
        || chrono::NaiveDate::parse_from_str(until, "%Y-%m-%d").is_ok()
}

/// Remember; the form may say until when (`until`).
pub(crate) async fn remember(
    State(state): State<AppState>,
    mut person: Person,
    Path(id): Path<i64>,
    body: axum::body::Bytes,
) -> Result<Response, Response> {
    // A picked day may be typed as the person writes dates; core reads
    // `YYYY-MM-DD` and the words `tomorrow` and `next_week`. Only a typed
    // day needs the person's today, and so a call for their profile.
    let until = form_urlencoded::parse(&body)
        .find(|(name, _)| name == "until")
        .map(|(_, value)| value.trim().to_owned())
        .filter(|value| !value.is_empty());
    let until = match until {
        Some(typed) if !core_reads(&typed) => {
            let reply =
                person.inbox.get_profile(v1::GetProfileRequest { without_attention: true }).await;
            let today = Viewer::new(person.reply(&state, reply).await?).today;
            Some(
                quick_add::read_date(&typed, today)
                    .map_or(typed, |date| date.format("%Y-%m-%d").to_string()),
            )
        }
        until => until,
    };
    act(state, person, id, CardAction::Remember(until)).await
}

pub(crate) async fn delete(
    State(state): State<AppState>,
    person: Person,
    Path(id): Path<i64>,
) -> Result<Response, Response> {
    act(state, person, id, CardAction::Delete).await
}

pub(crate) async fn reopen(
    State(state): State<AppState>,
    person: Person,
    Path(id): Path<i64>,
) -> Result<Response, Response> {
    act(state, person, id, CardAction::Reopen).await
}

pub(crate) async fn take_back_remember(
    State(state): State<AppState>,
    person: Person,
    Path(id): Path<i64>,
) -> Result<Response, Response> {
    act(state, person, id, CardAction::TakeBackRemember).await
}
