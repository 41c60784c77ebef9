//! Owns group commit for new events written one at a time (the person's and
//! their agent's `CreateEvent`, with an idempotency key or without). Each
//! call queues its row and waits; one task takes every row waiting, writes
//! them in one multi-row `INSERT … ON CONFLICT DO NOTHING` on the writer (a
//! single statement, so a single commit) and answers each call with its id
//! once that statement has committed. A row whose key was taken (a keyed
//! call sent again, say by a gateway after a core stopped) is answered with
//! the event that holds the key, all such rows read back in one query.
//! Alone, a call costs one statement, one round trip; when many arrive
//! together they share it, so the writer's cost grows with the statements,
//! not with the callers.
//!
//! Nothing is acknowledged before it is committed: a crash loses only calls
//! that were never answered.

use chrono::{DateTime, Utc};
use sqlx::AnyPool;
use tokio::sync::{mpsc, oneshot};

use super::StoreError;
use super::events::{self, EventWrite, RowKey};
use crate::domain::event::{EventSpec, Lifecycle};
use crate::domain::event_record::EventRecord;
use crate::domain::reminders::Reminders;

/// Rows one statement carries at most.
const GROUP: usize = 256;
/// Calls that may wait before a new one waits for room.
const QUEUE: usize = 4096;

/// One new event, owned, as it waits for its statement.
#[derive(Debug)]
pub(crate) struct NewEventRow {
    pub(crate) user_id: i64,
    pub(crate) source_id: i64,
    pub(crate) source_ref: String,
    pub(crate) topic: String,
    pub(crate) spec: EventSpec,
    pub(crate) lifecycle: Lifecycle,
    pub(crate) due_at: DateTime<Utc>,
    pub(crate) reminders: Reminders,
    pub(crate) next_check_at: Option<DateTime<Utc>>,
    pub(crate) now: DateTime<Utc>,
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
pub(crate) enum Inserted {
    /// The row was written, with this id.
    New(i64),
    /// Its key was taken: the event that holds it, as stored.
    Taken(Box<EventRecord>),
}

type Reply = oneshot::Sender<Result<Inserted, StoreError>>;

/// The queue in front of the grouping task.
#[derive(Clone, Debug)]
pub(crate) struct GroupedInserts {
    queue: mpsc::Sender<(NewEventRow, Reply)>,
}

impl GroupedInserts {
    /// Starts the grouping task on `writer`; it ends when the last handle is
    /// dropped.
    pub(crate) fn start(writer: AnyPool) -> Self {
        let (queue, waiting) = mpsc::channel(QUEUE);
        tokio::spawn(run(writer, waiting));
        Self { queue }
    }

    /// Inserts one event and returns its id once it is committed, or the
    /// event that already holds its key.
    pub(crate) async fn insert(&self, event: NewEventRow) -> Result<Inserted, StoreError> {
        let (reply, answer) = oneshot::channel();
        self.queue.send((event, reply)).await.map_err(|_| StoreError::Closed)?;
        answer.await.map_err(|_| StoreError::Closed)?
    }
}

async fn run(writer: AnyPool, mut waiting: mpsc::Receiver<(NewEventRow, Reply)>) {
    let mut group = Vec::with_capacity(GROUP);
    while waiting.recv_many(&mut group, GROUP).await > 0 {
        let (events, replies): (Vec<NewEventRow>, Vec<Reply>) = group.drain(..).unzip();
        match write(&writer, &events).await {
            Ok(answers) => {
                for (reply, answer) in replies.into_iter().zip(answers) {
                    let _ = reply.send(Ok(answer));
                }
            }
            // One bad row must not fail its neighbours: each is tried alone.
            Err(_) if events.len() > 1 => {
                for (event, reply) in events.iter().zip(replies) {
                    let alone = write(&writer, std::slice::from_ref(event)).await;
                    let _ = reply.send(alone.map(|answers| {
                        answers.into_iter().next().expect("one answer for one row")
                    }));
                }
            }
            Err(error) => {
                if let Some(reply) = replies.into_iter().next() {
                    let _ = reply.send(Err(error));
                }
            }
        }
    }
}

/// One statement for the whole group, committed on its own, and one read
/// of the events whose keys were taken, if any were.
async fn write(writer: &AnyPool, group: &[NewEventRow]) -> Result<Vec<Inserted>, StoreError> {
    let rows: Vec<_> = group.iter().map(|event| (event.key(), event.write(), event.now)).collect();
    let mut connection = writer.acquire().await?;
    let ids = events::insert_new(&mut connection, &rows).await?;
    let taken: Vec<RowKey<'_>> =
        group.iter().zip(&ids).filter(|(_, id)| id.is_none()).map(|(row, _)| row.key()).collect();
    let holders = events::find_taken(&mut connection, &taken).await?;
    group
        .iter()
        .zip(ids)
        .map(|(row, id)| match id {
            Some(id) => Ok(Inserted::New(id)),
            None => {
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
