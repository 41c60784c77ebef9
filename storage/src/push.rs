//! Owns the SQL that only Web Push needs: the key pair this Hado makes for
//! itself once (`server_keys`), a device's name, a subscription's keys
//! renewed, and the notice of a device whose subscription ended.

use chrono::{DateTime, Utc};
use sqlx::Row;

use super::StoreError;
use super::records::{instant, millis};
use crate::Connection;
use hado_domain::channel::ChannelKind;

/// The value kept under `name`, storing `made` first when there is none:
/// the first core to start keeps its key, and every later one reads it.
pub async fn server_key(
    connection: &mut impl Connection,
    name: &str,
    made: &str,
    now_millis: i64,
) -> Result<String, StoreError> {
    let connection = connection.sql();
    sqlx::query(
        "INSERT INTO server_keys (name, value, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING",
    )
    .bind(name.to_owned())
    .bind(made.to_owned())
    .bind(now_millis)
    .execute(&mut *connection)
    .await?;
    let row = sqlx::query("SELECT value FROM server_keys WHERE name = $1")
        .bind(name.to_owned())
        .fetch_one(&mut *connection)
        .await?;
    Ok(row.try_get("value")?)
}

impl super::Store {
    /// [`server_key`] in a write transaction of its own: what core keeps
    /// as it starts, before there is an engine.
    pub async fn keep_server_key(
        &self,
        name: &str,
        made: &str,
        now_millis: i64,
    ) -> Result<String, StoreError> {
        let mut transaction = self.begin_write().await?;
        let kept = server_key(&mut transaction, name, made, now_millis).await?;
        transaction.commit().await?;
        Ok(kept)
    }
}

/// Names one of the user's channels; whether it was theirs.
pub async fn set_name(
    connection: &mut impl Connection,
    user_id: i64,
    id: i64,
    name: &str,
    now: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let connection = connection.sql();
    let done = sqlx::query(
        "UPDATE channels SET name = $3, updated_at = $4 WHERE id = $1 AND user_id = $2",
    )
    .bind(id)
    .bind(user_id)
    .bind(name.to_owned())
    .bind(millis(now))
    .execute(&mut *connection)
    .await?;
    Ok(done.rows_affected() > 0)
}

/// A subscription sent again with new keys: kept, and turned on again with
/// no error, since its browser has just subscribed.
pub async fn renew(
    connection: &mut impl Connection,
    id: i64,
    keys: &str,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let connection = connection.sql();
    sqlx::query(
        "UPDATE channels SET secret = $2, enabled = 1, last_error = NULL, last_error_at = NULL, updated_at = $3 WHERE id = $1",
    )
    .bind(id)
    .bind(keys.to_owned())
    .bind(millis(now))
    .execute(&mut *connection)
    .await?;
    Ok(())
}

/// Removes a push channel whose push service said the subscription is gone
/// (404 or 410), noting its device on its person for Settings to show.
/// Nothing for a channel of another kind.
pub async fn remove_gone(
    connection: &mut impl Connection,
    id: i64,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let connection = connection.sql();
    let gone = sqlx::query("SELECT user_id, name FROM channels WHERE id = $1 AND kind = $2")
        .bind(id)
        .bind(ChannelKind::Push.as_str())
        .fetch_optional(&mut *connection)
        .await?;
    let Some(gone) = gone else { return Ok(()) };
    sqlx::query("UPDATE users SET push_gone = $2, push_gone_at = $3 WHERE id = $1")
        .bind(gone.try_get::<i64, _>("user_id")?)
        .bind(gone.try_get::<Option<String>, _>("name")?.unwrap_or_default())
        .bind(millis(now))
        .execute(&mut *connection)
        .await?;
    sqlx::query("DELETE FROM channels WHERE id = $1").bind(id).execute(&mut *connection).await?;
    Ok(())
}

/// The device whose subscription last ended, and when, if no device has
/// subscribed since.
pub async fn gone_device(
    connection: &mut impl Connection,
    user_id: i64,
) -> Result<Option<(String, DateTime<Utc>)>, StoreError> {
    let connection = connection.sql();
    let row = sqlx::query("SELECT push_gone, push_gone_at FROM users WHERE id = $1")
        .bind(user_id)
        .fetch_one(&mut *connection)
        .await?;
    match (row.try_get::<Option<String>, _>("push_gone")?, row.try_get("push_gone_at")?) {
        (Some(name), Some(at)) => Ok(Some((name, instant(at)?))),
        _ => Ok(None),
    }
}

/// Forgets the ended device: another has subscribed.
pub async fn forget_gone_device(
    connection: &mut impl Connection,
    user_id: i64,
) -> Result<(), StoreError> {
    let connection = connection.sql();
    sqlx::query("UPDATE users SET push_gone = NULL, push_gone_at = NULL WHERE id = $1")
        .bind(user_id)
        .execute(&mut *connection)
        .await?;
    Ok(())
}
