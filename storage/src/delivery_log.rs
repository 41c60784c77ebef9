//! Owns reading what happened to an event's reminders: its delivery log,
//! and where the thread of its emails starts.

use chrono::{DateTime, Utc};
use sqlx::Row;

use super::StoreError;
use super::records::instant;
use crate::Connection;
use hado_domain::channel::ChannelKind;
use hado_domain::delivery::{DeliveryKind, DeliveryRecord, DeliveryStatus};

/// An event's delivery log, newest first (at most 50 lines).
pub async fn for_event(
    connection: &mut impl Connection,
    event_id: i64,
) -> Result<Vec<DeliveryRecord>, StoreError> {
    let connection = connection.sql();
    let rows = sqlx::query(
        "SELECT d.id, d.channel_id, c.kind AS channel_kind, c.target AS channel_target, d.kind, d.due_at, d.status, d.attempts, d.last_error, d.updated_at \
         FROM deliveries d LEFT JOIN channels c ON c.id = d.channel_id WHERE d.event_id = $1 ORDER BY d.id DESC LIMIT 50",
    )
    .bind(event_id)
    .fetch_all(&mut *connection)
    .await?;
    rows.iter()
        .map(|row| {
            Ok(DeliveryRecord {
                id: row.try_get("id")?,
                channel_id: row.try_get("channel_id")?,
                channel_kind: row
                    .try_get::<Option<String>, _>("channel_kind")?
                    .as_deref()
                    .map(ChannelKind::from_stored)
                    .transpose()?,
                channel_target: row.try_get("channel_target")?,
                kind: DeliveryKind::from_stored(row.try_get("kind")?)?,
                due_at: instant(row.try_get("due_at")?)?,
                status: DeliveryStatus::from_stored(row.try_get("status")?)?,
                attempts: row.try_get("attempts")?,
                note: row.try_get("last_error")?,
                updated_at: instant(row.try_get("updated_at")?)?,
            })
        })
        .collect()
}

/// When the first reminder of an event to a channel was due: the root of
/// the thread its emails form.
pub async fn first_reminder_at(
    connection: &mut impl Connection,
    event_id: i64,
    channel_id: i64,
) -> Result<Option<DateTime<Utc>>, StoreError> {
    let connection = connection.sql();
    let row = sqlx::query(
        "SELECT MIN(due_at) AS first FROM deliveries WHERE event_id = $1 AND channel_id = $2 AND kind IN ('checkpoint', 'repeat')",
    )
    .bind(event_id)
    .bind(channel_id)
    .fetch_one(&mut *connection)
    .await?;
    row.try_get::<Option<i64>, _>("first")?.map(instant).transpose()
}
