//! Owns Telegram (DESIGN §7): the Bot API client (its base URL is a
//! setting, so tests run a local fake), linking a chat with a one-time code,
//! handling updates once each (by `update_id`), reminder messages with
//! [done label] [Remember] [Open] buttons, what a press does, `/list`, and
//! the long-polling loop. In webhook mode the HTTP gateway forwards updates
//! instead of the loop fetching them.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde::de::{DeserializeOwned, IgnoredAny};
use serde_json::{Value, json};
use tokio::sync::{OnceCell, watch};

use hado_runtime::wording::{self, Lang};
use hado_runtime::words::{self, Words};

use crate::domain::profile::Locale;
use crate::domain::state::State;
use crate::engine::Engine;
use crate::error::CoreError;
use crate::storage::{EventRecord, UserRecord};

/// How long a linking code works.
pub(crate) const LINK_LIFETIME: chrono::Duration = chrono::Duration::hours(1);
const POLL_TIMEOUT_SECONDS: u64 = 25;

/// The bot's settings.
#[derive(Clone, Debug)]
pub struct TelegramConfig {
    pub token: String,
    /// Such as https://api.telegram.org (`HADO_TELEGRAM_API_URL`).
    pub api_url: String,
    /// Set in webhook mode: the gateway checks Telegram's secret header and
    /// core does not poll.
    pub webhook: bool,
}

/// A Bot API call that did not succeed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BotError {
    pub(crate) message: String,
    /// Telegram's `retry_after`, on 429.
    pub(crate) retry_after: Option<u64>,
    /// The bot may no longer write to the chat (blocked, chat gone).
    pub(crate) forbidden: bool,
}

/// What core reads of an update; every other kind and field is ignored.
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct Update {
    pub(crate) update_id: i64,
    #[serde(default)]
    pub(crate) message: Option<Message>,
    #[serde(default)]
    pub(crate) callback_query: Option<CallbackQuery>,
}

#[derive(Clone, Debug, Deserialize)]
pub(crate) struct Message {
    pub(crate) message_id: i64,
    pub(crate) chat: Chat,
    #[serde(default)]
    pub(crate) text: Option<String>,
}

#[derive(Clone, Copy, Debug, Deserialize)]
pub(crate) struct Chat {
    pub(crate) id: i64,
}

/// A press of an inline button.
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct CallbackQuery {
    pub(crate) id: String,
    #[serde(default)]
    pub(crate) data: Option<String>,
    /// The message the button was on; absent when it is too old.
    #[serde(default)]
    pub(crate) message: Option<Message>,
}

/// Every Bot API answer: `ok`, and the result or why not.
#[derive(Deserialize)]
struct Reply<T> {
    ok: bool,
    result: Option<T>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    parameters: Option<ReplyParameters>,
}

#[derive(Deserialize)]
struct ReplyParameters {
    #[serde(default)]
    retry_after: Option<u64>,
}

/// The bot itself, as `getMe` describes it.
#[derive(Deserialize)]
struct BotUser {
    #[serde(default)]
    username: Option<String>,
}

/// The Bot API client. Its `Debug` never shows the token.
#[derive(Clone)]
pub struct Bot {
    http: reqwest::Client,
    base: String,
    pub(crate) webhook: bool,
    username: Arc<OnceCell<String>>,
}

impl std::fmt::Debug for Bot {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("Bot { .. }")
    }
}

impl Bot {
    pub(crate) fn new(config: &TelegramConfig) -> Self {
        let http = crate::outbound_tls::client(|builder| {
            builder.timeout(Duration::from_secs(POLL_TIMEOUT_SECONDS + 10))
        });
        Self {
            http,
            base: format!("{}/bot{}", config.api_url.trim_end_matches('/'), config.token),
            webhook: config.webhook,
            username: Arc::new(OnceCell::new()),
        }
    }

