//! The Bot API client: one `call` that every method goes through (its base
//! URL a setting, so tests run a local fake), and the few shapes of
//! Telegram's JSON that core reads.

use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde::de::{DeserializeOwned, IgnoredAny};
use serde_json::{Value, json};
use tokio::sync::OnceCell;

use crate::config::{CoreConfig, TelegramConfig};
use hado_engine::outbound_tls::OutboundClient;

/// How long `getUpdates` waits for an update before it answers empty.
pub(super) const POLL_TIMEOUT_SECONDS: u64 = 25;

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
    http: OutboundClient,
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
    /// The bot of the configuration, when one is set up: the delivery loop,
    /// the polling loop and the gRPC edge each talk to Telegram through it;
    /// the engine never does.
    pub fn of(config: &CoreConfig) -> Option<Self> {
        config.telegram.as_ref().map(Self::new)
    }

    pub(crate) fn new(config: &TelegramConfig) -> Self {
        let http = OutboundClient::new(|builder| {
            builder.timeout(Duration::from_secs(POLL_TIMEOUT_SECONDS + 10))
        });
        Self {
            http,
            base: format!("{}/bot{}", config.api_url.trim_end_matches('/'), config.token),
            webhook: config.webhook,
            username: Arc::new(OnceCell::new()),
        }
    }

    pub(super) async fn call<T: DeserializeOwned>(
        &self,
        method: &str,
        body: Value,
    ) -> Result<T, BotError> {
        let failed = |message: String| BotError { message, retry_after: None, forbidden: false };
        let response = self
            .http
            .post(format!("{}/{method}", self.base))
            .map_err(|why| failed(format!("Telegram cannot be reached: {why}")))?
            .json(&body)
            .send()
            .await
            .map_err(|error| {
                failed(format!("Telegram cannot be reached: {}", error.without_url()))
            })?;
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

    pub(super) async fn edit_message(
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

    pub(super) async fn answer_callback(&self, id: &str, text: &str) -> Result<(), BotError> {
        self.call::<IgnoredAny>(
            "answerCallbackQuery",
            json!({ "callback_query_id": id, "text": text }),
        )
        .await
        .map(|_| ())
    }
}
