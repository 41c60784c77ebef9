//! Owns what a group of sources' upserts (REST `POST /api/events`, gRPC
//! `UpsertEvents`) does in its one transaction: their people taken from
//! what core keeps (on Postgres checked through their gates by the insert
//! itself) or read in one statement, their new rows in one `INSERT` that
//! passes over keys already taken, those events read in one statement and
//! the changed ones written over in one more (a key named twice meets its
//! first write after), and one commit, with each call answered with its
//! own reports. Forming the groups, and their guards, are
//! `storage::group_commit`'s: a source is a lane, and a call weighs its
//! items.
//!
//! A call that arrives alone costs what it did before grouping; calls that
//! arrive together (up to 64 calls and 1000 items) share the writer's
//! statements and its commit, so the writer's cost grows with the groups,
//! not with the callers. A group of new events for people core keeps is
//! `BEGIN`, the `INSERT` and `COMMIT` (and, on Postgres, the pool's ping
//! as it hands out the connection); for others, the read of their people
//! comes before the `INSERT`.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;

use crate::clock::Clock;
use crate::kept::Kept;
use crate::loops::Alarm;
use crate::upsert::{self, Decision, UpsertReport};
use hado_domain::event::{EventSpec, Outcome};
use hado_domain::fields::{Login, SourceRef, Topic};
use hado_domain::profile::Locale;
use hado_domain::reminders;
use hado_domain::user::UserRecord;
use hado_storage::events::ReadFor;
use hado_storage::group_commit::{Apply, GroupCommit, Limits};
use hado_storage::{RowKey, Store, StoreError, events, users};

/// How big a group may grow: a call that would pass the items waits for
/// the next group (a call is never split), so that one transaction holds
/// the writer about as long as one full batch does. A source's calls wait
/// 64 at a time, a group's worth; its next waits for room.
const LIMITS: Limits = Limits { calls: 64, weight: 1000, per_lane: 64, what: "sources' upserts" };

/// One validated item of a source's call.
pub(super) struct Item {
    pub(super) source_id: i64,
    pub(super) login: Login,
    pub(super) source_ref: SourceRef,
    pub(super) topic: Topic,
    pub(super) spec: EventSpec,
}

/// What applying a group needs of the engine.
pub(super) struct Applier {
    store: Store,
    clock: Arc<dyn Clock>,
    defaults: (Tz, Locale),
    alarm: Arc<Alarm>,
    /// Who a login is, as this core keeps it.
    kept: Arc<Kept>,
}

/// The queue in front of the grouping task; each `submit` applies one
/// call's items and returns their reports once committed.
pub(super) type UpsertGroups = GroupCommit<Applier>;

/// Starts the grouping task; it ends when the engine is dropped.
pub(super) fn start(
    store: Store,
    clock: Arc<dyn Clock>,
    defaults: (Tz, Locale),
    alarm: Arc<Alarm>,
    kept: Arc<Kept>,
) -> UpsertGroups {
    GroupCommit::start(Applier { store, clock, defaults, alarm, kept }, LIMITS)
}

impl Apply for Applier {
    type Call = Vec<Item>;
    type Answer = Vec<UpsertReport>;

    async fn apply(&self, calls: &[Vec<Item>]) -> Result<Vec<Vec<UpsertReport>>, StoreError> {
        let mut reports = self.apply_all(calls).await?.into_iter();
        Ok(calls.iter().map(|call| reports.by_ref().take(call.len()).collect()).collect())
    }

    fn weight(call: &Vec<Item>) -> usize {
        call.len()
    }

    fn lane(call: &Vec<Item>) -> i64 {
        call.first().map_or(0, |item| item.source_id)
    }
}

impl Applier {
    /// Applies the calls' items, in order, in one transaction; the reports
    /// come back in the same order.
    ///
    /// Each key's first item is tried as a new event, all of them in one
    /// `INSERT` that passes over the keys already taken. Only those are
    /// read, and only they and a key's repeats (which meet its first
    /// write) are written one by one.
    async fn apply_all(&self, calls: &[Vec<Item>]) -> Result<Vec<UpsertReport>, StoreError> {
        let items: Vec<&Item> = calls.iter().flatten().collect();
        let now = self.clock.now();
        if !self.store.backend().has_one_writer()
            && let Some(reports) = self.apply_as_kept(&items, now).await?
        {
            return Ok(reports);
        }
        let mut transaction = self.store.begin_grouped_write().await?;
        let people = self.people(&mut transaction, &items, now).await?;
        let plan = Plan::of(&items, &people, now);
        let ids = events::insert_new(&mut transaction, &plan.rows(&items, now)).await?;
        self.finish(transaction, &items, &people, plan, ids, now).await
    }

