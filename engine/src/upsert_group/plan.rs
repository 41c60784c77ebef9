//! A group's plan: each item's key, which items are their key's first in
//! the group, and the decisions for the new events it tries; and the write
//! of one item against what its key holds.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};

use super::Item;
use crate::upsert::{self, Decision, UpsertReport};
use hado_domain::user::UserRecord;
use hado_storage::{RowKey, StoreError};

/// One item decided against what its key holds (`existing`) and written:
/// its report, and the check it asks for.
pub(super) async fn write_one(
    transaction: &mut hado_storage::Tx,
    item: &Item,
    key: RowKey<'_>,
    user: &UserRecord,
    existing: Option<hado_domain::event_record::EventRecord>,
    now: DateTime<Utc>,
) -> Result<(UpsertReport, Option<DateTime<Utc>>), StoreError> {
    let decision = upsert::decide(user, existing.as_ref(), &item.spec, now);
    let report =
        upsert::write_decision(transaction, key, existing.as_ref(), &item.spec, &decision, now)
            .await?;
    Ok((report, decision.next_check_at))
}

/// A group's keys, and the decisions for the new events it tries: each
/// key's first item decided as if new, in the people's settings.
pub(super) struct Plan<'a> {
    pub(super) keys: Vec<RowKey<'a>>,
    /// Whether each item is its key's first in the group.
    pub(super) first: Vec<bool>,
    /// The items tried as new events (by index), with their decisions.
    pub(super) new: Vec<(usize, Decision)>,
}

impl<'a> Plan<'a> {
    pub(super) fn of(
        items: &[&'a Item],
        people: &HashMap<String, UserRecord>,
        now: DateTime<Utc>,
    ) -> Self {
        let user = |item: &Item| &people[item.login.as_str()];
        let keys: Vec<RowKey<'a>> = items
            .iter()
            .map(|item| RowKey {
                user_id: user(item).id,
                source_id: item.source_id,
                source_ref: item.source_ref.as_str(),
                topic: item.topic.as_str(),
            })
            .collect();
        let mut seen = HashSet::new();
        let first: Vec<bool> = keys.iter().map(|key| seen.insert(key.owned())).collect();
        let new = (0..items.len())
            .filter(|&at| first[at])
            .map(|at| (at, upsert::decide(user(items[at]), None, &items[at].spec, now)))
            .collect();
        Self { keys, first, new }
    }

    /// The rows of the new events, in the order of `new`.
    pub(super) fn rows(
        &self,
        items: &[&'a Item],
        now: DateTime<Utc>,
    ) -> Vec<(RowKey<'a>, hado_storage::EventWrite<'a>, DateTime<Utc>)> {
        self.new
            .iter()
            .map(|(at, decision)| (self.keys[*at], decision.write(&items[*at].spec), now))
            .collect()
    }
}
