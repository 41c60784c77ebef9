//! The long-polling loop, for a bot that is not in webhook mode.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::watch;

use hado_engine::Engine;

use crate::telegram::bot::{Bot, POLL_TIMEOUT_SECONDS, Update};
use crate::telegram::chats::handle_update;

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
