//! Owns what sources do: batches upserted and withdrawn, validated whole and
//! written in one transaction (an upsert's shared with the other sources'
//! calls waiting, by `upsert_group`, where a one-event call may also be
//! its own), and a source's events read back.
//! Each item's decision is `upsert`'s, which the person's own events share.

use chrono::{DateTime, Utc};
use hado_storage::Connection;

use crate::Engine;
use crate::error::CoreError;
use crate::inputs::{RawKey, SourceCaller, SourceItem, check_batch_size};
use crate::upsert::{UpsertReport, parse_item};
use crate::upsert_group::Item;
use hado_domain::event::Lifecycle;
use hado_domain::event_record::EventRecord;
use hado_domain::fields::{Login, SourceRef, Topic};
use hado_domain::reminders::Reminders;
use hado_domain::state::State;
use hado_domain::violations::Violations;
use hado_storage::events::{LifecycleWrite, ReadFor};
use hado_storage::{RowKey, events, users};

impl Engine {
    /// Validates the whole batch, then applies it in one transaction, which
    /// it shares with the other sources' calls waiting (`upsert_group`;
    /// one event alone may go in by a statement of its own first).
    pub async fn upsert_batch(
        &self,
        source: &SourceCaller,
        items: &[SourceItem],
    ) -> Result<Vec<UpsertReport>, CoreError> {
        check_batch_size("events", items.len())?;
        let mut violations = Violations::default();
        let parsed: Vec<_> = items
            .iter()
            .enumerate()
            .map(|(index, item)| parse_item(index, item, &mut violations))
            .collect();
        if !violations.is_empty() {
            return Err(CoreError::Invalid(violations));
        }
        if items.is_empty() {
            return Ok(Vec::new());
        }
        let items = parsed
            .into_iter()
            .flatten()
            .map(|(login, source_ref, topic, spec)| Item {
                source_id: source.id,
                login,
                source_ref,
                topic,
                spec,
            })
            .collect();
        Ok(self.upserts.submit(items).await??)
    }

    /// Withdraws events by key; unknown keys are reported as not found.
    pub async fn withdraw_batch(
        &self,
        source: &SourceCaller,
        keys: &[RawKey],
    ) -> Result<Vec<WithdrawReport>, CoreError> {
        check_batch_size("keys", keys.len())?;
        let mut violations = Violations::default();
        let mut parsed = Vec::with_capacity(keys.len());
        for (index, key) in keys.iter().enumerate() {
            let mut own = Violations::default();
            let login = Login::parse("user", &key.user, &mut own);
            let source_ref = SourceRef::parse("ref", &key.source_ref, &mut own);
            let topic = Topic::parse("topic", &key.topic, &mut own);
            violations.extend_prefixed(&format!("keys[{index}]"), own);
            parsed.push((login, source_ref, topic));
        }
        if !violations.is_empty() {
            return Err(CoreError::Invalid(violations));
        }
        let now = self.now();
        let mut transaction = self.store.begin_write().await?;
        let mut found = Vec::with_capacity(keys.len());
        for (login, source_ref, topic) in parsed {
            let (Some(login), Some(source_ref), Some(topic)) = (login, source_ref, topic) else {
                continue;
            };
            let Some(user) = users::find_user(&mut transaction, &login).await? else {
                found.push(None);
                continue;
            };
            let key = RowKey {
                user_id: user.id,
                source_id: source.id,
                source_ref: source_ref.as_str(),
                topic: topic.as_str(),
            };
            found.push(events::find_by_key(&mut transaction, key).await?);
        }
        // Read again and taken until the commit, in id order, as every
        // writer that takes several events takes them: a write committed
        // meanwhile (a push that moved the event, another withdrawal) is
        // read, not written over, and a group of pushes beside this call
        // never waits for a row it holds while holding one it waits for.
        let mut ids: Vec<i64> = found.iter().flatten().map(|record| record.id).collect();
        ids.sort_unstable();
        ids.dedup();
        for record in events::find_by_ids(&mut transaction, &ids, ReadFor::Changing).await? {
            self.withdraw(&mut transaction, &record, now).await?;
        }
        let reports: Vec<WithdrawReport> = found
            .iter()
            .map(|record| WithdrawReport {
                found: record.as_ref().map(|record| (record.id, State::Withdrawn)),
            })
            .collect();
        transaction.commit().await?;
        self.written();
        Ok(reports)
    }

    pub(super) async fn withdraw(
        &self,
        connection: &mut impl Connection,
        record: &EventRecord,
        now: DateTime<Utc>,
    ) -> Result<(), CoreError> {
        if record.lifecycle.state != State::Withdrawn {
            // It leaves the inbox now: the archive lists it by this moment.
            let lifecycle =
                Lifecycle { state: State::Withdrawn, closed_at: Some(now), ..record.lifecycle };
            // Its due moment stays as stored: the person joined to a row read
            // after waiting for it is as they were before the wait, so a zone
            // that moved the event meanwhile would be undone.
            let due_at = DateTime::from_timestamp_millis(record.due_ms)
                .unwrap_or_else(|| record.spec.due.at.moment_in(record.zone));
            let write = LifecycleWrite {
                lifecycle,
                revised: true,
                reminders: Reminders::default(),
                due_at,
                next_check_at: None,
            };
            events::save_lifecycle(connection, record.id, write, now).await?;
        }
        Ok(())
    }

    /// A source's events of one user (all, or only the given refs).
    pub async fn list_for_source(
        &self,
        source: &SourceCaller,
        raw_login: &str,
        refs: &[String],
    ) -> Result<Vec<EventRecord>, CoreError> {
        check_batch_size("refs", refs.len())?;
        let mut violations = Violations::default();
        let login = Login::parse("user", raw_login, &mut violations);
        for (index, source_ref) in refs.iter().enumerate() {
            SourceRef::parse(&format!("refs[{index}]"), source_ref, &mut violations);
        }
        let login = violations.into_result(login).map_err(CoreError::Invalid)?;
        let mut connection = self.store.reader().acquire().await?;
        let Some(user) = users::find_user(&mut connection, &login).await? else {
            return Ok(Vec::new());
        };
        drop(connection);
        Ok(self.store.list_for_source(source.id, user.id, refs).await?)
    }
}

/// What a withdrawal found under one key.
#[derive(Clone, Copy, Debug)]
pub struct WithdrawReport {
    pub found: Option<(i64, State)>,
}
