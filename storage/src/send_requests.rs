//! Owns the SQL of what people made Hado send to targets they cannot vouch
//! for (a confirmation to an address, a test to a channel), counted per
//! target and per person over a window, and of the addresses that asked
//! never to get another confirmation. Targets are kept as hashes: the
//! counts outlive the channels they were sent for, so removing and adding
//! an address again does not reset them.

use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};
use sqlx::Row;

use super::records::{instant, millis};
use super::{Backend, StoreError};
use crate::Connection;
use hado_domain::channel::ChannelKind;

/// Why something was sent at a person's request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// An email address's confirmation message.
    Confirmation,
    /// "Send a test" on a channel.
    Test,
}

impl Purpose {
    fn as_str(self) -> &'static str {
        match self {
            Self::Confirmation => "confirmation",
            Self::Test => "test",
        }
    }
}

/// How long a request is kept: the longest window any cap counts over.
const KEPT_FOR: chrono::Duration = chrono::Duration::days(1);

/// A target's hash: sha256 of its channel kind and who receives there,
/// the same whoever adds it, however often and however spelt: an address
/// without its `+tag` (one mailbox), a webhook's URL as its server reads
/// it (host case, default port) without query or fragment, a chat's id.
pub fn target_hash(kind: ChannelKind, target: &str) -> String {
    let receiver = match kind {
        ChannelKind::Email => mailbox(target),
        ChannelKind::Webhook | ChannelKind::Push => endpoint(target),
        ChannelKind::Telegram => target.to_owned(),
    };
    hex::encode(Sha256::digest(format!("{}:{receiver}", kind.as_str())))
}

/// A webhook's URL without what does not change where it posts to.
fn endpoint(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut url) => {
            url.set_query(None);
            url.set_fragment(None);
            url.to_string()
        }
        Err(_) => url.to_owned(),
    }
}

/// The mailbox an address reaches: without the `+tag` of its local part,
/// which mail servers deliver to the same mailbox.
fn mailbox(address: &str) -> String {
    match address.rsplit_once('@') {
        Some((local, domain)) => {
            let local = local.split_once('+').map_or(local, |(mailbox, _)| mailbox);
            format!("{local}@{domain}")
        }
        None => address.to_owned(),
    }
}

/// How many requests of `purpose` there were since `since`, and the oldest
/// of them (when the window frees a place), for one target or one person.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub count: i64,
    pub oldest: Option<DateTime<Utc>>,
}

/// Locks the person and the target until the transaction ends, on
/// Postgres, so that two requests made at once are counted one after the
/// other. SQLite's one writer already does that. The two-key advisory
/// locks are a space of their own, apart from sqlx's migration lock.
pub async fn lock(
    connection: &mut impl Connection,
    user_id: i64,
    target_hash: &str,
) -> Result<(), StoreError> {
    let connection = connection.sql();
    if Backend::of(connection) == Backend::Postgres {
        sqlx::query(
            "SELECT pg_advisory_xact_lock(4171, hashtext($1)), pg_advisory_xact_lock(4172, hashtext($2))",
        )
        .bind(user_id.to_string())
        .bind(target_hash)
        .execute(&mut *connection)
        .await?;
    }
    Ok(())
}

/// Whose requests a [`Tally`] counts.
#[derive(Clone, Copy, Debug)]
pub enum Whose<'a> {
    /// Every request to one target, by its hash, whoever asked.
    Target(&'a str),
    /// Every request one person made, to any target.
    Person(i64),
}

/// The requests of `purpose` since `since`, for one target or one person.
pub async fn tally_of(
    connection: &mut impl Connection,
    whose: Whose<'_>,
    purpose: Purpose,
    since: DateTime<Utc>,
) -> Result<Tally, StoreError> {
    let connection = connection.sql();
    let column = match whose {
        Whose::Target(_) => "target_hash",
        Whose::Person(_) => "user_id",
    };
    let sql = format!(
        "SELECT COUNT(*) AS count, MIN(sent_at) AS oldest FROM send_requests \
         WHERE {column} = $1 AND purpose = $2 AND sent_at > $3"
    );
    let query = sqlx::query(sqlx::AssertSqlSafe(sql));
    let query = match whose {
        Whose::Target(hash) => query.bind(hash.to_owned()),
        Whose::Person(user_id) => query.bind(user_id),
    };
    let row = query.bind(purpose.as_str()).bind(millis(since)).fetch_one(&mut *connection).await?;
    tally(&row)
}

fn tally(row: &sqlx::any::AnyRow) -> Result<Tally, StoreError> {
    Ok(Tally {
        count: row.try_get("count")?,
        oldest: row.try_get::<Option<i64>, _>("oldest")?.map(instant).transpose()?,
    })
}

/// Records one request, and forgets this person's and this target's
/// requests that no window counts any more, so the table holds about a
/// day of requests.
pub async fn record(
    connection: &mut impl Connection,
    user_id: i64,
    target_hash: &str,
    purpose: Purpose,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let connection = connection.sql();
    sqlx::query(
        "DELETE FROM send_requests WHERE (user_id = $1 OR target_hash = $2) AND sent_at <= $3",
    )
    .bind(user_id)
    .bind(target_hash)
    .bind(millis(now - KEPT_FOR))
    .execute(&mut *connection)
    .await?;
    sqlx::query(
        "INSERT INTO send_requests (user_id, purpose, target_hash, sent_at) VALUES ($1, $2, $3, $4)",
    )
    .bind(user_id)
    .bind(purpose.as_str())
    .bind(target_hash)
    .bind(millis(now))
    .execute(&mut *connection)
    .await?;
    Ok(())
}

/// Whether the address with this hash asked never to get a confirmation.
pub async fn is_suppressed(
    connection: &mut impl Connection,
    address_hash: &str,
) -> Result<bool, StoreError> {
    let connection = connection.sql();
    let row = sqlx::query("SELECT 1 FROM email_suppressions WHERE address_hash = $1")
        .bind(address_hash)
        .fetch_optional(&mut *connection)
        .await?;
    Ok(row.is_some())
}

/// Records that the address with this hash wants no more confirmations.
pub async fn suppress(
    connection: &mut impl Connection,
    address_hash: &str,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let connection = connection.sql();
    sqlx::query(
        "INSERT INTO email_suppressions (address_hash, suppressed_at) VALUES ($1, $2) \
         ON CONFLICT (address_hash) DO NOTHING",
    )
    .bind(address_hash)
    .bind(millis(now))
    .execute(&mut *connection)
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_and_its_tagged_forms_are_one_target() {
        let hash = |address| target_hash(ChannelKind::Email, address);
        assert_eq!(hash("anna+1@example.com"), hash("anna@example.com"));
        assert_eq!(hash("anna+news+x@example.com"), hash("anna@example.com"));
        assert_ne!(hash("anna@example.com"), hash("anna@example.org"));
        assert_ne!(hash("bob@example.com"), hash("anna@example.com"));
    }

    #[test]
    fn a_webhook_is_one_target_whatever_its_query_or_spelling() {
        let hash = |url| target_hash(ChannelKind::Webhook, url);
        assert_eq!(
            hash("https://hooks.example.com/a?x=1"),
            hash("https://HOOKS.example.com:443/a")
        );
        assert_eq!(hash("https://hooks.example.com/a#y"), hash("https://hooks.example.com/a"));
        assert_ne!(hash("https://hooks.example.com/a"), hash("https://hooks.example.com/b"));
        assert_ne!(hash("https://hooks.example.com/a"), hash("https://other.example.com/a"));
    }
}
