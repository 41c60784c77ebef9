//! Owns what sources do: batches upserted and withdrawn, validated whole and
//! written in one transaction, and a source's events read back. Each
//! item's decision is `upsert`'s, which the person's own events share.

use chrono::{DateTime, Utc};
use sqlx::AnyConnection;

use crate::domain::event::Lifecycle;
use crate::domain::event_record::EventRecord;
use crate::domain::fields::{Login, SourceRef, Topic};
use crate::domain::reminders::{self, Reminders};
use crate::domain::state::State;
use crate::domain::user::UserRecord;
use crate::domain::violations::Violations;
use crate::engine::Engine;
use crate::engine::inputs::{RawKey, SourceCaller, SourceItem, check_batch_size};
use crate::engine::upsert::{UpsertReport, parse_item};
use crate::error::CoreError;
use crate::storage::events::LifecycleWrite;
use crate::storage::{EventWrite, RowKey, events, users};
use std::collections::HashMap;

impl Engine {
    /// Validates the whole batch, then applies it in one transaction.
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
        let now = self.now();
        let parsed: Vec<_> = parsed.into_iter().flatten().collect();
        let mut transaction = self.store.begin_write().await?;
        let mut known_users: HashMap<String, UserRecord> = HashMap::new();
        for (login, ..) in &parsed {
            if !known_users.contains_key(login.as_str()) {
                let user = users::ensure_user(
                    &mut transaction,
                    login,
                    (self.default_zone, self.default_locale),
                    now,
                )
                .await?;
                known_users.insert(login.as_str().to_owned(), user);
            }
        }
        // The batch's existing events in a few queries, not one per item.
        let keys: Vec<(i64, &str, &str)> = parsed
            .iter()
            .map(|(login, source_ref, topic, _)| {
                (known_users[login.as_str()].id, source_ref.as_str(), topic.as_str())
            })
            .collect();
        let mut stored = events::find_by_keys(&mut transaction, source.id, &keys).await?;
        let mut reports = Vec::with_capacity(parsed.len());
        // New events wait here and go in together, a few hundred rows to a
        // statement; their reports wait for their ids.
        let mut inserts: Vec<(RowKey<'_>, EventWrite<'_>, usize)> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut earliest_check = None;
        for ((login, source_ref, topic, spec), (user_id, _, _)) in parsed.iter().zip(&keys) {
            let user = &known_users[login.as_str()];
            let key = RowKey {
                user_id: *user_id,
                source_id: source.id,
                source_ref: source_ref.as_str(),
                topic: topic.as_str(),
            };
            let lookup = (*user_id, source_ref.as_str().to_owned(), topic.as_str().to_owned());
            let existing = if seen.insert(lookup.clone()) {
                stored.remove(&lookup)
            } else {
                // A key that comes twice in one batch meets its own first write.
                Self::insert_waiting(&mut transaction, &mut inserts, &mut reports, now).await?;
                events::find_by_key(&mut transaction, key).await?
            };
            let decision = self.decide(user, existing.as_ref(), spec, now);
            earliest_check = reminders::earliest(earliest_check, decision.next_check_at);
            match existing {
                None => {
                    inserts.push((key, decision.write(spec), reports.len()));
                    reports.push(UpsertReport {
                        id: 0,
                        outcome: decision.outcome,
                        state: decision.lifecycle.state,
                    });
                }
                Some(record) => reports.push(
                    self.write_decision(&mut transaction, key, Some(&record), spec, &decision, now)
                        .await?,
                ),
            }
        }
        Self::insert_waiting(&mut transaction, &mut inserts, &mut reports, now).await?;
        transaction.commit().await?;
        self.checks_written(earliest_check);
        Ok(reports)
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
        let mut reports = Vec::with_capacity(keys.len());
        for (login, source_ref, topic) in parsed {
            let (Some(login), Some(source_ref), Some(topic)) = (login, source_ref, topic) else {
                continue;
            };
            let Some(user) = users::find_user(&mut transaction, &login).await? else {
                reports.push(WithdrawReport { found: None });
                continue;
            };
            let key = RowKey {
                user_id: user.id,
                source_id: source.id,
                source_ref: source_ref.as_str(),
                topic: topic.as_str(),
            };
            let found = match events::find_by_key(&mut transaction, key).await? {
                Some(record) => {
                    Some((record.id, self.withdraw(&mut transaction, &record, now).await?))
                }
                None => None,
            };
            reports.push(WithdrawReport { found });
        }
        transaction.commit().await?;
        self.written();
        Ok(reports)
    }

    pub(super) async fn withdraw(
        &self,
        connection: &mut AnyConnection,
        record: &EventRecord,
        now: DateTime<Utc>,
    ) -> Result<State, CoreError> {
        if record.lifecycle.state != State::Withdrawn {
            // It leaves the inbox now: the archive lists it by this moment.
            let lifecycle =
                Lifecycle { state: State::Withdrawn, closed_at: Some(now), ..record.lifecycle };
            let due_at = record.spec.due.at.moment_in(record.zone);
            let write = LifecycleWrite {
                lifecycle,
                revised: true,
                reminders: Reminders::default(),
                due_at,
                next_check_at: None,
            };
            events::save_lifecycle(connection, record.id, write, now).await?;
        }
        Ok(State::Withdrawn)
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
