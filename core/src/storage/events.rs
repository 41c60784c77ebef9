//! Owns the SQL for events: lookups by key and by id, the inbox and archive
//! lists, writes, and the scheduler's claim of due rows.

use chrono::{DateTime, Utc};
use sqlx::{AnyConnection, Row};

use super::records::{EventRecord, millis, select_events, with_states};
use super::{Backend, Placeholders, Store, StoreError};
use crate::domain::event::{EventSpec, Lifecycle};
use crate::domain::reminders::Reminders;
use crate::domain::state::State;
use crate::domain::time::format_date;

/// The archive shows at most this many events.
pub(crate) const ARCHIVE_LIMIT: i64 = 100;

/// An event's unique key: a source's ref and topic for one user.
#[derive(Clone, Copy, Debug)]
pub(crate) struct EventKey<'a> {
    pub(crate) user_id: i64,
    pub(crate) source_id: i64,
    pub(crate) source_ref: &'a str,
    pub(crate) topic: &'a str,
}

/// Everything written when an event's fields change.
#[derive(Clone, Copy, Debug)]
pub(crate) struct EventWrite<'a> {
    pub(crate) spec: &'a EventSpec,
    pub(crate) lifecycle: Lifecycle,
    /// The due moment in the user's current zone, which orders the inbox.
    pub(crate) due_at: DateTime<Utc>,
    pub(crate) reminders: Reminders,
    pub(crate) next_check_at: Option<DateTime<Utc>>,
}

fn optional_millis(instant: Option<DateTime<Utc>>) -> Option<i64> {
    instant.map(millis)
}

fn decode_all(rows: Vec<sqlx::any::AnyRow>) -> Result<Vec<EventRecord>, StoreError> {
    rows.iter().map(EventRecord::from_row).collect()
}

pub(crate) async fn find_by_key(connection: &mut AnyConnection, key: EventKey<'_>) -> Result<Option<EventRecord>, StoreError> {
    let row = sqlx::query(select_events!("WHERE e.source_id = $1 AND e.user_id = $2 AND e.source_ref = $3 AND e.topic = $4"))
        .bind(key.source_id)
        .bind(key.user_id)
        .bind(key.source_ref)
        .bind(key.topic)
        .fetch_optional(&mut *connection)
        .await?;
    row.as_ref().map(EventRecord::from_row).transpose()
}

/// How many keys one lookup carries (three parameters each).
const KEYS_PER_QUERY: usize = 300;

/// The existing events of one source under the given (user, ref, topic)
/// keys, in one query per few hundred keys.
pub(crate) async fn find_by_keys(
    connection: &mut AnyConnection,
    source_id: i64,
    keys: &[(i64, &str, &str)],
) -> Result<std::collections::HashMap<(i64, String, String), EventRecord>, StoreError> {
    let mut found = std::collections::HashMap::with_capacity(keys.len());
    let mut keep = |rows: Vec<sqlx::any::AnyRow>| -> Result<(), StoreError> {
        for row in rows {
            let record = EventRecord::from_row(&row)?;
            found.insert((record.user_id, record.source_ref.clone(), record.topic.clone()), record);
        }
        Ok(())
    };
    match Backend::of(connection) {
        // Each planner walks the unique key's index once per key when asked
        // its own way: SQLite for a row-value `IN` list, a few hundred keys
        // to a query; Postgres for a join with the keys, all of them in one
        // JSON parameter (an `IN` list was five times slower, and a `VALUES`
        // list of bound keys three times, measured).
        Backend::Sqlite => {
            for chunk in keys.chunks(KEYS_PER_QUERY) {
                let mut placeholders = Placeholders::for_connection(connection);
                let query = format!(
                    concat!(select_events!(), "WHERE (e.user_id, e.source_ref, e.topic) IN ({}) AND e.source_id = ?"),
                    placeholders.rows(chunk.len(), 3)
                );
                let mut statement = sqlx::query(sqlx::AssertSqlSafe(query));
                for (user_id, source_ref, topic) in chunk {
                    statement = statement.bind(*user_id).bind(source_ref.to_string()).bind(topic.to_string());
                }
                keep(statement.bind(source_id).fetch_all(&mut *connection).await?)?;
            }
        }
        Backend::Postgres => {
            #[derive(serde::Serialize)]
            struct Key<'a> {
                user_id: i64,
                source_ref: &'a str,
                topic: &'a str,
            }
            let keys: Vec<Key<'_>> = keys.iter().map(|&(user_id, source_ref, topic)| Key { user_id, source_ref, topic }).collect();
            let json = serde_json::to_string(&keys).map_err(|error| StoreError::Corrupt(format!("keys cannot be written as JSON: {error}")))?;
            let query = concat!(
                select_events!(),
                "JOIN json_to_recordset($1::json) AS k(user_id bigint, source_ref text, topic text) \
                 ON e.user_id = k.user_id AND e.source_ref = k.source_ref AND e.topic = k.topic WHERE e.source_id = $2"
            );
            keep(sqlx::query(query).bind(json).bind(source_id).fetch_all(&mut *connection).await?)?;
        }
    }
    Ok(found)
}

