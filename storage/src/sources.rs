//! Owns the SQL for sources and their tokens.

use chrono::{DateTime, Utc};
use sqlx::Row;

use super::records::{instant, millis};
use super::{Backend, Store, StoreError};
use hado_domain::fields::SourceName;
use hado_domain::source::SourceRecord;

impl Store {
    /// Creates a source; `None` when the name is taken.
    pub async fn create_source(
        &self,
        name: &SourceName,
        token_hash: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<i64>, StoreError> {
        let row = sqlx::query(
            "INSERT INTO sources (name, token_hash, created_at, updated_at) VALUES ($1, $2, $3, $3) \
             ON CONFLICT (name) DO NOTHING RETURNING id",
        )
        .bind(name.as_str())
        .bind(token_hash)
        .bind(millis(now))
        .fetch_optional(self.writer())
        .await?;
        row.map(|row| row.try_get("id")).transpose().map_err(StoreError::from)
    }

    /// Replaces a source's token; false when there is no such source.
    pub async fn set_source_token(
        &self,
        name: &SourceName,
        token_hash: &str,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let result =
            sqlx::query("UPDATE sources SET token_hash = $2, updated_at = $3 WHERE name = $1")
                .bind(name.as_str())
                .bind(token_hash)
                .bind(millis(now))
                .execute(self.writer())
                .await?;
        Ok(result.rows_affected() > 0)
    }

    /// The source a token belongs to: its id and name.
    pub async fn source_by_token(
        &self,
        token_hash: &str,
    ) -> Result<Option<(i64, SourceName)>, StoreError> {
        let row = sqlx::query("SELECT id, name FROM sources WHERE token_hash = $1")
            .bind(token_hash)
            .fetch_optional(self.reader())
            .await?;
        row.map(|row| Ok((row.try_get("id")?, SourceName::from_stored(row.try_get("name")?))))
            .transpose()
    }

    pub async fn source_id(&self, name: &str) -> Result<Option<i64>, StoreError> {
        let row = sqlx::query("SELECT id FROM sources WHERE name = $1")
            .bind(name)
            .fetch_optional(self.reader())
            .await?;
        row.map(|row| row.try_get("id")).transpose().map_err(StoreError::from)
    }

    pub async fn list_sources(&self) -> Result<Vec<SourceRecord>, StoreError> {
        let rows = sqlx::query(
            "SELECT s.name, s.created_at, CASE WHEN s.token_hash IS NULL THEN 0 ELSE 1 END AS has_token, \
             (SELECT COUNT(*) FROM events e WHERE e.source_id = s.id) AS events FROM sources s ORDER BY s.name",
        )
        .fetch_all(self.reader())
        .await?;
        rows.iter()
            .map(|row| {
                Ok(SourceRecord {
                    name: row.try_get("name")?,
                    has_token: row.try_get::<i64, _>("has_token")? == 1,
                    events: row.try_get("events")?,
                    created_at: instant(row.try_get("created_at")?)?,
                })
            })
            .collect()
    }

    /// Deletes a source and its events in one transaction; `None` when there
    /// is no such source, otherwise how many events went with it.
    pub async fn delete_source(&self, name: &SourceName) -> Result<Option<u64>, StoreError> {
        let mut transaction = self.begin_write().await?;
        let Some(row) = sqlx::query("SELECT id FROM sources WHERE name = $1")
            .bind(name.as_str())
            .fetch_optional(&mut *transaction)
            .await?
        else {
            return Ok(None);
        };
        let id: i64 = row.try_get("id")?;
        if self.backend() == Backend::Postgres {
            // Taken in id order first, as every writer that takes several
            // events takes them: the delete's own scan takes them in the
            // order it finds them, and could hold one a zone change or a
            // group waits for while waiting for one it holds.
            sqlx::query("SELECT id FROM events WHERE source_id = $1 ORDER BY id FOR UPDATE")
                .bind(id)
                .execute(&mut *transaction)
                .await?;
        }
        let events = sqlx::query("DELETE FROM events WHERE source_id = $1")
            .bind(id)
            .execute(&mut *transaction)
            .await?;
        sqlx::query("DELETE FROM sources WHERE id = $1")
            .bind(id)
            .execute(&mut *transaction)
            .await?;
        transaction.commit().await?;
        Ok(Some(events.rows_affected()))
    }
}
