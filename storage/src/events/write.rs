//! Owns the SQL that writes events: one insert, a batch's multi-row
//! inserts (on Postgres, its new rows as one array per column), an edit, and
//! the lifecycle writes of one event or of a scheduler pass's many.

use chrono::{DateTime, Utc};
use sqlx::Row;

use super::{EventWrite, RowKey, optional_millis};
use crate::arrays::ArrayText;
use crate::records::millis;
use crate::{Backend, Connection, Placeholders, StoreError};
use hado_domain::event::Lifecycle;
use hado_domain::reminders::Reminders;
use hado_domain::time::format_date;

type AnyQuery<'q> = sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments>;

/// Binds where an event stands, as every write of it names the columns:
/// state, quiet_until, closed_at, checkpoint_at, attention_since, repeat_at,
/// next_check_at.
fn bind_lifecycle<'q>(
    query: AnyQuery<'q>,
    lifecycle: &Lifecycle,
    reminders: &Reminders,
    next_check_at: Option<DateTime<Utc>>,
) -> AnyQuery<'q> {
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
/// [`update`] name them, as they are stored.
struct Columns {
    title: String,
    subtitle: Option<String>,
    due_at: String,
    due_date: String,
    due_time: Option<String>,
    due_offset_min: Option<i64>,
    due_ms: i64,
    fire_at: Option<String>,
    fire_date: String,
    after_due: &'static str,
    done_label: Option<String>,
    deep_link: Option<String>,
    state: &'static str,
    quiet_until: Option<i64>,
    closed_at: Option<i64>,
    checkpoint_at: Option<i64>,
    attention_since: Option<i64>,
    repeat_at: Option<i64>,
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
            fire_at: spec.preparing_from.map(format_date),
            fire_date: format_date(spec.preparing_date()),
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
struct NewRow<'a> {
    user_id: i64,
    source_id: i64,
    source_ref: &'a str,
    topic: &'a str,
    columns: Columns,
    created_at: i64,
}

impl<'a> NewRow<'a> {
    fn of(key: RowKey<'a>, write: EventWrite<'_>, now: DateTime<Utc>) -> Self {
        let (user_id, source_id, source_ref, topic) =
            (key.user_id, key.source_id, key.source_ref, key.topic);
        Self {
            user_id,
            source_id,
            source_ref,
            topic,
            columns: Columns::of(write, now),
            created_at: millis(now),
        }
    }

    /// Appends the row to a batch's arrays, one per column of
    /// [`INSERT_COLUMNS`], in its order.
    fn append_to(&self, arrays: &mut [ArrayText; INSERT_PARAMETERS]) {
        enum Value<'v> {
            Text(Option<&'v str>),
            Number(Option<i64>),
        }
        use Value::{Number, Text};
        let columns = &self.columns;
        let values = [
            Number(Some(self.user_id)),
            Number(Some(self.source_id)),
            Text(Some(self.source_ref)),
            Text(Some(self.topic)),
            Text(Some(&columns.title)),
            Text(columns.subtitle.as_deref()),
            Text(Some(&columns.due_at)),
            Text(Some(&columns.due_date)),
            Text(columns.due_time.as_deref()),
            Number(columns.due_offset_min),
            Number(Some(columns.due_ms)),
            Text(columns.fire_at.as_deref()),
            Text(Some(&columns.fire_date)),
            Text(Some(columns.after_due)),
            Text(columns.done_label.as_deref()),
            Text(columns.deep_link.as_deref()),
            Text(Some(columns.state)),
            Number(columns.quiet_until),
            Number(columns.closed_at),
            Number(columns.checkpoint_at),
            Number(columns.attention_since),
            Number(columns.repeat_at),
            Number(columns.next_check_at),
            Number(Some(columns.updated_at)),
            Number(Some(self.created_at)),
        ];
        for (array, value) in arrays.iter_mut().zip(values) {
            match value {
                Text(text) => array.text(text),
                Number(number) => array.number(number),
            }
        }
    }
}

/// The columns an insert names, in [`NewRow`]'s order.
const INSERT_COLUMNS: &str = "user_id, source_id, source_ref, topic, title, subtitle, due_at, due_date, due_time, \
     due_offset_min, due_ms, fire_at, fire_date, after_due, done_label, deep_link, state, quiet_until, closed_at, \
     checkpoint_at, attention_since, repeat_at, next_check_at, updated_at, created_at";
/// [`INSERT_COLUMNS`] with their Postgres types, for the arrays a batch's
/// rows travel in.
const INSERT_COLUMN_TYPES: &str = "user_id bigint, source_id bigint, source_ref text, topic text, title text, subtitle text, \
     due_at text, due_date text, due_time text, due_offset_min bigint, due_ms bigint, fire_at text, fire_date text, after_due text, \
     done_label text, deep_link text, state text, quiet_until bigint, closed_at bigint, checkpoint_at bigint, attention_since bigint, \
     repeat_at bigint, next_check_at bigint, updated_at bigint, created_at bigint";
