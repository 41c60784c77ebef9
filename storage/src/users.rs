//! Owns the SQL for users and their agent tokens.

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use sqlx::Row;

use super::records::{instant, millis, with_states};
use super::{Store, StoreError};
use crate::Connection;
use crate::records::FromRow;
use hado_domain::checkpoints::QuietHours;
use hado_domain::fields::Login;
use hado_domain::profile::{Locale, format_clock_time};
use hado_domain::user::{UserRecord, UserSummary};

const SELECT_USER: &str =
    "SELECT id, login, tz, tz_chosen, quiet_start, quiet_end, locale FROM users";

/// Finds a user by login, creating them with the default settings on first
/// sight: a source may push for someone who has never opened the inbox.
pub async fn ensure_user(
    connection: &mut impl Connection,
    login: &Login,
    (default_zone, default_locale): (Tz, Locale),
    now: DateTime<Utc>,
) -> Result<UserRecord, StoreError> {
    let connection = connection.sql();
    // A person a source writes to is nearly always known already: one read,
    // and the insert only for a newcomer.
    if let Some(user) = find_user(&mut *connection, login).await? {
        return Ok(user);
    }
    sqlx::query("INSERT INTO users (login, tz, locale, created_at, updated_at) VALUES ($1, $2, $3, $4, $4) ON CONFLICT (login) DO NOTHING")
        .bind(login.as_str())
        .bind(default_zone.name())
        .bind(default_locale.as_str())
        .bind(millis(now))
        .execute(&mut *connection)
        .await?;
    let row = sqlx::query(sqlx::AssertSqlSafe(format!("{SELECT_USER} WHERE login = $1")))
        // Unnamed: group commit's connections run it (`GROUPED_SETUP`).
        .persistent(false)
        .bind(login.as_str())
        .fetch_one(&mut *connection)
        .await?;
    UserRecord::from_row(&row)
}

pub async fn find_user(
    connection: &mut impl Connection,
    login: &Login,
) -> Result<Option<UserRecord>, StoreError> {
    let connection = connection.sql();
    let row = sqlx::query(sqlx::AssertSqlSafe(format!("{SELECT_USER} WHERE login = $1")))
        // Unnamed: group commit's connections run it (`GROUPED_SETUP`).
        .persistent(false)
        .bind(login.as_str())
        .fetch_optional(&mut *connection)
        .await?;
    row.as_ref().map(UserRecord::from_row).transpose()
}

/// The known users among `logins` and `ids`, in one query, for a write that
/// decides from their zone and quiet hours (a group of sources' upserts, of
/// new events). On Postgres the write passes each one's gate first
/// (migration 24, `hado_people_through_gate`), and holds it until it ends:
/// a change of their settings under way is waited for and read as it was
/// committed; one asked for after waits for this write, and then moves the
/// events it wrote. SQLite's one writer orders every write by itself.
pub async fn people_for_writing(
    connection: &mut impl Connection,
    logins: &[&str],
    ids: &[i64],
) -> Result<Vec<UserRecord>, StoreError> {
    let connection = connection.sql();
    if logins.is_empty() && ids.is_empty() {
        return Ok(Vec::new());
    }
    let mut rows = Vec::new();
    if super::Backend::of(connection) == super::Backend::Postgres {
        let (mut names, mut numbers) =
            (super::arrays::ArrayText::new(), super::arrays::ArrayText::new());
        logins.iter().for_each(|login| names.text(Some(login)));
        ids.iter().for_each(|id| numbers.number(Some(*id)));
        rows = sqlx::query("SELECT * FROM hado_people_through_gate($1::text[], $2::bigint[])")
            // Unnamed: group commit's connections run it (`GROUPED_SETUP`).
            .persistent(false)
            .bind(names.finish())
            .bind(numbers.finish())
            .fetch_all(&mut *connection)
            .await?;
    } else {
        // SQLite takes a bounded number of parameters to a statement.
        for chunk in logins.chunks(500) {
            let mut placeholders = super::Placeholders::for_connection(connection);
            let query = format!("{SELECT_USER} WHERE login IN {}", placeholders.row(chunk.len()));
            let mut statement = sqlx::query(sqlx::AssertSqlSafe(query));
            for login in chunk {
                statement = statement.bind(login.to_string());
            }
            rows.extend(statement.fetch_all(&mut *connection).await?);
        }
        for chunk in ids.chunks(500) {
            let mut placeholders = super::Placeholders::for_connection(connection);
            let query = format!("{SELECT_USER} WHERE id IN {}", placeholders.row(chunk.len()));
            let mut statement = sqlx::query(sqlx::AssertSqlSafe(query));
            for id in chunk {
                statement = statement.bind(*id);
            }
            rows.extend(statement.fetch_all(&mut *connection).await?);
        }
    }
    rows.iter().map(UserRecord::from_row).collect()
}

