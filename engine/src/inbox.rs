//! Owns what the person and their agent read: the inbox's lists by state
//! (and the archive), searched or not, one event, and the attention count.

use hado_storage::Connection;

use crate::Engine;
use crate::error::CoreError;
use crate::inputs::{EventFilter, Matches, SEARCH_CHUNK, parse_one};
use hado_domain::event_record::EventRecord;
use hado_domain::state::State;
use hado_domain::user::UserRecord;
use hado_storage::events::{self, ReadFor};

impl Engine {
    pub async fn list_events(
        &self,
        user: &UserRecord,
        raw_state: Option<&str>,
        archive: bool,
        limit: Option<u32>,
    ) -> Result<Vec<EventRecord>, CoreError> {
        Ok(self
            .list_events_after(user, raw_state, archive, limit, None, &EventFilter::default())
            .await?
            .0)
    }

    /// A page of the user's events: the active ones continue just after
    /// `after` (a previous page's cursor). With the events comes the cursor
    /// of the page that follows, when `limit` cut this one short.
    pub async fn list_events_after(
        &self,
        user: &UserRecord,
        raw_state: Option<&str>,
        archive: bool,
        limit: Option<u32>,
        after: Option<&str>,
        filter: &EventFilter,
    ) -> Result<(Vec<EventRecord>, Option<String>), CoreError> {
        let matches = filter.parse()?;
        let state = match raw_state.filter(|raw| !raw.is_empty()) {
            Some(raw) => {
                Some(parse_one(|violations| State::parse_active_filter("state", raw, violations))?)
            }
            None => None,
        };
        let after = match after.filter(|text| !text.is_empty()) {
            Some(text) => Some(events::After::parse(text).ok_or_else(|| {
                CoreError::invalid(
                    "after",
                    format!("after {text:?} is not a cursor from a previous reply's next"),
                )
            })?),
            None => None,
        };
        if archive {
            if state.is_some() {
                return Err(CoreError::invalid(
                    "state",
                    "state filters active events; leave it out with archive",
                ));
            }
            if after.is_some() {
                return Err(CoreError::invalid(
                    "after",
                    "after pages active events; the archive is always its latest 100",
                ));
            }
            let mut connection = self.store.reader().acquire().await?;
            let mut records = events::archive(&mut connection, user.id).await?;
            records.retain(|record| matches.admits(record));
            // The archive is its latest 100 at most, and a limit takes fewer.
            if let Some(limit) = limit {
                records.truncate(limit as usize);
            }
            return Ok((records, None));
        }
        let after = after.unwrap_or(events::After::START);
        if limit == Some(0) {
            return Ok((Vec::new(), None));
        }
        // One more than asked, to know whether the list goes on: a page
        // that ends the list has no `next`.
        let mut connection = self.store.reader().acquire().await?;
        let asked = limit.map(|limit| limit.saturating_add(1));
        let mut records =
            matching_page(&mut connection, user.id, state, after, asked, &matches).await?;
        let goes_on = limit.is_some_and(|limit| records.len() > limit as usize);
        if let Some(limit) = limit {
            records.truncate(limit as usize);
        }
        let next =
            records.last().filter(|_| goes_on).map(|last| events::After::of(last).to_string());
        Ok((records, next))
    }

    /// One of the user's events that is not withdrawn (deleted): what Done,
    /// Remember, Delete and action links act on.
    pub(super) async fn own_event(
        &self,
        connection: &mut impl Connection,
        user: &UserRecord,
        id: i64,
    ) -> Result<EventRecord, CoreError> {
        self.not_withdrawn(self.own_event_or_deleted(connection, user, id).await?)
    }

    /// A withdrawn event is refused as such (`EVENT_WITHDRAWN`), the same
    /// on every door: it is there, get_event shows it, but it cannot be
    /// acted on.
    pub(super) fn not_withdrawn(&self, record: EventRecord) -> Result<EventRecord, CoreError> {
        if record.lifecycle.state != State::Withdrawn {
            return Ok(record);
        }
        Err(CoreError::Withdrawn {
            id: record.id,
            deleted: record.source_id == self.manual_source_id,
            by: record.source,
        })
    }