/// Columns an insert names, and so parameters each row binds on SQLite and
/// arrays a batch binds on Postgres.
const INSERT_PARAMETERS: usize = 25;
/// The arrays a batch's rows travel in on Postgres, cast to their columns'
/// types for `unnest`: `$1::bigint[], $2::bigint[], $3::text[], …`.
static UNNEST_ARGUMENTS: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    let types = INSERT_COLUMN_TYPES
        .split(", ")
        .map(|column| column.rsplit(' ').next().expect("a column has a type"));
    types
        .enumerate()
        .map(|(index, kind)| format!("${}::{kind}[]", index + 1))
        .collect::<Vec<_>>()
        .join(", ")
});
/// Rows one insert statement carries.
const ROWS_PER_INSERT: usize = 500;

pub async fn insert(
    connection: &mut impl Connection,
    key: RowKey<'_>,
    write: EventWrite<'_>,
    now: DateTime<Utc>,
) -> Result<i64, StoreError> {
    let ids = insert_many(connection, &[(key, write, now)]).await?;
    ids.into_iter().next().ok_or_else(|| StoreError::Corrupt("an insert returned no id".into()))
}

/// Inserts new events, each with the moment of its write, a few hundred rows
/// to a statement, and returns their ids in the order given. Keys must be
/// distinct and new (a batch's transaction looked them up first).
pub async fn insert_many(
    connection: &mut impl Connection,
    rows: &[(RowKey<'_>, EventWrite<'_>, DateTime<Utc>)],
) -> Result<Vec<i64>, StoreError> {
    let ids = insert_rows(connection, rows, "").await?;
    ids.into_iter()
        .zip(rows)
        .map(|(id, (key, _, _))| {
            id.ok_or_else(|| {
                StoreError::Corrupt(format!("the insert of {} returned no id", key.source_ref))
            })
        })
        .collect()
}

/// Inserts the events whose key is new and skips the others: the id of
/// each row inserted, none for a key taken (by an earlier write or row). A
/// key another transaction is writing is waited for, so one skipped here
/// is committed, and a read after it finds the row. The rows go in sorted
/// by key ([`RowKey::order`]), so two such inserts never deadlock.
pub async fn insert_new(
    connection: &mut impl Connection,
    rows: &[(RowKey<'_>, EventWrite<'_>, DateTime<Utc>)],
) -> Result<Vec<Option<i64>>, StoreError> {
    insert_rows(connection, rows, "ON CONFLICT (source_id, user_id, source_ref, topic) DO NOTHING")
        .await
}

/// The statements of [`insert_many`] and [`insert_new`], with `on_conflict` between the rows and
/// `RETURNING`. SQLite gets a multi-row `VALUES` list. Postgres gets each column as one array,
/// spread into rows by `unnest`: binding 25 texts instead of 12,500 values spares the driver most
/// of its work, and the server reads arrays faster than the JSON the rows travelled as before.
async fn insert_rows(
    connection: &mut impl Connection,
    rows: &[(RowKey<'_>, EventWrite<'_>, DateTime<Utc>)],
    on_conflict: &str,
) -> Result<Vec<Option<i64>>, StoreError> {
    let connection = connection.sql();
    let mut order: Vec<usize> = (0..rows.len()).collect();
    // Stable: of a key given twice, the first given goes in.
    order.sort_by_key(|&at| rows[at].0.order());
    let mut returned = std::collections::HashMap::with_capacity(rows.len());
    for chunk in order.chunks(ROWS_PER_INSERT) {
        let chunk: Vec<_> = chunk.iter().map(|&at| rows[at]).collect();
        // RETURNING's row order is not promised, so each id comes back with its key.
        const RETURNING: &str = "RETURNING id, source_id, user_id, source_ref, topic";
        let query = match Backend::of(connection) {
            Backend::Postgres => {
                let mut arrays: [ArrayText; INSERT_PARAMETERS] =
                    std::array::from_fn(|_| ArrayText::new());
                for (key, write, now) in &chunk {
                    NewRow::of(*key, *write, *now).append_to(&mut arrays);
                }
                let sql = format!(
                    "INSERT INTO events ({INSERT_COLUMNS}) SELECT * FROM unnest({}) {on_conflict} {RETURNING}",
                    *UNNEST_ARGUMENTS
                );
                arrays.into_iter().fold(sqlx::query(sqlx::AssertSqlSafe(sql)), |query, array| {
                    query.bind(array.finish())
                })
            }
            Backend::Sqlite => {
                let mut placeholders = Placeholders::for_connection(connection);
                let sql = format!(
                    "INSERT INTO events ({INSERT_COLUMNS}) VALUES {} {on_conflict} {RETURNING}",
                    placeholders.rows(chunk.len(), INSERT_PARAMETERS)
                );
                let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
                for row in chunk.iter().map(|(key, write, now)| NewRow::of(*key, *write, *now)) {
                    let keyed = query
                        .bind(row.user_id)
                        .bind(row.source_id)
                        .bind(row.source_ref.to_owned())
                        .bind(row.topic.to_owned());
                    query = row.columns.bind(keyed).bind(row.created_at);
                }
                query
            }
        };
        for row in query.fetch_all(&mut *connection).await? {
            let key: (i64, i64, String, String) = (
                row.try_get("source_id")?,
                row.try_get("user_id")?,
                row.try_get("source_ref")?,
                row.try_get("topic")?,
            );
            returned.insert(key, row.try_get::<i64, _>("id")?);
        }
    }
    // A key given twice has one id, for its first row.
    Ok(rows.iter().map(|(key, _, _)| returned.remove(&key.owned())).collect())
}

