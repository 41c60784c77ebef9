//! Owns group commit for sources' upserts (REST `POST /api/events`, gRPC
//! `UpsertEvents`). Each call, validated whole, queues its items and waits;
//! one task takes every call waiting and applies them all in one
//! transaction: their people read in one statement, their stored events in
//! one per source, their new rows in one `INSERT`, and one commit. Each
//! call is answered with its own reports once that commit is done.
//!
//! A call that arrives alone costs what it did before grouping; calls that
//! arrive together (up to 64 calls and 1000 items) share the writer's
//! statements and its commit, so the writer's cost grows with the groups,
//! not with the callers. A group that the database refuses is applied
//! again a call at a time, so that one call's bad row never fails its
//! neighbours; a database that cannot be reached fails the whole group at
//! once. A call whose caller has gone is not applied. Nothing is
//! acknowledged before it is committed.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use tokio::sync::{mpsc, oneshot};

use crate::clock::Clock;
use crate::domain::event::EventSpec;
use crate::domain::fields::{Login, SourceRef, Topic};
use crate::domain::profile::Locale;
use crate::domain::reminders;
use crate::domain::user::UserRecord;
use crate::engine::upsert::{self, UpsertReport};
use crate::loops::Alarm;
use crate::storage::{EventWrite, RowKey, Store, StoreError, events, users};

/// Calls one group applies at most.
const CALLS: usize = 64;
/// Items one group applies at most: a call that would pass it waits for
/// the next group (a call is never split), so that one transaction holds
/// the writer about as long as one full batch does.
const ITEMS: usize = 1000;
/// Calls that may wait before a new one waits for room.
const QUEUE: usize = 1024;

/// One validated item of a source's call.
pub(super) struct Item {
    pub(super) source_id: i64,
    pub(super) login: Login,
    pub(super) source_ref: SourceRef,
    pub(super) topic: Topic,
    pub(super) spec: EventSpec,
}

type Reply = oneshot::Sender<Result<Vec<UpsertReport>, StoreError>>;
type Call = (Vec<Item>, Reply);

/// What the grouping task needs of the engine.
struct Applier {
    store: Store,
    clock: Arc<dyn Clock>,
    defaults: (Tz, Locale),
    alarm: Arc<Alarm>,
}

/// The queue in front of the grouping task.
pub(super) struct UpsertGroups {
    queue: mpsc::Sender<Call>,
}

impl UpsertGroups {
    /// Starts the grouping task; it ends when the engine is dropped.
    pub(super) fn start(
        store: Store,
        clock: Arc<dyn Clock>,
        defaults: (Tz, Locale),
        alarm: Arc<Alarm>,
    ) -> Self {
        let (queue, waiting) = mpsc::channel(QUEUE);
        tokio::spawn(run(Applier { store, clock, defaults, alarm }, waiting));
        Self { queue }
    }

    /// Applies one call's items and returns their reports once committed.
    pub(super) async fn apply(&self, items: Vec<Item>) -> Result<Vec<UpsertReport>, StoreError> {
        let (reply, answer) = oneshot::channel();
        self.queue.send((items, reply)).await.map_err(|_| StoreError::Closed)?;
        answer.await.map_err(|_| StoreError::Closed)?
    }
}

async fn run(applier: Applier, mut waiting: mpsc::Receiver<Call>) {
    let mut next: Option<Call> = None;
    loop {
        let first = match next.take() {
            Some(call) => call,
            None => match waiting.recv().await {
                Some(call) => call,
                None => return,
            },
        };
        let mut items = first.0.len();
        let mut group = vec![first];
        while group.len() < CALLS && items < ITEMS {
            let Ok(call) = waiting.try_recv() else { break };
            if items + call.0.len() > ITEMS {
                next = Some(call);
                break;
            }
            items += call.0.len();
            group.push(call);
        }
        // A caller that has gone (its deadline passed) was told its call
        // failed: applying it now could undo what it did since (withdrawn
        // the same key, say), so it is not applied.
        group.retain(|(_, reply)| !reply.is_closed());
        if !group.is_empty() {
            apply_group(&applier, group).await;
        }
    }
}

