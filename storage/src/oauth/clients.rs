//! Owns the SQL of OAuth clients: registered or read from a metadata
//! document, touched when used, and swept or pushed out when nobody
//! connects them.

use chrono::{DateTime, Utc};
use sqlx::Row;

use crate::Connection;
use crate::StoreError;
use crate::records::millis;
use hado_domain::oauth::{ClientKind, ClientMetadata, REFRESH_GRACE, UNUSED_CLIENT_LIFETIME};

/// A client as stored.
#[derive(Clone, Debug)]
pub struct ClientRecord {
    pub id: i64,
    pub metadata: ClientMetadata,
    pub kind: ClientKind,
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

/// Forgets what can no longer be used: expired codes and tokens, refresh
/// tokens' answers past the grace window, and clients no one has connected
/// that have not been used for an hour.
pub async fn sweep(connection: &mut impl Connection, now: DateTime<Utc>) -> Result<(), StoreError> {
    let connection = connection.sql();
    sqlx::query("DELETE FROM oauth_codes WHERE expires_at <= $1")
        .bind(millis(now))
        .execute(&mut *connection)
        .await?;
    sqlx::query("DELETE FROM oauth_tokens WHERE expires_at <= $1")
        .bind(millis(now))
        .execute(&mut *connection)
        .await?;
    sqlx::query(
        "UPDATE oauth_tokens SET successor = NULL WHERE successor IS NOT NULL AND used_at <= $1",
    )
    .bind(millis(now - REFRESH_GRACE))
    .execute(&mut *connection)
    .await?;
    sqlx::query("DELETE FROM oauth_clients WHERE last_used_at <= $1 AND NOT EXISTS (SELECT 1 FROM oauth_grants g WHERE g.client_id = oauth_clients.id)")
        .bind(millis(now - UNUSED_CLIENT_LIFETIME))
        .execute(&mut *connection)
        .await?;
    Ok(())
}

/// How many clients no one has connected are remembered.
pub async fn unconnected_clients(connection: &mut impl Connection) -> Result<i64, StoreError> {
    let connection = connection.sql();
    let row = sqlx::query("SELECT COUNT(*) AS n FROM oauth_clients c WHERE NOT EXISTS (SELECT 1 FROM oauth_grants g WHERE g.client_id = c.id)")
        .fetch_one(&mut *connection)
        .await?;
    Ok(row.try_get("n")?)
}

/// Forgets the `count` clients no one has connected that were used least
/// recently (their codes go with them).
pub async fn forget_least_used_unconnected(
    connection: &mut impl Connection,
    count: i64,
) -> Result<(), StoreError> {
    let connection = connection.sql();
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
pub async fn save_client(
    connection: &mut impl Connection,
    client_id: &str,
    metadata: &ClientMetadata,
    kind: ClientKind,
    now: DateTime<Utc>,
) -> Result<ClientRecord, StoreError> {
    let connection = connection.sql();
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

pub async fn client(
    connection: &mut impl Connection,
    client_id: &str,
) -> Result<Option<ClientRecord>, StoreError> {
    let connection = connection.sql();
    let row =
        sqlx::query("SELECT id, name, redirect_uris, kind FROM oauth_clients WHERE client_id = $1")
            .bind(client_id)
            .fetch_optional(&mut *connection)
            .await?;
    row.as_ref().map(client_from_row).transpose()
}

pub async fn touch_client(
    connection: &mut impl Connection,
    id: i64,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let connection = connection.sql();
    sqlx::query("UPDATE oauth_clients SET last_used_at = $2 WHERE id = $1")
        .bind(id)
        .bind(millis(now))
        .execute(&mut *connection)
        .await?;
    Ok(())
}