pub async fn update(
    connection: &mut impl Connection,
    id: i64,
    write: EventWrite<'_>,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let query = sqlx::query(
        "UPDATE events SET title = $2, subtitle = $3, due_at = $4, due_date = $5, due_time = $6, due_offset_min = $7, \
         due_ms = $8, fire_at = $9, fire_date = $10, after_due = $11, done_label = $12, deep_link = $13, state = $14, \
         quiet_until = $15, closed_at = $16, checkpoint_at = $17, attention_since = $18, repeat_at = $19, \
         next_check_at = $20, updated_at = $21, revision = revision + 1 WHERE id = $1",
    )
    .bind(id);
    Columns::of(write, now).bind(query).execute(connection.sql()).await?;
    Ok(())
}

/// What changes when an event's lifecycle moves without its fields changing.
#[derive(Clone, Copy, Debug)]
pub struct LifecycleWrite {
    pub lifecycle: Lifecycle,
    /// Whether this change moves the event's revision on (Reopen, a
    /// withdrawal; `hado_engine::links` says which changes do): the clock moving
    /// its state, Done and Remember do not.
    pub revised: bool,
    pub reminders: Reminders,
    /// The due moment in the user's current zone.
    pub due_at: DateTime<Utc>,
    pub next_check_at: Option<DateTime<Utc>>,
}

/// Saves a new lifecycle and ladder place (and the due moment they were
/// computed with) without touching the fields.
pub async fn save_lifecycle(
    connection: &mut impl Connection,
    id: i64,
    write: LifecycleWrite,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    save_lifecycles(connection, &[(id, write)], now).await
}

/// Parameters each row of [`save_lifecycles`] binds.
const LIFECYCLE_PARAMETERS: usize = 10;
/// Rows one statement carries.
const LIFECYCLES_PER_UPDATE: usize = 500;

/// Saves many events' lifecycles (the scheduler's pass) in a few
/// statements: one `UPDATE … FROM (VALUES …)` per few hundred events. A
/// `VALUES` list's columns are `column1`, `column2`, … on both backends.
pub async fn save_lifecycles(
    connection: &mut impl Connection,
    writes: &[(i64, LifecycleWrite)],
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let connection = connection.sql();
    for chunk in writes.chunks(LIFECYCLES_PER_UPDATE) {
        let mut placeholders = Placeholders::for_connection(connection);
        let now_placeholder = placeholders.next();
        let sql = format!(
            "UPDATE events SET state = v.column2, quiet_until = v.column3, closed_at = v.column4, checkpoint_at = v.column5, \
             attention_since = v.column6, repeat_at = v.column7, next_check_at = v.column8, due_ms = v.column9, \
             revision = revision + v.column10, updated_at = {now_placeholder} \
             FROM (VALUES {}) AS v WHERE events.id = v.column1",
            placeholders.rows(chunk.len(), LIFECYCLE_PARAMETERS)
        );
        let mut query = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(millis(now));
        for (id, write) in chunk {
            query = bind_lifecycle(
                query.bind(*id),
                &write.lifecycle,
                &write.reminders,
                write.next_check_at,
            )
            .bind(millis(write.due_at))
            .bind(i64::from(write.revised));
        }
        query.execute(&mut *connection).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_typed_columns_are_the_inserted_columns_in_order() {
        let names: Vec<&str> = INSERT_COLUMNS.split(", ").collect();
        let typed: Vec<&str> = INSERT_COLUMN_TYPES
            .split(", ")
            .map(|column| column.split(' ').next().unwrap())
            .collect();
        assert_eq!(names, typed);
        assert_eq!(names.len(), INSERT_PARAMETERS);
        assert_eq!(UNNEST_ARGUMENTS.matches("::").count(), INSERT_PARAMETERS);
        assert!(
            UNNEST_ARGUMENTS.starts_with("$1::bigint[], $2::bigint[], $3::text[]"),
            "{}",
            *UNNEST_ARGUMENTS
        );
    }
}
