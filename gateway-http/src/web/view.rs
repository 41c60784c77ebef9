//! Owns how core's events and profile look on a page: the card of one
//! event (its due moment in words, its buttons) and the person's "today".
//! Presentation only: states, labels and defaults all come from core.

use chrono::{NaiveDate, NaiveTime, Utc};
use chrono_tz::Tz;
use prost_types::Timestamp;

use hado_proto::convert;
use hado_proto::v1::{self, EventState};

use super::words::Words;

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

    /// An instant from core in words: its day in the person's zone and
    /// language, and the time; `None` when there is none.
    pub(crate) fn when(&self, words: &Words, instant: Option<&Timestamp>) -> Option<String> {
        let instant = convert::instant(instant?)?.with_timezone(&self.zone);
        Some(words.day_and_time(self.today, instant.date_naive(), Some(instant.time())))
    }

    /// An instant from core as the person's local date and time.
    pub(crate) fn local(&self, instant: Option<&Timestamp>) -> Option<String> {
        let instant = convert::instant(instant?)?.with_timezone(&self.zone);
        Some(instant.format("%Y-%m-%d %H:%M").to_string())
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
    /// The first day Remember may be asked to last until (tomorrow), for
    /// the date field's `min`.
    pub remember_from: String,
    pub closed_as: String,
    pub closed_at: String,
    /// Done, expired or withdrawn: the card says how it ended instead of
    /// offering Done and Remember.
    pub closed: bool,
    /// Done, or deleted by its person: Reopen undoes it.
    pub reopenable: bool,
    pub needs_attention: bool,
}

/// The due day and time of an event in its person's zone, from the parts
/// core sends: as written for a date or a local time, `due_instant` in the
/// zone for a fixed instant.
pub(crate) fn due_parts(event: &v1::Event, zone: Tz) -> Option<(NaiveDate, Option<NaiveTime>)> {
    if !event.due_offset.is_empty() {
        let instant = convert::instant(event.due_instant.as_ref()?)?.with_timezone(&zone);
        return Some((instant.date_naive(), Some(instant.time())));
    }
    let day = event.due_date.parse().ok()?;
    if event.due_time.is_empty() {
        return Some((day, None));
    }
    let time = NaiveTime::parse_from_str(&event.due_time, "%H:%M")
        .or_else(|_| NaiveTime::parse_from_str(&event.due_time, "%H:%M:%S"))
        .ok()?;
    Some((day, Some(time)))
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
        let when = match due_parts(event, viewer.zone) {
            Some((date, time)) if closed => words.due_on(viewer.today, date, time),
            Some((date, time)) => {
                words.due_in_words(viewer.today, date, time, state == EventState::Overdue)
            }
            None => event.due_at.clone(),
        };
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
            remember_from: viewer
                .today
                .succ_opt()
                .map(|day| day.format("%Y-%m-%d").to_string())
                .unwrap_or_default(),
            closed_as: event.closed_as.clone().unwrap_or_default(),
            closed_at: viewer.local(event.closed_at.as_ref()).unwrap_or_default(),
            closed,
            reopenable: event.reopenable,
            needs_attention: event.needs_attention,
        }
    }
}

/// The active events in the inbox's four groups, most urgent first.
pub(crate) struct Groups {
    pub today: Vec<Card>,
    pub overdue: Vec<Card>,
    pub preparing: Vec<Card>,
    pub scheduled: Vec<Card>,
}

impl Groups {
    pub(crate) fn new(events: &[v1::Event], viewer: &Viewer, words: &Words) -> Self {
        let pick = |state: EventState| {
            events
                .iter()
                .filter(|event| event.state() == state)
                .map(|event| Card::new(event, viewer, words))
                .collect()
        };
        Self {
            today: pick(EventState::Today),
            overdue: pick(EventState::Overdue),
            preparing: pick(EventState::Preparing),
            scheduled: pick(EventState::Scheduled),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.today.is_empty()
            && self.overdue.is_empty()
            && self.preparing.is_empty()
            && self.scheduled.is_empty()
    }
}