/// Events by id, in one query.
pub(crate) async fn find_by_ids(connection: &mut AnyConnection, ids: &[i64]) -> Result<Vec<EventRecord>, StoreError> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let mut placeholders = Placeholders::for_connection(connection);
    let query = format!(concat!(select_events!(), "WHERE e.id IN {}"), placeholders.row(ids.len()));
    let mut statement = sqlx::query(sqlx::AssertSqlSafe(query));
    for id in ids {
        statement = statement.bind(*id);
    }
    decode_all(statement.fetch_all(&mut *connection).await?)
}

/// One of the user's events by id; another user's id finds nothing.
pub(crate) async fn find_for_user(connection: &mut AnyConnection, id: i64, user_id: i64) -> Result<Option<EventRecord>, StoreError> {
    let row = sqlx::query(select_events!("WHERE e.id = $1 AND e.user_id = $2")).bind(id).bind(user_id).fetch_optional(&mut *connection).await?;
    row.as_ref().map(EventRecord::from_row).transpose()
}

type AnyQuery<'q> = sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments>;

/// Binds where an event stands, as every write of it names the columns:
/// state, quiet_until, closed_at, checkpoint_at, attention_since, repeat_at,
/// next_check_at.
fn bind_lifecycle<'q>(query: AnyQuery<'q>, lifecycle: &Lifecycle, reminders: &Reminders, next_check_at: Option<DateTime<Utc>>) -> AnyQuery<'q> {
    query
        .bind(lifecycle.state.as_str())
        .bind(optional_millis(lifecycle.quiet_until))
        .bind(optional_millis(lifecycle.closed_at))
        .bind(optional_millis(reminders.checkpoint))
        .bind(optional_millis(reminders.attention_since))
        .bind(optional_millis(reminders.repeat_at))
        .bind(optional_millis(next_check_at))
}

/// An event's written columns, in the order both [`insert_many`] and
/// [`update`] name them, as they are stored. (Written as JSON, an empty
/// column is left out, which reads as NULL.)
#[derive(serde::Serialize)]
struct Columns {
    title: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    subtitle: Option<String>,
    due_at: String,
    due_date: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    due_time: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    due_offset_min: Option<i64>,
    due_ms: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    fire_at: Option<String>,
    fire_date: String,
    after_due: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    done_label: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    deep_link: Option<String>,
    state: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    quiet_until: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    closed_at: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    checkpoint_at: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    attention_since: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    repeat_at: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    next_check_at: Option<i64>,
    updated_at: i64,
}