/// Applies one group and answers its callers.
async fn apply_group(applier: &Applier, group: Vec<Call>) {
    let (calls, replies): (Vec<Vec<Item>>, Vec<Reply>) = group.into_iter().unzip();
    let error = match applier.apply_guarded(&calls).await {
        Ok(mut reports) => {
            for (call, reply) in calls.iter().zip(replies) {
                let rest = reports.split_off(call.len());
                let _ = reply.send(Ok(std::mem::replace(&mut reports, rest)));
            }
            return;
        }
        Err(error) => error,
    };
    if calls.len() > 1 && error.for_another_caller().is_none() {
        // The database refused a statement: one call's rows may be the
        // cause, so each call is applied alone, until the database is
        // found unavailable, which then answers every call left.
        let mut away: Option<StoreError> = None;
        for (call, reply) in calls.iter().zip(replies) {
            if reply.is_closed() {
                continue;
            }
            let answer = match &away {
                Some(error) => Err(error.for_another_caller().unwrap_or(StoreError::Closed)),
                None => applier.apply_guarded(std::slice::from_ref(call)).await,
            };
            if let Err(error) = &answer {
                away = away.or_else(|| error.for_another_caller());
            }
            let _ = reply.send(answer);
        }
        return;
    }
    // One call, or a database that cannot be reached: every caller is
    // answered with the failure.
    let mut errors: Vec<StoreError> = (1..replies.len())
        .map(|_| error.for_another_caller().unwrap_or(StoreError::Closed))
        .collect();
    errors.push(error);
    for (reply, error) in replies.into_iter().zip(errors) {
        let _ = reply.send(Err(error));
    }
}

impl Applier {
    /// [`Applier::apply`], with a panic inside it answered as a failure of
    /// this group (its transaction is rolled back as it is dropped), so
    /// that the task lives on for the calls after it.
    async fn apply_guarded(&self, calls: &[Vec<Item>]) -> Result<Vec<UpsertReport>, StoreError> {
        use futures::FutureExt;
        std::panic::AssertUnwindSafe(self.apply(calls)).catch_unwind().await.unwrap_or_else(|_| {
            tracing::error!("applying sources' upserts panicked; their callers are told");
            Err(StoreError::Failed("applying the upserts failed inside core".to_owned()))
        })
    }

    /// Applies the calls' items, in order, in one transaction; the reports
    /// come back in the same order.
    async fn apply(&self, calls: &[Vec<Item>]) -> Result<Vec<UpsertReport>, StoreError> {
        let items: Vec<&Item> = calls.iter().flatten().collect();
        let now = self.clock.now();
        let mut transaction = self.store.begin_write().await?;
        let people = self.people(&mut transaction, &items, now).await?;
        let keys: Vec<RowKey<'_>> = items
            .iter()
            .map(|item| RowKey {
                user_id: people[item.login.as_str()].id,
                source_id: item.source_id,
                source_ref: item.source_ref.as_str(),
                topic: item.topic.as_str(),
            })
            .collect();
        // Every stored event the group names, in one query per source.
        let mut stored = events::find_taken(&mut transaction, &keys).await?;
        let mut reports = Vec::with_capacity(items.len());
        // New events wait here and go in together, a few hundred rows to a
        // statement; their reports wait for their ids.
        let mut inserts: Vec<(RowKey<'_>, EventWrite<'_>, usize)> = Vec::new();
        let mut seen = HashSet::new();
        let mut earliest_check = None;
        for (item, key) in items.iter().zip(&keys) {
            let user = &people[item.login.as_str()];
            let existing = if seen.insert(key.owned()) {
                stored.remove(&key.owned())
            } else {
                // A key named twice (in one call or two) meets its first write.
                upsert::insert_waiting(&mut transaction, &mut inserts, &mut reports, now).await?;
                events::find_by_key(&mut transaction, *key).await?
            };
            let decision = upsert::decide(user, existing.as_ref(), &item.spec, now);
            earliest_check = reminders::earliest(earliest_check, decision.next_check_at);
            match existing {
                None => {
                    inserts.push((*key, decision.write(&item.spec), reports.len()));
                    reports.push(UpsertReport {
                        id: 0,
                        outcome: decision.outcome,
                        state: decision.lifecycle.state,
                    });
                }
                Some(record) => reports.push(
                    upsert::write_decision(
                        &mut transaction,
                        *key,
                        Some(&record),
                        &item.spec,
                        &decision,
                        now,
                    )
                    .await?,
                ),
            }
        }
        upsert::insert_waiting(&mut transaction, &mut inserts, &mut reports, now).await?;
        transaction.commit().await?;
        self.alarm.checks_written(earliest_check, now);
        Ok(reports)
    }

    /// The group's people, by login: the known ones read together, and a
    /// newcomer (a source may write for someone who has never opened the
    /// inbox) made with the default settings.
    async fn people(
        &self,
        connection: &mut sqlx::AnyConnection,
        items: &[&Item],
        now: DateTime<Utc>,
    ) -> Result<HashMap<String, UserRecord>, StoreError> {
        let mut logins: Vec<&str> = items.iter().map(|item| item.login.as_str()).collect();
        logins.sort_unstable();
        logins.dedup();
        let mut people = users::find_users(connection, &logins).await?;
        for item in items {
            if !people.contains_key(item.login.as_str()) {
                let user = users::ensure_user(connection, &item.login, self.defaults, now).await?;
                people.insert(item.login.as_str().to_owned(), user);
            }
        }
        Ok(people)
    }
}
