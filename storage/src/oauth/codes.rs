//! Owns the SQL of one-time authorization codes, stored by their hash and
//! used once.

use chrono::{DateTime, Utc};
use sqlx::Row;

use crate::Connection;
use crate::StoreError;
use crate::records::{instant, millis};

/// What an authorization code was issued for.
#[derive(Clone, Debug)]
pub struct CodeRecord {
    pub client: i64,
    pub client_id: String,
    pub user_id: i64,
    pub redirect_uri: String,
    pub code_challenge: String,
    pub resource: String,
    pub expires_at: DateTime<Utc>,
    /// Set once the code was exchanged: when, and the grant it made.
    pub used: Option<Option<i64>>,
}

/// A new code, for `code_hash`.
pub struct NewCode<'a> {
    pub code_hash: &'a str,
    pub client: i64,
    pub user_id: i64,
    pub redirect_uri: &'a str,
    pub code_challenge: &'a str,
    pub resource: &'a str,
    pub expires_at: DateTime<Utc>,
}

pub async fn insert_code(
    connection: &mut impl Connection,
    code: &NewCode<'_>,
) -> Result<(), StoreError> {
    let connection = connection.sql();
    sqlx::query(
        "INSERT INTO oauth_codes (code_hash, client_id, user_id, redirect_uri, code_challenge, resource, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(code.code_hash)
    .bind(code.client)
    .bind(code.user_id)
    .bind(code.redirect_uri)
    .bind(code.code_challenge)
    .bind(code.resource)
    .bind(millis(code.expires_at))
    .execute(&mut *connection)
    .await?;
    Ok(())
}

pub async fn code(
    connection: &mut impl Connection,
    code_hash: &str,
) -> Result<Option<CodeRecord>, StoreError> {
    let connection = connection.sql();
    let row = sqlx::query(
        "SELECT k.client_id AS client, c.client_id, k.user_id, k.redirect_uri, k.code_challenge, k.resource, k.expires_at, k.used_at, k.grant_id \
         FROM oauth_codes k JOIN oauth_clients c ON c.id = k.client_id WHERE k.code_hash = $1",
    )
    .bind(code_hash)
    .fetch_optional(&mut *connection)
    .await?;
    let Some(row) = row else { return Ok(None) };
    let used_at: Option<i64> = row.try_get("used_at")?;
    let grant: Option<i64> = row.try_get("grant_id")?;
    Ok(Some(CodeRecord {
        client: row.try_get("client")?,
        client_id: row.try_get("client_id")?,
        user_id: row.try_get("user_id")?,
        redirect_uri: row.try_get("redirect_uri")?,
        code_challenge: row.try_get("code_challenge")?,
        resource: row.try_get("resource")?,
        expires_at: instant(row.try_get("expires_at")?)?,
        used: used_at.map(|_| grant),
    }))
}

/// Marks a code exchanged, with the grant it made. False when it already
/// was (another exchange won the race).
pub async fn use_code(
    connection: &mut impl Connection,
    code_hash: &str,
    grant: i64,
    now: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let connection = connection.sql();
    let done = sqlx::query("UPDATE oauth_codes SET used_at = $3, grant_id = $2 WHERE code_hash = $1 AND used_at IS NULL")
        .bind(code_hash)
        .bind(grant)
        .bind(millis(now))
        .execute(&mut *connection)
        .await?;
    Ok(done.rows_affected() == 1)
}
