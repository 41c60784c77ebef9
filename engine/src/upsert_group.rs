//! Owns what a group of sources' upserts (REST `POST /api/events`, gRPC
//! `UpsertEvents`) does in one transaction (but see below for new events
//! pushed one to a call): their people taken from
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
//! not with the callers. On Postgres, a group of one-event calls for people
//! core keeps, from sources not found pushing stored keys again, is its
//! `INSERT` alone, its own transaction, and what that leaves follows in
//! one more ([`Applier::insert_alone`]); other groups for people core keeps
//! are `BEGIN`, the `INSERT` and `COMMIT`; for others, the read of their
//! people comes before the `INSERT`. Each also costs the pool's ping as it
//! hands out the connection.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};
use chrono_tz::Tz;

use crate::clock::Clock;
use crate::kept::Kept;
use crate::loops::Alarm;
use crate::upsert::{self, UpsertReport};
use hado_domain::event::{EventSpec, Outcome};
use hado_domain::fields::{Login, SourceRef, Topic};
use hado_domain::profile::Locale;
use hado_domain::reminders;
use hado_domain::user::UserRecord;
use hado_storage::events::ReadFor;
use hado_storage::group_commit::{Apply, GroupCommit, Limits};
use hado_storage::{Store, StoreError, events};

mod alone;
mod people;
mod plan;

use plan::{Plan, write_one};

/// How big a group may grow: a call that would pass the items waits for
/// the next group (a call is never split), so that one transaction holds
/// the writer about as long as one full batch does. A source's calls wait
/// 64 at a time, a group's worth; its next waits for room.
const LIMITS: Limits = Limits { calls: 64, weight: 1000, per_lane: 64, what: "sources' upserts" };

/// One item's report, or its own failure ([`Applier::insert_alone`]).
type Answer = Result<UpsertReport, StoreError>;

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
    /// The sources whose last group of one-event calls found a key taken
    /// or named twice: their groups are not bet to be new keys alone
    /// ([`Self::insert_alone`]).
    repushing: Mutex<HashSet<i64>>,
    /// How many groups were inserted alone.
    alone: Arc<AtomicU64>,
}

/// The queue in front of the grouping task; each `submit` applies one
/// call's items and returns their reports once committed.
pub(super) type UpsertGroups = GroupCommit<Applier>;

/// Starts the grouping task; it ends when the engine is dropped. With it,
/// how many groups were inserted alone ([`Applier::insert_alone`]).
pub(super) fn start(
    store: Store,
    clock: Arc<dyn Clock>,
    defaults: (Tz, Locale),
    alarm: Arc<Alarm>,
    kept: Arc<Kept>,
) -> (UpsertGroups, Arc<AtomicU64>) {
    let (repushing, alone) = (Mutex::default(), Arc::<AtomicU64>::default());
    let applier = Applier { store, clock, defaults, alarm, kept, repushing, alone: alone.clone() };
    (GroupCommit::start(applier, LIMITS), alone)
}

impl Apply for Applier {
    type Call = Vec<Item>;
    /// A call's reports; or its own failure, when others of its group were
    /// committed before it failed ([`Applier::insert_alone`]).
    type Answer = Result<Vec<UpsertReport>, StoreError>;

    async fn apply(&self, calls: &[Vec<Item>]) -> Result<Vec<Self::Answer>, StoreError> {
        let mut answers = self.apply_all(calls).await?.into_iter();
        Ok(calls
            .iter()
            .map(|call| {
                let call: Vec<Answer> = answers.by_ref().take(call.len()).collect();
                call.into_iter().collect()
            })
            .collect())
    }

    fn failed_alone(answer: &Self::Answer) -> bool {
        answer.as_ref().is_err_and(|error| error.for_another_caller().is_none())
    }

    fn weight(call: &Vec<Item>) -> usize {
        call.len()
    }

    fn lane(call: &Vec<Item>) -> i64 {
        call.first().map_or(0, |item| item.source_id)
    }
}

impl Applier {
    /// Applies the calls' items, in order, in one transaction (but see
    /// [`Self::insert_alone`]); each item's answer comes back in the same
    /// order.
    ///
    /// Each key's first item is tried as a new event, all of them in one
    /// `INSERT` that passes over the keys already taken. Only those are
    /// read, and only they and a key's repeats (which meet its first
    /// write) are written one by one.
    async fn apply_all(&self, calls: &[Vec<Item>]) -> Result<Vec<Answer>, StoreError> {
        let items: Vec<&Item> = calls.iter().flatten().collect();
        let now = self.clock.now();
        let one_each = calls.iter().all(|call| call.len() == 1);
        if !self.store.backend().has_one_writer()
            && let Some(reports) = self.apply_as_kept(&items, one_each, now).await?
        {
            return Ok(reports);
        }
        Ok(self.apply_in_one_transaction(&items, now).await?.into_iter().map(Ok).collect())
    }

    /// The items applied in one transaction, their people read first.
    async fn apply_in_one_transaction(
        &self,
        items: &[&Item],
        now: DateTime<Utc>,
    ) -> Result<Vec<UpsertReport>, StoreError> {
        let mut transaction = self.store.begin_grouped_write().await?;
        let people = self.people(&mut transaction, items, now).await?;
        let plan = Plan::of(items, &people, now);
        let ids = events::insert_new(&mut transaction, &plan.rows(items, now)).await?;
        self.finish(transaction, items, &people, plan, ids, now).await
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
    ///
    /// When each call of the group carries one item (`one_each`) and no
    /// source of it was found pushing stored keys, the group goes by
    /// [`Self::insert_alone`], which applies a moved person's items itself,
    /// after its insert.
    async fn apply_as_kept(
        &self,
        items: &[&Item],
        one_each: bool,
        now: DateTime<Utc>,
    ) -> Result<Option<Vec<Answer>>, StoreError> {
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
        if one_each && self.bets_on_new_keys(items) {
            return self.insert_alone(items, plan, &rows, now).await.map(Some);
        }
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
        if one_each {
            self.settle_bet(items, &plan, &throughs);
        }
        let ids = throughs
            .into_iter()
            .map(|through| match through {
                events::Through::New(id) => Some(id),
                _ => None,
            })
            .collect();
        let reports = self.finish(transaction, items, &people, plan, ids, now).await?;
        Ok(Some(reports.into_iter().map(Ok).collect()))
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
                    reports[*at] = Some(decision.report(id));
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
}
