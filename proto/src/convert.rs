//! Owns the conversions between the contract's types and Rust's: the word
//! each enum case is written as in the JSON views and on the pages
//! (`overdue`, `keep`, `checkpoint`), read back where a person's input
//! names one, and an instant as a `Timestamp` and back. A gateway matches
//! on these types; it never compares the words of the wire.

use chrono::{DateTime, SecondsFormat, Utc};
use prost_types::Timestamp;

use crate::v1::{
    AfterDue, ChannelKind, DeliveryKind, DeliveryStatus, EventState, LinkAction, Outcome,
};

/// Writes each case's word and reads it back; the zero case (UNSPECIFIED,
/// which core never sends where a value is due) is the empty word.
macro_rules! words {
    ($enum:ident { $($case:ident => $word:literal),* $(,)? }) => {
        impl $enum {
            /// Every case but UNSPECIFIED.
            pub const ALL: &'static [Self] = &[$(Self::$case),*];

            /// The case's word, as the JSON views and the pages write it.
            pub fn word(self) -> &'static str {
                match self {
                    $(Self::$case => $word,)*
                    Self::Unspecified => "",
                }
            }

            /// The case a word names, if any.
            pub fn from_word(word: &str) -> Option<Self> {
                Self::ALL.iter().copied().find(|case| case.word() == word)
            }
        }
    };
}

words!(EventState {
    Scheduled => "scheduled",
    Preparing => "preparing",
    Today => "today",
    Overdue => "overdue",
    Done => "done",
    Expired => "expired",
    Withdrawn => "withdrawn",
});
words!(AfterDue { Keep => "keep", Expire => "expire" });
words!(DeliveryKind {
    Checkpoint => "checkpoint",
    Repeat => "repeat",
    Test => "test",
    Confirmation => "confirmation"
});
words!(DeliveryStatus {
    Pending => "pending",
    Sent => "sent",
    Failed => "failed",
    Suppressed => "suppressed",
});
words!(ChannelKind { Webhook => "webhook", Telegram => "telegram", Email => "email", Push => "push" });
words!(Outcome {
    Created => "created",
    Updated => "updated",
    Rescheduled => "rescheduled",
    Unchanged => "unchanged",
    Revived => "revived",
});
words!(LinkAction { Done => "done", Remember => "remember" });

impl EventState {
    /// The inbox's states, in the order the inbox shows its groups: the
    /// order of their due moments, so that what is late leads.
    pub const ACTIVE: [Self; 4] = [Self::Overdue, Self::Today, Self::Preparing, Self::Scheduled];

    /// Done or expired: in the archive.
    pub fn is_closed(self) -> bool {
        matches!(self, Self::Done | Self::Expired)
    }
}

/// An instant as the wire carries it.
pub fn timestamp(instant: DateTime<Utc>) -> Timestamp {
    Timestamp { seconds: instant.timestamp(), nanos: instant.timestamp_subsec_nanos() as i32 }
}

/// The instant a `Timestamp` names; `None` for one out of chrono's range.
pub fn instant(timestamp: &Timestamp) -> Option<DateTime<Utc>> {
    DateTime::from_timestamp(timestamp.seconds, u32::try_from(timestamp.nanos).ok()?)
}

/// An instant as the JSON views write it: RFC 3339 in UTC, to the second
/// (`2026-12-14T09:00:00Z`); empty for none.
pub fn rfc3339(timestamp: Option<&Timestamp>) -> String {
    timestamp.map(rfc3339_at).unwrap_or_default()
}

/// [`rfc3339`] of an instant that is there.
pub fn rfc3339_at(timestamp: &Timestamp) -> String {
    instant(timestamp)
        .map(|instant| instant.to_rfc3339_opts(SecondsFormat::Secs, true))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_case_reads_back_from_its_word() {
        for state in EventState::ALL {
            assert_eq!(EventState::from_word(state.word()), Some(*state));
        }
        assert_eq!(EventState::from_word("soon"), None);
        assert_eq!(EventState::from_word(""), None);
        assert_eq!(EventState::Unspecified.word(), "");
        assert!(EventState::ACTIVE.iter().all(|state| !state.is_closed()));
        assert_eq!(Outcome::from_word("revived"), Some(Outcome::Revived));
        assert_eq!(DeliveryStatus::Suppressed.word(), "suppressed");
    }

    #[test]
    fn instants_travel_as_timestamps_and_read_as_rfc_3339() {
        let at = DateTime::parse_from_rfc3339("2026-12-14T09:00:00.250Z").unwrap().to_utc();
        let wire = timestamp(at);
        assert_eq!((wire.seconds, wire.nanos), (at.timestamp(), 250_000_000));
        assert_eq!(instant(&wire), Some(at));
        assert_eq!(rfc3339(Some(&wire)), "2026-12-14T09:00:00Z");
        assert_eq!(rfc3339(None), "");
        assert_eq!(instant(&Timestamp { seconds: 0, nanos: -1 }), None);
    }
}
