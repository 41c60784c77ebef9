//! Owns what a delivery is: one reminder (or test, or confirmation) to one
//! channel, its kind and status (each a fixed set of words), a delivery
//! claimed for sending, and a line of an event's delivery log.

use chrono::{DateTime, Utc};

use super::cases::fixed_cases;
use super::channel::{ChannelKind, ChannelRecord};

fixed_cases!(
    /// What a delivery is.
    DeliveryKind {
        /// A checkpoint of the event's ladder.
        Checkpoint => "checkpoint",
        /// A 3-hourly repeat of an unanswered reminder.
        Repeat => "repeat",
        /// A test message the person asked for.
        Test => "test",
        /// The message that asks an email address to confirm it.
        Confirmation => "confirmation",
    }
);

fixed_cases!(
    /// Where a delivery stands.
    DeliveryStatus {
        /// Waiting for its (next) attempt.
        Pending => "pending",
        Sent => "sent",
        /// Given up: the schedule is spent, or the receiver refused for good.
        Failed => "failed",
        /// Not sent: the event was quiet after Remember. A line in its log.
        Suppressed => "suppressed",
    }
);

/// A delivery claimed for sending, with its channel.
#[derive(Clone, Debug)]
pub(crate) struct ClaimedDelivery {
    pub(crate) id: i64,
    pub(crate) message_id: String,
    pub(crate) event_id: Option<i64>,
    pub(crate) kind: DeliveryKind,
    pub(crate) due_at: DateTime<Utc>,
    pub(crate) attempts: i64,
    pub(crate) channel: ChannelRecord,
}

/// One line of an event's delivery log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DeliveryRecord {
    pub(crate) id: i64,
    pub(crate) channel_id: Option<i64>,
    pub(crate) channel_kind: Option<ChannelKind>,
    /// Where the channel sends: a webhook's URL, a Telegram chat.
    pub(crate) channel_target: Option<String>,
    pub(crate) kind: DeliveryKind,
    pub(crate) due_at: DateTime<Utc>,
    pub(crate) status: DeliveryStatus,
    pub(crate) attempts: i64,
    pub(crate) note: Option<String>,
    pub(crate) updated_at: DateTime<Utc>,
}
