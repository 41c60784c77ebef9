//! Owns what a channel is: where a person's reminders go (its kind, one of
//! a fixed set of words), and a channel as core reads it back.

use chrono::{DateTime, Utc};

use super::cases::fixed_cases;

fixed_cases!(
    /// Where a channel's reminders go.
    ChannelKind {
        /// A Telegram chat; the target is its chat id.
        Telegram => "telegram",
        /// A signed HTTP POST; the target is its URL.
        Webhook => "webhook",
        /// An email address, which gets reminders once it is confirmed.
        Email => "email",
        /// A device's Web Push subscription; the target is its endpoint,
        /// the secret its keys.
        Push => "push",
    }
);

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChannelRecord {
    pub id: i64,
    pub user_id: i64,
    pub kind: ChannelKind,
    pub target: String,
    pub secret: Option<String>,
    pub enabled: bool,
    pub last_error: Option<String>,
    /// When the last error happened.
    pub last_error_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    /// Who receives its posts, which paces them: a webhook's host and
    /// port, Telegram, or the mail server (`storage::channels::receiver_of`).
    pub receiver: String,
    /// When its person confirmed it: an email address is unconfirmed, and
    /// gets no reminder, until its confirmation link is followed.
    pub confirmed_at: Option<DateTime<Utc>>,
    /// A device's name (push), from its browser and system or its person.
    pub name: Option<String>,
}
