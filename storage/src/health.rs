//! Owns whether core's storage can be reached and written right now: the
//! liveness row written (`Store::probe`) through each pool that writes,
//! and a connection of its own opened past the pool (`Store::answers`). Core's probe (`storage_watch`)
//! asks both, and its gRPC health follows the answer, so `/up` says 503
//! while Postgres is down or the disk is full and 200 again once it
//! recovers, with no restart. What a failed statement
//! means (storage gone, or a bug) is decided here too, so that the gRPC
//! edge answers UNAVAILABLE, not INTERNAL, when a retry will help.

use std::sync::atomic::Ordering;
use std::time::Duration;

use super::{Store, StoreError};

/// How long one probe may take; a probe that takes longer counts as failed.
const PROBE_TIMEOUT: Duration = Duration::from_secs(3);
/// Free space below which a SQLite database's disk counts as full: a small
/// write may still fit in pages SQLite holds, but the next batch will not.
const SQLITE_MIN_FREE_BYTES: u64 = 1024 * 1024;

impl Store {
    /// Writes the liveness row in a transaction of its own, on the writer:
    /// it fails while the database cannot be reached or written.
    pub async fn probe(&self, now_ms: i64) -> Result<(), StoreError> {
        if let Some(file) = &self.sqlite_file {
            let free = free_bytes(file);
            let room = free.is_none_or(|free| free >= SQLITE_MIN_FREE_BYTES);
            self.disk_has_room.store(room, Ordering::Relaxed);
            if !room {
                return Err(StoreError::DiskFull { free });
            }
        }
        let write = async {
            self.write_liveness(&self.writer, now_ms).await?;
            // Group commit writes creates and pushes through connections of
            // its own on a server: a pool that cannot open one (the server
            // at its connection limit after they were closed) fails every
            // create while the writer still writes.
            if self.backend.is_a_server() {
                self.write_liveness(&self.grouped_writer, now_ms).await?;
            }
            Ok(())
        };
        tokio::time::timeout(PROBE_TIMEOUT, write).await.unwrap_or(Err(StoreError::TimedOut))
    }

    async fn write_liveness(&self, pool: &sqlx::AnyPool, now_ms: i64) -> Result<(), StoreError> {
        let mut transaction = self.begin_on(pool).await?;
        sqlx::query("UPDATE liveness SET checked_at = $1 WHERE id = 1")
            .bind(now_ms)
            .execute(&mut *transaction)
            .await?;
        transaction.commit().await?;
        Ok(())
    }
}

/// How long a connection of its own may take to open, for
/// [`Store::answers`].
const ANSWER_TIMEOUT: Duration = Duration::from_secs(1);

impl Store {
    /// Opens and closes a connection of its own, past the pool: a server
    /// that is down or restarting refuses it at once (or its name no longer
    /// resolves), where the pool would keep trying until its acquire
    /// timeout and then say only that it timed out. A SQLite file always
    /// answers.
    pub async fn answers(&self) -> Result<(), StoreError> {
        if !self.backend.is_a_server() {
            return Ok(());
        }
        let open = async {
            let connection = <sqlx::AnyConnection as sqlx::Connection>::connect_with(&self.options)
                .await
                .map_err(StoreError::Connect)?;
            sqlx::Connection::close(connection).await.map_err(StoreError::Connect)
        };
        tokio::time::timeout(ANSWER_TIMEOUT, open).await.unwrap_or(Err(StoreError::TimedOut))
    }
}