impl Columns {
    fn of(write: EventWrite<'_>, now: DateTime<Utc>) -> Self {
        let spec = write.spec;
        let stored_due = spec.due.at.to_stored();
        Self {
            title: spec.title.as_str().to_owned(),
            subtitle: spec.subtitle.clone(),
            due_at: spec.due.text.clone(),
            due_date: stored_due.date,
            due_time: stored_due.time,
            due_offset_min: stored_due.offset_minutes.map(i64::from),
            due_ms: millis(write.due_at),
            fire_at: spec.fire_at.map(format_date),
            fire_date: format_date(spec.fire_date()),
            after_due: spec.after_due.as_str(),
            done_label: spec.done_label.as_ref().map(|label| label.as_str().to_owned()),
            deep_link: spec.deep_link.as_ref().map(|link| link.as_str().to_owned()),
            state: write.lifecycle.state.as_str(),
            quiet_until: optional_millis(write.lifecycle.quiet_until),
            closed_at: optional_millis(write.lifecycle.closed_at),
            checkpoint_at: optional_millis(write.reminders.checkpoint),
            attention_since: optional_millis(write.reminders.attention_since),
            repeat_at: optional_millis(write.reminders.repeat_at),
            next_check_at: optional_millis(write.next_check_at),
            updated_at: millis(now),
        }
    }

    fn bind(self, query: AnyQuery<'_>) -> AnyQuery<'_> {
        query
            .bind(self.title)
            .bind(self.subtitle)
            .bind(self.due_at)
            .bind(self.due_date)
            .bind(self.due_time)
            .bind(self.due_offset_min)
            .bind(self.due_ms)
            .bind(self.fire_at)
            .bind(self.fire_date)
            .bind(self.after_due)
            .bind(self.done_label)
            .bind(self.deep_link)
            .bind(self.state)
            .bind(self.quiet_until)
            .bind(self.closed_at)
            .bind(self.checkpoint_at)
            .bind(self.attention_since)
            .bind(self.repeat_at)
            .bind(self.next_check_at)
            .bind(self.updated_at)
    }
}

/// A new event's row: its key, its [`Columns`], and when it was made.
#[derive(serde::Serialize)]
struct NewRow<'a> {
    user_id: i64,
    source_id: i64,
    source_ref: &'a str,
    topic: &'a str,
    #[serde(flatten)]
    columns: Columns,
    created_at: i64,
}

impl<'a> NewRow<'a> {
    fn of(key: EventKey<'a>, write: EventWrite<'_>, now: DateTime<Utc>) -> Self {
        let (user_id, source_id, source_ref, topic) = (key.user_id, key.source_id, key.source_ref, key.topic);
        Self { user_id, source_id, source_ref, topic, columns: Columns::of(write, now), created_at: millis(now) }
    }
}

/// The columns an insert names, in [`NewRow`]'s order.
const INSERT_COLUMNS: &str = "user_id, source_id, source_ref, topic, title, subtitle, due_at, due_date, due_time, \
     due_offset_min, due_ms, fire_at, fire_date, after_due, done_label, deep_link, state, quiet_until, closed_at, \
     checkpoint_at, attention_since, repeat_at, next_check_at, updated_at, created_at";
/// [`INSERT_COLUMNS`] with their Postgres types, for reading rows out of JSON.
const INSERT_COLUMN_TYPES: &str = "user_id bigint, source_id bigint, source_ref text, topic text, title text, subtitle text, \
     due_at text, due_date text, due_time text, due_offset_min bigint, due_ms bigint, fire_at text, fire_date text, after_due text, \
     done_label text, deep_link text, state text, quiet_until bigint, closed_at bigint, checkpoint_at bigint, attention_since bigint, \
     repeat_at bigint, next_check_at bigint, updated_at bigint, created_at bigint";
/// Parameters each inserted row binds.
const INSERT_PARAMETERS: usize = 25;
/// Rows one insert statement carries.
const ROWS_PER_INSERT: usize = 500;

pub(crate) async fn insert(connection: &mut AnyConnection, key: EventKey<'_>, write: EventWrite<'_>, now: DateTime<Utc>) -> Result<i64, StoreError> {
    let ids = insert_many(connection, &[(key, write, now)]).await?;
    ids.into_iter().next().ok_or_else(|| StoreError::Corrupt("an insert returned no id".into()))
}

