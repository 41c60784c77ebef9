//! Owns what the person and their agent do with events: list, read, create,
//! edit and delete their own, Done and Remember on any, and their profile.

use chrono::{DateTime, Utc};
use sqlx::AnyConnection;

use crate::domain::checkpoints::Ladder;
use crate::domain::event::{EventSpec, Lifecycle, RawFields, RememberFor};
use crate::domain::fields::{SourceName, SourceRef, Topic};
use crate::domain::profile::{Locale, parse_clock_time, parse_time_zone};
use crate::domain::reminders::Reminders;
use crate::domain::state::State;
use crate::domain::violations::{Reason, Violations};
use crate::domain::{event, reminders};
use crate::engine::Engine;
use crate::engine::inputs::{
    EventFilter, EventPatch, Matches, ProfilePatch, SEARCH_CHUNK, owned_elsewhere, parse_one,
};
use crate::error::CoreError;
use crate::storage::events::LifecycleWrite;
use crate::storage::{EventKey, EventRecord, NewEvent, UserRecord, events, users};

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
            let mut records = self.store.list_archive(user.id).await?;
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
        if matches.admits_all() {
            let records = self.store.list_active(user.id, state, after, limit).await?;
            let cut_short = limit.is_some_and(|limit| records.len() == limit as usize);
            let next = records
                .last()
                .filter(|_| cut_short)
                .map(|last| events::After::of(last).to_string());
            return Ok((records, next));
        }
        self.search_active(user, state, after, limit, &matches).await
    }

    /// Up to `limit` active events that `matches` admits, from just after
    /// `after`: read [`SEARCH_CHUNK`] events at a time, so a search holds
    /// its matches and one chunk, never the whole inbox.
    async fn search_active(
        &self,
        user: &UserRecord,
        state: Option<State>,
        mut after: events::After,
        limit: Option<u32>,
        matches: &Matches,
    ) -> Result<(Vec<EventRecord>, Option<String>), CoreError> {
        let mut found = Vec::new();
        loop {
            let chunk = self.store.list_active(user.id, state, after, Some(SEARCH_CHUNK)).await?;
            let more = chunk.len() == SEARCH_CHUNK as usize;
            let Some(last) = chunk.last() else { return Ok((found, None)) };
            after = events::After::of(last);
            for record in chunk {
                if !matches.admits(&record) {
                    continue;
                }
                let cursor = events::After::of(&record);
                found.push(record);
                if limit.is_some_and(|limit| found.len() == limit as usize) {
                    return Ok((found, Some(cursor.to_string())));
                }
            }
            if !more {
                return Ok((found, None));
            }
        }
    }

    /// One of the user's events that is not withdrawn (deleted): what Done,
    /// Remember, Delete and action links act on. A withdrawn one is refused
    /// as such (`EVENT_WITHDRAWN`), the same on every door: it is there,
    /// get_event shows it, but it cannot be acted on.
    pub(super) async fn own_event(
        &self,
        connection: &mut AnyConnection,
        user: &UserRecord,
        id: i64,
    ) -> Result<EventRecord, CoreError> {
        match self.own_event_or_deleted(connection, user, id).await? {
            record if record.lifecycle.state != State::Withdrawn => Ok(record),
            record => Err(CoreError::Withdrawn {
                id,
                deleted: record.source_id == self.manual_source_id,
                by: record.source,
            }),
        }
    }

    /// One of the user's events, withdrawn (deleted) ones too: they can be
    /// read, and an edit brings them back, as any upsert does.
    pub(super) async fn own_event_or_deleted(
        &self,
        connection: &mut AnyConnection,
        user: &UserRecord,
        id: i64,
    ) -> Result<EventRecord, CoreError> {
        events::find_for_user(connection, id, user.id)
            .await?
            .ok_or_else(|| CoreError::event_not_found(id))
    }

    /// How many of the user's open events need attention (the inbox badge).
    pub(crate) async fn attention_count(&self, user: &UserRecord) -> Result<u32, CoreError> {
        let mut connection = self.store.reader().acquire().await?;
        let count = events::attention_count(&mut connection, user.id).await?;
        Ok(u32::try_from(count).unwrap_or(u32::MAX))
    }

    pub async fn get_event(&self, user: &UserRecord, id: i64) -> Result<EventRecord, CoreError> {
        let mut connection = self.store.reader().acquire().await?;
        self.own_event_or_deleted(&mut connection, user, id).await
    }

    /// Creates one of the user's own events, from the `manual` source.
    pub async fn create_manual(
        &self,
        user: &UserRecord,
        fields: &RawFields,
    ) -> Result<EventRecord, CoreError> {
        self.create_manual_keyed(user, fields, None).await
    }

    /// Creates one of the user's own events once per `idempotency_key` (a
    /// caller's name for this creation): a repeated call, such as a gateway
    /// sending again a call a stopped core dropped, returns the event the
    /// first one made and writes nothing.
    pub async fn create_manual_once(
        &self,
        user: &UserRecord,
        fields: &RawFields,
        idempotency_key: &str,
    ) -> Result<EventRecord, CoreError> {
        let mut violations = Violations::default();
        let source_ref =
            SourceRef::keyed_manual("idempotency-key", idempotency_key, &mut violations);
        let source_ref = violations.into_result(source_ref).map_err(CoreError::Invalid)?;
        self.create_manual_keyed(user, fields, Some(source_ref)).await
    }

    async fn create_manual_keyed(
        &self,
        user: &UserRecord,
        fields: &RawFields,
        keyed: Option<SourceRef>,
    ) -> Result<EventRecord, CoreError> {
        let spec = EventSpec::parse(fields).map_err(CoreError::Invalid)?;
        let once = keyed.is_some();
        let source_ref = keyed.unwrap_or_else(|| SourceRef::new_manual(ulid::Ulid::new()));
        let topic = Topic::empty();
        let key = EventKey {
            user_id: user.id,
            source_id: self.manual_source_id,
            source_ref: source_ref.as_str(),
            topic: topic.as_str(),
        };
        let now = self.now();
        let decision = self.decide(user, None, &spec, now);
        let id = if once {
            let mut transaction = self.store.begin_write().await?;
            if let Some(made) = events::find_by_key(&mut transaction, key).await? {
                return Ok(made);
            }
            let id = events::insert(&mut transaction, key, decision.write(&spec), now).await?;
            transaction.commit().await?;
            id
        } else {
            // The ref is new (a fresh ULID), so nothing is looked up, and
            // calls arriving together share one statement.
            let new_event = NewEvent {
                user_id: key.user_id,
                source_id: key.source_id,
                source_ref: key.source_ref.to_owned(),
                topic: key.topic.to_owned(),
                spec: spec.clone(),
                lifecycle: decision.lifecycle,
                due_at: decision.due_at,
                reminders: decision.reminders,
                next_check_at: decision.next_check_at,
                now,
            };
            self.store.insert_event(new_event).await?
        };
        self.written();
        // What was written is what a re-read would find.
        Ok(EventRecord::inserted(id, user, SourceName::MANUAL, key, decision.write(&spec), now))
    }

    /// Changes the user's own event through the same upsert path: a new due
    /// moment reschedules (and reopens), the same one only updates, and a
    /// deleted event comes back.
    pub async fn update_manual(
        &self,
        user: &UserRecord,
        id: i64,
        patch: EventPatch,
    ) -> Result<EventRecord, CoreError> {
        let now = self.now();
        let mut transaction = self.store.begin_write().await?;
        let record = self.own_event_or_deleted(&mut transaction, user, id).await?;
        if record.source_id != self.manual_source_id {
            return Err(owned_elsewhere(&record));
        }
        let current = record.spec.to_raw();
        let merged = RawFields {
            title: patch.title.unwrap_or(current.title),
            due_at: patch.due_at.unwrap_or(current.due_at),
            subtitle: patch.subtitle.or(current.subtitle),
            fire_at: patch.fire_at.or(current.fire_at),
            after_due: patch.after_due.or(current.after_due),
            done_label: patch.done_label.or(current.done_label),
            deep_link: patch.deep_link.or(current.deep_link),
        };
        let spec = EventSpec::parse(&merged).map_err(CoreError::Invalid)?;
        let key = EventKey {
            user_id: user.id,
            source_id: record.source_id,
            source_ref: &record.source_ref,
            topic: &record.topic,
        };
        let decision = self.decide(user, Some(&record), &spec, now);
        self.write_decision(&mut transaction, key, Some(&record), &spec, &decision, now).await?;
        let updated = self.own_event_or_deleted(&mut transaction, user, id).await?;
        transaction.commit().await?;
        self.written();
        Ok(updated)
    }

    /// Deletes (withdraws) the user's own event.
    pub async fn delete_manual(&self, user: &UserRecord, id: i64) -> Result<i64, CoreError> {
        let now = self.now();
        let mut transaction = self.store.begin_write().await?;
        let record = self.own_event(&mut transaction, user, id).await?;
        if record.source_id != self.manual_source_id {
            return Err(owned_elsewhere(&record));
        }
        self.withdraw(&mut transaction, &record, now).await?;
        transaction.commit().await?;
        self.written();
        Ok(id)
    }

    /// Done, on an event of any source.
    pub async fn mark_done(&self, user: &UserRecord, id: i64) -> Result<EventRecord, CoreError> {
        self.act(user, id, |record, now| event::mark_done(record.lifecycle, now)).await
    }

    /// Remember, on an event of any source.
    pub async fn mark_ack(
        &self,
        user: &UserRecord,
        id: i64,
        remember: RememberFor,
    ) -> Result<EventRecord, CoreError> {
        let now = self.now();
        let mut transaction = self.store.begin_write().await?;
        let record = self.own_event(&mut transaction, user, id).await?;
        if !record.lifecycle.state.is_active() {
            return Ok(record);
        }
        let ladder = record.ladder();
        let wake = remember.wake(&ladder, now).map_err(|problem| {
            CoreError::invalid_because("until", Reason::RememberDayOutOfRange, problem)
        })?;
        let lifecycle = event::mark_ack(record.lifecycle, &ladder, now, wake);
        let reminders = record.reminders.remembered(wake);
        if lifecycle == record.lifecycle && reminders == record.reminders {
            return Ok(record);
        }
        self.commit_lifecycle(transaction, user, &record, lifecycle, reminders, now).await
    }

    /// Takes Remember back, on an event of any source.
    pub async fn take_back_ack(
        &self,
        user: &UserRecord,
        id: i64,
    ) -> Result<EventRecord, CoreError> {
        self.act(user, id, |record, _| event::take_back_ack(record.lifecycle)).await
    }

    /// Reopens a done event of any source, or the user's own deleted one:
    /// open again where its due moment puts it, reminders from now. An open
    /// event is returned as it is; an expired one stays expired (its day has
    /// passed and it closes by itself); a source's withdrawal is the
    /// source's to undo.
    pub async fn reopen(&self, user: &UserRecord, id: i64) -> Result<EventRecord, CoreError> {
        let now = self.now();
        let mut transaction = self.store.begin_write().await?;
        let record = self.own_event_or_deleted(&mut transaction, user, id).await?;
        if record.lifecycle.state == State::Withdrawn && record.source_id != self.manual_source_id {
            return Err(owned_elsewhere(&record));
        }
        if record.lifecycle.state.is_active() {
            return Ok(record);
        }
        let lifecycle =
            Lifecycle::fresh(&record.spec.timeline(record.zone), record.spec.after_due, now);
        let reminders = Reminders::start(&lifecycle, &record.ladder(), now);
        self.commit_lifecycle(transaction, user, &record, lifecycle, reminders, now).await
    }

    /// Saves one of the user's events' new lifecycle and reminders (and the
    /// next check they make), commits, and returns the event as stored.
    async fn commit_lifecycle(
        &self,
        mut transaction: crate::storage::Tx,
        user: &UserRecord,
        record: &EventRecord,
        lifecycle: Lifecycle,
        reminders: Reminders,
        now: DateTime<Utc>,
    ) -> Result<EventRecord, CoreError> {
        let timeline = record.spec.timeline(record.zone);
        let next_check_at =
            reminders::earliest(lifecycle.next_check(&timeline, now), reminders.next_check());
        // Reopening moves the event's revision on, so that a link used to
        // close it cannot close it again; Done (a replayed Done link finds
        // it closed and does nothing) and Remember do not.
        let revised = !record.lifecycle.state.is_active() && lifecycle.state.is_active();
        let write = LifecycleWrite {
            lifecycle,
            revised,
            reminders,
            due_at: timeline.due_moment,
            next_check_at,
        };
        events::save_lifecycle(&mut transaction, record.id, write, now).await?;
        let saved = self.own_event_or_deleted(&mut transaction, user, record.id).await?;
        transaction.commit().await?;
        self.written();
        Ok(saved)
    }

    pub(super) async fn act(
        &self,
        user: &UserRecord,
        id: i64,
        action: impl FnOnce(&EventRecord, DateTime<Utc>) -> Lifecycle,
    ) -> Result<EventRecord, CoreError> {
        let now = self.now();
        let mut transaction = self.store.begin_write().await?;
        let record = self.own_event(&mut transaction, user, id).await?;
        let lifecycle = action(&record, now);
        // Remember answers the reminder; Done (or any close) ends the ladder.
        let reminders = if !lifecycle.state.is_active() {
            Reminders::default()
        } else {
            record.reminders.remembered(None)
        };
        if lifecycle == record.lifecycle && reminders == record.reminders {
            return Ok(record);
        }
        self.commit_lifecycle(transaction, user, &record, lifecycle, reminders, now).await
    }

    /// Changes the user's settings; a new zone recomputes their open events
    /// in the same transaction.
    pub async fn update_profile(
        &self,
        user: &UserRecord,
        patch: &ProfilePatch,
    ) -> Result<UserRecord, CoreError> {
        let mut violations = Violations::default();
        let zone = patch.tz.as_deref().map(|raw| parse_time_zone("tz", raw, &mut violations));
        let quiet_start = patch
            .quiet_start
            .as_deref()
            .map(|raw| parse_clock_time("quiet_start", raw, &mut violations));
        let quiet_end = patch
            .quiet_end
            .as_deref()
            .map(|raw| parse_clock_time("quiet_end", raw, &mut violations));
        let locale =
            patch.locale.as_deref().map(|raw| Locale::parse("locale", raw, &mut violations));
        if !violations.is_empty() {
            return Err(CoreError::Invalid(violations));
        }
        let now = self.now();
        let mut transaction = self.store.begin_write().await?;
        let current = users::user_by_id(&mut transaction, user.id).await?;
        let zone = zone.flatten().unwrap_or(current.zone);
        let mut quiet = current.quiet;
        quiet.start = quiet_start.flatten().unwrap_or(quiet.start);
        quiet.end = quiet_end.flatten().unwrap_or(quiet.end);
        let locale = locale.flatten().unwrap_or(current.locale);
        users::save_profile(&mut transaction, user.id, zone, quiet, locale, now).await?;
        // A new zone moves local due moments and every checkpoint; new quiet
        // hours move the checkpoints.
        if zone != current.zone || quiet != current.quiet {
            for record in events::open_for_user(&mut transaction, user.id).await? {
                let timeline = record.spec.timeline(zone);
                let lifecycle = record.lifecycle.advanced(&timeline, record.spec.after_due, now);
                let ladder = Ladder { zone, quiet, ..record.ladder() };
                let reminders = record.reminders.rebased(&lifecycle, &ladder, now);
                let next_check_at = reminders::earliest(
                    lifecycle.next_check(&timeline, now),
                    reminders.next_check(),
                );
                let write = LifecycleWrite {
                    lifecycle,
                    revised: false,
                    reminders,
                    due_at: timeline.due_moment,
                    next_check_at,
                };
                events::save_lifecycle(&mut transaction, record.id, write, now).await?;
            }
        }
        let updated = users::user_by_id(&mut transaction, user.id).await?;
        transaction.commit().await?;
        self.written();
        Ok(updated)
    }
}
