//! Owns the SQL for signing agents in: OAuth clients, the person's grants
//! to them, one-time codes, and access and refresh tokens (codes and tokens
//! by their hash only).

use chrono::{DateTime, Utc};
use sqlx::{AnyConnection, Row};

use super::StoreError;
use super::records::{UserRecord, instant, millis, with_states};
use crate::domain::oauth::{ClientKind, ClientMetadata, UNUSED_CLIENT_LIFETIME};

/// A client as stored.
#[derive(Clone, Debug)]
pub(crate) struct ClientRecord {
    pub(crate) id: i64,
    pub(crate) metadata: ClientMetadata,
    pub(crate) kind: ClientKind,
}

fn client_from_row(row: &sqlx::any::AnyRow) -> Result<ClientRecord, StoreError> {
    let uris: String = row.try_get("redirect_uris")?;
    Ok(ClientRecord {
        id: row.try_get("id")?,
        metadata: ClientMetadata {
            name: row.try_get("name")?,
            redirect_uris: uris.lines().map(str::to_owned).collect(),
        },
        kind: ClientKind::from_stored(row.try_get("kind")?),
    })
}

/// Forgets what can no longer be used: expired codes and tokens, and
/// clients no one has connected that have not been used for an hour.
pub(crate) async fn sweep(
    connection: &mut AnyConnection,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM oauth_codes WHERE expires_at <= $1")
        .bind(millis(now))
        .execute(&mut *connection)
        .await?;
    sqlx::query("DELETE FROM oauth_tokens WHERE expires_at <= $1")
        .bind(millis(now))
        .execute(&mut *connection)
        .await?;
    sqlx::query("DELETE FROM oauth_clients WHERE last_used_at <= $1 AND NOT EXISTS (SELECT 1 FROM oauth_grants g WHERE g.client_id = oauth_clients.id)")
        .bind(millis(now - UNUSED_CLIENT_LIFETIME))
        .execute(&mut *connection)
        .await?;
    Ok(())
}

/// How many clients no one has connected are remembered.
pub(crate) async fn unconnected_clients(connection: &mut AnyConnection) -> Result<i64, StoreError> {
    let row = sqlx::query("SELECT COUNT(*) AS n FROM oauth_clients c WHERE NOT EXISTS (SELECT 1 FROM oauth_grants g WHERE g.client_id = c.id)")
        .fetch_one(&mut *connection)
        .await?;
    Ok(row.try_get("n")?)
}

/// Forgets the `count` clients no one has connected that were used least
/// recently (their codes go with them).
pub(crate) async fn forget_least_used_unconnected(
    connection: &mut AnyConnection,
    count: i64,
) -> Result<(), StoreError> {
    sqlx::query(
        "DELETE FROM oauth_clients WHERE id IN (SELECT c.id FROM oauth_clients c \
         WHERE NOT EXISTS (SELECT 1 FROM oauth_grants g WHERE g.client_id = c.id) ORDER BY c.last_used_at, c.id LIMIT $1)",
    )
    .bind(count)
    .execute(&mut *connection)
    .await?;
    Ok(())
}

/// Stores a client, or (for a metadata document, fetched afresh) updates
/// what it says about itself.
pub(crate) async fn save_client(
    connection: &mut AnyConnection,
    client_id: &str,
    metadata: &ClientMetadata,
    kind: ClientKind,
    now: DateTime<Utc>,
) -> Result<ClientRecord, StoreError> {
    let row = sqlx::query(
        "INSERT INTO oauth_clients (client_id, name, redirect_uris, kind, created_at, last_used_at) VALUES ($1, $2, $3, $4, $5, $5) \
         ON CONFLICT (client_id) DO UPDATE SET name = excluded.name, redirect_uris = excluded.redirect_uris, last_used_at = excluded.last_used_at \
         RETURNING id, name, redirect_uris, kind",
    )
    .bind(client_id)
    .bind(&metadata.name)
    .bind(metadata.redirect_uris.join("\n"))
    .bind(kind.as_str())
    .bind(millis(now))
    .fetch_one(&mut *connection)
    .await?;
    client_from_row(&row)
}

pub(crate) async fn client(
    connection: &mut AnyConnection,
    client_id: &str,
) -> Result<Option<ClientRecord>, StoreError> {
    let row =
        sqlx::query("SELECT id, name, redirect_uris, kind FROM oauth_clients WHERE client_id = $1")
            .bind(client_id)
            .fetch_optional(&mut *connection)
            .await?;
    row.as_ref().map(client_from_row).transpose()
}

pub(crate) async fn touch_client(
    connection: &mut AnyConnection,
    id: i64,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE oauth_clients SET last_used_at = $2 WHERE id = $1")
        .bind(id)
        .bind(millis(now))
        .execute(&mut *connection)
        .await?;
    Ok(())
}

/// What an authorization code was issued for.
#[derive(Clone, Debug)]
pub(crate) struct CodeRecord {
    pub(crate) client: i64,
    pub(crate) client_id: String,
    pub(crate) user_id: i64,
    pub(crate) redirect_uri: String,
    pub(crate) code_challenge: String,
    pub(crate) resource: String,
    pub(crate) expires_at: DateTime<Utc>,
    /// Set once the code was exchanged: when, and the grant it made.
    pub(crate) used: Option<Option<i64>>,
}

