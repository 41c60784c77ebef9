//! Owns the event states as the contract names them (`v1::Event::state`),
//! so that a client parses the word once and then matches on a type instead
//! of comparing strings.

use crate::v1;

/// An event's state, as `hado.v1` writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EventState {
    Scheduled,
    Preparing,
    Today,
    Overdue,
    Done,
    Expired,
    Withdrawn,
}

impl EventState {
    /// The inbox's states, in the order the inbox shows its groups.
    pub const ACTIVE: [Self; 4] = [Self::Today, Self::Overdue, Self::Preparing, Self::Scheduled];

    pub const ALL: [Self; 7] = [
        Self::Scheduled,
        Self::Preparing,
        Self::Today,
        Self::Overdue,
        Self::Done,
        Self::Expired,
        Self::Withdrawn,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Scheduled => "scheduled",
            Self::Preparing => "preparing",
            Self::Today => "today",
            Self::Overdue => "overdue",
            Self::Done => "done",
            Self::Expired => "expired",
            Self::Withdrawn => "withdrawn",
        }
    }

    pub fn parse(word: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|state| state.as_str() == word)
    }

    /// Done or expired: in the archive.
    pub fn is_closed(self) -> bool {
        matches!(self, Self::Done | Self::Expired)
    }
}

impl v1::Event {
    /// The event's state, when it is one the contract names.
    pub fn event_state(&self) -> Option<EventState> {
        EventState::parse(&self.state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_state_reads_back_from_its_word() {
        for state in EventState::ALL {
            assert_eq!(EventState::parse(state.as_str()), Some(state));
        }
        assert_eq!(EventState::parse("soon"), None);
        assert!(EventState::ACTIVE.iter().all(|state| !state.is_closed()));
    }
}
