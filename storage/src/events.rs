//! Owns the SQL for events: lookups by id (by key: `keys`), writes
//! (`write`, `update`), what an inbox reads (`lists`), and the scheduler's
//! claim of due rows.

use chrono::{DateTime, Utc};
use futures::TryStreamExt;
use futures::stream::BoxStream;
use sqlx::Row;

use super::arrays::ArrayText;
use super::records::{millis, select_events, with_states};
use super::{Backend, Placeholders, Store, StoreError};
use crate::Connection;
use crate::records::FromRow;
use hado_domain::event::{EventSpec, Lifecycle};
use hado_domain::event_record::EventRecord;
use hado_domain::reminders::Reminders;

/// An event's unique key: a source's ref and topic for one user.
#[derive(Clone, Copy, Debug)]
pub struct RowKey<'a> {
    pub user_id: i64,
    pub source_id: i64,
    pub source_ref: &'a str,
    pub topic: &'a str,
}

/// A [`RowKey`] that owns its words: (source, user, ref, topic).
pub type OwnedKey = (i64, i64, String, String);

impl<'a> RowKey<'a> {
    pub fn owned(&self) -> OwnedKey {
        (self.source_id, self.user_id, self.source_ref.to_owned(), self.topic.to_owned())
    }

    /// The order writes take keys in, by the unique index's columns: two
    /// transactions that write the same keys in it never each hold one the
    /// other waits for (a deadlock, which Postgres ends after a second by
    /// failing one).
    pub fn order(&self) -> (i64, i64, &'a str, &'a str) {
        (self.source_id, self.user_id, self.source_ref, self.topic)
    }
}

/// Everything written when an event's fields change.
#[derive(Clone, Copy, Debug)]
pub struct EventWrite<'a> {
    pub spec: &'a EventSpec,
    pub lifecycle: Lifecycle,
    /// The due moment in the user's current zone, which orders the inbox.
    pub due_at: DateTime<Utc>,
    pub reminders: Reminders,
    pub next_check_at: Option<DateTime<Utc>>,
}

fn optional_millis(instant: Option<DateTime<Utc>>) -> Option<i64> {
    instant.map(millis)
}

/// Decodes each row as it arrives: a long list never holds its rows (each
/// carries its 31 columns' names and types) and its records at once.
async fn decode_all(
    mut rows: BoxStream<'_, Result<sqlx::any::AnyRow, sqlx::Error>>,
) -> Result<Vec<EventRecord>, StoreError> {
    let mut records = Vec::new();
    while let Some(row) = rows.try_next().await? {
        records.push(EventRecord::from_row(&row)?);
    }
    Ok(records)
}

/// What a read of stored events is for. A read that a write in the same transaction decides
/// from takes its rows on Postgres (`FOR NO KEY UPDATE`, the lock its `UPDATE` takes, in id
/// order): a change committed between the read and the write is waited for and read, not
/// written over. SQLite's one writer orders every write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadFor {
    /// The rows are answered, not written.
    Answering,
    /// The transaction writes the rows from what it read.
    Changing,
}

/// Events by id, in one query: on Postgres the ids travel as one array,
/// however many there are (a batch's found keys can be hundreds).
pub async fn find_by_ids(
    connection: &mut impl Connection,
    ids: &[i64],
    read: ReadFor,
) -> Result<Vec<EventRecord>, StoreError> {
    read_by_ids(connection.sql(), ids, read).await
}

async fn read_by_ids(
    connection: &mut sqlx::AnyConnection,
    ids: &[i64],
    read: ReadFor,
) -> Result<Vec<EventRecord>, StoreError> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    if Backend::of(connection) == Backend::Postgres {
        let mut array = ArrayText::new();
        ids.iter().for_each(|&id| array.number(Some(id)));
        let query = match read {
            ReadFor::Answering => select_events!("WHERE e.id = ANY($1::bigint[])"),
            ReadFor::Changing => select_events!(
                "WHERE e.id = ANY($1::bigint[]) ORDER BY e.id " "FOR NO KEY UPDATE OF e"
            ),
        };
        return decode_all(
            sqlx::query(query)
                // Unnamed: group commit's connections run it (`GROUPED_SETUP`).
                .persistent(false)
                .bind(array.finish())
                .fetch(&mut *connection),
        )
        .await;
    }
    let mut placeholders = Placeholders::for_connection(connection);
    let query = format!(concat!(select_events!(), "WHERE e.id IN {}"), placeholders.row(ids.len()));
    let mut statement = sqlx::query(sqlx::AssertSqlSafe(query));
    for id in ids {
        statement = statement.bind(*id);
    }
    decode_all(statement.fetch(&mut *connection)).await
}