/// Inserts new events, each with the moment of its write, a few hundred rows
/// to a statement, and returns their ids in the order given. Keys must be
/// distinct.
///
/// SQLite gets a multi-row `VALUES` list. Postgres gets the rows as one JSON
/// parameter, spread into rows by `json_to_recordset`: the `Any` driver
/// cannot bind the arrays `unnest` would take, and binding one text instead
/// of 12,500 values spares the driver most of its work (BENCHMARKS.md).
pub(crate) async fn insert_many(connection: &mut AnyConnection, rows: &[(EventKey<'_>, EventWrite<'_>, DateTime<Utc>)]) -> Result<Vec<i64>, StoreError> {
    let mut ids = Vec::with_capacity(rows.len());
    for chunk in rows.chunks(ROWS_PER_INSERT) {
        // RETURNING's row order is not promised, so each id comes back with its key.
        const RETURNING: &str = "RETURNING id, user_id, source_ref, topic";
        let query = match Backend::of(connection) {
            Backend::Postgres => {
                let rows: Vec<NewRow<'_>> = chunk.iter().map(|(key, write, now)| NewRow::of(*key, *write, *now)).collect();
                let json = serde_json::to_string(&rows).map_err(|error| StoreError::Corrupt(format!("an event cannot be written as JSON: {error}")))?;
                sqlx::query(sqlx::AssertSqlSafe(format!(
                    "INSERT INTO events ({INSERT_COLUMNS}) SELECT {INSERT_COLUMNS} FROM json_to_recordset($1::json) AS r({INSERT_COLUMN_TYPES}) {RETURNING}"
                )))
                .bind(json)
            }
            Backend::Sqlite => {
                let mut placeholders = Placeholders::for_connection(connection);
                let sql = format!("INSERT INTO events ({INSERT_COLUMNS}) VALUES {} {RETURNING}", placeholders.rows(chunk.len(), INSERT_PARAMETERS));
                let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
                for row in chunk.iter().map(|(key, write, now)| NewRow::of(*key, *write, *now)) {
                    let keyed = query.bind(row.user_id).bind(row.source_id).bind(row.source_ref.to_owned()).bind(row.topic.to_owned());
                    query = row.columns.bind(keyed).bind(row.created_at);
                }
                query
            }
        };
        let mut returned = std::collections::HashMap::with_capacity(chunk.len());
        for row in query.fetch_all(&mut *connection).await? {
            let key: (i64, String, String) = (row.try_get("user_id")?, row.try_get("source_ref")?, row.try_get("topic")?);
            returned.insert(key, row.try_get::<i64, _>("id")?);
        }
        for (key, _, _) in chunk {
            let id = returned.get(&(key.user_id, key.source_ref.to_owned(), key.topic.to_owned()));
            ids.push(*id.ok_or_else(|| StoreError::Corrupt(format!("the insert of {} returned no id", key.source_ref)))?);
        }
    }
    Ok(ids)
}

pub(crate) async fn update(connection: &mut AnyConnection, id: i64, write: EventWrite<'_>, now: DateTime<Utc>) -> Result<(), StoreError> {
    let query = sqlx::query(
        "UPDATE events SET title = $2, subtitle = $3, due_at = $4, due_date = $5, due_time = $6, due_offset_min = $7, \
         due_ms = $8, fire_at = $9, fire_date = $10, after_due = $11, done_label = $12, deep_link = $13, state = $14, \
         quiet_until = $15, closed_at = $16, checkpoint_at = $17, attention_since = $18, repeat_at = $19, \
         next_check_at = $20, updated_at = $21 WHERE id = $1",
    )
    .bind(id);
    Columns::of(write, now).bind(query).execute(&mut *connection).await?;
    Ok(())
}

/// What changes when an event's lifecycle moves without its fields changing.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LifecycleWrite {
    pub(crate) lifecycle: Lifecycle,
    pub(crate) reminders: Reminders,
    /// The due moment in the user's current zone.
    pub(crate) due_at: DateTime<Utc>,
    pub(crate) next_check_at: Option<DateTime<Utc>>,
}

