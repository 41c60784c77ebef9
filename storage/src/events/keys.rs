//! Owns finding stored events by their keys: one key, or the keys a
//! group's insert found taken, a few hundred to a statement.

use super::{OwnedKey, ReadFor, RowKey, decode_all, read_by_ids};
use crate::arrays::ArrayText;
use crate::records::{FromRow, select_events};
use crate::{Backend, Connection, Placeholders, StoreError};
use hado_domain::event_record::EventRecord;

pub async fn find_by_key(
    connection: &mut impl Connection,
    key: RowKey<'_>,
) -> Result<Option<EventRecord>, StoreError> {
    let connection = connection.sql();
    let row = sqlx::query(select_events!(
        "WHERE e.source_id = $1 AND e.user_id = $2 AND e.source_ref = $3 AND e.topic = $4"
    ))
    // Unnamed: group commit's connections run it (`GROUPED_SETUP`).
    .persistent(false)
    .bind(key.source_id)
    .bind(key.user_id)
    .bind(key.source_ref)
    .bind(key.topic)
    .fetch_optional(&mut *connection)
    .await?;
    row.as_ref().map(EventRecord::from_row).transpose()
}

/// The events that hold keys an insert found taken, by key: one lookup
/// per source among them (a group of the person's own events is of one),
/// and on Postgres one read of the rows found.
pub async fn find_taken(
    connection: &mut impl Connection,
    keys: &[RowKey<'_>],
    read: ReadFor,
) -> Result<std::collections::HashMap<OwnedKey, EventRecord>, StoreError> {
    let connection = connection.sql();
    let mut by_source: std::collections::BTreeMap<i64, Vec<(i64, &str, &str)>> =
        std::collections::BTreeMap::new();
    for key in keys {
        by_source.entry(key.source_id).or_default().push((key.user_id, key.source_ref, key.topic));
    }
    let records = match Backend::of(connection) {
        Backend::Sqlite => {
            let mut records = Vec::with_capacity(keys.len());
            for (source_id, keys) in by_source {
                records.extend(find_by_keys(connection, source_id, &keys).await?);
            }
            records
        }
        Backend::Postgres => {
            let mut ids = Vec::with_capacity(keys.len());
            for (source_id, keys) in by_source {
                ids.extend(ids_by_keys(connection, source_id, &keys).await?);
            }
            read_by_ids(connection, &ids, read).await?
        }
    };
    Ok(records
        .into_iter()
        .map(|record| {
            let key =
                (record.source_id, record.user_id, record.source_ref.clone(), record.topic.clone());
            (key, record)
        })
        .collect())
}

/// How many keys one lookup carries (three parameters each).
const KEYS_PER_QUERY: usize = 300;

// Each planner walks the unique key's index once per key when asked its own way. SQLite: a
// row-value `IN` list, a few hundred keys to a query. Postgres: one probe of the index per key (a
// `LATERAL` subquery with `LIMIT 1`, which the planner cannot turn into a join of its own
// choosing), the keys spread from three arrays, and only the ids come back; the whole rows are
// read by id, and only when some keys were found (for a batch of new events, none are). Joined as
// a whole, `unnest`'s guess of ten rows let Postgres, before its statistics caught up with a
// growing table, join the keys to the users first and walk every event of a user for each key, a
// thousand times slower; an `IN` list was five times slower. On Postgres the statement is also
// planned afresh each time (not kept prepared): a connection's cached plan, made while the table
// was nearly empty, chose the person's `closed_at` index (the two cost the same on an empty table)
// and kept walking all of their events per key as the table grew. On a fresh database the
// benchmark's one-event upserts fell from 3,950/s to 550/s over thirty rounds of 3,200 events
// (BENCHMARKS.md, "The write path").

/// SQLite: the existing events of one source under the given (user, ref,
/// topic) keys, in one query per few hundred keys.
async fn find_by_keys(
    connection: &mut sqlx::AnyConnection,
    source_id: i64,
    keys: &[(i64, &str, &str)],
) -> Result<Vec<EventRecord>, StoreError> {
    let mut found = Vec::with_capacity(keys.len());
    for chunk in keys.chunks(KEYS_PER_QUERY) {
        let mut placeholders = Placeholders::for_connection(connection);
        let query = format!(
            concat!(
                select_events!(),
                "WHERE (e.user_id, e.source_ref, e.topic) IN ({}) AND e.source_id = ?"
            ),
            placeholders.rows(chunk.len(), 3)
        );
        let mut statement = sqlx::query(sqlx::AssertSqlSafe(query));
        for (user_id, source_ref, topic) in chunk {
            statement =
                statement.bind(*user_id).bind(source_ref.to_string()).bind(topic.to_string());
        }
        found.extend(decode_all(statement.bind(source_id).fetch(&mut *connection)).await?);
    }
    Ok(found)
}

/// Postgres: the ids of one source's events under the given (user, ref,
/// topic) keys, in one statement.
async fn ids_by_keys(
    connection: &mut sqlx::AnyConnection,
    source_id: i64,
    keys: &[(i64, &str, &str)],
) -> Result<Vec<i64>, StoreError> {
    let (mut user_ids, mut source_refs, mut topics) =
        (ArrayText::new(), ArrayText::new(), ArrayText::new());
    for &(user_id, source_ref, topic) in keys {
        user_ids.number(Some(user_id));
        source_refs.text(Some(source_ref));
        topics.text(Some(topic));
    }
    Ok(sqlx::query_scalar(
        "SELECT e.id FROM unnest($1::bigint[], $2::text[], $3::text[]) AS k (user_id, source_ref, topic) \
         CROSS JOIN LATERAL (SELECT id FROM events \
           WHERE source_id = $4 AND user_id = k.user_id AND source_ref = k.source_ref AND topic = k.topic LIMIT 1) AS e",
    )
    .persistent(false)
    .bind(user_ids.finish())
    .bind(source_refs.finish())
    .bind(topics.finish())
    .bind(source_id)
    .fetch_all(&mut *connection)
    .await?)
}
