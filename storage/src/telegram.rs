//! Owns the SQL of Telegram: linking codes, handled updates, button ids.

use chrono::{DateTime, Utc};
use sqlx::Row;

use super::StoreError;
use super::records::millis;
use crate::Connection;

pub async fn insert_link(
    connection: &mut impl Connection,
    code: &str,
    user_id: i64,
    expires_at: DateTime<Utc>,
) -> Result<(), StoreError> {
    let connection = connection.sql();
    sqlx::query("INSERT INTO telegram_links (code, user_id, expires_at) VALUES ($1, $2, $3)")
        .bind(code.to_owned())
        .bind(user_id)
        .bind(millis(expires_at))
        .execute(&mut *connection)
        .await?;
    Ok(())
}

/// Uses up a linking code: the user it names, when it has not expired.
pub async fn take_link(
    connection: &mut impl Connection,
    code: &str,
    now: DateTime<Utc>,
) -> Result<Option<i64>, StoreError> {
    let connection = connection.sql();
    let row = sqlx::query("SELECT user_id, expires_at FROM telegram_links WHERE code = $1")
        .bind(code.to_owned())
        .fetch_optional(&mut *connection)
        .await?;
    sqlx::query("DELETE FROM telegram_links WHERE code = $1 OR expires_at < $2")
        .bind(code.to_owned())
        .bind(millis(now))
        .execute(&mut *connection)
        .await?;
    let Some(row) = row else { return Ok(None) };
    let expires_at: i64 = row.try_get("expires_at")?;
    Ok((expires_at > millis(now)).then(|| row.try_get("user_id")).transpose()?)
}

/// Records an update as handled; false when it already was.
pub async fn record_update(
    connection: &mut impl Connection,
    update_id: i64,
    now: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let connection = connection.sql();
    let done = sqlx::query("INSERT INTO telegram_updates (update_id, received_at) VALUES ($1, $2) ON CONFLICT (update_id) DO NOTHING")
        .bind(update_id)
        .bind(millis(now))
        .execute(&mut *connection)
        .await?;
    Ok(done.rows_affected() > 0)
}

/// What a stored button stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Button {
    pub event_id: i64,
    pub user_id: i64,
    pub action: String,
    /// The chat the reminder was sent to; `None` for buttons made before
    /// chats were recorded.
    pub chat_id: Option<String>,
}

pub async fn insert_button(
    connection: &mut impl Connection,
    id: &str,
    button: &Button,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let connection = connection.sql();
    sqlx::query("INSERT INTO telegram_buttons (id, event_id, user_id, action, chat_id, created_at) VALUES ($1, $2, $3, $4, $5, $6)")
        .bind(id.to_owned())
        .bind(button.event_id)
        .bind(button.user_id)
        .bind(button.action.clone())
        .bind(button.chat_id.clone())
        .bind(millis(now))
        .execute(&mut *connection)
        .await?;
    Ok(())
}

/// The event, user, action and chat a button stands for.
pub async fn find_button(
    connection: &mut impl Connection,
    id: &str,
) -> Result<Option<Button>, StoreError> {
    let connection = connection.sql();
    let row = sqlx::query(
        "SELECT event_id, user_id, action, chat_id FROM telegram_buttons WHERE id = $1",
    )
    .bind(id.to_owned())
    .fetch_optional(&mut *connection)
    .await?;
    row.map(|row| {
        Ok(Button {
            event_id: row.try_get("event_id")?,
            user_id: row.try_get("user_id")?,
            action: row.try_get("action")?,
            chat_id: row.try_get("chat_id")?,
        })
    })
    .transpose()
}
