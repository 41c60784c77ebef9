//! Owns the SQL that writes events: one insert, a batch's multi-row
//! inserts (on Postgres, its new rows as one array per column), and the
//! lifecycle writes of one event or of a scheduler pass's many. An edit's
//! write is `update`'s.

use chrono::{DateTime, Utc};
use sqlx::Row;

use super::columns::{INSERT_COLUMNS, INSERT_PARAMETERS, NewRow, UNNEST_ARGUMENTS};
use super::{EventWrite, RowKey, optional_millis};
use crate::arrays::ArrayText;
use crate::records::millis;
use crate::{Backend, Connection, Placeholders, StoreError};
use hado_domain::event::Lifecycle;
use hado_domain::reminders::Reminders;

use super::columns::AnyQuery;

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

/// The zone and quiet hours a new row was decided in, written as `users`
/// stores them (`tz`, `quiet_start`, `quiet_end`), so that the gated insert
/// compares them with what is stored as text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecidedFor {
    zone: &'static str,
    quiet_start: String,
    quiet_end: String,
}

impl DecidedFor {
    pub fn of(zone: chrono_tz::Tz, quiet: hado_domain::checkpoints::QuietHours) -> Self {
        use hado_domain::profile::format_clock_time;
        Self {
            zone: zone.name(),
            quiet_start: format_clock_time(quiet.start),
            quiet_end: format_clock_time(quiet.end),
        }
    }
}

/// What became of a row of [`insert_new_through_gates`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Through {
    /// Inserted, with this id.
    New(i64),
    /// Its key was taken (by an earlier write, or by an earlier row).
    Taken,
    /// Not inserted: its person's settings are no longer those it was
    /// decided in.
    Moved,
}

/// [`insert_new_through_gates`]'s statement: the arrays of [`insert_new`]'s
/// rows, the people's ids, and the settings each row was decided in.
static GATED_INSERT: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    let inserted = INSERT_COLUMNS.split(", ").map(|column| format!("r.{column}"));
    format!(
        "WITH gate AS MATERIALIZED (SELECT * FROM hado_people_through_gate('{{}}'::text[], ${ids}::bigint[])), \
         ins AS (INSERT INTO events ({INSERT_COLUMNS}) SELECT {} \
           FROM unnest({}, ${zones}::text[], ${starts}::text[], ${ends}::text[]) WITH ORDINALITY \
             AS r ({INSERT_COLUMNS}, zone, quiet_start, quiet_end, ord) \
           JOIN gate g ON g.id = r.user_id AND g.tz = r.zone AND g.quiet_start = r.quiet_start AND g.quiet_end = r.quiet_end \
           ORDER BY r.ord \
           ON CONFLICT (source_id, user_id, source_ref, topic) DO NOTHING \
           RETURNING id, source_id, user_id, source_ref, topic) \
         SELECT g.id, g.login, g.tz, g.tz_chosen, g.quiet_start, g.quiet_end, g.locale, \
           NULL::bigint AS event_id, NULL::bigint AS source_id, NULL::text AS source_ref, NULL::text AS topic FROM gate g \
         UNION ALL SELECT i.user_id, NULL, NULL, NULL, NULL, NULL, NULL, i.id, i.source_id, i.source_ref, i.topic FROM ins i",
        inserted.collect::<Vec<_>>().join(", "),
        *UNNEST_ARGUMENTS,
        ids = INSERT_PARAMETERS + 1,
        zones = INSERT_PARAMETERS + 2,
        starts = INSERT_PARAMETERS + 3,
        ends = INSERT_PARAMETERS + 4,
    )
});

