//! Owns how core's events and profile look on a page: the card of one
//! event (its due moment in words, its buttons) and the person's "today".
//! Presentation only: states, labels and defaults all come from core.

use chrono::{NaiveDate, Utc};
use chrono_tz::Tz;
use prost_types::Timestamp;

use hado_proto::convert;
use hado_proto::v1::{self, EventState};
use hado_views::due::due_parts;

use hado_words::Words;

/// What a page needs to know about its person.
#[derive(Clone, Debug)]
pub(crate) struct Viewer {
    pub zone: Tz,
    pub today: NaiveDate,
    pub profile: v1::Profile,
}

impl Viewer {
    pub(crate) fn new(profile: v1::Profile) -> Self {
        let zone = profile.tz.parse().unwrap_or(chrono_tz::UTC);
        let today = profile
            .local_time
            .get(..10)
            .and_then(|date| date.parse().ok())
            .unwrap_or_else(|| Utc::now().with_timezone(&zone).date_naive());
        Self { zone, today, profile }
    }

    /// An instant from core in words, in the person's zone and language:
    /// "yesterday, 14:05", "3 Dec, 14:05", "вчера в 14:05"; `None` when
    /// there is none. Pages never show a raw timestamp.
    pub(crate) fn when(&self, words: &Words, instant: Option<&Timestamp>) -> Option<String> {
        let instant = convert::instant(instant?)?.with_timezone(&self.zone);
        Some(words.moment(self.today, instant.date_naive(), instant.time()))
    }
}

/// One event on a page.
#[derive(Clone, Debug)]
pub(crate) struct Card {
    pub id: i64,
    pub title: String,
    pub subtitle: String,
    pub source: String,
    pub manual: bool,
    pub state: String,
    pub when: String,
    pub done_label: String,
    pub deep_link: String,
    pub editable: bool,
    pub quiet_until: String,
    pub closed_as: String,
    pub closed_at: String,
    /// Done, expired or withdrawn: the card says how it ended instead of
    /// offering Done and Remember.
    pub closed: bool,
    /// Done, or deleted by its person: Reopen undoes it.
    pub reopenable: bool,
    pub needs_attention: bool,
}

impl Card {
    /// Whether the card has buttons to post (Done and Remember while open,
    /// Reopen once closed): its actions are then one form, not a `div`.
    pub(crate) fn has_buttons(&self) -> bool {
        !self.closed || self.reopenable
    }

    pub(crate) fn new(event: &v1::Event, viewer: &Viewer, words: &Words) -> Self {
        let state = event.state();
        let closed = state.is_closed() || state == EventState::Withdrawn;
        let when = hado_views::due::due_in_words(event, viewer.zone, viewer.today, words);
        Self {
            id: event.id,
            title: event.title.clone(),
            subtitle: event.subtitle.clone(),
            source: event.source.clone(),
            manual: event.source == "manual",
            state: state.word().to_owned(),
            when,
            done_label: event.done_label.clone(),
            deep_link: event.deep_link.clone(),
            editable: event.editable,
            quiet_until: viewer.when(words, event.quiet_until.as_ref()).unwrap_or_default(),
            closed_as: event.closed_as.clone().unwrap_or_default(),
            closed_at: viewer.when(words, event.closed_at.as_ref()).unwrap_or_default(),
            closed,
            reopenable: event.reopenable,
            needs_attention: event.needs_attention,
        }
    }
}

/// The active events in the inbox's four groups, as cards.
pub(crate) struct Groups {
    pub overdue: Vec<Card>,
    pub today: Vec<Card>,
    pub preparing: Vec<Card>,
    pub scheduled: Vec<Card>,
    /// The due day of the oldest overdue event on the page, and the
    /// person's today.
    pub oldest_overdue: Option<NaiveDate>,
    pub today_is: NaiveDate,
}

impl Groups {
    pub(crate) fn new(groups: &[v1::InboxGroup], viewer: &Viewer, words: &Words) -> Self {
        let events = |state: EventState| {
            groups
                .iter()
                .filter(move |group| group.state() == state)
                .flat_map(|group| &group.events)
        };
        let pick = |state: EventState| {
            events(state).map(|event| Card::new(event, viewer, words)).collect()
        };
        let oldest_overdue = events(EventState::Overdue)
            .filter_map(|event| due_parts(event, viewer.zone))
            .map(|(day, _)| day)
            .min();
        Self {
            overdue: pick(EventState::Overdue),
            today: pick(EventState::Today),
            preparing: pick(EventState::Preparing),
            scheduled: pick(EventState::Scheduled),
            oldest_overdue,
            today_is: viewer.today,
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.overdue.is_empty()
            && self.today.is_empty()
            && self.preparing.is_empty()
            && self.scheduled.is_empty()
    }
}