/// On Postgres, those of `ids` whose gates can be passed shared at once,
/// read after, by id; `None` on SQLite, whose one writer orders every
/// write. For a write that already holds event rows (the scheduler's
/// claim): it must not wait for a change of a person's settings, which
/// waits for those rows, so a person being changed is left for its next
/// pass.
pub async fn people_through_free_gates(
    connection: &mut impl Connection,
    ids: &[i64],
) -> Result<Option<std::collections::HashMap<i64, UserRecord>>, StoreError> {
    let connection = connection.sql();
    if super::Backend::of(connection) == super::Backend::Sqlite {
        return Ok(None);
    }
    let mut array = super::arrays::ArrayText::new();
    ids.iter().for_each(|id| array.number(Some(*id)));
    let passed: Vec<i64> = sqlx::query_scalar(
        "SELECT gate.id FROM unnest($1::bigint[]) AS gate(id) \
         WHERE pg_try_advisory_xact_lock_shared(4173, hashtext(gate.id::text))",
    )
    .bind(array.finish())
    .fetch_all(&mut *connection)
    .await?;
    // A statement of its own, so that it sees a change committed before
    // its gate was passed.
    let mut array = super::arrays::ArrayText::new();
    passed.iter().for_each(|id| array.number(Some(*id)));
    let rows =
        sqlx::query(sqlx::AssertSqlSafe(format!("{SELECT_USER} WHERE id = ANY($1::bigint[])")))
            .bind(array.finish())
            .fetch_all(&mut *connection)
            .await?;
    let people: Result<std::collections::HashMap<i64, UserRecord>, StoreError> =
        rows.iter().map(|row| UserRecord::from_row(row).map(|user| (user.id, user))).collect();
    people.map(Some)
}

/// Passes the person's gate shared until the transaction ends, on Postgres,
/// for a write that decides from the person's zone and quiet hours as the
/// event it reads after carries them (Remember, Reopen, an edit).
pub async fn gate_shared(connection: &mut impl Connection, user_id: i64) -> Result<(), StoreError> {
    gate(connection, user_id, "SELECT pg_advisory_xact_lock_shared(4173, hashtext($1::text))").await
}

/// Passes the person's gate alone until the transaction ends, on Postgres,
/// before their zone or quiet hours change: the writes that decide from
/// them and hold the gate end first, and the next wait for this one
/// ([`people_for_writing`]).
pub async fn gate_alone(connection: &mut impl Connection, user_id: i64) -> Result<(), StoreError> {
    gate(connection, user_id, "SELECT pg_advisory_xact_lock(4173, hashtext($1::text))").await
}

/// Takes the gate's lock by `statement`; the key is the id as text, as
/// `hado_people_through_gate` hashes it.
async fn gate(
    connection: &mut impl Connection,
    user_id: i64,
    statement: &'static str,
) -> Result<(), StoreError> {
    let connection = connection.sql();
    if super::Backend::of(connection) == super::Backend::Postgres {
        sqlx::query(statement).bind(user_id.to_string()).execute(&mut *connection).await?;
    }
    Ok(())
}