/// One of the user's events by id; another user's id finds nothing. Read
/// for a change, it is taken on Postgres until the transaction ends
/// ([`ReadFor`]).
pub async fn find_for_user(
    connection: &mut impl Connection,
    id: i64,
    user_id: i64,
    read: ReadFor,
) -> Result<Option<EventRecord>, StoreError> {
    let connection = connection.sql();
    let query = match (read, Backend::of(connection)) {
        (ReadFor::Changing, Backend::Postgres) => {
            select_events!("WHERE e.id = $1 AND e.user_id = $2 FOR NO KEY UPDATE OF e")
        }
        _ => select_events!("WHERE e.id = $1 AND e.user_id = $2"),
    };
    let row = sqlx::query(query).bind(id).bind(user_id).fetch_optional(&mut *connection).await?;
    row.as_ref().map(EventRecord::from_row).transpose()
}

mod columns;
mod keys;
mod lists;
mod update;
mod write;

pub use keys::{find_by_key, find_taken};
pub use lists::{After, active_page, archive, inbox_counts};
pub use update::{update, update_many};
pub use write::{
    DecidedFor, LifecycleWrite, Through, insert, insert_many, insert_new, insert_new_through_gates,
    save_lifecycle, save_lifecycles,
};

/// A user's open events, for recomputing them after a zone change. On Postgres they stay
/// locked until the transaction ends, taken in id order as every writer that takes several
/// takes them: a write to one under way (a withdrawal, the scheduler's pass) is waited for
/// and read as it was committed, so that the recomputed event does not undo it.
pub async fn open_for_user(
    connection: &mut impl Connection,
    user_id: i64,
) -> Result<Vec<EventRecord>, StoreError> {
    let connection = connection.sql();
    let lock = match Backend::of(connection) {
        Backend::Sqlite => "",
        Backend::Postgres => " FOR UPDATE OF e",
    };
    let query = format!(
        "{}{lock}",
        with_states!(select_events!(
            "WHERE e.user_id = $1 AND e.state IN ({active}) ORDER BY e.id"
        ))
    );
    decode_all(sqlx::query(sqlx::AssertSqlSafe(query)).bind(user_id).fetch(&mut *connection)).await
}

/// Claims up to `limit` events whose next check is due. On Postgres the rows
/// stay locked until the transaction ends and other replicas skip them, so
/// that several cores share the work without doing any of it twice.
pub async fn claim_due(
    connection: &mut impl Connection,
    backend: Backend,
    now: DateTime<Utc>,
    limit: i64,
) -> Result<Vec<EventRecord>, StoreError> {
    let connection = connection.sql();
    let query = match backend {
        Backend::Sqlite => {
            select_events!("WHERE e.next_check_at <= $1 ORDER BY e.next_check_at LIMIT $2")
        }
        Backend::Postgres => {
            select_events!(
                "WHERE e.next_check_at <= $1 ORDER BY e.next_check_at LIMIT $2 FOR UPDATE OF e SKIP LOCKED"
            )
        }
    };
    decode_all(sqlx::query(query).bind(millis(now)).bind(limit).fetch(&mut *connection)).await
}

/// The attention count of the user `$1`.
pub(super) static ATTENTION_COUNT_QUERY: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| {
        format!(
            "SELECT {} AS count FROM users u WHERE u.id = $1",
            super::records::attention_count()
        )
    });

/// How many of the user's open events need attention: read only where the
/// count is shown (a profile, an inbox), never to authenticate a call.
pub async fn attention_count(
    connection: &mut impl Connection,
    user_id: i64,
) -> Result<i64, StoreError> {
    let connection = connection.sql();
    let row = sqlx::query(ATTENTION_COUNT_QUERY.as_str())
        .bind(user_id)
        .fetch_one(&mut *connection)
        .await?;
    Ok(row.try_get("count")?)
}

impl Store {
    /// A source's events for one user, all of them or only the given refs.
    pub async fn list_for_source(
        &self,
        source_id: i64,
        user_id: i64,
        refs: &[String],
    ) -> Result<Vec<EventRecord>, StoreError> {
        let rows = if refs.is_empty() {
            sqlx::query(select_events!(
                "WHERE e.source_id = $1 AND e.user_id = $2 ORDER BY e.due_ms, e.id"
            ))
            .bind(source_id)
            .bind(user_id)
            .fetch(self.reader())
        } else {
            let placeholders: Vec<String> =
                (0..refs.len()).map(|index| format!("${}", index + 3)).collect();
            let sql = format!(
                "{} WHERE e.source_id = $1 AND e.user_id = $2 AND e.source_ref IN ({}) ORDER BY e.due_ms, e.id",
                select_events!(),
                placeholders.join(", ")
            );
            let mut query = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(source_id).bind(user_id);
            for source_ref in refs {
                query = query.bind(source_ref.as_str());
            }
            query.fetch(self.reader())
        };
        decode_all(rows).await
    }

    /// The earliest pending check, so that the scheduler knows how long it
    /// may sleep.
    pub async fn earliest_check(&self) -> Result<Option<DateTime<Utc>>, StoreError> {
        let row = sqlx::query(
            "SELECT MIN(next_check_at) AS next FROM events WHERE next_check_at IS NOT NULL",
        )
        .fetch_one(self.reader())
        .await?;
        let next: Option<i64> = row.try_get("next")?;
        next.map(super::records::instant).transpose()
    }
}
