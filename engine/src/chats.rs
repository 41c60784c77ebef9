//! Owns what Telegram's chats do to the inbox, as engine operations like
//! every other: a chat linked to its person with a one-time code, updates
//! taken once each, a reminder's buttons stored for the chat it goes to,
//! and a press acted on only from that chat. The Bot API itself is
//! `crate::telegram`'s.

use chrono::{DateTime, Utc};

use crate::Engine;
use crate::error::CoreError;
use crate::links::LinkAction;
use crate::tokens;
use hado_domain::event::RememberFor;
use hado_domain::event_record::EventRecord;
use hado_domain::user::UserRecord;
use hado_domain::violations::Violations;
use hado_storage::{channels, users};

use hado_domain::channel::ChannelKind;
use hado_storage::telegram::{self, Button};

/// The length of a button's stored id (the `callback_data` holds `b:<id>`).
pub const BUTTON_ID_LENGTH: usize = 12;
/// The length of a one-time linking code.
const LINK_CODE_LENGTH: usize = 24;

/// A press that acted: what it did, and the event as it is now.
pub struct Pressed {
    pub action: ButtonAction,
    pub event: EventRecord,
}

/// What a reminder's button does, as stored with it: `done`, `remember`,
/// or `remember:<until>` (`tomorrow`, `next_week`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ButtonAction {
    Done,
    Remember(RememberFor),
}

impl ButtonAction {
    fn stored(self) -> String {
        match self {
            Self::Done => LinkAction::Done.as_str().into(),
            Self::Remember(RememberFor::NextCheckpoint) => LinkAction::Remember.as_str().into(),
            Self::Remember(until) => {
                format!("{}:{}", LinkAction::Remember.as_str(), until.spelled())
            }
        }
    }

    /// A stored action; anything unreadable is the plain Remember, which
    /// harms nothing.
    fn from_stored(text: &str) -> Self {
        let (action, until) = text.split_once(':').unwrap_or((text, ""));
        match LinkAction::parse(action) {
            Some(LinkAction::Done) => Self::Done,
            _ => Self::Remember(
                RememberFor::parse("until", until, &mut Violations::default())
                    .unwrap_or(RememberFor::NextCheckpoint),
            ),
        }
    }
}

impl Engine {
    /// A one-time code that links a chat to `user` until it expires.
    pub async fn create_chat_link(
        &self,
        user: &UserRecord,
        lifetime: chrono::Duration,
    ) -> Result<(String, DateTime<Utc>), CoreError> {
        let code = tokens::short_code(LINK_CODE_LENGTH);
        let expires_at = self.now() + lifetime;
        let mut transaction = self.store.begin_write().await?;
        telegram::insert_link(&mut transaction, &code, user.id, expires_at).await?;
        transaction.commit().await?;
        Ok((code, expires_at))
    }

    /// Whether the update is seen for the first time (Telegram may send
    /// one twice); it is recorded as seen either way.
    pub async fn first_sight_of_update(&self, update_id: i64) -> Result<bool, CoreError> {
        let mut transaction = self.store.begin_write().await?;
        let fresh = telegram::record_update(&mut transaction, update_id, self.now()).await?;
        transaction.commit().await?;
        Ok(fresh)
    }

    /// Uses up a linking code: the chat becomes (or becomes again) one of the
    /// person's channels. `None` when the code is unknown or expired.
    pub async fn link_chat(
        &self,
        code: &str,
        chat_id: i64,
    ) -> Result<Option<UserRecord>, CoreError> {
        let now = self.now();
        let chat = chat_id.to_string();
        let mut transaction = self.store.begin_write().await?;
        let Some(user_id) = telegram::take_link(&mut transaction, code, now).await? else {
            transaction.commit().await?;
            return Ok(None);
        };
        let user = users::user_by_id(&mut transaction, user_id).await?;
        let linked = channels::for_user(&mut transaction, user_id)
            .await?
            .into_iter()
            .find(|channel| channel.kind == ChannelKind::Telegram && channel.target == chat);
        match linked {
            Some(channel) => {
                channels::set_enabled(&mut transaction, user_id, channel.id, true, now).await?;
            }
            None => {
                channels::add(&mut transaction, user_id, ChannelKind::Telegram, &chat, None, now)
                    .await?;
            }
        }
        transaction.commit().await?;
        Ok(Some(user))
    }

    /// The person a chat is linked to, if any.
    pub async fn user_of_chat(&self, chat_id: i64) -> Result<Option<UserRecord>, CoreError> {
        let mut connection = self.store.reader().acquire().await?;
        let Some(channel) =
            channels::find_by_target(&mut connection, ChannelKind::Telegram, &chat_id.to_string())
                .await?
        else {
            return Ok(None);
        };
        Ok(Some(users::user_by_id(&mut connection, channel.user_id).await?))
    }

    /// Stores the buttons of a reminder to `chat_id` (Done; Remember until
    /// the next checkpoint, until tomorrow and until next week); returns
    /// their ids in that order.
    pub async fn store_reminder_buttons(
        &self,
        event: &EventRecord,
        chat_id: i64,
    ) -> Result<[String; 4], CoreError> {
        let choices = [
            ButtonAction::Done,
            ButtonAction::Remember(RememberFor::NextCheckpoint),
            ButtonAction::Remember(RememberFor::TomorrowMorning),
            ButtonAction::Remember(RememberFor::NextWeek),
        ];
        let ids = choices.map(|_| tokens::short_code(BUTTON_ID_LENGTH));
        let now = self.now();
        let mut transaction = self.store.begin_write().await?;
        for (id, action) in ids.iter().zip(choices) {
            let button = Button {
                event_id: event.id,
                user_id: event.user_id,
                action: action.stored(),
                chat_id: Some(chat_id.to_string()),
            };
            telegram::insert_button(&mut transaction, id, &button, now).await?;
        }
        transaction.commit().await?;
        Ok(ids)
    }

    /// A press of a stored button in `pressed_in`: Done or Remember as the
    /// event's person, only when pressed in the chat the reminder went to
    /// (for buttons made before chats were recorded: a chat linked to the
    /// person). `None` when the button is unknown, foreign to the chat, or
    /// its event can no longer be acted on.
    pub async fn press_button(
        &self,
        button_id: &str,
        pressed_in: Option<i64>,
    ) -> Result<Option<Pressed>, CoreError> {
        let Some(pressed_in) = pressed_in.map(|chat| chat.to_string()) else { return Ok(None) };
        let mut connection = self.store.reader().acquire().await?;
        let Some(button) = telegram::find_button(&mut connection, button_id).await? else {
            return Ok(None);
        };
        let from_its_chat = match &button.chat_id {
            Some(chat) => *chat == pressed_in,
            None => channels::find_by_target(&mut connection, ChannelKind::Telegram, &pressed_in)
                .await?
                .is_some_and(|channel| channel.user_id == button.user_id),
        };
        if !from_its_chat {
            tracing::warn!(
                "a Telegram button was pressed outside the chat its reminder went to; ignored"
            );
            return Ok(None);
        }
        let user = users::user_by_id(&mut connection, button.user_id).await?;
        drop(connection);
        let action = ButtonAction::from_stored(&button.action);
        let acted = match action {
            ButtonAction::Done => self.mark_done(&user, button.event_id).await,
            ButtonAction::Remember(remember) => {
                self.remember(&user, button.event_id, remember).await
            }
        };
        Ok(acted.ok().map(|event| Pressed { action, event }))
    }
}
