//! Owns the SQL of the person's grants to apps and their access and
//! refresh tokens (by hash only): issued, rotated, revoked, resolved to
//! their person, and listed as connected apps.

use chrono::{DateTime, Utc};
use sqlx::Row;

use crate::Connection;
use crate::StoreError;
use crate::records::FromRow;
use crate::records::{instant, millis};
use hado_domain::oauth::ConnectedApp;
use hado_domain::user::UserRecord;

pub async fn insert_grant(
    connection: &mut impl Connection,
    user_id: i64,
    client: i64,
    resource: &str,
    now: DateTime<Utc>,
) -> Result<i64, StoreError> {
    let connection = connection.sql();
    let row = sqlx::query("INSERT INTO oauth_grants (user_id, client_id, resource, created_at, last_used_at) VALUES ($1, $2, $3, $4, $4) RETURNING id")
        .bind(user_id)
        .bind(client)
        .bind(resource)
        .bind(millis(now))
        .fetch_one(&mut *connection)
        .await?;
    Ok(row.try_get("id")?)
}

/// Removes a grant and, with it, every token issued under it.
pub async fn delete_grant(connection: &mut impl Connection, grant: i64) -> Result<(), StoreError> {
    let connection = connection.sql();
    sqlx::query("DELETE FROM oauth_grants WHERE id = $1")
        .bind(grant)
        .execute(&mut *connection)
        .await?;
    Ok(())
}

/// Removes one of the user's grants; false when they have no such grant.
pub async fn delete_user_grant(
    connection: &mut impl Connection,
    user_id: i64,
    grant: i64,
) -> Result<bool, StoreError> {
    let connection = connection.sql();
    let done = sqlx::query("DELETE FROM oauth_grants WHERE id = $1 AND user_id = $2")
        .bind(grant)
        .bind(user_id)
        .execute(&mut *connection)
        .await?;
    Ok(done.rows_affected() == 1)
}

/// Which kind of token a row is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenKind {
    Access,
    Refresh,
}

impl TokenKind {
    fn as_str(self) -> &'static str {
        match self {
            Self::Access => "access",
            Self::Refresh => "refresh",
        }
    }
}

pub async fn insert_token(
    connection: &mut impl Connection,
    token_hash: &str,
    grant: i64,
    kind: TokenKind,
    expires_at: DateTime<Utc>,
) -> Result<(), StoreError> {
    let connection = connection.sql();
    sqlx::query(
        "INSERT INTO oauth_tokens (token_hash, grant_id, kind, expires_at) VALUES ($1, $2, $3, $4)",
    )
    .bind(token_hash)
    .bind(grant)
    .bind(kind.as_str())
    .bind(millis(expires_at))
    .execute(&mut *connection)
    .await?;
    Ok(())
}

/// What a refresh token belongs to.
#[derive(Clone, Debug)]
pub struct RefreshRecord {
    pub grant: i64,
    pub client_id: String,
    pub resource: String,
    pub expires_at: DateTime<Utc>,
    /// When it was exchanged, if it was.
    pub used_at: Option<DateTime<Utc>>,
    /// What its exchange gave, sealed, while a repeat may get it again.
    pub successor: Option<String>,
}

pub async fn refresh_token(
    connection: &mut impl Connection,
    token_hash: &str,
) -> Result<Option<RefreshRecord>, StoreError> {
    let connection = connection.sql();
    let row = sqlx::query(
        "SELECT t.grant_id, c.client_id, g.resource, t.expires_at, t.used_at, t.successor FROM oauth_tokens t \
         JOIN oauth_grants g ON g.id = t.grant_id JOIN oauth_clients c ON c.id = g.client_id WHERE t.token_hash = $1 AND t.kind = 'refresh'",
    )
    .bind(token_hash)
    .fetch_optional(&mut *connection)
    .await?;
    let Some(row) = row else { return Ok(None) };
    let used_at: Option<i64> = row.try_get("used_at")?;
    Ok(Some(RefreshRecord {
        grant: row.try_get("grant_id")?,
        client_id: row.try_get("client_id")?,
        resource: row.try_get("resource")?,
        expires_at: instant(row.try_get("expires_at")?)?,
        used_at: used_at.map(instant).transpose()?,
        successor: row.try_get("successor")?,
    }))
}