    /// Postgres, when this core keeps every person of the group (a source
    /// pushing for people it pushed for before): the new events decided in
    /// their settings as kept, and inserted by one statement that passes
    /// their gates and inserts only the rows decided in the settings each
    /// person has as it passes ([`events::insert_new_through_gates`]), in
    /// place of a statement that reads the people through their gates
    /// first. None, with nothing written, when a person is not kept or
    /// their settings changed since they were: the people as read are
    /// kept, and the group is applied as [`Self::people`] reads them.
    async fn apply_as_kept(
        &self,
        items: &[&Item],
        now: DateTime<Utc>,
    ) -> Result<Option<Vec<UpsertReport>>, StoreError> {
        let mut people = HashMap::new();
        for item in items {
            let login = item.login.as_str();
            if !people.contains_key(login) {
                let Some(user) = self.kept.person(login) else { return Ok(None) };
                people.insert(login.to_owned(), user);
            }
        }
        let plan = Plan::of(items, &people, now);
        let settings: Vec<events::DecidedFor> = plan
            .new
            .iter()
            .map(|(at, _)| {
                let user = &people[items[*at].login.as_str()];
                events::DecidedFor::of(user.zone, user.quiet)
            })
            .collect();
        let rows: Vec<_> = plan
            .rows(items, now)
            .into_iter()
            .zip(&settings)
            .map(|((key, write, now), decided)| (key, write, now, decided))
            .collect();
        let mut transaction = self.store.begin_grouped_write().await?;
        let began = self.kept.reading();
        let (throughs, as_now) = events::insert_new_through_gates(&mut transaction, &rows).await?;
        for user in as_now {
            self.kept.keep_person(began, user);
        }
        if throughs.contains(&events::Through::Moved) {
            transaction.rollback().await?;
            return Ok(None);
        }
        let ids = throughs
            .into_iter()
            .map(|through| match through {
                events::Through::New(id) => Some(id),
                _ => None,
            })
            .collect();
        self.finish(transaction, items, &people, plan, ids, now).await.map(Some)
    }

    /// The rest of a group once its new events are inserted (`ids`, in the
    /// order of `plan.new`; none for a key taken): the stored events whose
    /// keys were taken read and written, a key's repeats after its first
    /// write, and the commit.
    async fn finish(
        &self,
        mut transaction: hado_storage::Tx,
        items: &[&Item],
        people: &HashMap<String, UserRecord>,
        plan: Plan<'_>,
        ids: Vec<Option<i64>>,
        now: DateTime<Utc>,
    ) -> Result<Vec<UpsertReport>, StoreError> {
        let user = |item: &Item| &people[item.login.as_str()];
        let Plan { keys, first, new } = plan;
        let mut reports: Vec<Option<UpsertReport>> = vec![None; items.len()];
        let mut earliest_check = None;
        let mut taken = Vec::new();
        for ((at, decision), id) in new.iter().zip(ids) {
            match id {
                Some(id) => {
                    earliest_check = reminders::earliest(earliest_check, decision.next_check_at);
                    reports[*at] = Some(UpsertReport {
                        id,
                        outcome: decision.outcome,
                        state: decision.lifecycle.state,
                    });
                }
                None => taken.push(keys[*at]),
            }
        }
        // The stored events whose keys were taken, in one query per source,
        // taken until the group commits (in id order, as every writer that
        // takes several takes them).
        let mut stored = events::find_taken(&mut transaction, &taken, ReadFor::Changing).await?;
        // The first write of each taken key, in key order, as the new ones
        // went in: one statement for those that changed. A key's repeats
        // come after, each meeting the write before it, in the same order.
        let mut rest: Vec<usize> = (0..items.len()).filter(|&at| reports[at].is_none()).collect();
        rest.sort_by_key(|&at| keys[at].order());
        let (firsts, repeats): (Vec<usize>, Vec<usize>) =
            rest.into_iter().partition(|&at| first[at]);
        let mut changed = Vec::new();
        for at in firsts {
            let (item, key) = (items[at], keys[at]);
            let existing = stored.remove(&key.owned());
            match existing {
                Some(record) => {
                    let decision = upsert::decide(user(item), Some(&record), &item.spec, now);
                    earliest_check = reminders::earliest(earliest_check, decision.next_check_at);
                    let (outcome, state) = (decision.outcome, decision.lifecycle.state);
                    reports[at] = Some(UpsertReport { id: record.id, outcome, state });
                    if outcome != Outcome::Unchanged {
                        changed.push((at, record.id, decision));
                    }
                }
                None => {
                    let (report, check) =
                        write_one(&mut transaction, item, key, user(item), None, now).await?;
                    earliest_check = reminders::earliest(earliest_check, check);
                    reports[at] = Some(report);
                }
            }
        }
        let writes: Vec<_> = changed
            .iter()
            .map(|(at, id, decision)| (*id, decision.write(&items[*at].spec), now))
            .collect();
        events::update_many(&mut transaction, &writes).await?;
        for at in repeats {
            // A key named twice (in one call or two) meets its first write.
            let existing = events::find_by_key(&mut transaction, keys[at]).await?;
            let (report, check) =
                write_one(&mut transaction, items[at], keys[at], user(items[at]), existing, now)
                    .await?;
            earliest_check = reminders::earliest(earliest_check, check);
            reports[at] = Some(report);
        }
        transaction.commit().await?;
        self.alarm.checks_written(earliest_check, now);
        Ok(reports.into_iter().map(|report| report.expect("every item was written")).collect())
    }