    async fn call<T: DeserializeOwned>(&self, method: &str, body: Value) -> Result<T, BotError> {
        let failed = |message: String| BotError { message, retry_after: None, forbidden: false };
        crate::outbound_tls::refuse_unverifiable(&self.base)
            .map_err(|why| failed(format!("Telegram cannot be reached: {why}")))?;
        let response =
            self.http.post(format!("{}/{method}", self.base)).json(&body).send().await.map_err(
                |error| failed(format!("Telegram cannot be reached: {}", error.without_url())),
            )?;
        let status = response.status();
        let reply: Reply<T> = response.json().await.map_err(|_| {
            failed(format!("Telegram answered {status} without the JSON it should"))
        })?;
        match reply {
            Reply { ok: true, result: Some(result), .. } => Ok(result),
            Reply { description, parameters, .. } => Err(BotError {
                message: format!(
                    "Telegram refused {method}: {}",
                    description.as_deref().unwrap_or("no reason given")
                ),
                retry_after: parameters.and_then(|parameters| parameters.retry_after),
                forbidden: status == reqwest::StatusCode::FORBIDDEN,
            }),
        }
    }

    /// The bot's @name, asked once.
    pub(crate) async fn username(&self) -> Result<String, BotError> {
        self.username
            .get_or_try_init(|| async {
                Ok(self.call::<BotUser>("getMe", json!({})).await?.username.unwrap_or_default())
            })
            .await
            .cloned()
    }

    pub(crate) async fn send_message(
        &self,
        chat_id: i64,
        text: &str,
        keyboard: Option<Value>,
    ) -> Result<(), BotError> {
        let mut body = json!({ "chat_id": chat_id, "text": text });
        if let Some(keyboard) = keyboard {
            body["reply_markup"] = json!({ "inline_keyboard": keyboard });
        }
        self.call::<IgnoredAny>("sendMessage", body).await.map(|_| ())
    }

    async fn edit_message(
        &self,
        chat_id: i64,
        message_id: i64,
        text: &str,
    ) -> Result<(), BotError> {
        self.call::<IgnoredAny>(
            "editMessageText",
            json!({ "chat_id": chat_id, "message_id": message_id, "text": text }),
        )
        .await
        .map(|_| ())
    }

    async fn answer_callback(&self, id: &str, text: &str) -> Result<(), BotError> {
        self.call::<IgnoredAny>(
            "answerCallbackQuery",
            json!({ "callback_query_id": id, "text": text }),
        )
        .await
        .map(|_| ())
    }
}

/// The language of a person's replies, from their profile.
fn lang(locale: Locale) -> Lang {
    match locale {
        Locale::En => Lang::En,
        Locale::Ru => Lang::Ru,
    }
}

/// The words of a person's replies.
fn words_for(locale: Locale) -> &'static Words {
    words::for_lang(lang(locale))
}

/// The stored id a button's `callback_data` carries (`b:<id>`), when the
/// data has that shape; anything else a client sends is no button of ours.
pub fn button_id(callback_data: &str) -> Option<&str> {
    use crate::engine::BUTTON_ID_LENGTH;
    let id = callback_data.strip_prefix("b:")?;
    (id.len() == BUTTON_ID_LENGTH
        && id.bytes().all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit()))
    .then_some(id)
}

/// The event's due moment in words, in its person's zone and language.
fn due_words(event: &EventRecord, now: DateTime<Utc>) -> String {
    let lang = lang(event.locale);
    let today = now.with_timezone(&event.zone).date_naive();
    // A date's due moment is the end of its day, so the day comes from the date.
    let day = event.spec.due.at.day_in(event.zone);
    let time = event
        .spec
        .due
        .at
        .has_time_of_day()
        .then(|| event.spec.due.at.moment_in(event.zone).with_timezone(&event.zone).time());
    wording::due_in_words(lang, today, day, time, event.lifecycle.state == State::Overdue)
}

/// An instant as the event's person reads it: "Mon 14 Dec 08:00".
fn local(event: &EventRecord, instant: DateTime<Utc>, now: DateTime<Utc>) -> String {
    let local = instant.with_timezone(&event.zone);
    words_for(event.locale).day_and_time(
        now.with_timezone(&event.zone).date_naive(),
        local.date_naive(),
        Some(local.time()),
    )
}