/// The space left to an unprivileged writer on the file system of `file`
/// (or of its folder, before the file exists).
fn free_bytes(file: &std::path::Path) -> Option<u64> {
    let folder = file
        .parent()
        .filter(|folder| !folder.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let stats =
        nix::sys::statvfs::statvfs(file).or_else(|_| nix::sys::statvfs::statvfs(folder)).ok()?;
    Some(stats.blocks_available().saturating_mul(stats.fragment_size()))
}

impl Store {
    /// Refuses a write while the probe last found the disk full.
    pub(super) fn refuse_on_a_full_disk(&self) -> Result<(), StoreError> {
        if self.disk_has_room.load(Ordering::Relaxed) {
            Ok(())
        } else {
            Err(StoreError::DiskFull { free: None })
        }
    }
}

impl StoreError {
    /// Whether the database could not be reached or written (it is down,
    /// restarting, out of disk or connections): a retry later can succeed,
    /// unlike a statement that is wrong.
    pub fn is_unavailable(&self) -> bool {
        match self {
            Self::TimedOut | Self::Closed | Self::Connect(_) | Self::DiskFull { .. } => true,
            Self::Query(error) => unavailable(error),
            Self::BadUrl(_)
            | Self::Migrate(_)
            | Self::Corrupt(_)
            | Self::Failed(_)
            | Self::ServedByAnotherCore(_) => false,
        }
    }
}

impl StoreError {
    /// Whether opening the database failed in a way that waiting can fix:
    /// the server cannot be reached yet or is starting up, unlike a wrong
    /// password, database name or URL.
    pub fn may_come_up(&self) -> bool {
        match self {
            Self::Connect(error) | Self::Query(error) => unavailable(error),
            Self::TimedOut | Self::Closed => true,
            _ => false,
        }
    }
}

impl StoreError {
    /// The same failure for another caller of a shared statement, when
    /// the database was unavailable (which says nothing about any one
    /// caller's rows): the same kind, with the same words. `None` for a
    /// failure a caller's own rows may have caused.
    pub fn for_another_caller(&self) -> Option<Self> {
        if !self.is_unavailable() {
            return None;
        }
        Some(match self {
            Self::TimedOut => Self::TimedOut,
            Self::Closed => Self::Closed,
            Self::DiskFull { free } => Self::DiskFull { free: *free },
            Self::Query(sqlx::Error::PoolTimedOut) => Self::Query(sqlx::Error::PoolTimedOut),
            Self::Query(sqlx::Error::PoolClosed) => Self::Query(sqlx::Error::PoolClosed),
            Self::Query(sqlx::Error::Io(error)) => {
                Self::Query(sqlx::Error::Io(std::io::Error::new(error.kind(), error.to_string())))
            }
            // A driver's error cannot be copied; an I/O error with its words
            // is answered the same way (unavailable, retry later).
            other => Self::Query(sqlx::Error::Io(std::io::Error::other(other.to_string()))),
        })
    }
}

fn unavailable(error: &sqlx::Error) -> bool {
    match error {
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed => true,
        sqlx::Error::Database(database) => {
            let code = database.code().unwrap_or_default();
            if database.try_downcast_ref::<sqlx::sqlite::SqliteError>().is_some() {
                // SQLite's primary result codes, in the low byte of the
                // extended ones: BUSY, LOCKED, READONLY, IOERR, FULL, CANTOPEN.
                code.parse::<i32>()
                    .is_ok_and(|extended| matches!(extended & 0xff, 5 | 6 | 8 | 10 | 13 | 14))
            } else {
                // Postgres's SQLSTATE classes: connection exceptions (08),
                // insufficient resources such as a full disk (53), an
                // operator's intervention such as a shutdown (57P), a
                // system error (58).
                code.starts_with("08")
                    || code.starts_with("53")
                    || code.starts_with("57P")
                    || code.starts_with("58")
            }
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_caller_gets_the_same_unavailable_failure_and_no_copy_of_a_bad_statement() {
        let reset = StoreError::Query(sqlx::Error::Io(std::io::Error::from(
            std::io::ErrorKind::ConnectionReset,
        )));
        for away in [reset, StoreError::TimedOut, StoreError::DiskFull { free: Some(3) }] {
            let copy = away.for_another_caller().expect("an unavailable failure is shared");
            assert!(copy.is_unavailable());
            assert_eq!(copy.to_string(), away.to_string());
        }
        let refused = StoreError::Query(sqlx::Error::Protocol("a bad row".to_owned()));
        assert!(refused.for_another_caller().is_none());
        assert!(StoreError::Corrupt("a bad row".to_owned()).for_another_caller().is_none());
    }

    #[test]
    fn lost_connections_and_full_disks_are_unavailable_and_bad_statements_are_not() {
        assert!(StoreError::Query(sqlx::Error::PoolTimedOut).is_unavailable());
        assert!(StoreError::TimedOut.is_unavailable());
        assert!(
            StoreError::Query(sqlx::Error::Io(std::io::Error::from(
                std::io::ErrorKind::ConnectionReset
            )))
            .is_unavailable()
        );
        assert!(!StoreError::Query(sqlx::Error::RowNotFound).is_unavailable());
        assert!(!StoreError::Corrupt("x".into()).is_unavailable());
    }

    #[tokio::test]
    async fn a_sqlite_statement_error_is_not_unavailable() {
        let folder = tempfile::tempdir().unwrap();
        let store = Store::connect(&format!("sqlite://{}/probe.db", folder.path().display()))
            .await
            .unwrap();
        store.probe(1).await.unwrap();
        let error = sqlx::query("INSERT INTO nowhere VALUES (1)")
            .execute(store.writer())
            .await
            .unwrap_err();
        assert!(!StoreError::Query(error).is_unavailable());
        store.close().await;
    }
}
