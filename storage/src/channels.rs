//! Owns the SQL of channels: where a person's reminders go, and the
//! receiver that paces each one's deliveries (see `deliveries`).

use chrono::{DateTime, Utc};
use sqlx::Row;
use sqlx::any::AnyRow;

use super::records::{instant, millis};
use super::{Placeholders, StoreError};
use crate::Connection;
use hado_domain::channel::{ChannelKind, ChannelRecord};

pub(super) const CHANNEL_COLUMNS: &str = "c.id, c.user_id, c.kind, c.target, c.secret, c.enabled, c.last_error, c.last_error_at, c.created_at, c.receiver, c.confirmed_at, c.name";

/// The receiver a channel's deliveries are paced by: a webhook's host and
/// port (every webhook to one server shares its limit, as every device
/// subscribed at one push service does), Telegram (one bot
/// API for every chat), or the mail server (one for every address).
pub fn receiver_of(kind: ChannelKind, target: &str) -> String {
    match kind {
        ChannelKind::Telegram => "telegram".to_owned(),
        ChannelKind::Email => "smtp".to_owned(),
        ChannelKind::Webhook | ChannelKind::Push => match url::Url::parse(target) {
            Ok(url) => match (url.host_str(), url.port_or_known_default()) {
                (Some(host), Some(port)) => format!("{host}:{port}"),
                (Some(host), None) => host.to_owned(),
                (None, _) => target.to_owned(),
            },
            Err(_) => target.to_owned(),
        },
    }
}

/// Fills in the receiver of channels stored before it was kept.
pub async fn fill_receivers(connection: &mut impl Connection) -> Result<(), StoreError> {
    let connection = connection.sql();
    let rows = sqlx::query("SELECT id, kind, target FROM channels WHERE receiver = ''")
        .fetch_all(&mut *connection)
        .await?;
    for row in rows {
        let kind = ChannelKind::from_stored(row.try_get("kind")?)?;
        let receiver = receiver_of(kind, row.try_get("target")?);
        sqlx::query("UPDATE channels SET receiver = $1 WHERE id = $2")
            .bind(receiver)
            .bind(row.try_get::<i64, _>("id")?)
            .execute(&mut *connection)
            .await?;
    }
    Ok(())
}

pub(super) fn channel(row: &AnyRow) -> Result<ChannelRecord, StoreError> {
    Ok(ChannelRecord {
        id: row.try_get("id")?,
        user_id: row.try_get("user_id")?,
        kind: ChannelKind::from_stored(row.try_get("kind")?)?,
        target: row.try_get("target")?,
        secret: row.try_get("secret")?,
        enabled: row.try_get::<i64, _>("enabled")? != 0,
        last_error: row.try_get("last_error")?,
        last_error_at: row.try_get::<Option<i64>, _>("last_error_at")?.map(instant).transpose()?,
        created_at: instant(row.try_get("created_at")?)?,
        receiver: row.try_get("receiver")?,
        confirmed_at: row.try_get::<Option<i64>, _>("confirmed_at")?.map(instant).transpose()?,
        name: row.try_get("name")?,
    })
}

/// Adds a channel: confirmed at once (a webhook, a chat that linked
/// itself), or, for an email address, unconfirmed.
pub async fn add(
    connection: &mut impl Connection,
    user_id: i64,
    kind: ChannelKind,
    target: &str,
    secret: Option<&str>,
    now: DateTime<Utc>,
) -> Result<ChannelRecord, StoreError> {
    let connection = connection.sql();
    let confirmed = kind != ChannelKind::Email;
    let row = sqlx::query(
        "INSERT INTO channels (user_id, kind, target, secret, enabled, created_at, updated_at, receiver, confirmed_at) \
         VALUES ($1, $2, $3, $4, 1, $5, $5, $6, $7) RETURNING id",
    )
    .bind(user_id)
    .bind(kind.as_str())
    .bind(target.to_owned())
    .bind(secret.map(str::to_owned))
    .bind(millis(now))
    .bind(receiver_of(kind, target))
    .bind(confirmed.then(|| millis(now)))
    .fetch_one(&mut *connection)
    .await?;
    let id: i64 = row.try_get("id")?;
    find(connection, user_id, id)
        .await?
        .ok_or_else(|| StoreError::Corrupt("a channel vanished as it was added".into()))
}

/// One of the user's channels.
pub async fn find(
    connection: &mut impl Connection,
    user_id: i64,
    id: i64,
) -> Result<Option<ChannelRecord>, StoreError> {
    let connection = connection.sql();
    let query =
        format!("SELECT {CHANNEL_COLUMNS} FROM channels c WHERE c.id = $1 AND c.user_id = $2");
    let row = sqlx::query(sqlx::AssertSqlSafe(query))
        .bind(id)
        .bind(user_id)
        .fetch_optional(&mut *connection)
        .await?;
    row.as_ref().map(channel).transpose()
}

