//! Owns the pools of connections and how each connection is set up: on
//! SQLite one writer and readers that only read; on Postgres one pool for
//! reads and writes, planned per call, and group commit's two connections,
//! which keep their plans ([`GROUPED_SETUP`]).

use std::time::Duration;

use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::{AnyPool, Connection as _, Executor};

use super::{StoreError, wal};

/// Connections the SQLite read pool holds; reads in WAL mode run beside the
/// one writer.
const SQLITE_READERS: u32 = 8;
const POSTGRES_CONNECTIONS: u32 = 16;
/// Group commit's connections on Postgres: its two tasks (a person's new
/// events, sources' upserts) each hold one at a time.
pub(crate) const POSTGRES_GROUPED_CONNECTIONS: u32 = 2;
/// Every SQLite connection: write-ahead logging, so that readers never wait
/// for the writer; `synchronous = NORMAL`, which in WAL mode keeps every
/// committed transaction across a crash of the process (a power loss may
/// lose the last ones, never corrupt the file); foreign keys; and a busy
/// timeout for another process's lock (a backup, the `hado` CLI).
pub(crate) const SQLITE_SETUP: &str = "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 10000;";
/// How long a connection that only copies the file (a backup) waits for
/// another's lock, as core's connections do.
pub(crate) const SQLITE_BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Postgres's pools: the one for reads and writes, and group commit's.
pub(crate) async fn postgres_pools(
    options: &AnyConnectOptions,
    acquire_timeout: Duration,
) -> Result<(AnyPool, AnyPool), StoreError> {
    let pool = |connections, setup: &'static str| {
        pooled(acquire_timeout)
            .max_connections(connections)
            .after_connect(move |connection, _| {
                Box::pin(async move { connection.execute(setup).await.map(|_| ()) })
            })
            .connect_with(options.clone())
    };
    let all = pool(POSTGRES_CONNECTIONS, POSTGRES_SETUP).await.map_err(StoreError::Connect)?;
    let grouped =
        pool(POSTGRES_GROUPED_CONNECTIONS, GROUPED_SETUP).await.map_err(StoreError::Connect)?;
    Ok((all, grouped))
}

/// A pool's options: waits for a connection at most `acquire_timeout`,
/// and drops a connection handed back inside a broken transaction.
pub(crate) fn pooled(acquire_timeout: Duration) -> AnyPoolOptions {
    discard_broken_transactions(AnyPoolOptions::new().acquire_timeout(acquire_timeout))
}

/// SQLite's pools: one writer, which makes the file WAL, then readers that
/// only read, and the WAL's checkpoints on the writer.
pub(crate) async fn sqlite_pools(
    options: &AnyConnectOptions,
    acquire_timeout: Duration,
) -> Result<(AnyPool, AnyPool, wal::WalCheckpoints), StoreError> {
    // A SQLite connection is a file in this process and cannot drop away;
    // pinging it on every acquire cost a round trip to its worker thread
    // (the pool still pings on release).
    let pool_options = || pooled(acquire_timeout).test_before_acquire(false);
    let writer = pool_options()
        .max_connections(1)
        .after_connect(|connection, _| {
            Box::pin(async move {
                connection.execute(SQLITE_SETUP).await?;
                connection.execute(wal::WRITER_SETUP).await.map(|_| ())
            })
        })
        .connect_with(options.clone())
        .await
        .map_err(StoreError::Connect)?;
    // The writer made the file WAL first, so readers open it as one.
    let reader = pool_options()
        .max_connections(SQLITE_READERS)
        .after_connect(|connection, _| {
            Box::pin(async move {
                connection
                    .execute("PRAGMA query_only = ON; PRAGMA busy_timeout = 10000;")
                    .await
                    .map(|_| ())
            })
        })
        .connect_with(options.clone())
        .await
        .map_err(StoreError::Connect)?;
    let wal = wal::WalCheckpoints::start(options.clone(), writer.clone());
    Ok((reader, writer, wal))
}

/// Every statement is planned for the values it is given and the table as
/// it is now. sqlx keeps each statement prepared on its connection, and
/// after five runs Postgres may settle on one generic plan for it; made
/// while the table was nearly empty (a fresh install), that plan scanned
/// every event, and kept doing so as the table grew: an agent's token read
/// went from 0.5 to 8 ms after 20,000 stored events (BENCHMARKS.md, issue
/// 51). Planning a statement afresh costs tens of microseconds.
const POSTGRES_SETUP: &str = "SET plan_cache_mode = force_custom_plan";

/// Group commit's connections on Postgres keep their plans, as Postgres
/// does by default. Planned afresh, every statement there was planned on
/// every call, and so was each foreign-key check Postgres runs for every
/// row inserted (the person's, the source's): a one-row insert took 0.32
/// ms of the database's time against 0.22 ms with kept plans, about half
/// of the difference the two checks' (`pgbench`, BENCHMARKS.md "Postgres,
/// profiled again"). Keeping them is safe because what these connections
/// keep reads no range of rows: inserts (rows from `unnest`, the
/// conflict's target named), updates by id, and those checks by primary
/// key. At worst a plan made while a table was nearly empty scans it until
/// Postgres analyses the table, which it does as the table grows, and the
/// plan is made again. Every statement of theirs that reads events or
/// people is sent unnamed, so planned for its values on every call, as on
/// the other connections; `grouped_statements_that_read_are_planned_per_call`
/// holds this. They are named [`GROUPED_NAME`] among the database's
/// sessions, so an operator (and a test) can tell them from the others.
pub(crate) const GROUPED_SETUP: &str =
    "SET plan_cache_mode = auto; SET application_name = 'hado-core-grouped'";

/// Group commit's connections' `application_name` on Postgres.
pub const GROUPED_NAME: &str = "hado-core-grouped";

/// Closes a connection that comes back to its pool still inside a
/// transaction instead of handing it out again. A `COMMIT` that fails (a
/// full disk) can leave SQLite's connection with no transaction open while
/// sqlx still counts one, and then every later `BEGIN` on it fails: the
/// writer was wedged until a restart. A fresh connection starts clean.
///
/// Only a connection that still counts a transaction is pinged here: the
/// rollback a dropped transaction queued runs first, and then it is asked
/// again. One that counts none (every statement outside a transaction, and
/// every transaction that ended) goes back without this round trip; the
/// pool's own ping on release, which sqlx always makes, follows either way
/// and flushes any rollback Postgres queued.
fn discard_broken_transactions(options: AnyPoolOptions) -> AnyPoolOptions {
    options.after_release(|connection, _| {
        Box::pin(async move {
            if !connection.is_in_transaction() {
                return Ok(true);
            }
            connection.ping().await?;
            Ok(!connection.is_in_transaction())
        })
    })
}
