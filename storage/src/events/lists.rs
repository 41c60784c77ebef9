//! Owns the SQL of what an inbox reads: a group's events a page at a time
//! (keyset paging on the due moment), the archive, and the counts an inbox
//! shows (each group's, and how many events need attention).
//!
//! Each query walks one range of an index keyed by the person and a state
//! (`events_by_user_state_due`, `events_attention`), and stops at its
//! `LIMIT`: none reads the person's closed events, however many they are,
//! but the archive, which reads its latest hundred by `closed_at`.

use std::sync::LazyLock;

use sqlx::Row;

use super::decode_all;
use crate::Connection;
use crate::StoreError;
use crate::records::{attention_count, select_events, with_states};
use hado_domain::event_record::EventRecord;
use hado_domain::state::State;

/// The archive shows at most this many events.
pub(super) const ARCHIVE_LIMIT: i64 = 100;

/// A place in the inbox's order (due moment, then id), after which a page of
/// it continues: keyset paging, so each page costs what it returns however
/// far into the list it starts. Written `<due_ms>.<id>` for clients, who
/// treat it as opaque.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct After {
    due_ms: i64,
    id: i64,
}

impl After {
    /// Before every event.
    pub const START: Self = Self { due_ms: i64::MIN, id: i64::MIN };

    /// Just after `record`.
    pub fn of(record: &EventRecord) -> Self {
        Self { due_ms: record.due_ms, id: record.id }
    }

    pub fn parse(text: &str) -> Option<Self> {
        let (due_ms, id) = text.split_once('.')?;
        Some(Self { due_ms: due_ms.parse().ok()?, id: id.parse().ok()? })
    }
}

impl std::fmt::Display for After {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "{}.{}", self.due_ms, self.id)
    }
}

/// The user's active events ordered by due moment (then id), optionally in
/// one state, from just after `after`, at most `limit` of them.
pub async fn active_page(
    connection: &mut impl Connection,
    user_id: i64,
    state: Option<State>,
    after: After,
    limit: Option<u32>,
) -> Result<Vec<EventRecord>, StoreError> {
    let connection = connection.sql();
    let limit = limit.map_or(i64::MAX, i64::from);
    let rows = match state {
        // `e.due_ms >= $3` repeats what the cursor's condition implies, so
        // that Postgres starts its walk of the index at the cursor (as an
        // index condition) instead of walking the group from its first
        // event and filtering up to the cursor; SQLite does so either way.
        Some(state) => sqlx::query(select_events!(
            "WHERE e.user_id = $1 AND e.state = $2 AND e.due_ms >= $3 AND (e.due_ms > $3 OR (e.due_ms = $3 AND e.id > $4)) ORDER BY e.due_ms, e.id LIMIT $5"
        ))
        .bind(user_id)
        .bind(state.as_str())
        .bind(after.due_ms)
        .bind(after.id)
        .bind(limit)
        .fetch(&mut *connection),
        None => sqlx::query(with_states!(select_events!(
            "WHERE e.user_id = $1 AND e.state IN ({active}) AND (e.due_ms > $2 OR (e.due_ms = $2 AND e.id > $3)) ORDER BY e.due_ms, e.id LIMIT $4"
        )))
        .bind(user_id)
        .bind(after.due_ms)
        .bind(after.id)
        .bind(limit)
        .fetch(&mut *connection),
    };
    decode_all(rows).await
}

/// The archive: done, expired and withdrawn, most recently closed first, at
/// most [`ARCHIVE_LIMIT`].
pub async fn archive(
    connection: &mut impl Connection,
    user_id: i64,
) -> Result<Vec<EventRecord>, StoreError> {
    let connection = connection.sql();
    // Every closed event has its `closed_at`; saying so lets Postgres skip
    // the person's open events (whose `closed_at` is empty, and which its
    // backward walk of the index would meet first) as an index condition.
    let rows = sqlx::query(with_states!(select_events!(
        "WHERE e.user_id = $1 AND e.state IN ({archived}) AND e.closed_at IS NOT NULL ORDER BY e.closed_at DESC, e.id DESC LIMIT $2"
    )))
    .bind(user_id)
    .bind(ARCHIVE_LIMIT)
    .fetch(&mut *connection);
    decode_all(rows).await
}

/// What an inbox counts: each active group's events, up to a cap, and how
/// many need attention.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InboxCounts {
    /// Each group's count in [`State::INBOX`]'s order, at most the cap asked for.
    pub groups: [i64; 4],
    pub attention: i64,
}

/// The counts query: one scalar subquery a group, each stopping at `$2`
/// rows of its index range, and the attention count. The states are
/// written in, not bound, so that each subquery is planned for its own
/// state.
static COUNTS: LazyLock<String> = LazyLock::new(|| {
    let groups: Vec<String> = State::INBOX
        .iter()
        .map(|state| {
            format!(
                "(SELECT COUNT(*) FROM (SELECT 1 FROM events e WHERE e.user_id = $1 AND e.state = '{}' LIMIT $2) AS g) AS {}",
                state.as_str(),
                state.as_str()
            )
        })
        .collect();
    format!(
        "SELECT {}, {} AS attention FROM users u WHERE u.id = $1",
        groups.join(", "),
        attention_count()
    )
});

/// Each active group's count (at most `cap`) and the attention count of
/// the user's events, in one statement.
pub async fn inbox_counts(
    connection: &mut impl Connection,
    user_id: i64,
    cap: i64,
) -> Result<InboxCounts, StoreError> {
    let connection = connection.sql();
    let row =
        sqlx::query(COUNTS.as_str()).bind(user_id).bind(cap).fetch_one(&mut *connection).await?;
    let mut groups = [0; 4];
    for (count, state) in groups.iter_mut().zip(State::INBOX) {
        *count = row.try_get(state.as_str())?;
    }
    Ok(InboxCounts { groups, attention: row.try_get("attention")? })
}
