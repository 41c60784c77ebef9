//! SQLite's write-ahead log under steady writes: core copies it into the
//! database file beside the writer, and restarts it, so that the log stays
//! bounded and the file holds the data while core runs. Postgres has no
//! such log to keep.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use hado_domain::event::RawFields;
use hado_engine::clock::ManualClock;
use hado_testing::{Backend, TestDatabase, config, utc};

/// Writers at once, and events each writes one at a time: each event is a
/// commit of its own (or shares one with the others waiting), about 96 MiB
/// of log if nothing ever restarted it.
const WRITERS: usize = 8;
const EVENTS_EACH: usize = 800;
/// Three times the length at which core restarts the log (16 MiB): room for
/// the pages written between two of its rounds (the log reached 28 to 31
/// MiB in a debug build).
const BOUND: u64 = 48 << 20;

fn size(path: &std::path::Path) -> u64 {
    std::fs::metadata(path).map(|metadata| metadata.len()).unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_write_ahead_log_stays_bounded_and_reaches_the_file_under_steady_writes() {
    let database = TestDatabase::create(&Backend::Sqlite).await;
    let engine = hado_core::open(
        &config(&database.url),
        Arc::new(ManualClock::new(utc("2026-12-01T10:00:00Z"))),
    )
    .await
    .unwrap();
    let file = hado_storage::sqlite_file(&database.url);
    let log = file.with_extension("db-wal");
    let file_before = size(&file);

    // The log's largest size, read while the writers run.
    let (writing, largest) = (Arc::new(AtomicBool::new(true)), Arc::new(AtomicU64::new(0)));
    let watcher = tokio::spawn({
        let (writing, largest, log) = (writing.clone(), largest.clone(), log.clone());
        async move {
            while writing.load(Ordering::SeqCst) {
                largest.fetch_max(size(&log), Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
    });
    let writers: Vec<_> = (0..WRITERS)
        .map(|writer| {
            let engine = engine.clone();
            tokio::spawn(async move {
                let user = engine.user_for_login(&format!("writer{writer}")).await.unwrap();
                for index in 0..EVENTS_EACH {
                    let fields = RawFields {
                        title: format!("Event {index} of a steady stream"),
                        due_at: "2026-12-20".into(),
                        ..RawFields::default()
                    };
                    engine.create_manual(&user, &fields).await.unwrap();
                }
            })
        })
        .collect();
    for writer in writers {
        writer.await.unwrap();
    }
    writing.store(false, Ordering::SeqCst);
    watcher.await.unwrap();
    let largest = largest.load(Ordering::SeqCst);
    assert!(largest > 0, "the database runs with a write-ahead log");
    assert!(
        largest <= BOUND,
        "the log grew to {largest} bytes under steady writes; it should stay under {BOUND}"
    );

    // The events reach the database file while core runs, not only when it
    // closes: its size grows by at least what they take.
    let mut file_after = size(&file);
    for _ in 0..100 {
        if file_after >= file_before + (1 << 20) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        file_after = size(&file);
    }
    assert!(
        file_after >= file_before + (1 << 20),
        "the database file stayed at {file_after} bytes (from {file_before}): the log was never copied into it"
    );

    engine.close().await;
}
