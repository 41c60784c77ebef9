//! A SQLite file is served by one core: each core keeps who a credential
//! names in memory, and a SQLite file tells no other core of a change, so a
//! second core would honour a token revoked through the first. A second
//! core on the file is refused before it serves anything, and the file is
//! free again once the first stops.

use std::sync::Arc;
use std::time::Duration;

use hado_engine::clock::ManualClock;
use hado_proto::v1::EventFields;
use hado_testing::{Backend, TestCore, config, utc};

const NOW: &str = "2026-12-01T10:00:00Z";

/// How long a refused core may take to say so.
const AT_ONCE: Duration = Duration::from_secs(2);

fn clock() -> Arc<ManualClock> {
    Arc::new(ManualClock::new(utc(NOW)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_core_on_a_sqlite_file_is_refused_at_once_naming_the_file() {
    let core = TestCore::start(&Backend::Sqlite, NOW).await;
    let file = hado_storage::sqlite_file(core.database_url());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let second = hado_core::run(
        config(core.database_url()),
        listener,
        clock(),
        std::future::pending::<()>(),
    );
    let refused = tokio::time::timeout(AT_ONCE, second)
        .await
        .expect("a second core stops at once")
        .expect_err("a second core on the file is refused")
        .to_string();
    for words in [
        &format!("another core is serving the SQLite file {}", file.display()),
        "stop that core first",
        "use Postgres to run several cores",
    ] {
        assert!(refused.contains(words), "{refused:?} says {words:?}");
    }

    // The first core goes on serving.
    core.source_token("still-served").await;
    core.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_core_that_stopped_leaves_its_sqlite_file_to_the_next() {
    let mut core = TestCore::start(&Backend::Sqlite, NOW).await;
    let token = core.source_token("kept-across-cores").await;
    core.pause().await;

    // Another core takes the file, and lets go when it closes.
    let next = hado_core::open(&config(core.database_url()), clock())
        .await
        .expect("the next core opens the file its predecessor left");
    next.close().await;
    drop(next);

    // One dropped without closing, as a core that dies, lets go too.
    let dropped = hado_core::open(&config(core.database_url()), clock()).await.map(|_| ());
    assert!(dropped.is_ok(), "{dropped:?}");
    drop(dropped);

    core.resume().await;
    let fields = EventFields {
        title: "Filed across cores".into(),
        due_at: "2026-12-20".into(),
        ..Default::default()
    };
    core.push(&token, "anna", "after-the-restarts", fields).await;
    core.stop().await;
}