/// Postgres: [`insert_new`] in one statement that first passes the gates
/// of the rows' people (migration 24, `hado_people_through_gate`) and
/// inserts only the rows decided in the zone and quiet hours each person
/// has as the gate is passed (compared as stored, as the statement compares
/// them). What became of each row, and the people as the gate read them;
/// the rows of a person the gate did not find are [`Through::Moved`].
/// Alone, the statement is its own transaction, and the gates are held
/// until the rows are committed: instead of `BEGIN`, the people's read, the
/// insert and `COMMIT`, one round trip. Its only read of a table is the
/// gate function's, planned for its values on every call, so the
/// statement's own plan is kept. A group of more rows than one statement
/// carries names all its people in each: the first passes every gate (in
/// the order of their ids, as every gated write does), and each reads them
/// all, as its rows' settings are checked against them.
pub async fn insert_new_through_gates(
    connection: &mut impl Connection,
    rows: &[(RowKey<'_>, EventWrite<'_>, DateTime<Utc>, &DecidedFor)],
) -> Result<(Vec<Through>, Vec<hado_domain::user::UserRecord>), StoreError> {
    let connection = connection.sql();
    let mut order: Vec<usize> = (0..rows.len()).collect();
    // Stable: of a key given twice, the first given goes in.
    order.sort_by_key(|&at| rows[at].0.order());
    let mut people_ids: Vec<i64> = rows.iter().map(|row| row.0.user_id).collect();
    people_ids.sort_unstable();
    people_ids.dedup();
    let mut people = std::collections::HashMap::new();
    let mut throughs = vec![Through::Taken; rows.len()];
    for chunk in order.chunks(ROWS_PER_INSERT) {
        let mut arrays: [ArrayText; INSERT_PARAMETERS] = std::array::from_fn(|_| ArrayText::new());
        let (mut ids, mut zones, mut starts, mut ends) =
            (ArrayText::new(), ArrayText::new(), ArrayText::new(), ArrayText::new());
        people_ids.iter().for_each(|&id| ids.number(Some(id)));
        for &at in chunk {
            let (key, write, now, decided) = rows[at];
            NewRow::of(key, write, now).append_to(&mut arrays);
            zones.text(Some(decided.zone));
            starts.text(Some(&decided.quiet_start));
            ends.text(Some(&decided.quiet_end));
        }
        let query = arrays
            .into_iter()
            .chain([ids, zones, starts, ends])
            .fold(sqlx::query(GATED_INSERT.as_str()), |query, array| query.bind(array.finish()));
        let mut returned = std::collections::HashMap::with_capacity(chunk.len());
        // Each person's settings as stored, which this statement compared.
        let mut stored: std::collections::HashMap<i64, [String; 3]> =
            std::collections::HashMap::new();
        for row in query.fetch_all(&mut *connection).await? {
            match row.try_get::<Option<i64>, _>("event_id")? {
                Some(event_id) => {
                    let key: (i64, i64, String, String) = (
                        row.try_get("source_id")?,
                        row.try_get("id")?,
                        row.try_get("source_ref")?,
                        row.try_get("topic")?,
                    );
                    returned.insert(key, event_id);
                }
                None => {
                    use crate::records::FromRow;
                    let person = hado_domain::user::UserRecord::from_row(&row)?;
                    let settings = [
                        row.try_get("tz")?,
                        row.try_get("quiet_start")?,
                        row.try_get("quiet_end")?,
                    ];
                    stored.insert(person.id, settings);
                    people.insert(person.id, person);
                }
            }
        }
        // Of a key's rows, the first decided as its person is went in (the
        // rows went in sorted stably by key), and the others found it taken.
        // A person the gate did not find (gone since they were read) is
        // moved too: their rows are decided again as they are read now.
        for &at in chunk {
            let (key, _, _, decided) = rows[at];
            throughs[at] = match stored.get(&key.user_id) {
                Some(settings)
                    if *settings == [decided.zone, &decided.quiet_start, &decided.quiet_end] =>
                {
                    returned.remove(&key.owned()).map_or(Through::Taken, Through::New)
                }
                _ => Through::Moved,
            };
        }
    }
    Ok((throughs, people.into_values().collect()))
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
