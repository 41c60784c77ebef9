//! Owns the SQL of deliveries, the outbox: one row per reminder per
//! channel, claimed with a lease so that a core that dies mid-send loses
//! nothing and two cores never send the same row at once; paced per
//! receiver, with the pauses of those that strained.

use chrono::{DateTime, Utc};
use sqlx::Row;

use super::channels::{CHANNEL_COLUMNS, channel};
use super::records::{instant, millis};
use super::{Backend, Placeholders, StoreError};
use crate::Connection;
use hado_domain::delivery::{ClaimedDelivery, DeliveryKind, DeliveryStatus};

/// A delivery to write.
#[derive(Clone, Copy, Debug)]
pub struct NewDelivery<'a> {
    /// None for a test message.
    pub event_id: Option<i64>,
    pub channel_id: Option<i64>,
    pub kind: DeliveryKind,
    pub due_at: DateTime<Utc>,
    pub status: DeliveryStatus,
    pub next_attempt_at: Option<DateTime<Utc>>,
    pub note: Option<&'a str>,
}

/// Rows one statement carries.
const DELIVERIES_PER_INSERT: usize = 500;

/// Writes deliveries, a few dozen rows to a statement.
pub async fn insert(
    connection: &mut impl Connection,
    deliveries: &[NewDelivery<'_>],
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let connection = connection.sql();
    for chunk in deliveries.chunks(DELIVERIES_PER_INSERT) {
        let mut placeholders = Placeholders::for_connection(connection);
        let rows: Vec<String> = (0..chunk.len())
            .map(|_| {
                let [id, event, channel, kind, due, status, next, note, created, updated] = std::array::from_fn(|_| placeholders.next());
                format!("({id}, {event}, {channel}, {kind}, {due}, {status}, 0, {next}, {note}, {created}, {updated})")
            })
            .collect();
        let sql = format!(
            "INSERT INTO deliveries (message_id, event_id, channel_id, kind, due_at, status, attempts, next_attempt_at, last_error, created_at, updated_at) VALUES {}",
            rows.join(", ")
        );
        let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
        for delivery in chunk {
            query = query
                .bind(format!("msg_{}", ulid::Ulid::new()))
                .bind(delivery.event_id)
                .bind(delivery.channel_id)
                .bind(delivery.kind.as_str())
                .bind(millis(delivery.due_at))
                .bind(delivery.status.as_str())
                .bind(delivery.next_attempt_at.map(millis))
                .bind(delivery.note.map(str::to_owned))
                .bind(millis(now))
                .bind(millis(now));
        }
        query.execute(&mut *connection).await?;
    }
    Ok(())
}

/// Serialises claims across cores on Postgres, so that two claims never
/// both count the same free room at a receiver. (A SQLite file has one
/// writer already.)
const CLAIM_LOCK: i64 = 0x6861_646f_0001;

/// Picks up to `limit` pending deliveries that are due, for [`lease`] to
/// claim in the same transaction.
///
/// Paced per receiver: one whose pause has not ended gets nothing, and none
/// gets more than `per_receiver` deliveries in flight across all cores
/// (counting the leases that have not ended). The receivers held back are
/// left out of the query itself, so that a long queue for one of them does
/// not hide what is due for the others.
pub async fn pick(
    connection: &mut impl Connection,
    backend: Backend,
    now: DateTime<Utc>,
    limit: i64,
    per_receiver: i64,
) -> Result<Vec<ClaimedDelivery>, StoreError> {
    let connection = connection.sql();
    let lock = match backend {
        Backend::Sqlite => "",
        Backend::Postgres => {
            sqlx::query("SELECT pg_advisory_xact_lock($1)")
                .bind(CLAIM_LOCK)
                .execute(&mut *connection)
                .await?;
            " FOR UPDATE OF d SKIP LOCKED"
        }
    };
    let in_flight = sqlx::query(
        "SELECT c.receiver, COUNT(*) AS sending FROM deliveries d JOIN channels c ON c.id = d.channel_id WHERE d.leased_until > $1 GROUP BY c.receiver",
    )
    .bind(millis(now))
    .fetch_all(&mut *connection)
    .await?;
    let mut room: std::collections::HashMap<String, i64> = std::collections::HashMap::new();
    for row in &in_flight {
        room.insert(row.try_get("receiver")?, per_receiver - row.try_get::<i64, _>("sending")?);
    }
    for row in sqlx::query("SELECT receiver FROM receivers WHERE paused_until > $1")
        .bind(millis(now))
        .fetch_all(&mut *connection)
        .await?
    {
        room.insert(row.try_get("receiver")?, 0);
    }
    let held: Vec<&String> =
        room.iter().filter(|(_, free)| **free <= 0).map(|(receiver, _)| receiver).collect();
    let mut placeholders = Placeholders::for_connection(connection);
    // Placeholders in the order they stand in the text: SQLite's `?`s take
    // their values in that order.
    let due = placeholders.next();
    let not_held = if held.is_empty() {
        String::new()
    } else {
        format!(" AND c.receiver NOT IN {}", placeholders.row(held.len()))
    };
    let count = placeholders.next();
    let query = format!(
        "SELECT d.id AS delivery_id, d.message_id, d.event_id, d.kind AS delivery_kind, d.due_at, d.attempts, {CHANNEL_COLUMNS} \
         FROM deliveries d JOIN channels c ON c.id = d.channel_id \
         WHERE d.status = 'pending' AND d.next_attempt_at <= {due}{not_held} ORDER BY d.next_attempt_at LIMIT {count}{lock}"
    );
    let mut statement = sqlx::query(sqlx::AssertSqlSafe(query)).bind(millis(now));
    for receiver in held {
        statement = statement.bind(receiver.clone());
    }
    let rows = statement.bind(limit).fetch_all(&mut *connection).await?;
    let mut claimed = Vec::with_capacity(rows.len());
    for row in &rows {
        let channel = channel(row)?;
        let free = room.entry(channel.receiver.clone()).or_insert(per_receiver);
        if *free <= 0 {
            continue;
        }
        *free -= 1;
        claimed.push(ClaimedDelivery {
            id: row.try_get("delivery_id")?,
            message_id: row.try_get("message_id")?,
            event_id: row.try_get("event_id")?,
            kind: DeliveryKind::from_stored(row.try_get("delivery_kind")?)?,
            due_at: instant(row.try_get("due_at")?)?,
            attempts: row.try_get("attempts")?,
            channel,
        });
    }
    Ok(claimed)
}

/// Claims the picked deliveries, leasing them until `lease_until`: if this
/// core dies before it records the outcome, another pass sends them again
/// after the lease (at least once, never lost).
pub async fn lease(
    connection: &mut impl Connection,
    claimed: &[ClaimedDelivery],
    lease_until: DateTime<Utc>,
) -> Result<(), StoreError> {
    let connection = connection.sql();
    if claimed.is_empty() {
        return Ok(());
    }
    let mut placeholders = Placeholders::for_connection(connection);
    // Each placeholder once: SQLite's `?`s take their values in order.
    let (next_attempt, leased) = (placeholders.next(), placeholders.next());
    let ids = placeholders.row(claimed.len());
    let sql = format!(
        "UPDATE deliveries SET next_attempt_at = {next_attempt}, leased_until = {leased} WHERE id IN {ids}"
    );
    let mut query =
        sqlx::query(sqlx::AssertSqlSafe(sql)).bind(millis(lease_until)).bind(millis(lease_until));
    for delivery in claimed {
        query = query.bind(delivery.id);
    }
    query.execute(&mut *connection).await?;
    Ok(())
}

/// The longest a receiver is paused for straining in a row, however often.
const LONGEST_PAUSE: chrono::Duration = chrono::Duration::seconds(60);
/// The longest pause a receiver's own `Retry-After` sets for all its posts.
const LONGEST_ASKED_PAUSE: chrono::Duration = chrono::Duration::minutes(5);

/// The pause after `strikes` strained answers in a row: one second, then
/// twice as long each time, up to a minute; or what the receiver asked, up
/// to five minutes, if longer.
pub fn pause_after(strikes: i64, asked: Option<chrono::Duration>) -> chrono::Duration {
    let doubled = chrono::Duration::seconds(1_i64 << (strikes - 1).clamp(0, 6)).min(LONGEST_PAUSE);
    asked.map(|asked| asked.min(LONGEST_ASKED_PAUSE)).unwrap_or_default().max(doubled)
}

/// Pauses a receiver that strained: longer each time in a row.
pub async fn strained(
    connection: &mut impl Connection,
    receiver: &str,
    asked: Option<chrono::Duration>,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let connection = connection.sql();
    let row = sqlx::query("SELECT strikes FROM receivers WHERE receiver = $1")
        .bind(receiver.to_owned())
        .fetch_optional(&mut *connection)
        .await?;
    let strikes = row.map(|row| row.try_get::<i64, _>("strikes")).transpose()?.unwrap_or(0) + 1;
    sqlx::query(
        "INSERT INTO receivers (receiver, strikes, paused_until, updated_at) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (receiver) DO UPDATE SET strikes = excluded.strikes, paused_until = excluded.paused_until, updated_at = excluded.updated_at",
    )
    .bind(receiver.to_owned())
    .bind(strikes)
    .bind(millis(now + pause_after(strikes, asked)))
    .bind(millis(now))
    .execute(&mut *connection)
    .await?;
    Ok(())
}

/// Ends the pauses of receivers that answered at ease.
pub async fn at_ease(
    connection: &mut impl Connection,
    receivers: &[&str],
) -> Result<(), StoreError> {
    let connection = connection.sql();
    if receivers.is_empty() {
        return Ok(());
    }
    let mut placeholders = Placeholders::for_connection(connection);
    let mut query = sqlx::query(sqlx::AssertSqlSafe(format!(
        "DELETE FROM receivers WHERE receiver IN {}",
        placeholders.row(receivers.len())
    )));
    for receiver in receivers {
        query = query.bind(receiver.to_string());
    }
    query.execute(&mut *connection).await?;
    Ok(())
}

/// How one delivery's attempt ended, to be written: sent, failed, or
/// pending again with the next attempt's time.
#[derive(Clone, Copy, Debug)]
pub struct Finished<'a> {
    pub id: i64,
    pub status: DeliveryStatus,
    pub attempts: i64,
    pub next_attempt_at: Option<DateTime<Utc>>,
    pub error: Option<&'a str>,
}

