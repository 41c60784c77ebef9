//! Owns the person's own events (source `manual`): created (once per
//! idempotency key when the caller gives one: the same key with other
//! fields is refused), edited and deleted, each through the same upsert
//! decision a source's events take.

use crate::error::CoreError;
use crate::inputs::{EventPatch, owned_elsewhere};
use crate::{Engine, upsert};
use hado_domain::event::{EventSpec, RawFields};
use hado_domain::event_record::EventRecord;
use hado_domain::fields::{SourceName, SourceRef, Topic};
use hado_domain::text::quoted;
use hado_domain::user::UserRecord;
use hado_domain::violations::{Reason, Violations};
use hado_storage::{Inserted, NewEventRow, RowKey};

/// How many times a create decides again for a person whose zone or quiet
/// hours changed as it was written, before it gives up.
const MOVES: usize = 3;

impl Engine {
    /// Creates one of the user's own events, from the `manual` source.
    pub async fn create_manual(
        &self,
        user: &UserRecord,
        fields: &RawFields,
    ) -> Result<EventRecord, CoreError> {
        self.create_manual_keyed(user, fields, None).await
    }

    /// Creates one of the user's own events once per `idempotency_key` (a
    /// caller's name for this creation): a repeated call with the same
    /// fields, such as a gateway sending again a call a stopped core
    /// dropped, returns the event the first one made and writes nothing; the
    /// same key with other fields is refused, naming the key (a key names
    /// one creation, as Stripe's do).
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
        let key_given = keyed.is_some();
        let source_ref = keyed.unwrap_or_else(|| SourceRef::new_manual(ulid::Ulid::new()));
        let topic = Topic::empty();
        let key = RowKey {
            user_id: user.id,
            source_id: self.manual_source_id,
            source_ref: source_ref.as_str(),
            topic: topic.as_str(),
        };
        let now = self.now();
        // Decided for the person as the call read them, and again as they
        // are if their zone or quiet hours changed meanwhile.
        let mut user = std::borrow::Cow::Borrowed(user);
        let mut tries = 0;
        let (id, decision) = loop {
            let decision = upsert::decide(&user, None, &spec, now);
            // Keyed or not, calls arriving together share one statement; a
            // key already taken comes back with the event that holds it.
            let new_event = NewEventRow {
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
                zone: user.zone,
                quiet: user.quiet,
            };
            match self.store.insert_event(new_event).await? {
                Inserted::New(id) => break (id, decision),
                Inserted::Moved(as_now) if tries < MOVES => {
                    tries += 1;
                    user = std::borrow::Cow::Owned(*as_now);
                }
                Inserted::Moved(_) => {
                    return Err(CoreError::FailedPrecondition(
                        "the time zone or quiet hours kept changing while the event was made; send it again".into(),
                    ));
                }
                Inserted::Taken(made) if made.spec == spec => return Ok(*made),
                Inserted::Taken(_) if key_given => {
                    return Err(key_reused(source_ref.manual_key().unwrap_or_default()));
                }
                Inserted::Taken(made) => {
                    return Err(CoreError::Store(hado_storage::StoreError::Corrupt(format!(
                        "a new event's ref {} was taken by event {}",
                        source_ref.as_str(),
                        made.id
                    ))));
                }
            }
        };
        self.checks_written(decision.next_check_at);
        // What was written is what a re-read would find.
        Ok(hado_storage::inserted_event(
            id,
            &user,
            SourceName::MANUAL,
            key,
            decision.write(&spec),
            now,
        ))
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
        let (mut transaction, record) = self.begin_changing(user, id).await?;
        if record.source_id != self.manual_source_id {
            return Err(owned_elsewhere(&record));
        }
        // Decided as the person is now, not as the call read them.
        let user = &hado_storage::users::user_by_id(&mut transaction, user.id).await?;
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
        let key = RowKey {
            user_id: user.id,
            source_id: record.source_id,
            source_ref: &record.source_ref,
            topic: &record.topic,
        };
        let decision = upsert::decide(user, Some(&record), &spec, now);
        upsert::write_decision(&mut transaction, key, Some(&record), &spec, &decision, now).await?;
        let updated = self.own_event_or_deleted(&mut transaction, user, id).await?;
        transaction.commit().await?;
        self.written();
        Ok(updated)
    }

    /// Deletes (withdraws) the user's own event, and returns it deleted.
    pub async fn delete_manual(
        &self,
        user: &UserRecord,
        id: i64,
    ) -> Result<EventRecord, CoreError> {
        let now = self.now();
        let (mut transaction, record) = self.begin_changing(user, id).await?;
        let record = self.not_withdrawn(record)?;
        if record.source_id != self.manual_source_id {
            return Err(owned_elsewhere(&record));
        }
        self.withdraw(&mut transaction, &record, now).await?;
        let deleted = self.own_event_or_deleted(&mut transaction, user, id).await?;
        transaction.commit().await?;
        self.written();
        Ok(deleted)
    }
}

/// The refusal of a key used before for other fields.
fn key_reused(key: &str) -> CoreError {
    CoreError::invalid_because(
        "idempotency_key",
        Reason::IdempotencyKeyReused,
        format!(
            "idempotency key {} was used for an event with other fields; a key names one creation, so send a new key for a new event",
            quoted(key)
        ),
    )
}
