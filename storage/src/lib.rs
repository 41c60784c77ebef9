//! Owns Hado's storage: the connection to SQLite or Postgres (chosen by the
//! URL's scheme), the migrations, and every SQL statement core runs. No other
//! module — and no other crate — knows SQL.
//!
//! One set of `$1`-style queries runs on both backends through sqlx's `Any`
//! driver; the few places where the dialects differ (how a write transaction
//! starts, how rows are claimed, how placeholders are written, how a batch's
//! keys are looked up and its new rows sent) each decide by [`Backend`], and
//! ARCHITECTURE.md lists them.
//!
//! Reads and writes use separate pools. On SQLite, which allows one writer
//! at a time, the write pool holds a single connection: concurrent writers
//! wait their turn in memory, in order, instead of sleeping on the file's
//! lock (`busy_timeout`) and retrying; and the read pool's connections are
//! `query_only`, so a write sent down the wrong path fails in every test.
//! On Postgres, which takes concurrent writers, both are one pool, and
//! group commit (a person's creates, sources' upserts) has two connections
//! of its own, whose statements keep their plans ([`pools::GROUPED_SETUP`]).

mod arrays;
mod backend;
pub mod changes;
pub mod channels;
mod connection;
mod core_lock;
pub mod deliveries;
pub mod delivery_log;
pub mod events;
pub mod group_commit;
mod grouped;
mod health;
mod migrations;
pub mod oauth;
pub(crate) mod pools;
pub mod push;
pub mod records;
pub mod send_requests;
pub mod sources;
mod sqlite_files;
pub mod telegram;
#[cfg(feature = "testing")]
pub mod testing;
pub mod users;
mod wal;

pub use backend::Backend;
pub(crate) use backend::Placeholders;
pub use connection::{Connection, QueryError};
pub use core_lock::CoreLock;

use std::str::FromStr;
use std::time::Duration;

use sqlx::any::AnyConnectOptions;
use sqlx::migrate::Migrator;
use sqlx::{AnyPool, Connection as _, Transaction};

use hado_domain::cases::UnknownWord;

pub use events::EventWrite;
pub use events::RowKey;
pub use grouped::{Inserted, NewEventRow};
pub use pools::GROUPED_NAME;
pub use records::{ATTENTION_CAP, inserted_event};
use sqlite_files::prepare_sqlite_url;
pub use sqlite_files::sqlite_file;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{0}")]
    BadUrl(String),
    #[error("cannot open the database: {0}")]
    Connect(sqlx::Error),
    #[error("cannot migrate the database: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error(transparent)]
    Query(#[from] sqlx::Error),
    /// The store was closed while a write waited.
    #[error("the database is closing")]
    Closed,
    /// The database did not answer in time.
    #[error("the database did not answer in time")]
    TimedOut,
    /// The SQLite database's disk has (almost) no space left; writes are
    /// refused until space is freed.
    #[error("the database's disk is full{}; writes resume once space is freed", free.map(|free| format!(" ({free} bytes free)")).unwrap_or_default())]
    DiskFull { free: Option<u64> },
    /// A write that failed inside core, not in the database (a bug): the
    /// log says more.
    #[error("{0}; see core's log")]
    Failed(String),
    /// A stored value that validation would never have let in.
    #[error("stored data is damaged: {0}")]
    Corrupt(String),
    /// Another core holds this SQLite file's lock ([`CoreLock`]).
    #[error("another core is serving the SQLite file {}; stop that core first, or use Postgres to run several cores", .0.display())]
    ServedByAnotherCore(std::path::PathBuf),
}

impl From<UnknownWord> for StoreError {
    fn from(unknown: UnknownWord) -> Self {
        StoreError::Corrupt(unknown.to_string())
    }
}

/// Connections to Hado's database: a pool for reads, and the writer.
#[derive(Clone, Debug)]
pub struct Store {
    reader: AnyPool,
    writer: AnyPool,
    /// Group commit's transactions: the writer on SQLite, its own
    /// connections on Postgres ([`pools::GROUPED_SETUP`]).
    grouped_writer: AnyPool,
    /// New events written one at a time share statements on the grouped writer.
    grouped: grouped::GroupedInserts,
    backend: Backend,
    options: AnyConnectOptions,
    /// SQLite's write-ahead log, copied into the file beside the writer.
    wal: Option<std::sync::Arc<wal::WalCheckpoints>>,
    /// The SQLite database's file, whose file system the probe watches.
    sqlite_file: Option<std::path::PathBuf>,
    /// False while the probe finds the SQLite database's disk full: writes
    /// are then refused at once, rather than some failing and some (small
    /// enough to fit in pages SQLite holds) going through.
    disk_has_room: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

pub type Tx = Transaction<'static, sqlx::Any>;

impl Store {
    /// Connects, creating a SQLite file (and its folder) when missing, and
    /// applies the migrations.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let store = Self::open(url).await?;
        Self::migrator(store.backend).run(&store.writer).await?;
        // What a migration cannot write in SQL: the receiver of channels
        // made before deliveries were paced by receiver.
        let mut connection = store.writer.acquire().await?;
        channels::fill_receivers(&mut connection).await?;
        drop(connection);
        Ok(store)
    }

