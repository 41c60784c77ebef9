//! Owns group commit for new events written one at a time (the person's and
//! their agent's `CreateEvent`, with an idempotency key or without). Each
//! call queues its row and waits; one task takes every row waiting, reads
//! their people, writes the rows in one multi-row `INSERT … ON CONFLICT DO
//! NOTHING` on the writer and answers each call with its id once that has
//! committed. A row whose key was taken (a keyed call sent again, say by a
//! gateway after a core stopped) is answered with the event that holds the
//! key, all such rows read back in one query. The rows' people are read as
//! they are written (on Postgres through their gates, in the insert's own
//! statement, `events::insert_new_through_gates`): a row decided in a zone
//! or quiet hours its person has just left is not written, and its call is
//! told to decide again ([`Inserted::Moved`]), so that a new zone written
//! at the same moment never misses an event written in the old one. Alone,
//! a call costs one statement on Postgres, and on SQLite the people's read
//! and the insert; when many arrive together they share them, so the
//! writer's cost grows with the statements, not with the callers.
//!
//! Forming the groups, and their guards, are `storage::group_commit`'s: a
//! person is a lane, and a row weighs one. Nothing is acknowledged before
//! it is committed: a crash loses only calls that were never answered.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sqlx::AnyPool;

use super::events::{self, EventWrite, RowKey, Through};
use super::group_commit::{Apply, GroupCommit, Limits};
use super::{Backend, StoreError, users};
use chrono_tz::Tz;
use hado_domain::checkpoints::QuietHours;
use hado_domain::event::{EventSpec, Lifecycle};
use hado_domain::event_record::EventRecord;
use hado_domain::reminders::Reminders;
use hado_domain::user::UserRecord;

/// Rows one statement carries at most, and one person's calls that may
/// wait at once.
const LIMITS: Limits = Limits { calls: 256, weight: 256, per_lane: 256, what: "new events" };

/// One new event, owned, as it waits for its statement.
#[derive(Debug)]
pub struct NewEventRow {
    pub user_id: i64,
    pub source_id: i64,
    pub source_ref: String,
    pub topic: String,
    pub spec: EventSpec,
    pub lifecycle: Lifecycle,
    pub due_at: DateTime<Utc>,
    pub reminders: Reminders,
    pub next_check_at: Option<DateTime<Utc>>,
    pub now: DateTime<Utc>,
    /// The person's zone and quiet hours the row was decided in.
    pub zone: Tz,
    pub quiet: QuietHours,
}

impl NewEventRow {
    fn key(&self) -> RowKey<'_> {
        RowKey {
            user_id: self.user_id,
            source_id: self.source_id,
            source_ref: &self.source_ref,
            topic: &self.topic,
        }
    }

    fn write(&self) -> EventWrite<'_> {
        EventWrite {
            spec: &self.spec,
            lifecycle: self.lifecycle,
            due_at: self.due_at,
            reminders: self.reminders,
            next_check_at: self.next_check_at,
        }
    }
}

/// What became of one queued row.
#[derive(Debug)]
pub enum Inserted {
    /// The row was written, with this id.
    New(i64),
    /// Its key was taken: the event that holds it, as stored.
    Taken(Box<EventRecord>),
    /// Its person's zone or quiet hours changed since the row was decided:
    /// nothing was written; decide again for the person as they are now.
    Moved(Box<UserRecord>),
}

/// The queue in front of the grouping task.
pub(crate) type GroupedInserts = GroupCommit<Writer>;

/// Starts the grouping task on `writer`; it ends when the last handle is
/// dropped. Each `submit` inserts one event and returns its id once it is
/// committed, or the event that already holds its key.
pub(crate) fn start(writer: AnyPool) -> GroupedInserts {
    GroupCommit::start(Writer(writer), LIMITS)
}

/// The writer the rows go in through.
pub(crate) struct Writer(AnyPool);

impl Apply for Writer {
    type Call = NewEventRow;
    type Answer = Inserted;

    async fn apply(&self, group: &[NewEventRow]) -> Result<Vec<Inserted>, StoreError> {
        write(&self.0, group).await
    }