/// Rows one statement carries.
const FINISHED_PER_UPDATE: usize = 500;

/// Writes how attempts ended, one `UPDATE … FROM (VALUES …)` per few hundred,
/// to deliveries still pending: one dropped while its attempt was out
/// (a confirmation its address refused) stays dropped.
pub async fn finish(
    connection: &mut impl Connection,
    finished: &[Finished<'_>],
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let connection = connection.sql();
    for chunk in finished.chunks(FINISHED_PER_UPDATE) {
        let mut placeholders = Placeholders::for_connection(connection);
        let now_placeholder = placeholders.next();
        let sql = format!(
            "UPDATE deliveries SET status = v.column2, attempts = v.column3, next_attempt_at = v.column4, last_error = v.column5, \
             leased_until = NULL, updated_at = {now_placeholder} FROM (VALUES {}) AS v \
             WHERE deliveries.id = v.column1 AND deliveries.status = 'pending'",
            placeholders.rows(chunk.len(), 5)
        );
        let mut query = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(millis(now));
        for row in chunk {
            query = query
                .bind(row.id)
                .bind(row.status.as_str())
                .bind(row.attempts)
                .bind(row.next_attempt_at.map(millis))
                .bind(row.error.map(str::to_owned));
        }
        query.execute(&mut *connection).await?;
    }
    Ok(())
}

/// Drops the confirmations still waiting to go to these channels (their
/// address asked for none), leaving a line in their log. One in flight is
/// looked at again as it goes, and its outcome does not undo the drop.
pub async fn drop_pending_confirmations(
    connection: &mut impl Connection,
    channel_ids: &[i64],
    why: &str,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let connection = connection.sql();
    for id in channel_ids {
        sqlx::query(
            "UPDATE deliveries SET status = $2, next_attempt_at = NULL, last_error = $3, updated_at = $4 \
             WHERE channel_id = $1 AND kind = $5 AND status = $6",
        )
        .bind(*id)
        .bind(DeliveryStatus::Suppressed.as_str())
        .bind(why.to_owned())
        .bind(millis(now))
        .bind(DeliveryKind::Confirmation.as_str())
        .bind(DeliveryStatus::Pending.as_str())
        .execute(&mut *connection)
        .await?;
    }
    Ok(())
}

/// When the next pending delivery is due, for the delivery loop's sleep.
pub async fn earliest_pending(
    connection: &mut impl Connection,
) -> Result<Option<DateTime<Utc>>, StoreError> {
    let connection = connection.sql();
    let row =
        sqlx::query("SELECT MIN(next_attempt_at) AS next FROM deliveries WHERE status = 'pending'")
            .fetch_one(&mut *connection)
            .await?;
    row.try_get::<Option<i64>, _>("next")?.map(instant).transpose()
}

pub async fn pending_count(connection: &mut impl Connection) -> Result<i64, StoreError> {
    let connection = connection.sql();
    let row = sqlx::query("SELECT COUNT(*) AS count FROM deliveries WHERE status = 'pending'")
        .fetch_one(&mut *connection)
        .await?;
    Ok(row.try_get("count")?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words this module's SQL and the deliveries' SQL write out
    /// rather than bind (the partial index `deliveries_pending` matches
    /// only a literal), held to the domain's one spelling of each.
    #[test]
    fn the_words_written_into_the_sql_are_the_domains() {
        assert_eq!(DeliveryStatus::Pending.as_str(), "pending");
        assert_eq!(
            [DeliveryKind::Checkpoint.as_str(), DeliveryKind::Repeat.as_str()],
            ["checkpoint", "repeat"],
            "delivery_log::first_reminder_at"
        );
        for status in DeliveryStatus::ALL {
            assert_eq!(DeliveryStatus::from_stored(status.as_str()), Ok(*status));
        }
        assert!(DeliveryStatus::from_stored("sending").is_err(), "another word is damage");
    }

    #[test]
    fn pauses_double_up_to_a_minute_and_honour_a_longer_wait_asked() {
        let seconds = |strikes, asked: Option<i64>| {
            pause_after(strikes, asked.map(chrono::Duration::seconds)).num_seconds()
        };
        let doubling: Vec<i64> = (1..=9).map(|strikes| seconds(strikes, None)).collect();
        assert_eq!(doubling, [1, 2, 4, 8, 16, 32, 60, 60, 60]);
        assert_eq!(seconds(1, Some(30)), 30, "Retry-After asked for longer");
        assert_eq!(seconds(6, Some(3)), 32, "the doubled pause is longer");
        assert_eq!(
            seconds(1, Some(86_400)),
            300,
            "a receiver pauses every post for at most five minutes"
        );
    }
}