/// Deletes a grant's access tokens (a refresh replaces them).
pub async fn revoke_access_tokens(
    connection: &mut impl Connection,
    grant: i64,
) -> Result<(), StoreError> {
    let connection = connection.sql();
    sqlx::query("DELETE FROM oauth_tokens WHERE grant_id = $1 AND kind = 'access'")
        .bind(grant)
        .execute(&mut *connection)
        .await?;
    Ok(())
}

/// Marks a refresh token exchanged, keeping what the exchange gave
/// (`successor`, sealed). False when it already was: another exchange of
/// the same token got there first, and on Postgres this waits for that one
/// to commit, so that its answer can be read next.
pub async fn use_refresh_token(
    connection: &mut impl Connection,
    token_hash: &str,
    now: DateTime<Utc>,
    successor: &str,
) -> Result<bool, StoreError> {
    let connection = connection.sql();
    let done = sqlx::query(
        "UPDATE oauth_tokens SET used_at = $2, successor = $3 WHERE token_hash = $1 AND used_at IS NULL",
    )
    .bind(token_hash)
    .bind(millis(now))
    .bind(successor)
    .execute(&mut *connection)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Forgets the answers of a grant's refresh tokens exchanged at or before
/// `used_by`: past the grace window no repeat may have them.
pub async fn forget_answers(
    connection: &mut impl Connection,
    grant: i64,
    used_by: DateTime<Utc>,
) -> Result<(), StoreError> {
    let connection = connection.sql();
    sqlx::query(
        "UPDATE oauth_tokens SET successor = NULL WHERE grant_id = $1 AND successor IS NOT NULL AND used_at <= $2",
    )
    .bind(grant)
    .bind(millis(used_by))
    .execute(&mut *connection)
    .await?;
    Ok(())
}

pub async fn touch_grant(
    connection: &mut impl Connection,
    grant: i64,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let connection = connection.sql();
    sqlx::query("UPDATE oauth_grants SET last_used_at = $2 WHERE id = $1")
        .bind(grant)
        .bind(millis(now))
        .execute(&mut *connection)
        .await?;
    Ok(())
}

/// The person an unexpired access token acts for, when it expires, and the
/// grant it was issued under: the
/// read behind a call of an app signed in with OAuth that core does not
/// keep, by the token's unique index.
pub async fn user_by_access_token(
    connection: &mut impl Connection,
    token_hash: &str,
    now: DateTime<Utc>,
) -> Result<Option<(UserRecord, DateTime<Utc>, i64)>, StoreError> {
    let connection = connection.sql();
    let row = sqlx::query(
        "SELECT u.id, u.login, u.tz, u.tz_chosen, u.quiet_start, u.quiet_end, u.locale, t.expires_at, t.grant_id \
         FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id JOIN users u ON u.id = g.user_id \
         WHERE t.token_hash = $1 AND t.kind = 'access' AND t.expires_at > $2",
    )
    .bind(token_hash)
    .bind(millis(now))
    .fetch_optional(&mut *connection)
    .await?;
    row.map(|row| {
        Ok((
            UserRecord::from_row(&row)?,
            instant(row.try_get("expires_at")?)?,
            row.try_get("grant_id")?,
        ))
    })
    .transpose()
}

pub async fn connected_apps(
    connection: &mut impl Connection,
    user_id: i64,
) -> Result<Vec<ConnectedApp>, StoreError> {
    let connection = connection.sql();
    let rows = sqlx::query(
        "SELECT g.id, c.name, c.redirect_uris, g.created_at, g.last_used_at FROM oauth_grants g JOIN oauth_clients c ON c.id = g.client_id \
         WHERE g.user_id = $1 ORDER BY g.created_at, g.id",
    )
    .bind(user_id)
    .fetch_all(&mut *connection)
    .await?;
    rows.iter()
        .map(|row| {
            Ok(ConnectedApp {
                id: row.try_get("id")?,
                name: row.try_get("name")?,
                redirect_uris: row.try_get("redirect_uris")?,
                connected_at: instant(row.try_get("created_at")?)?,
                last_used_at: instant(row.try_get("last_used_at")?)?,
            })
        })
        .collect()
}
