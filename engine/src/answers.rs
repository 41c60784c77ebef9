//! Owns the person's answers to an event of any source: Done, Remember (for
//! how long), taking Remember back, and Reopen, each one lifecycle change
//! committed with its place on the reminder ladder.

use crate::Engine;
use crate::error::CoreError;
use crate::inputs::owned_elsewhere;
use chrono::{DateTime, Utc};
use hado_domain::event::{Lifecycle, RememberFor};
use hado_domain::event_record::EventRecord;
use hado_domain::reminders::Reminders;
use hado_domain::state::State;
use hado_domain::user::UserRecord;
use hado_domain::violations::Reason;
use hado_domain::{event, reminders};
use hado_storage::events;
use hado_storage::events::LifecycleWrite;

impl Engine {
    /// Done, on an event of any source.
    pub async fn mark_done(&self, user: &UserRecord, id: i64) -> Result<EventRecord, CoreError> {
        self.act(user, id, |record, now| event::mark_done(record.lifecycle, now)).await
    }

    /// Remember, on an event of any source.
    pub async fn remember(
        &self,
        user: &UserRecord,
        id: i64,
        remember: RememberFor,
    ) -> Result<EventRecord, CoreError> {
        let now = self.now();
        let (transaction, record) = self.begin_changing(user, id).await?;
        let record = self.not_withdrawn(record)?;
        if !record.lifecycle.state.is_active() {
            return Ok(record);
        }
        let ladder = record.ladder();
        let wake = remember.wake(&ladder, now).map_err(|problem| {
            CoreError::invalid_because("until", Reason::RememberDayOutOfRange, problem)
        })?;
        let lifecycle = event::remember(record.lifecycle, &ladder, now, wake);
        let reminders = record.reminders.remembered(wake);
        if lifecycle == record.lifecycle && reminders == record.reminders {
            return Ok(record);
        }
        self.commit_lifecycle(transaction, user, &record, lifecycle, reminders, now).await
    }

    /// Takes Remember back, on an event of any source.
    pub async fn take_back_remember(
        &self,
        user: &UserRecord,
        id: i64,
    ) -> Result<EventRecord, CoreError> {
        self.act(user, id, |record, _| event::take_back_remember(record.lifecycle)).await
    }

    /// Reopens a done event of any source, or the user's own deleted one:
    /// open again where its due moment puts it, reminders from now. An open
    /// event is returned as it is; an expired one stays expired (its day has
    /// passed and it closes by itself); a source's withdrawal is the
    /// source's to undo.
    pub async fn reopen(&self, user: &UserRecord, id: i64) -> Result<EventRecord, CoreError> {
        let now = self.now();
        let (transaction, record) = self.begin_changing(user, id).await?;
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
        mut transaction: hado_storage::Tx,
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
        let (transaction, record) = self.begin_changing(user, id).await?;
        let record = self.not_withdrawn(record)?;
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
}