/// Saves a new lifecycle and ladder place (and the due moment they were
/// computed with) without touching the fields.
pub(crate) async fn save_lifecycle(connection: &mut AnyConnection, id: i64, write: LifecycleWrite, now: DateTime<Utc>) -> Result<(), StoreError> {
    save_lifecycles(connection, &[(id, write)], now).await
}

/// Parameters each row of [`save_lifecycles`] binds.
const LIFECYCLE_PARAMETERS: usize = 9;
/// Rows one statement carries.
const LIFECYCLES_PER_UPDATE: usize = 500;

/// Saves many events' lifecycles (the scheduler's pass) in a few
/// statements: one `UPDATE … FROM (VALUES …)` per few hundred events. A
/// `VALUES` list's columns are `column1`, `column2`, … on both backends.
pub(crate) async fn save_lifecycles(connection: &mut AnyConnection, writes: &[(i64, LifecycleWrite)], now: DateTime<Utc>) -> Result<(), StoreError> {
    for chunk in writes.chunks(LIFECYCLES_PER_UPDATE) {
        let mut placeholders = Placeholders::for_connection(connection);
        let now_placeholder = placeholders.next();
        let sql = format!(
            "UPDATE events SET state = v.column2, quiet_until = v.column3, closed_at = v.column4, checkpoint_at = v.column5, \
             attention_since = v.column6, repeat_at = v.column7, next_check_at = v.column8, due_ms = v.column9, updated_at = {now_placeholder} \
             FROM (VALUES {}) AS v WHERE events.id = v.column1",
            placeholders.rows(chunk.len(), LIFECYCLE_PARAMETERS)
        );
        let mut query = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(millis(now));
        for (id, write) in chunk {
            query = bind_lifecycle(query.bind(*id), &write.lifecycle, &write.reminders, write.next_check_at).bind(millis(write.due_at));
        }
        query.execute(&mut *connection).await?;
    }
    Ok(())
}

/// A user's open events, for recomputing them after a zone change.
pub(crate) async fn open_for_user(connection: &mut AnyConnection, user_id: i64) -> Result<Vec<EventRecord>, StoreError> {
    let rows = sqlx::query(with_states!(select_events!("WHERE e.user_id = $1 AND e.state IN ({active})"))).bind(user_id).fetch_all(&mut *connection).await?;
    decode_all(rows)
}

/// Claims up to `limit` events whose next check is due. On Postgres the rows
/// stay locked until the transaction ends and other replicas skip them, so
/// that several cores share the work without doing any of it twice.
pub(crate) async fn claim_due(connection: &mut AnyConnection, backend: Backend, now: DateTime<Utc>, limit: i64) -> Result<Vec<EventRecord>, StoreError> {
    let query = match backend {
        Backend::Sqlite => select_events!("WHERE e.next_check_at <= $1 ORDER BY e.next_check_at LIMIT $2"),
        Backend::Postgres => {
            select_events!("WHERE e.next_check_at <= $1 ORDER BY e.next_check_at LIMIT $2 FOR UPDATE OF e SKIP LOCKED")
        }
    };
    let rows = sqlx::query(query).bind(millis(now)).bind(limit).fetch_all(&mut *connection).await?;
    decode_all(rows)
}

/// How many of the user's open events need attention.
pub(crate) async fn attention_count(connection: &mut AnyConnection, user_id: i64) -> Result<i64, StoreError> {
    let row = sqlx::query(with_states!("SELECT COUNT(*) AS count FROM events WHERE user_id = $1 AND attention_since IS NOT NULL AND state IN ({active})"))
        .bind(user_id)
        .fetch_one(&mut *connection)
        .await?;
    Ok(row.try_get("count")?)
}

/// A place in the inbox's order (due moment, then id), after which a page of
/// it continues: keyset paging, so each page costs what it returns however
/// far into the list it starts. Written `<due_ms>.<id>` for clients, who
/// treat it as opaque.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct After {
    due_ms: i64,
    id: i64,
}