/// A reminder's text and buttons for `chat_id`; the buttons' ids are
/// stored first, bound to that chat.
pub(crate) async fn reminder(
    engine: &Engine,
    event: &EventRecord,
    chat_id: i64,
) -> Result<(String, Value), CoreError> {
    let t = words_for(event.locale);
    let now = engine.now();
    let mut text = format!("⏰ {}", event.spec.title.as_str());
    if let Some(subtitle) = &event.spec.subtitle {
        text.push_str(&format!("\n{subtitle}"));
    }
    text.push_str(&format!("\n{}", due_words(event, now)));
    let done_label = event
        .spec
        .done_label
        .as_ref()
        .map(|label| label.as_str().to_owned())
        .unwrap_or_else(|| event.locale.default_done_label().to_owned());
    let [done, remember, tomorrow, next_week] =
        engine.store_reminder_buttons(event, chat_id).await?;
    let mut keyboard = vec![
        json!([{ "text": done_label, "callback_data": format!("b:{done}") }, { "text": t.remember, "callback_data": format!("b:{remember}") }]),
        json!([{ "text": t.remember_tomorrow, "callback_data": format!("b:{tomorrow}") }, { "text": t.remember_next_week, "callback_data": format!("b:{next_week}") }]),
    ];
    if let Some(link) = &event.spec.deep_link {
        keyboard.push(json!([{ "text": t.open_link, "url": link.as_str() }]));
    }
    Ok((text, Value::Array(keyboard)))
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
        words::both(|t| t.bot_send_list)
    };
    if let Err(error) = bot.send_message(chat_id, &reply, None).await {
        tracing::warn!(error = %error.message, "could not answer a Telegram message");
    }
    Ok(())
}

async fn link_chat(engine: &Engine, code: &str, chat_id: i64) -> Result<String, CoreError> {
    Ok(match engine.link_chat(code, chat_id).await? {
        Some(user) => words_for(user.locale).bot_linked.replace("{login}", user.login.as_str()),
        None => words::both(|t| t.bot_link_invalid),
    })
}

/// `/list`: what needs the person's attention, then what is due today or overdue.
async fn list(engine: &Engine, chat_id: i64) -> Result<String, CoreError> {
    let Some(user) = engine.user_of_chat(chat_id).await? else {
        return Ok(words::both(|t| t.bot_chat_not_linked));
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
    let t = words_for(user.locale);
    if wanted.is_empty() {
        return Ok(t.bot_nothing_needs_you.to_owned());
    }
    let mut text = t.bot_needs_attention.to_owned();
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
        let _ = bot.answer_callback(id, &words::both(|t| t.bot_button_gone)).await;
        return Ok(());
    };
    let t = words_for(event.locale);
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
            let quiet = format!("{} {until}", t.quiet_until);
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

/// Long polling: fetches updates and handles each, until `stop`.
pub(crate) async fn poll(engine: Arc<Engine>, bot: Bot, mut stop: watch::Receiver<bool>) {
    let mut offset: Option<i64> = None;
    loop {
        let mut body = json!({ "timeout": POLL_TIMEOUT_SECONDS, "allowed_updates": ["message", "callback_query"] });
        if let Some(offset) = offset {
            body["offset"] = json!(offset);
        }
        let fetched = tokio::select! {
            fetched = bot.call("getUpdates", body) => fetched,
            _ = stop.changed() => return,
        };
        match fetched {
            Ok(updates) => {
                let updates: Vec<Value> = updates;
                for raw in updates {
                    // Each update is read on its own: one of a shape core does
                    // not know is skipped, never the whole batch.
                    if let Some(update_id) = raw.get("update_id").and_then(Value::as_i64) {
                        offset = Some(update_id + 1);
                    }
                    match serde_json::from_value::<Update>(raw) {
                        Ok(update) => {
                            if let Err(error) = handle_update(&engine, &bot, &update).await {
                                tracing::warn!(%error, "a Telegram update failed");
                            }
                        }
                        Err(error) => {
                            tracing::warn!(%error, "a Telegram update could not be read; skipped")
                        }
                    }
                }
            }
            Err(error) => {
                tracing::warn!(error = %error.message, "fetching Telegram updates failed; retrying");
                let wait = Duration::from_secs(error.retry_after.unwrap_or(2));
                tokio::select! {
                    _ = tokio::time::sleep(wait) => {}
                    _ = stop.changed() => return,
                }
            }
        }
        if *stop.borrow() {
            return;
        }
    }
}