    /// The group's people, by login: on SQLite those this core keeps taken
    /// from its memory; the other known ones read together, and a newcomer
    /// (a source may write for someone who has never opened the inbox)
    /// made with the default settings.
    ///
    /// On Postgres (a group with someone core does not keep, or whose
    /// settings moved, [`Self::apply_as_kept`]) every one is read through
    /// their gate, held until the group commits
    /// ([`users::people_for_writing`]), a newcomer another transaction made
    /// first too: another core may be writing a person's new zone, which
    /// this core hears of only after it commits, and even this core would
    /// read the old one until then. Written in a zone a person has just
    /// left, an event would keep the old zone's day and checks, as the zone
    /// change would not see it to move it.
    async fn people(
        &self,
        connection: &mut impl hado_storage::Connection,
        items: &[&Item],
        now: DateTime<Utc>,
    ) -> Result<HashMap<String, UserRecord>, StoreError> {
        let mut logins: Vec<&str> = items.iter().map(|item| item.login.as_str()).collect();
        logins.sort_unstable();
        logins.dedup();
        let mut people = HashMap::with_capacity(logins.len());
        if self.store.backend().has_one_writer() {
            logins.retain(|login| match self.kept.person(login) {
                Some(user) => {
                    people.insert((*login).to_owned(), user);
                    false
                }
                None => true,
            });
        }
        if logins.is_empty() {
            return Ok(people);
        }
        let began = self.kept.reading();
        for user in users::people_for_writing(connection, &logins, &[]).await? {
            self.kept.keep_person(began, user.clone());
            people.insert(user.login.as_str().to_owned(), user);
        }
        // Newcomers are made in the logins' order, so two groups making
        // the same ones never each hold one the other waits for.
        let mut newcomers: Vec<&Login> = items
            .iter()
            .map(|item| &item.login)
            .filter(|login| !people.contains_key(login.as_str()))
            .collect();
        newcomers.sort_unstable_by_key(|login| login.as_str());
        newcomers.dedup_by_key(|login| login.as_str());
        for login in newcomers {
            let mut user = users::ensure_user(connection, login, self.defaults, now).await?;
            if !self.store.backend().has_one_writer() {
                // Made by another transaction since the read above, maybe.
                let through = users::people_for_writing(connection, &[], &[user.id]).await?;
                user = through.into_iter().next().unwrap_or(user);
            }
            people.insert(login.as_str().to_owned(), user);
        }
        Ok(people)
    }
}

/// One item decided against what its key holds (`existing`) and written:
/// its report, and the check it asks for.
async fn write_one(
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
struct Plan<'a> {
    keys: Vec<RowKey<'a>>,
    /// Whether each item is its key's first in the group.
    first: Vec<bool>,
    /// The items tried as new events (by index), with their decisions.
    new: Vec<(usize, Decision)>,
}

impl<'a> Plan<'a> {
    fn of(items: &[&'a Item], people: &HashMap<String, UserRecord>, now: DateTime<Utc>) -> Self {
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
    fn rows(
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
