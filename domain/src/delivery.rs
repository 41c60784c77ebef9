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
pub struct ClaimedDelivery {
    pub id: i64,
    pub message_id: String,
    pub event_id: Option<i64>,
    pub kind: DeliveryKind,
    pub due_at: DateTime<Utc>,
    pub attempts: i64,
    pub channel: ChannelRecord,
}

/// One line of an event's delivery log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeliveryRecord {
    pub id: i64,
    pub channel_id: Option<i64>,
    pub channel_kind: Option<ChannelKind>,
    /// Where the channel sends: a webhook's URL, a Telegram chat.
    pub channel_target: Option<String>,
    pub kind: DeliveryKind,
    pub due_at: DateTime<Utc>,
    pub status: DeliveryStatus,
    pub attempts: i64,
    pub note: Option<String>,
    pub updated_at: DateTime<Utc>,
}
