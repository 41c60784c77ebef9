//! Owns SQLite's write-ahead log checkpoints (SQLite's word, not the
//! reminders'): copying what the log holds into the database file, so that
//! the log can start over.
//!
//! SQLite checkpoints on the connection that commits, once the log passes
//! 1,000 pages: that write copies the pages and syncs the file before it
//! answers, and every writer queued behind it waits (it set the p99 of an
//! agent's `create_event`, BENCHMARKS.md). Here the writer never
//! checkpoints. A connection of its own copies the log's new pages every
//! [`EVERY`] beside the writer (a passive checkpoint, which neither waits
//! for nor blocks anyone), so the pages are in the file long before the log
//! must start over. A passive checkpoint cannot restart the log while
//! writes keep coming, so once the log reaches [`RESTART_PAGES`] the writer
//! takes its turn to finish the copy and restart it: by then there is
//! little left to copy. The log stays bounded under any steady load.
//!
//! Durability is the log's, as before: a commit is in the log when it is
//! acknowledged, and SQLite replays the log when the file is next opened.

use std::time::Duration;

use crate::Connection;
use sqlx::any::AnyConnectOptions;
use sqlx::{AnyConnection, AnyPool, Connection as _, Executor};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// How often the log's new pages are copied into the file.
const EVERY: Duration = Duration::from_millis(100);
/// The log's length, in pages, at which the writer restarts it (16 MiB of
/// 4 KiB pages).
const RESTART_PAGES: i64 = 4_000;

/// What the writer runs on connecting: it leaves checkpoints to
/// [`WalCheckpoints::start`]'s task.
pub(crate) const WRITER_SETUP: &str = "PRAGMA wal_autocheckpoint = 0;";

/// The checkpointing task, stopped by [`WalCheckpoints::stop`].
#[derive(Debug)]
pub(crate) struct WalCheckpoints {
    stop: watch::Sender<bool>,
    task: std::sync::Mutex<Option<JoinHandle<()>>>,
}

impl WalCheckpoints {
    /// Starts checkpointing the database of `options`, whose writer is
    /// `writer`.
    pub(crate) fn start(options: AnyConnectOptions, writer: AnyPool) -> Self {
        let (stop, stopped) = watch::channel(false);
        let task = tokio::spawn(run(options, writer, stopped));
        Self { stop, task: std::sync::Mutex::new(Some(task)) }
    }

    /// Stops the task and closes its connection, before the pools close.
    pub(crate) async fn stop(&self) {
        let _ = self.stop.send(true);
        let task = self.task.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
        if let Some(task) = task {
            let _ = task.await;
        }
    }
}

async fn run(options: AnyConnectOptions, writer: AnyPool, mut stopped: watch::Receiver<bool>) {
    let mut connection: Option<AnyConnection> = None;
    // Said once for a run of failures, not every round.
    let mut failing = false;
    loop {
        tokio::select! {
            _ = stopped.changed() => break,
            () = tokio::time::sleep(EVERY) => {}
        }
        let result = match connection.as_mut() {
            Some(connection) => copy_log(connection).await,
            None => match AnyConnection::connect_with(&options).await {
                Ok(opened) => copy_log(connection.insert(opened)).await,
                Err(error) => Err(error),
            },
        };
        match result {
            Ok(pages) => {
                failing = false;
                if pages >= RESTART_PAGES {
                    // On the writer, in its turn: the restart waits for no
                    // one's lock, only for readers still reading the old log.
                    if let Err(error) = writer.execute("PRAGMA wal_checkpoint(RESTART)").await {
                        tracing::warn!(%error, pages, "the write-ahead log could not start over; trying again shortly");
                    }
                }
            }
            Err(error) => {
                if !failing {
                    tracing::warn!(%error, "copying the write-ahead log into the database failed; trying again shortly");
                }
                failing = true;
                connection = None;
            }
        }
    }
    if let Some(connection) = connection {
        let _ = connection.close().await;
    }
}

/// Copies what it can of the log into the file without waiting for anyone,
/// and returns the log's length in pages.
async fn copy_log(connection: &mut impl Connection) -> Result<i64, sqlx::Error> {
    let connection = connection.sql();
    let (_busy, pages, _copied): (i64, i64, i64) =
        sqlx::query_as("PRAGMA wal_checkpoint(PASSIVE)").fetch_one(connection).await?;
    Ok(pages)
}
