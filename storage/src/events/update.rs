//! Owns the SQL that writes over a stored event's fields (an edit, a
//! source pushing a key again): one event, or a group's many at once.

use chrono::{DateTime, Utc};

use super::EventWrite;
use super::columns::{COLUMNS, Columns, INSERT_COLUMN_TYPES, unnest_arguments};
use crate::arrays::ArrayText;
use crate::{Backend, Connection, StoreError};

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

/// Rows one statement carries.
const ROWS_PER_UPDATE: usize = 500;

/// [`update`] of many events, each by its id (distinct). On Postgres, one
/// statement a few hundred rows, their values one array per column, in
/// place of a round trip each; sent unnamed, so that it is planned for its
/// rows on every call, as every statement that reads events on group
/// commit's connections is (`pools::GROUPED_SETUP`). One event alone, and
/// every event on SQLite, where a statement costs no round trip, goes by
/// [`update`], whose plan is kept.
pub async fn update_many(
    connection: &mut impl Connection,
    rows: &[(i64, EventWrite<'_>, DateTime<Utc>)],
) -> Result<(), StoreError> {
    debug_assert!(
        rows.iter().map(|row| row.0).collect::<std::collections::HashSet<_>>().len() == rows.len(),
        "an update of many names each event once"
    );
    let connection = connection.sql();
    if Backend::of(connection) == Backend::Sqlite || rows.len() == 1 {
        for &(id, write, now) in rows {
            update(&mut *connection, id, write, now).await?;
        }
        return Ok(());
    }
    for chunk in rows.chunks(ROWS_PER_UPDATE) {
        let mut ids = ArrayText::new();
        let mut arrays: [ArrayText; COLUMNS] = std::array::from_fn(|_| ArrayText::new());
        for &(id, write, now) in chunk {
            ids.number(Some(id));
            Columns::of(write, now).append_to(&mut arrays);
        }
        let query = sqlx::query(UPDATE_MANY.as_str()).bind(ids.finish()).persistent(false);
        let query = arrays.into_iter().fold(query, |query, array| query.bind(array.finish()));
        query.execute(&mut *connection).await?;
    }
    Ok(())
}

/// `UPDATE events SET title = r.title, … FROM unnest($1::bigint[],
/// $2::text[], …) AS r (id, title, …) WHERE events.id = r.id`: the columns
/// [`Columns`] writes, as an insert names them after the key.
static UPDATE_MANY: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    let columns = || INSERT_COLUMN_TYPES.split(", ").skip(4).take(COLUMNS);
    let names: Vec<&str> =
        columns().map(|column| column.split(' ').next().expect("a column has a name")).collect();
    let sets: Vec<String> = names.iter().map(|name| format!("{name} = r.{name}")).collect();
    format!(
        "UPDATE events SET {}, revision = events.revision + 1 FROM unnest($1::bigint[], {}) AS r (id, {}) \
         WHERE events.id = r.id",
        sets.join(", "),
        unnest_arguments(columns(), 2),
        names.join(", ")
    )
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_update_writes_the_columns_an_update_writes() {
        assert!(UPDATE_MANY.starts_with(
            "UPDATE events SET title = r.title, subtitle = r.subtitle, due_at = r.due_at, "
        ));
        assert!(UPDATE_MANY.contains(
            "next_check_at = r.next_check_at, updated_at = r.updated_at, revision = events.revision + 1 \
             FROM unnest($1::bigint[], $2::text[], $3::text[]"
        ));
        assert!(UPDATE_MANY.contains("$21::bigint[]) AS r (id, title, subtitle,"));
    }
}