/// A new code, for `code_hash`.
pub(crate) struct NewCode<'a> {
    pub(crate) code_hash: &'a str,
    pub(crate) client: i64,
    pub(crate) user_id: i64,
    pub(crate) redirect_uri: &'a str,
    pub(crate) code_challenge: &'a str,
    pub(crate) resource: &'a str,
    pub(crate) expires_at: DateTime<Utc>,
}

pub(crate) async fn insert_code(
    connection: &mut AnyConnection,
    code: &NewCode<'_>,
) -> Result<(), StoreError> {
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

pub(crate) async fn code(
    connection: &mut AnyConnection,
    code_hash: &str,
) -> Result<Option<CodeRecord>, StoreError> {
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
pub(crate) async fn use_code(
    connection: &mut AnyConnection,
    code_hash: &str,
    grant: i64,
    now: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let done = sqlx::query("UPDATE oauth_codes SET used_at = $3, grant_id = $2 WHERE code_hash = $1 AND used_at IS NULL")
        .bind(code_hash)
        .bind(grant)
        .bind(millis(now))
        .execute(&mut *connection)
        .await?;
    Ok(done.rows_affected() == 1)
}

pub(crate) async fn insert_grant(
    connection: &mut AnyConnection,
    user_id: i64,
    client: i64,
    resource: &str,
    now: DateTime<Utc>,
) -> Result<i64, StoreError> {
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
pub(crate) async fn delete_grant(
    connection: &mut AnyConnection,
    grant: i64,
) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM oauth_grants WHERE id = $1")
        .bind(grant)
        .execute(&mut *connection)
        .await?;
    Ok(())
}

/// Removes one of the user's grants; false when they have no such grant.
pub(crate) async fn delete_user_grant(
    connection: &mut AnyConnection,
    user_id: i64,
    grant: i64,
) -> Result<bool, StoreError> {
    let done = sqlx::query("DELETE FROM oauth_grants WHERE id = $1 AND user_id = $2")
        .bind(grant)
        .bind(user_id)
        .execute(&mut *connection)
        .await?;
    Ok(done.rows_affected() == 1)
}

/// Which kind of token a row is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TokenKind {
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

pub(crate) async fn insert_token(
    connection: &mut AnyConnection,
    token_hash: &str,
    grant: i64,
    kind: TokenKind,
    expires_at: DateTime<Utc>,
) -> Result<(), StoreError> {
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
pub(crate) struct RefreshRecord {
    pub(crate) grant: i64,
    pub(crate) client_id: String,
    pub(crate) resource: String,
    pub(crate) expires_at: DateTime<Utc>,
    pub(crate) used: bool,
}

pub(crate) async fn refresh_token(
    connection: &mut AnyConnection,
    token_hash: &str,
) -> Result<Option<RefreshRecord>, StoreError> {
    let row = sqlx::query(
        "SELECT t.grant_id, c.client_id, g.resource, t.expires_at, t.used_at FROM oauth_tokens t \
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
        used: used_at.is_some(),
    }))
}

/// Deletes a grant's access tokens (a refresh replaces them).
pub(crate) async fn revoke_access_tokens(
    connection: &mut AnyConnection,
    grant: i64,
) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM oauth_tokens WHERE grant_id = $1 AND kind = 'access'")
        .bind(grant)
        .execute(&mut *connection)
        .await?;
    Ok(())
}

/// Marks a refresh token rotated. False when it already was.
pub(crate) async fn use_refresh_token(
    connection: &mut AnyConnection,
    token_hash: &str,
    now: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let done = sqlx::query(
        "UPDATE oauth_tokens SET used_at = $2 WHERE token_hash = $1 AND used_at IS NULL",
    )
    .bind(token_hash)
    .bind(millis(now))
    .execute(&mut *connection)
    .await?;
    Ok(done.rows_affected() == 1)
}

pub(crate) async fn touch_grant(
    connection: &mut AnyConnection,
    grant: i64,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE oauth_grants SET last_used_at = $2 WHERE id = $1")
        .bind(grant)
        .bind(millis(now))
        .execute(&mut *connection)
        .await?;
    Ok(())
}

/// The person an unexpired access token acts for, with their attention
/// count: the one read behind every call of an app signed in with OAuth.
pub(crate) async fn user_by_access_token(
    connection: &mut AnyConnection,
    token_hash: &str,
    now: DateTime<Utc>,
) -> Result<Option<(UserRecord, i64)>, StoreError> {
    let query = with_states!(
        "SELECT u.id, u.login, u.tz, u.quiet_start, u.quiet_end, u.locale, \
         (SELECT COUNT(*) FROM events e WHERE e.user_id = u.id AND e.attention_since IS NOT NULL AND e.state IN ({active})) AS attention \
         FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id JOIN users u ON u.id = g.user_id \
         WHERE t.token_hash = $1 AND t.kind = 'access' AND t.expires_at > $2"
    );
    let row = sqlx::query(query)
        .bind(token_hash)
        .bind(millis(now))
        .fetch_optional(&mut *connection)
        .await?;
    row.map(|row| Ok((UserRecord::from_row(&row)?, row.try_get("attention")?))).transpose()
}

/// An app the person connected, as Settings lists it.
#[derive(Clone, Debug)]
pub(crate) struct ConnectedApp {
    pub(crate) id: i64,
    pub(crate) name: String,
    pub(crate) redirect_uris: String,
    pub(crate) connected_at: DateTime<Utc>,
    pub(crate) last_used_at: DateTime<Utc>,
}

pub(crate) async fn connected_apps(
    connection: &mut AnyConnection,
    user_id: i64,
) -> Result<Vec<ConnectedApp>, StoreError> {
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
