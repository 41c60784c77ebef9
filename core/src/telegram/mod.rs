//! Owns Telegram (DESIGN §7), a file per job: `bot` is the Bot API client,
//! `messages` what a reminder says and which buttons it carries, `chats`
//! what the person does in a chat (linking it with a one-time code, each
//! update handled once by `update_id`, `/list`, a button's press), and
//! `polling` the long-polling loop. In webhook mode gateway-http forwards
//! the updates instead, through `hado.v1.Links/TelegramUpdate`.

mod bot;
mod chats;
mod messages;
mod polling;

pub use bot::Bot;
pub(crate) use bot::{BotError, Update};
pub use chats::button_id;
pub(crate) use chats::{handle_update, link_url};
pub(crate) use messages::{done_label, due_words, reminder, words_for};
pub(crate) use polling::poll;