impl After {
    /// Before every event.
    pub(crate) const START: Self = Self { due_ms: i64::MIN, id: i64::MIN };

    /// Just after `record`.
    pub(crate) fn of(record: &EventRecord) -> Self {
        Self { due_ms: record.due_ms, id: record.id }
    }

    pub(crate) fn parse(text: &str) -> Option<Self> {
        let (due_ms, id) = text.split_once('.')?;
        Some(Self { due_ms: due_ms.parse().ok()?, id: id.parse().ok()? })
    }
}

impl std::fmt::Display for After {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "{}.{}", self.due_ms, self.id)
    }
}

impl Store {
    /// The user's active events ordered by due moment (then id), optionally
    /// in one state, from just after `after`, at most `limit` of them.
    pub(crate) async fn list_active(&self, user_id: i64, state: Option<State>, after: After, limit: Option<u32>) -> Result<Vec<EventRecord>, StoreError> {
        let limit = limit.map_or(i64::MAX, i64::from);
        let rows = match state {
            Some(state) => {
                sqlx::query(select_events!(
                    "WHERE e.user_id = $1 AND e.state = $2 AND (e.due_ms > $3 OR (e.due_ms = $3 AND e.id > $4)) ORDER BY e.due_ms, e.id LIMIT $5"
                ))
                .bind(user_id)
                .bind(state.as_str())
                .bind(after.due_ms)
                .bind(after.id)
                .bind(limit)
                .fetch_all(self.reader())
                .await?
            }
            None => {
                sqlx::query(with_states!(select_events!(
                    "WHERE e.user_id = $1 AND e.state IN ({active}) AND (e.due_ms > $2 OR (e.due_ms = $2 AND e.id > $3)) ORDER BY e.due_ms, e.id LIMIT $4"
                )))
                .bind(user_id)
                .bind(after.due_ms)
                .bind(after.id)
                .bind(limit)
                .fetch_all(self.reader())
                .await?
            }
        };
        decode_all(rows)
    }

    /// The archive: done and expired, most recently closed first.
    pub(crate) async fn list_archive(&self, user_id: i64) -> Result<Vec<EventRecord>, StoreError> {
        let rows = sqlx::query(with_states!(select_events!("WHERE e.user_id = $1 AND e.state IN ({archived}) ORDER BY e.closed_at DESC, e.id DESC LIMIT $2")))
            .bind(user_id)
            .bind(ARCHIVE_LIMIT)
            .fetch_all(self.reader())
            .await?;
        decode_all(rows)
    }

    /// A source's events for one user, all of them or only the given refs.
    pub(crate) async fn list_for_source(&self, source_id: i64, user_id: i64, refs: &[String]) -> Result<Vec<EventRecord>, StoreError> {
        let rows = if refs.is_empty() {
            sqlx::query(select_events!("WHERE e.source_id = $1 AND e.user_id = $2 ORDER BY e.due_ms, e.id"))
                .bind(source_id)
                .bind(user_id)
                .fetch_all(self.reader())
                .await?
        } else {
            let placeholders: Vec<String> = (0..refs.len()).map(|index| format!("${}", index + 3)).collect();
            let sql = format!(
                "{} WHERE e.source_id = $1 AND e.user_id = $2 AND e.source_ref IN ({}) ORDER BY e.due_ms, e.id",
                select_events!(),
                placeholders.join(", ")
            );
            let mut query = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(source_id).bind(user_id);
            for source_ref in refs {
                query = query.bind(source_ref.as_str());
            }
            query.fetch_all(self.reader()).await?
        };
        decode_all(rows)
    }

    /// The earliest pending check, so that the scheduler knows how long it
    /// may sleep.
    pub(crate) async fn earliest_check(&self) -> Result<Option<DateTime<Utc>>, StoreError> {
        let row = sqlx::query("SELECT MIN(next_check_at) AS next FROM events WHERE next_check_at IS NOT NULL").fetch_one(self.reader()).await?;
        let next: Option<i64> = row.try_get("next")?;
        next.map(super::records::instant).transpose()
    }
}