    /// Starts a change of one of the person's events that decides from
    /// what it reads: the event (withdrawn ones too), taken until the
    /// change commits ([`events::ReadFor::Changing`]), so that a write
    /// committed meanwhile (a withdrawal, the scheduler's expiry, a Done on
    /// another core) is read, not written over; and, before it, the
    /// person's gate, since the event carries their zone and quiet hours:
    /// a change of them is not under way, and none starts before this one
    /// ends ([`hado_storage::users::gate_shared`]).
    pub(super) async fn begin_changing(
        &self,
        user: &UserRecord,
        id: i64,
    ) -> Result<(hado_storage::Tx, EventRecord), CoreError> {
        let mut transaction = self.store.begin_write().await?;
        hado_storage::users::gate_shared(&mut transaction, user.id).await?;
        let record = events::find_for_user(&mut transaction, id, user.id, ReadFor::Changing)
            .await?
            .ok_or_else(|| CoreError::event_not_found(id))?;
        Ok((transaction, record))
    }

    /// One of the user's events, withdrawn (deleted) ones too: they can be
    /// read, and an edit brings them back, as any upsert does.
    pub(super) async fn own_event_or_deleted(
        &self,
        connection: &mut impl Connection,
        user: &UserRecord,
        id: i64,
    ) -> Result<EventRecord, CoreError> {
        events::find_for_user(connection, id, user.id, ReadFor::Answering)
            .await?
            .ok_or_else(|| CoreError::event_not_found(id))
    }

    /// How many of the user's open events need attention (the inbox badge).
    pub async fn attention_count(&self, user: &UserRecord) -> Result<Attention, CoreError> {
        let mut connection = self.store.reader().acquire().await?;
        Ok(Attention::of(events::attention_count(&mut connection, user.id).await?))
    }

    pub async fn get_event(&self, user: &UserRecord, id: i64) -> Result<EventRecord, CoreError> {
        let mut connection = self.store.reader().acquire().await?;
        self.own_event_or_deleted(&mut connection, user, id).await
    }
}

/// Up to `limit` active events (all without one) that `matches` admits,
/// from just after `after`, in the inbox's order. Unnarrowed, one query;
/// narrowed, read [`SEARCH_CHUNK`] events at a time, so a search holds its
/// matches and one chunk, never the whole inbox.
pub(super) async fn matching_page(
    connection: &mut impl Connection,
    user_id: i64,
    state: Option<State>,
    mut after: events::After,
    limit: Option<u32>,
    matches: &Matches,
) -> Result<Vec<EventRecord>, CoreError> {
    if matches.admits_all() {
        return Ok(events::active_page(connection, user_id, state, after, limit).await?);
    }
    let mut found = Vec::new();
    loop {
        let chunk =
            events::active_page(connection, user_id, state, after, Some(SEARCH_CHUNK)).await?;
        let more = chunk.len() == SEARCH_CHUNK as usize;
        let Some(last) = chunk.last() else { return Ok(found) };
        after = events::After::of(last);
        for record in chunk {
            if matches.admits(&record) {
                found.push(record);
                if limit.is_some_and(|limit| found.len() == limit as usize) {
                    return Ok(found);
                }
            }
        }
        if !more {
            return Ok(found);
        }
    }
}

/// How many of a person's open events need attention, counted up to
/// [`hado_storage::ATTENTION_CAP`] (99): a count costs at most that,
/// however many are overdue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Attention {
    pub count: u32,
    /// More than `count` (the cap) need attention.
    pub more: bool,
}

impl Attention {
    /// What storage counted: the cap's worth, and whether it went past.
    pub(crate) fn of(counted: i64) -> Self {
        let cap = hado_storage::ATTENTION_CAP;
        Self { count: u32::try_from(counted.clamp(0, cap)).unwrap_or(0), more: counted > cap }
    }
}