    fn weight(_: &NewEventRow) -> usize {
        1
    }

    fn lane(event: &NewEventRow) -> i64 {
        event.user_id
    }
}

/// The rows decided in their people's current settings inserted, the
/// others answered [`Inserted::Moved`], and the events whose keys were
/// taken read, if any were. On Postgres the people are read and the rows
/// inserted by one statement, its own transaction
/// ([`events::insert_new_through_gates`]); on SQLite the people are read
/// first on the writer, which is this one connection, so nothing else
/// writes between the read and the insert.
async fn write(writer: &AnyPool, group: &[NewEventRow]) -> Result<Vec<Inserted>, StoreError> {
    let mut connection = writer.acquire().await?;
    let mut ids: Vec<i64> = group.iter().map(|row| row.user_id).collect();
    ids.sort_unstable();
    ids.dedup();
    let (inserted, people) = if Backend::of(&connection).has_one_writer() {
        let people = by_id(users::people_for_writing(&mut *connection, &[], &ids).await?);
        let current: Vec<&NewEventRow> =
            group.iter().filter(|row| moved(&people, row).is_none()).collect();
        let rows: Vec<_> =
            current.iter().map(|event| (event.key(), event.write(), event.now)).collect();
        let mut ids = events::insert_new(&mut *connection, &rows).await?.into_iter();
        let inserted = group
            .iter()
            .map(|row| match moved(&people, row) {
                Some(_) => Through::Moved,
                None => ids.next().flatten().map_or(Through::Taken, Through::New),
            })
            .collect();
        (inserted, people)
    } else {
        let settings: Vec<events::DecidedFor> =
            group.iter().map(|row| events::DecidedFor::of(row.zone, row.quiet)).collect();
        let rows: Vec<_> = group
            .iter()
            .zip(&settings)
            .map(|(event, decided)| (event.key(), event.write(), event.now, decided))
            .collect();
        let (inserted, people) = events::insert_new_through_gates(&mut *connection, &rows).await?;
        (inserted, by_id(people))
    };
    answer(&mut *connection, group, inserted, &people).await
}

fn by_id(people: Vec<UserRecord>) -> HashMap<i64, UserRecord> {
    people.into_iter().map(|person| (person.id, person)).collect()
}

/// The person `row` was written for, when their zone or quiet hours are no
/// longer those it was decided in.
fn moved<'p>(people: &'p HashMap<i64, UserRecord>, row: &NewEventRow) -> Option<&'p UserRecord> {
    people.get(&row.user_id).filter(|person| person.zone != row.zone || person.quiet != row.quiet)
}

/// Each row's answer: its id when inserted; its person as they are now
/// when moved; the event that holds its key when taken (all such read in
/// one query).
async fn answer(
    connection: &mut impl super::Connection,
    group: &[NewEventRow],
    inserted: Vec<Through>,
    people: &HashMap<i64, UserRecord>,
) -> Result<Vec<Inserted>, StoreError> {
    let taken: Vec<RowKey<'_>> = group
        .iter()
        .zip(&inserted)
        .filter(|(_, through)| **through == Through::Taken)
        .map(|(row, _)| row.key())
        .collect();
    let holders = events::find_taken(&mut *connection, &taken, events::ReadFor::Answering).await?;
    group
        .iter()
        .zip(inserted)
        .map(|(row, through)| match through {
            Through::New(id) => Ok(Inserted::New(id)),
            Through::Moved => {
                let person = people.get(&row.user_id).ok_or_else(|| {
                    StoreError::Corrupt(format!(
                        "person {} of a new event was not found",
                        row.user_id
                    ))
                })?;
                Ok(Inserted::Moved(Box::new(person.clone())))
            }
            Through::Taken => {
                let key = row.key();
                // A key given twice in the group is answered twice.
                let holder = holders.get(&key.owned()).cloned().ok_or_else(|| {
                    StoreError::Corrupt(format!(
                        "the key of {} was taken, and no event holds it",
                        key.source_ref
                    ))
                })?;
                Ok(Inserted::Taken(Box::new(holder)))
            }
        })
        .collect()
}
