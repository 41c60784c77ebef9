//! Owns what a group of sends comes to, before anything is written: how
//! each attempt went (`Attempt`), and from a group of them each delivery's
//! finish, what each channel's last attempt says and whether each receiver
//! strained. Pure; `Engine::record` writes it in one transaction.

use std::collections::HashMap;

use chrono::{DateTime, Utc};

use hado_domain::delivery::{ClaimedDelivery, DeliveryStatus};
use hado_storage::deliveries;

/// How one attempt went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Attempt {
    Sent,
    Retry {
        at: DateTime<Utc>,
        error: String,
        /// Whether the receiver seems overloaded (it timed out, could not
        /// be reached, or answered 429, 502, 503 or 504), and the wait it
        /// asked for, if any: it is then paused for all its posts.
        strain: Option<Strain>,
    },
    Failed {
        error: String,
    },
    /// The receiver wants no more (a webhook's 410, a chat that blocked
    /// the bot, a mail server refusing the address for good): the channel
    /// is paused, showing why.
    Gone {
        error: String,
    },
}

/// A receiver's sign of being overloaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Strain {
    /// The wait it asked for (`Retry-After`).
    pub asked: Option<chrono::Duration>,
}

/// What a group of sends leaves on one channel.
pub(crate) struct ChannelOutcome<'a> {
    pub id: i64,
    /// The error of a 410, which turns the channel off.
    pub gone: Option<&'a str>,
    /// The last attempt's error (`Some(None)` after a success).
    pub last_error: Option<Option<&'a str>>,
}

/// A group of sends, tallied: what [`Engine::record`](crate::Engine)
/// writes.
pub(crate) struct Tally<'a> {
    /// Each delivery's outcome.
    pub finished: Vec<deliveries::Finished<'a>>,
    /// Each channel's, in the order first sent to.
    pub channels: Vec<ChannelOutcome<'a>>,
    /// Each receiver's strain in this group: the longest wait asked, or
    /// `None` when every answer came at ease.
    pub receivers: HashMap<&'a str, Option<Strain>>,
}

impl<'a> Tally<'a> {
    pub(crate) fn of(outcomes: &[(&'a ClaimedDelivery, &'a Attempt)]) -> Self {
        let mut finished = Vec::with_capacity(outcomes.len());
        let mut channel_states: Vec<ChannelOutcome> = Vec::new();
        let mut receivers: HashMap<&str, Option<Strain>> = HashMap::new();
        for (delivery, outcome) in outcomes {
            let strain = receivers.entry(delivery.channel.receiver.as_str()).or_insert(None);
            if let Attempt::Retry { strain: Some(this), .. } = outcome {
                let asked = strain.and_then(|known| known.asked).max(this.asked);
                *strain = Some(Strain { asked });
            }
            let attempts = delivery.attempts + 1;
            let (status, next_attempt_at, error) = match outcome {
                Attempt::Sent => (DeliveryStatus::Sent, None, None),
                Attempt::Retry { at, error, .. } => {
                    (DeliveryStatus::Pending, Some(*at), Some(error.as_str()))
                }
                Attempt::Failed { error } | Attempt::Gone { error } => {
                    (DeliveryStatus::Failed, None, Some(error.as_str()))
                }
            };
            finished.push(deliveries::Finished {
                id: delivery.id,
                status,
                attempts,
                next_attempt_at,
                error,
            });
            // A failed attempt shows on its channel at once, while it is
            // retried: the person learns why reminders are not arriving.
            let index =
                match channel_states.iter().position(|state| state.id == delivery.channel.id) {
                    Some(index) => index,
                    None => {
                        channel_states.push(ChannelOutcome {
                            id: delivery.channel.id,
                            gone: None,
                            last_error: None,
                        });
                        channel_states.len() - 1
                    }
                };
            let state = &mut channel_states[index];
            if let Attempt::Gone { error } = outcome {
                state.gone = Some(error.as_str());
            }
            state.last_error = Some(error);
        }
        Self { finished, channels: channel_states, receivers }
    }
}