pub async fn user_by_id(
    connection: &mut impl Connection,
    id: i64,
) -> Result<UserRecord, StoreError> {
    let connection = connection.sql();
    let row = sqlx::query(sqlx::AssertSqlSafe(format!("{SELECT_USER} WHERE id = $1")))
        .bind(id)
        .fetch_one(&mut *connection)
        .await?;
    UserRecord::from_row(&row)
}

/// Saves a user's settings.
pub async fn save_profile(
    connection: &mut impl Connection,
    user_id: i64,
    (zone, zone_chosen): (Tz, bool),
    quiet: QuietHours,
    locale: Locale,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let connection = connection.sql();
    sqlx::query("UPDATE users SET tz = $2, tz_chosen = $7, quiet_start = $3, quiet_end = $4, locale = $5, updated_at = $6 WHERE id = $1")
        .bind(user_id)
        .bind(zone.name())
        .bind(format_clock_time(quiet.start))
        .bind(format_clock_time(quiet.end))
        .bind(locale.as_str())
        .bind(millis(now))
        .bind(i64::from(zone_chosen))
        .execute(&mut *connection)
        .await?;
    Ok(())
}

/// The user an agent token belongs to, and when the token was last marked
/// as used: one read by the token's unique index, which costs the same
/// however many events the person stores.
pub async fn user_by_agent_token(
    connection: &mut impl Connection,
    token_hash: &str,
) -> Result<Option<AgentTokenUser>, StoreError> {
    let connection = connection.sql();
    let row =
        sqlx::query(AGENT_TOKEN_QUERY).bind(token_hash).fetch_optional(&mut *connection).await?;
    let Some(row) = row else { return Ok(None) };
    let last_used: Option<i64> = row.try_get("last_used_at")?;
    Ok(Some(AgentTokenUser {
        user: UserRecord::from_row(&row)?,
        last_used_at: last_used.map(instant).transpose()?,
    }))
}

/// The one read behind every agent call: the token and its person, nothing
/// of their events (the attention count is read only where it is shown).
pub(super) const AGENT_TOKEN_QUERY: &str = "SELECT u.id, u.login, u.tz, u.tz_chosen, u.quiet_start, u.quiet_end, u.locale, t.last_used_at \
     FROM agent_tokens t JOIN users u ON u.id = t.user_id WHERE t.token_hash = $1";

/// Who an agent token names, as one read finds them.
#[derive(Clone, Debug)]
pub struct AgentTokenUser {
    pub user: UserRecord,
    pub last_used_at: Option<DateTime<Utc>>,
}

/// Marks a user's agent token as used at `now`.
pub async fn mark_agent_token_used(
    connection: &mut impl Connection,
    user_id: i64,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let connection = connection.sql();
    sqlx::query("UPDATE agent_tokens SET last_used_at = $2 WHERE user_id = $1 AND (last_used_at IS NULL OR last_used_at < $2)")
        .bind(user_id)
        .bind(millis(now))
        .execute(&mut *connection)
        .await?;
    Ok(())
}

/// Stores a user's one agent token, replacing (and so invalidating) any
/// previous one.
pub async fn replace_agent_token(
    connection: &mut impl Connection,
    user_id: i64,
    token_hash: &str,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let connection = connection.sql();
    sqlx::query("DELETE FROM agent_tokens WHERE user_id = $1")
        .bind(user_id)
        .execute(&mut *connection)
        .await?;
    sqlx::query("INSERT INTO agent_tokens (user_id, token_hash, created_at, updated_at) VALUES ($1, $2, $3, $3)")
        .bind(user_id)
        .bind(token_hash)
        .bind(millis(now))
        .execute(&mut *connection)
        .await?;
    Ok(())
}

/// Deletes a user's agent token; false when there was none.
pub async fn delete_agent_token(
    connection: &mut impl Connection,
    user_id: i64,
) -> Result<bool, StoreError> {
    let connection = connection.sql();
    let result = sqlx::query("DELETE FROM agent_tokens WHERE user_id = $1")
        .bind(user_id)
        .execute(&mut *connection)
        .await?;
    Ok(result.rows_affected() > 0)
}