    /// Brings the database at `url` up to migration `version` and no further:
    /// what an earlier release of Hado left behind, for testing upgrades.
    pub async fn migrate_to(url: &str, version: i64) -> Result<(), StoreError> {
        let store = Self::open(url).await?;
        Self::migrator(store.backend).run_to(version, &store.writer).await?;
        store.close().await;
        Ok(())
    }

    fn migrator(backend: Backend) -> &'static Migrator {
        migrations::of(backend)
    }

    /// Writes a consistent copy of the SQLite database `url` names to `file`
    /// while it is in use (`VACUUM INTO`). Postgres is backed up with
    /// `pg_dump`. The database is opened as it is: never created, and never
    /// migrated, so that a newer `hado` backing up an older core's file
    /// does not change the file under it.
    pub async fn backup_sqlite(url: &str, file: &std::path::Path) -> Result<(), StoreError> {
        sqlx::any::install_default_drivers();
        let target = file
            .to_str()
            .ok_or_else(|| StoreError::BadUrl(format!("{} is not a UTF-8 path", file.display())))?;
        let database = sqlite_file(url);
        if !database.is_file() {
            return Err(StoreError::BadUrl(format!(
                "there is no database at {}",
                database.display()
            )));
        }
        if !Self::is_hado_sqlite(&database).await? {
            return Err(StoreError::BadUrl(format!(
                "{} is not a Hado database",
                database.display()
            )));
        }
        // A connection of its own, which may write (a read-only one cannot
        // read a WAL file whose shared memory it may not map), but creates
        // nothing: the copy reads a snapshot while a core's writer and
        // readers go on.
        let options = sqlx::sqlite::SqliteConnectOptions::new()
            .filename(&database)
            .create_if_missing(false)
            .busy_timeout(pools::SQLITE_BUSY_TIMEOUT);
        let mut connection =
            sqlx::SqliteConnection::connect_with(&options).await.map_err(StoreError::Connect)?;
        // A backup holds what the database holds: its owner's alone from the
        // first byte (made empty and private here, which `VACUUM INTO` takes),
        // and never a file that was there.
        let cannot = |what: &str, error: std::io::Error| {
            StoreError::BadUrl(format!("cannot {what} {}: {error}", file.display()))
        };
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(file)
            .map_err(|error| cannot("create", error))?;
        sqlx::query("VACUUM INTO $1").bind(target.to_owned()).execute(&mut connection).await?;
        connection.close().await?;
        // On disk before it is reported written.
        std::fs::File::open(file)
            .and_then(|written| written.sync_all())
            .map_err(|error| cannot("write", error))?;
        Ok(())
    }

    /// Whether `file` is a SQLite database that Hado's migrations made:
    /// `false` for a file SQLite does not take for a database, or one
    /// without Hado's migrations; an error naming its cause when the file
    /// cannot be opened or read (locked past the wait, say), so that a
    /// database is never called "not Hado's" for a reason it does not show.
    pub async fn is_hado_sqlite(file: &std::path::Path) -> Result<bool, StoreError> {
        // SQLITE_ERROR (here: no such table) and SQLITE_NOTADB.
        let not_hado = |error: sqlx::Error| match &error {
            sqlx::Error::Database(database)
                if matches!(database.code().as_deref(), Some("1" | "26")) =>
            {
                Ok(false)
            }
            _ => Err(StoreError::Connect(error)),
        };
        let options = sqlx::sqlite::SqliteConnectOptions::new().filename(file).read_only(true);
        let mut connection = match sqlx::SqliteConnection::connect_with(&options).await {
            Ok(connection) => connection,
            Err(error) => return not_hado(error),
        };
        let count: Result<i64, _> = sqlx::query_scalar("SELECT COUNT(*) FROM _sqlx_migrations")
            .fetch_one(&mut connection)
            .await;
        let _ = connection.close().await;
        count.map(|count| count > 0).or_else(not_hado)
    }

    async fn open(url: &str) -> Result<Self, StoreError> {
        sqlx::any::install_default_drivers();
        let backend = Backend::from_url(url)?;
        let url = match backend {
            Backend::Sqlite => prepare_sqlite_url(url)?,
            Backend::Postgres => url.to_owned(),
        };
        let options = AnyConnectOptions::from_str(&url)
            .map_err(|error| StoreError::BadUrl(error.to_string()))?;
        // One direct connection first: a pool would only report that it
        // timed out, where this names the cause (refused, unknown host, auth).
        sqlx::AnyConnection::connect_with(&options)
            .await
            .map_err(StoreError::Connect)?
            .close()
            .await
            .map_err(StoreError::Connect)?;
        // A connection is waited for at most this long: on Postgres, one
        // that cannot be had within two seconds means the database is down
        // (or swamped), and the caller is better told so and to retry than
        // kept waiting; SQLite's one writer is shared by a queue of calls.
        let acquire_timeout = match backend {
            Backend::Sqlite => Duration::from_secs(10),
            Backend::Postgres => Duration::from_secs(2),
        };
        let (reader, writer, grouped_writer, wal) = match backend {
            Backend::Sqlite => {
                let (reader, writer, wal) = pools::sqlite_pools(&options, acquire_timeout).await?;
                (reader, writer.clone(), writer, Some(std::sync::Arc::new(wal)))
            }
            Backend::Postgres => {
                let (all, grouped) = pools::postgres_pools(&options, acquire_timeout).await?;
                (all.clone(), all, grouped, None)
            }
        };
        let sqlite_file = (backend == Backend::Sqlite).then(|| sqlite_file(&url));
        let disk_has_room = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
        Ok(Self {
            grouped: grouped::start(grouped_writer.clone()),
            reader,
            writer,
            grouped_writer,
            backend,
            options,
            wal,
            sqlite_file,
            disk_has_room,
        })
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Where this core hears of other cores' changes; none on SQLite.
    pub fn change_feed(&self) -> Option<Result<changes::ChangeFeed, StoreError>> {
        (self.backend == Backend::Postgres).then(|| {
            sqlx::postgres::PgConnectOptions::try_from(&self.options)
                .map(changes::ChangeFeed::with)
                .map_err(|error| StoreError::BadUrl(error.to_string()))
        })
    }

    /// Starts a transaction that will write, on the writer.
    pub async fn begin_write(&self) -> Result<Tx, StoreError> {
        self.begin_on(&self.writer).await
    }

    /// Starts a transaction of group commit (a group of sources' upserts),
    /// on its own connections on Postgres: every statement it sends that
    /// reads a table must be unnamed ([`pools::GROUPED_SETUP`]).
    pub async fn begin_grouped_write(&self) -> Result<Tx, StoreError> {
        self.begin_on(&self.grouped_writer).await
    }

    /// A connection of group commit's own, for a single write statement
    /// that is its own transaction (it commits on its own); as in
    /// [`Self::begin_grouped_write`], a statement it sends that reads a
    /// table must be unnamed ([`pools::GROUPED_SETUP`]).
    pub async fn grouped_writer(
        &self,
    ) -> Result<sqlx::pool::PoolConnection<sqlx::Any>, StoreError> {
        self.refuse_on_a_full_disk()?;
        Ok(self.grouped_writer.acquire().await?)
    }

    /// A write transaction on `pool`, started as the backend's writes start.
    async fn begin_on(&self, pool: &AnyPool) -> Result<Tx, StoreError> {
        self.refuse_on_a_full_disk()?;
        Ok(match self.backend.begin_write_statement() {
            Some(statement) => pool.begin_with(statement).await?,
            None => pool.begin().await?,
        })
    }

    /// The pool for reads; on SQLite its connections refuse to write.
    pub fn reader(&self) -> &AnyPool {
        &self.reader
    }

    /// Inserts one new event, sharing the statement with any others that
    /// arrive meanwhile (group commit); the id comes back once committed, or
    /// the event that holds its key already, or, if the person's zone or
    /// quiet hours are no longer those the row was decided in, the person as
    /// they are now and nothing written.
    pub async fn insert_event(&self, event: NewEventRow) -> Result<Inserted, StoreError> {
        self.refuse_on_a_full_disk()?;
        self.grouped.submit(event).await
    }

    /// The writer, for a single write statement that needs no transaction
    /// (it commits on its own).
    pub fn writer(&self) -> &AnyPool {
        &self.writer
    }

    /// Resolves once every write this core sent its writer so far has
    /// landed or been rolled back, even one whose call was given up while
    /// its commit was on the way. On SQLite that is when the one writer is
    /// free again: a connection goes back to its pool only after what was
    /// sent on it ran. On Postgres a write may be on any of the pool's
    /// connections, so it resolves at once; there the database tells every
    /// core of what it commits ([`changes`]).
    pub fn writes_settled(&self) -> impl Future<Output = ()> + Send + 'static {
        let writer = (self.backend == Backend::Sqlite).then(|| self.writer.clone());
        async move {
            let Some(writer) = writer else { return };
            // Waits on through a busy writer's timeouts; a closed pool has
            // nothing left to land.
            while let Err(sqlx::Error::PoolTimedOut) = writer.acquire().await.map(drop) {}
        }
    }

    pub async fn close(&self) {
        if let Some(wal) = &self.wal {
            wal.stop().await;
        }
        self.grouped_writer.close().await;
        self.writer.close().await;
        self.reader.close().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_unreachable_postgres_is_named_at_start() {
        let closed_port =
            std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let error = Store::connect(&format!("postgres://postgres@127.0.0.1:{closed_port}/hado"))
            .await
            .unwrap_err();
        let message = error.to_string();
        assert!(message.starts_with("cannot open the database:"), "{message}");
        assert!(message.to_lowercase().contains("refused"), "{message}");
    }

    #[tokio::test]
    async fn the_attention_count_reads_one_row_per_event_that_needs_attention() {
        let folder = tempfile::tempdir().unwrap();
        let store =
            Store::connect(&format!("sqlite://{}/plan.db", folder.path().display())).await.unwrap();
        let plan: Vec<String> = sqlx::query(sqlx::AssertSqlSafe(format!(
            "EXPLAIN QUERY PLAN {}",
            events::ATTENTION_COUNT_QUERY.as_str()
        )))
        .bind(1)
        .fetch_all(store.reader())
        .await
        .unwrap()
        .iter()
        .map(|row| sqlx::Row::get::<String, _>(row, "detail"))
        .collect();
        assert!(plan.iter().any(|step| step.contains("USING INDEX events_attention")), "{plan:?}");
        assert!(
            plan.iter().any(|step| step.contains("USING COVERING INDEX events_due_unanswered")),
            "today's and overdue events that no reminder reached are counted from their own index: {plan:?}"
        );
        // Each half's rows are counted from its co-routine; no table is scanned.
        assert!(!plan.iter().any(|step| step.starts_with("SCAN e")), "{plan:?}");
    }

    #[tokio::test]
    async fn a_file_is_hados_or_not_and_one_that_cannot_be_read_says_why() {
        let folder = tempfile::tempdir().unwrap();
        let text = folder.path().join("notes.txt");
        std::fs::write(
            &text,
            "not a database, and long enough to have a header of its own\n".repeat(20),
        )
        .unwrap();
        assert!(!Store::is_hado_sqlite(&text).await.unwrap(), "a text file");
        let other = folder.path().join("other.db");
        let url = format!("sqlite://{}?mode=rwc", other.display());
        let mut connection = sqlx::SqliteConnection::connect(&url).await.unwrap();
        sqlx::query("CREATE TABLE things (id INTEGER)").execute(&mut connection).await.unwrap();
        connection.close().await.unwrap();
        assert!(!Store::is_hado_sqlite(&other).await.unwrap(), "another program's database");

        let hado = folder.path().join("hado.db");
        Store::connect(&format!("sqlite://{}", hado.display())).await.unwrap().close().await;
        assert!(Store::is_hado_sqlite(&hado).await.unwrap());
        // Held by another connection past the wait: an error that says so,
        // not "not a Hado database".
        let mut holder =
            sqlx::SqliteConnection::connect(&format!("sqlite://{}", hado.display())).await.unwrap();
        sqlx::raw_sql("PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; DELETE FROM users;")
            .execute(&mut holder)
            .await
            .unwrap();
        let error = Store::is_hado_sqlite(&hado).await.unwrap_err();
        assert!(error.to_string().contains("locked"), "{error}");
        holder.close().await.unwrap();
    }

    #[tokio::test]
    async fn sqlite_reads_cannot_write() {
        let folder = tempfile::tempdir().unwrap();
        let store = Store::connect(&format!("sqlite://{}/reader.db", folder.path().display()))
            .await
            .unwrap();
        let refused = sqlx::query("DELETE FROM users").execute(store.reader()).await.unwrap_err();
        assert!(refused.to_string().contains("readonly"), "{refused}");
        sqlx::query("DELETE FROM users").execute(store.writer()).await.unwrap();
    }
}
