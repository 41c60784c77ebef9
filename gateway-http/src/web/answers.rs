//! Owns the card buttons: Done, Remember (until when), Delete, Reopen and
//! taking Remember back, each one call to core and then back to the inbox,
//! which says what happened.

use crate::quick_add;

use super::*;

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
/// back to the inbox, which says what happened (`said`): at the card when it
/// is still there, at the top when it left.
async fn act(
    state: AppState,
    mut session: Session,
    id: i64,
    action: CardAction,
) -> Result<Response, Response> {
    let (words, inbox) = (session.words, &mut session.inbox);
    let (to, said) = match action {
        CardAction::Done => {
            call(&state, words, inbox.mark_done(v1::EventId { id })).await?;
            ("/".to_owned(), Said::Done)
        }
        CardAction::Delete => {
            call(&state, words, inbox.delete_event(v1::EventId { id })).await?;
            ("/".to_owned(), Said::Deleted)
        }
        CardAction::Remember(until) => {
            let event =
                call(&state, words, inbox.mark_ack(v1::MarkAckRequest { id, until })).await?;
            (at_card(&event), Said::Remembered)
        }
        CardAction::Reopen => {
            let event = call(&state, words, inbox.reopen_event(v1::EventId { id })).await?;
            (at_card(&event), Said::Reopened)
        }
        CardAction::TakeBackRemember => {
            let event = call(&state, words, inbox.take_back_ack(v1::EventId { id })).await?;
            (at_card(&event), Said::Unremembered)
        }
    };
    Ok(redirect_saying(&to, said, id))
}

pub(crate) async fn done(
    State(state): State<AppState>,
    session: Session,
    Path(id): Path<i64>,
) -> Result<Response, Response> {
    act(state, session, id, CardAction::Done).await
}

/// Remember; the form may say until when (`until`).
pub(crate) async fn remember(
    State(state): State<AppState>,
    session: Session,
    Path(id): Path<i64>,
    body: axum::body::Bytes,
) -> Result<Response, Response> {
    // A picked day may be typed as the person writes dates; core reads
    // `YYYY-MM-DD` and the words `tomorrow` and `next_week`.
    let until = form_urlencoded::parse(&body)
        .find(|(name, _)| name == "until")
        .map(|(_, value)| value.trim().to_owned())
        .filter(|value| !value.is_empty())
        .map(|value| match value.as_str() {
            "tomorrow" | "next_week" | "next_checkpoint" => value,
            typed => quick_add::read_date(typed, session.viewer.today)
                .map_or(value.clone(), |date| date.format("%Y-%m-%d").to_string()),
        });
    act(state, session, id, CardAction::Remember(until)).await
}

pub(crate) async fn delete(
    State(state): State<AppState>,
    session: Session,
    Path(id): Path<i64>,
) -> Result<Response, Response> {
    act(state, session, id, CardAction::Delete).await
}

pub(crate) async fn reopen(
    State(state): State<AppState>,
    session: Session,
    Path(id): Path<i64>,
) -> Result<Response, Response> {
    act(state, session, id, CardAction::Reopen).await
}

pub(crate) async fn take_back_remember(
    State(state): State<AppState>,
    session: Session,
    Path(id): Path<i64>,
) -> Result<Response, Response> {
    act(state, session, id, CardAction::TakeBackRemember).await
}
