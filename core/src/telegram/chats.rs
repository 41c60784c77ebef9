//! What the person does in a chat: linking it with a one-time code, each
//! update handled once (by `update_id`), `/list`, and a press of a
//! reminder's button, answered and shown on the message.

use chrono::{DateTime, Utc};

use hado_words as words;

use hado_domain::event_record::EventRecord;
use hado_domain::state::State;
use hado_domain::user::UserRecord;
use hado_engine::Engine;
use hado_engine::error::CoreError;

use crate::telegram::bot::{Bot, CallbackQuery, Update};
use crate::telegram::messages::{due_words, local, words_for};

/// How long a linking code works.
pub(crate) const LINK_LIFETIME: chrono::Duration = chrono::Duration::hours(1);

/// The stored id a button's `callback_data` carries (`b:<id>`), when the
/// data has that shape; anything else a client sends is no button of ours.
pub fn button_id(callback_data: &str) -> Option<&str> {
    use hado_engine::BUTTON_ID_LENGTH;
    let id = callback_data.strip_prefix("b:")?;
    (id.len() == BUTTON_ID_LENGTH
        && id.bytes().all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit()))
    .then_some(id)
}

/// A one-time link that binds a Telegram chat to the person.
pub(crate) async fn link_url(
    engine: &Engine,
    bot: &Bot,
    user: &UserRecord,
) -> Result<(String, DateTime<Utc>), CoreError> {
    let username =
        bot.username().await.map_err(|error| CoreError::FailedPrecondition(error.message))?;
    let (code, expires_at) = engine.create_chat_link(user, LINK_LIFETIME).await?;
    Ok((format!("https://t.me/{username}?start={code}"), expires_at))
}

/// Handles one update, once: an update seen before is dropped.
pub(crate) async fn handle_update(
    engine: &Engine,
    bot: &Bot,
    update: &Update,
) -> Result<(), CoreError> {
    if !engine.first_sight_of_update(update.update_id).await? {
        return Ok(());
    }
    if let Some(callback) = &update.callback_query {
        return press(engine, bot, callback).await;
    }
    let Some(message) = &update.message else { return Ok(()) };
    let (chat_id, Some(text)) = (message.chat.id, message.text.as_deref()) else { return Ok(()) };
    let reply = if let Some(code) = text.strip_prefix("/start") {
        link_chat(engine, code.trim(), chat_id).await?
    } else if text.trim() == "/list" {
        list(engine, chat_id).await?
    } else {
        words::both(|words| words.bot_send_list)
    };
    if let Err(error) = bot.send_message(chat_id, &reply, None).await {
        tracing::warn!(error = %error.message, "could not answer a Telegram message");
    }
    Ok(())
}

async fn link_chat(engine: &Engine, code: &str, chat_id: i64) -> Result<String, CoreError> {
    Ok(match engine.link_chat(code, chat_id).await? {
        Some(user) => words_for(user.locale).bot_linked.replace("{login}", user.login.as_str()),
        None => words::both(|words| words.bot_link_invalid),
    })
}

/// `/list`: what needs the person's attention, then what is due today or overdue.
async fn list(engine: &Engine, chat_id: i64) -> Result<String, CoreError> {
    let Some(user) = engine.user_of_chat(chat_id).await? else {
        return Ok(words::both(|words| words.bot_chat_not_linked));
    };
    let events = engine.list_events(&user, None, false, None).await?;
    let now = engine.now();
    let wanted: Vec<&EventRecord> = events
        .iter()
        .filter(|event| {
            event.reminders.needs_attention()
                || matches!(event.lifecycle.state, State::Today | State::Overdue)
        })
        .collect();
    let words = words_for(user.locale);
    if wanted.is_empty() {
        return Ok(words.bot_nothing_needs_you.to_owned());
    }
    let mut text = words.bot_needs_attention.to_owned();
    for event in wanted.iter().take(30) {
        text.push_str(&format!("\n• {} — {}", event.spec.title.as_str(), due_words(event, now)));
    }
    Ok(text)
}

/// A button press, from the chat its reminder went to: the action as the
/// event's person, the callback always answered, the message edited to show
/// what happened. A press from any other chat does nothing but say so.
async fn press(engine: &Engine, bot: &Bot, callback: &CallbackQuery) -> Result<(), CoreError> {
    let id = callback.id.as_str();
    let button = callback.data.as_deref().and_then(button_id).unwrap_or_default();
    let pressed_in = callback.message.as_ref().map(|message| message.chat.id);
    let outcome = engine
        .press_button(button, pressed_in)
        .await?
        .map(|pressed| (pressed.action, pressed.event));
    let Some((action, event)) = outcome else {
        let _ = bot.answer_callback(id, &words::both(|words| words.bot_button_gone)).await;
        return Ok(());
    };
    let words = words_for(event.locale);
    let (short, text) = match (action, event.lifecycle.state) {
        (_, State::Done | State::Expired) => {
            let closed = if event.lifecycle.state == State::Done {
                event
                    .spec
                    .done_label
                    .as_ref()
                    .map(|label| label.as_str().to_owned())
                    .unwrap_or_else(|| event.locale.default_done_label().to_owned())
            } else {
                event.locale.expired_label().to_owned()
            };
            (format!("✅ {closed}"), format!("✅ {} — {closed}", event.spec.title.as_str()))
        }
        _ => {
            let until = event
                .lifecycle
                .quiet_until
                .map(|until| local(&event, until, engine.now()))
                .unwrap_or_default();
            let quiet = format!("{} {until}", words.quiet_until);
            (format!("🔕 {quiet}"), format!("🔕 {} — {quiet}", event.spec.title.as_str()))
        }
    };
    if let Err(error) = bot.answer_callback(id, &short).await {
        tracing::warn!(error = %error.message, "could not answer a Telegram button");
    }
    if let Some(message) = &callback.message
        && let Err(error) = bot.edit_message(message.chat.id, message.message_id, &text).await
    {
        tracing::warn!(error = %error.message, "could not edit a Telegram reminder");
    }
    Ok(())
}