/// The user's channel of a kind with this target (an email address).
pub async fn find_own_by_target(
    connection: &mut impl Connection,
    user_id: i64,
    kind: ChannelKind,
    target: &str,
) -> Result<Option<ChannelRecord>, StoreError> {
    let connection = connection.sql();
    let query = format!(
        "SELECT {CHANNEL_COLUMNS} FROM channels c WHERE c.user_id = $1 AND c.kind = $2 AND c.target = $3"
    );
    let row = sqlx::query(sqlx::AssertSqlSafe(query))
        .bind(user_id)
        .bind(kind.as_str())
        .bind(target.to_owned())
        .fetch_optional(&mut *connection)
        .await?;
    row.as_ref().map(channel).transpose()
}

/// Marks a channel confirmed, once: a later confirmation keeps the first
/// time. Whether it changed anything.
pub async fn confirm(
    connection: &mut impl Connection,
    id: i64,
    now: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let connection = connection.sql();
    let done = sqlx::query(
        "UPDATE channels SET confirmed_at = $2, updated_at = $2 WHERE id = $1 AND confirmed_at IS NULL",
    )
    .bind(id)
    .bind(millis(now))
    .execute(&mut *connection)
    .await?;
    Ok(done.rows_affected() > 0)
}

/// Pauses an email channel at its recipient's request (the one-click
/// unsubscribe) and takes its confirmation back: its person can turn it on
/// again only through a new confirmation, which the recipient must follow.
pub async fn pause_by_recipient(
    connection: &mut impl Connection,
    id: i64,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let connection = connection.sql();
    sqlx::query(
        "UPDATE channels SET enabled = 0, confirmed_at = NULL, updated_at = $2 WHERE id = $1",
    )
    .bind(id)
    .bind(millis(now))
    .execute(&mut *connection)
    .await?;
    Ok(())
}

/// Pauses every unconfirmed email channel of an address, whoever added it,
/// saying why: its owner asked for no more confirmations. Their pending
/// confirmations are dropped by the caller.
pub async fn refuse_unconfirmed(
    connection: &mut impl Connection,
    address: &str,
    why: &str,
    now: DateTime<Utc>,
) -> Result<Vec<i64>, StoreError> {
    let connection = connection.sql();
    let rows = sqlx::query(
        "UPDATE channels SET enabled = 0, last_error = $2, last_error_at = $3, updated_at = $3 \
         WHERE kind = $4 AND target = $1 AND confirmed_at IS NULL RETURNING id",
    )
    .bind(address.to_owned())
    .bind(why.to_owned())
    .bind(millis(now))
    .bind(ChannelKind::Email.as_str())
    .fetch_all(&mut *connection)
    .await?;
    rows.iter().map(|row| Ok(row.try_get("id")?)).collect()
}

/// How many channels of a kind the user has.
pub async fn count_of_kind(
    connection: &mut impl Connection,
    user_id: i64,
    kind: ChannelKind,
) -> Result<i64, StoreError> {
    let connection = connection.sql();
    let row =
        sqlx::query("SELECT COUNT(*) AS count FROM channels WHERE user_id = $1 AND kind = $2")
            .bind(user_id)
            .bind(kind.as_str())
            .fetch_one(&mut *connection)
            .await?;
    Ok(row.try_get("count")?)
}

/// The channel of a kind with this target (a Telegram chat, say), the
/// earliest if several people linked it.
pub async fn find_by_target(
    connection: &mut impl Connection,
    kind: ChannelKind,
    target: &str,
) -> Result<Option<ChannelRecord>, StoreError> {
    let connection = connection.sql();
    let query = format!(
        "SELECT {CHANNEL_COLUMNS} FROM channels c WHERE c.kind = $1 AND c.target = $2 ORDER BY c.id LIMIT 1"
    );
    let row = sqlx::query(sqlx::AssertSqlSafe(query))
        .bind(kind.as_str())
        .bind(target.to_owned())
        .fetch_optional(&mut *connection)
        .await?;
    row.as_ref().map(channel).transpose()
}

pub async fn for_user(
    connection: &mut impl Connection,
    user_id: i64,
) -> Result<Vec<ChannelRecord>, StoreError> {
    let connection = connection.sql();
    let query =
        format!("SELECT {CHANNEL_COLUMNS} FROM channels c WHERE c.user_id = $1 ORDER BY c.id");
    let rows =
        sqlx::query(sqlx::AssertSqlSafe(query)).bind(user_id).fetch_all(&mut *connection).await?;
    rows.iter().map(channel).collect()
}