/// When a user's agent token was issued and last used, if they have one.
pub async fn agent_token_status(
    connection: &mut impl Connection,
    user_id: i64,
) -> Result<Option<(DateTime<Utc>, Option<DateTime<Utc>>)>, StoreError> {
    let connection = connection.sql();
    let row = sqlx::query("SELECT created_at, last_used_at FROM agent_tokens WHERE user_id = $1")
        .bind(user_id)
        .fetch_optional(&mut *connection)
        .await?;
    let Some(row) = row else { return Ok(None) };
    let last_used: Option<i64> = row.try_get("last_used_at")?;
    Ok(Some((instant(row.try_get("created_at")?)?, last_used.map(instant).transpose()?)))
}

impl Store {
    pub async fn list_users(&self) -> Result<Vec<UserSummary>, StoreError> {
        let rows = sqlx::query(with_states!(
            "SELECT u.id, u.login, u.tz, u.tz_chosen, u.quiet_start, u.quiet_end, u.locale, u.created_at, \
             (SELECT COUNT(*) FROM agent_tokens t WHERE t.user_id = u.id) AS tokens, \
             (SELECT COUNT(*) FROM events e WHERE e.user_id = u.id AND e.state IN ({active})) AS active_events \
             FROM users u ORDER BY u.login"
        ))
        .fetch_all(self.reader())
        .await?;
        rows.iter()
            .map(|row| {
                Ok(UserSummary {
                    user: UserRecord::from_row(row)?,
                    has_agent_token: row.try_get::<i64, _>("tokens")? > 0,
                    active_events: row.try_get("active_events")?,
                    created_at: instant(row.try_get("created_at")?)?,
                })
            })
            .collect()
    }
}

/// Gives the user a new calendar feed token; any earlier one stops working.
pub async fn replace_calendar_feed(
    connection: &mut impl Connection,
    user_id: i64,
    token_hash: &str,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let connection = connection.sql();
    sqlx::query("DELETE FROM calendar_feeds WHERE user_id = $1")
        .bind(user_id)
        .execute(&mut *connection)
        .await?;
    sqlx::query("INSERT INTO calendar_feeds (user_id, token_hash, created_at) VALUES ($1, $2, $3)")
        .bind(user_id)
        .bind(token_hash)
        .bind(millis(now))
        .execute(&mut *connection)
        .await?;
    Ok(())
}

pub async fn delete_calendar_feed(
    connection: &mut impl Connection,
    user_id: i64,
) -> Result<bool, StoreError> {
    let connection = connection.sql();
    let result = sqlx::query("DELETE FROM calendar_feeds WHERE user_id = $1")
        .bind(user_id)
        .execute(&mut *connection)
        .await?;
    Ok(result.rows_affected() > 0)
}

/// When the user's calendar feed was made, if they have one.
pub async fn calendar_feed_created(
    connection: &mut impl Connection,
    user_id: i64,
) -> Result<Option<DateTime<Utc>>, StoreError> {
    let connection = connection.sql();
    let row = sqlx::query("SELECT created_at FROM calendar_feeds WHERE user_id = $1")
        .bind(user_id)
        .fetch_optional(&mut *connection)
        .await?;
    row.map(|row| instant(row.try_get("created_at")?)).transpose()
}

pub async fn user_by_calendar_feed(
    connection: &mut impl Connection,
    token_hash: &str,
) -> Result<Option<UserRecord>, StoreError> {
    let connection = connection.sql();
    let row = sqlx::query(
        "SELECT u.id, u.login, u.tz, u.tz_chosen, u.quiet_start, u.quiet_end, u.locale FROM calendar_feeds f JOIN users u ON u.id = f.user_id WHERE f.token_hash = $1",
    )
    .bind(token_hash)
    .fetch_optional(&mut *connection)
    .await?;
    row.as_ref().map(UserRecord::from_row).transpose()
}
