//! Owns how an event's row is laid out for a write: its columns, in the
//! order every insert and update names them, and a new row as one value of
//! each, bound one by one (SQLite) or appended to one array per column
//! (Postgres).

use chrono::{DateTime, Utc};

use super::{EventWrite, RowKey, optional_millis};
use crate::arrays::ArrayText;
use crate::records::millis;
use hado_domain::time::format_date;

pub(super) type AnyQuery<'q> = sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments>;

/// An event's written columns, in the order both [`insert_many`] and
/// [`update`] name them, as they are stored.
pub(super) struct Columns {
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
    pub(super) fn of(write: EventWrite<'_>, now: DateTime<Utc>) -> Self {
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

    pub(super) fn bind(self, query: AnyQuery<'_>) -> AnyQuery<'_> {
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
pub(super) struct NewRow<'a> {
    pub(super) user_id: i64,
    pub(super) source_id: i64,
    pub(super) source_ref: &'a str,
    pub(super) topic: &'a str,
    pub(super) columns: Columns,
    pub(super) created_at: i64,
}

impl<'a> NewRow<'a> {
    pub(super) fn of(key: RowKey<'a>, write: EventWrite<'_>, now: DateTime<Utc>) -> Self {
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
    pub(super) fn append_to(&self, arrays: &mut [ArrayText; INSERT_PARAMETERS]) {
        let (key, rest) = arrays.split_at_mut(4);
        key[0].number(Some(self.user_id));
        key[1].number(Some(self.source_id));
        key[2].text(Some(self.source_ref));
        key[3].text(Some(self.topic));
        let (columns, created_at) =
            rest.split_first_chunk_mut::<COLUMNS>().expect("an insert names every column");
        self.columns.append_to(columns);
        created_at[0].number(Some(self.created_at));
    }
}

/// How many [`Columns`] a write names: an insert names them between the
/// key's four and `created_at`.
pub(super) const COLUMNS: usize = 20;
const _: () = assert!(4 + COLUMNS + 1 == INSERT_PARAMETERS);

impl Columns {
    /// Appends the columns to a batch's arrays, one per column, in the
    /// order [`Columns::bind`] binds them.
    pub(super) fn append_to(&self, arrays: &mut [ArrayText; COLUMNS]) {
        enum Value<'v> {
            Text(Option<&'v str>),
            Number(Option<i64>),
        }
        use Value::{Number, Text};
        let values: [Value<'_>; COLUMNS] = [
            Text(Some(&self.title)),
            Text(self.subtitle.as_deref()),
            Text(Some(&self.due_at)),
            Text(Some(&self.due_date)),
            Text(self.due_time.as_deref()),
            Number(self.due_offset_min),
            Number(Some(self.due_ms)),
            Text(self.fire_at.as_deref()),
            Text(Some(&self.fire_date)),
            Text(Some(self.after_due)),
            Text(self.done_label.as_deref()),
            Text(self.deep_link.as_deref()),
            Text(Some(self.state)),
            Number(self.quiet_until),
            Number(self.closed_at),
            Number(self.checkpoint_at),
            Number(self.attention_since),
            Number(self.repeat_at),
            Number(self.next_check_at),
            Number(Some(self.updated_at)),
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
pub(super) const INSERT_COLUMNS: &str = "user_id, source_id, source_ref, topic, title, subtitle, due_at, due_date, due_time, \
     due_offset_min, due_ms, fire_at, fire_date, after_due, done_label, deep_link, state, quiet_until, closed_at, \
     checkpoint_at, attention_since, repeat_at, next_check_at, updated_at, created_at";
/// [`INSERT_COLUMNS`] with their Postgres types, for the arrays a batch's
/// rows travel in.
pub(super) const INSERT_COLUMN_TYPES: &str = "user_id bigint, source_id bigint, source_ref text, topic text, title text, subtitle text, \
     due_at text, due_date text, due_time text, due_offset_min bigint, due_ms bigint, fire_at text, fire_date text, after_due text, \
     done_label text, deep_link text, state text, quiet_until bigint, closed_at bigint, checkpoint_at bigint, attention_since bigint, \
     repeat_at bigint, next_check_at bigint, updated_at bigint, created_at bigint";
/// Columns an insert names, and so parameters each row binds on SQLite and
/// arrays a batch binds on Postgres.
pub(super) const INSERT_PARAMETERS: usize = 25;
/// The arrays a batch's rows travel in on Postgres, cast to their columns'
/// types for `unnest`: `$1::bigint[], $2::bigint[], $3::text[], …`.
pub(super) static UNNEST_ARGUMENTS: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| unnest_arguments(INSERT_COLUMN_TYPES.split(", "), 1));

/// The arrays of `columns` (each "name type", as [`INSERT_COLUMN_TYPES`]
/// writes them), cast for `unnest` and numbered from `first`:
/// `$first::bigint[], …`.
pub(super) fn unnest_arguments<'c>(columns: impl Iterator<Item = &'c str>, first: usize) -> String {
    columns
        .map(|column| column.rsplit(' ').next().expect("a column has a type"))
        .enumerate()
        .map(|(index, kind)| format!("${}::{kind}[]", first + index))
        .collect::<Vec<_>>()
        .join(", ")
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