/// The enabled and confirmed channels of some users, for one scheduler pass.
pub async fn enabled_for_users(
    connection: &mut impl Connection,
    user_ids: &[i64],
) -> Result<Vec<ChannelRecord>, StoreError> {
    let connection = connection.sql();
    if user_ids.is_empty() {
        return Ok(Vec::new());
    }
    let placeholders: Vec<String> = (1..=user_ids.len()).map(|index| format!("${index}")).collect();
    let query = format!(
        "SELECT {CHANNEL_COLUMNS} FROM channels c WHERE c.enabled = 1 AND c.confirmed_at IS NOT NULL AND c.user_id IN ({}) ORDER BY c.id",
        placeholders.join(", ")
    );
    let mut statement = sqlx::query(sqlx::AssertSqlSafe(query));
    for user_id in user_ids {
        statement = statement.bind(*user_id);
    }
    let rows = statement.fetch_all(&mut *connection).await?;
    rows.iter().map(channel).collect()
}

pub async fn set_enabled(
    connection: &mut impl Connection,
    user_id: i64,
    id: i64,
    enabled: bool,
    now: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let connection = connection.sql();
    let done = sqlx::query(
        "UPDATE channels SET enabled = $3, last_error = CASE WHEN $3 = 1 THEN NULL ELSE last_error END, \
         last_error_at = CASE WHEN $3 = 1 THEN NULL ELSE last_error_at END, updated_at = $4 WHERE id = $1 AND user_id = $2",
    )
    .bind(id)
    .bind(user_id)
    .bind(i64::from(enabled))
    .bind(millis(now))
    .execute(&mut *connection)
    .await?;
    Ok(done.rows_affected() > 0)
}

/// Stops a channel for good reason (the receiver said 410 Gone), saying why.
pub async fn disable_with_error(
    connection: &mut impl Connection,
    id: i64,
    error: &str,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let connection = connection.sql();
    sqlx::query("UPDATE channels SET enabled = 0, last_error = $2, last_error_at = $3, updated_at = $3 WHERE id = $1")
        .bind(id)
        .bind(error.to_owned())
        .bind(millis(now))
        .execute(&mut *connection)
        .await?;
    Ok(())
}

/// Shows a failed send on its channel: the error, and when.
pub async fn set_last_error(
    connection: &mut impl Connection,
    id: i64,
    error: &str,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let connection = connection.sql();
    sqlx::query(
        "UPDATE channels SET last_error = $2, last_error_at = $3, updated_at = $3 WHERE id = $1",
    )
    .bind(id)
    .bind(error.to_owned())
    .bind(millis(now))
    .execute(&mut *connection)
    .await?;
    Ok(())
}

/// Clears the last error of channels whose last send went through, in one
/// statement that touches only those showing an error.
pub async fn clear_last_errors(
    connection: &mut impl Connection,
    ids: &[i64],
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let connection = connection.sql();
    if ids.is_empty() {
        return Ok(());
    }
    let mut placeholders = Placeholders::for_connection(connection);
    let now_placeholder = placeholders.next();
    let sql = format!(
        "UPDATE channels SET last_error = NULL, last_error_at = NULL, updated_at = {now_placeholder} WHERE last_error IS NOT NULL AND id IN {}",
        placeholders.row(ids.len())
    );
    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(millis(now));
    for id in ids {
        query = query.bind(*id);
    }
    query.execute(&mut *connection).await?;
    Ok(())
}

pub async fn remove(
    connection: &mut impl Connection,
    user_id: i64,
    id: i64,
) -> Result<bool, StoreError> {
    let connection = connection.sql();
    let done = sqlx::query("DELETE FROM channels WHERE id = $1 AND user_id = $2")
        .bind(id)
        .bind(user_id)
        .execute(&mut *connection)
        .await?;
    Ok(done.rows_affected() > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_webhook_is_paced_by_its_host_and_port_telegram_as_one() {
        let webhook = |url: &str| receiver_of(ChannelKind::Webhook, url);
        assert_eq!(webhook("https://Hooks.Example.com/a?x=1"), "hooks.example.com:443");
        assert_eq!(webhook("http://hooks.example.com/b"), "hooks.example.com:80");
        assert_eq!(webhook("http://127.0.0.1:9000/c"), "127.0.0.1:9000");
        assert_eq!(webhook("http://[::1]:9000/c"), "[::1]:9000");
        assert_eq!(
            receiver_of(ChannelKind::Telegram, "12345"),
            receiver_of(ChannelKind::Telegram, "67890")
        );
    }
}
