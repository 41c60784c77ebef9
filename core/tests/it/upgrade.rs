//! The upgrade path: a database the first release left behind (its one
//! migration, its rows) is brought up to date by today's core at start, and
//! keeps every row; its open events take their place on the checkpoint
//! ladder at the scheduler's next pass.

use std::sync::Arc;

use sqlx::Connection;

use hado_engine::clock::ManualClock;
use hado_storage::Store;
use hado_testing::{self as testing, Backend, TestDatabase, utc};

/// The first release's only migration.
const FIRST_RELEASE: i64 = 20261130000001;

async fn execute(url: &str, statements: &[&str]) {
    let mut connection = sqlx::AnyConnection::connect(url).await.unwrap();
    for statement in statements {
        sqlx::query(sqlx::AssertSqlSafe(statement.to_string()))
            .execute(&mut connection)
            .await
            .unwrap_or_else(|error| panic!("{statement}: {error}"));
    }
}

async fn a_first_release_database_upgrades_keeping_every_row(backend: Backend) {
    sqlx::any::install_default_drivers();
    let database = TestDatabase::create(&backend).await;
    Store::migrate_to(&database.url, FIRST_RELEASE).await.unwrap();
    let url = database.url.clone();
    // Rows as the first release wrote them (its columns only).
    execute(
        &url,
        &[
            "INSERT INTO users (login, tz, quiet_start, quiet_end, locale, created_at, updated_at) VALUES ('anna', 'Europe/Berlin', '22:00', '08:00', 'en', 0, 0)",
            "INSERT INTO sources (name, token_hash, created_at, updated_at) VALUES ('docs', 'aaaa', 0, 0)",
            "INSERT INTO agent_tokens (user_id, token_hash, created_at, updated_at) VALUES (1, 'bbbb', 0, 0)",
            "INSERT INTO events (user_id, source_id, source_ref, topic, title, due_at, due_date, due_ms, fire_date, after_due, state, next_check_at, created_at, updated_at) \
             VALUES (1, 2, 'visa', '', 'Visa', '2026-12-14', '2026-12-14', 1797202800000, '2026-11-14', 'keep', 'preparing', 1797202800000, 0, 0)",
            "INSERT INTO events (user_id, source_id, source_ref, topic, title, due_at, due_date, due_ms, fire_date, after_due, state, closed_at, created_at, updated_at) \
             VALUES (1, 2, 'old', '', 'Old', '2026-10-01', '2026-10-01', 0, '2026-09-01', 'keep', 'done', 1, 0, 0)",
        ],
    )
    .await;

    // Today's core opens it: the later migrations run, the rows stay.
    let clock = Arc::new(ManualClock::new(utc("2026-12-01T10:00:00Z")));
    let engine = hado_core::open(&testing::config(&database.url), clock)
        .await
        .expect("the upgrade runs at start");
    let anna = engine.user_for_login("anna").await.unwrap();
    let users = engine.list_users().await.unwrap();
    assert_eq!(users.len(), 1);
    assert!(users[0].has_agent_token, "the agent token survived");
    let active = engine.list_events(&anna, None, false, None).await.unwrap();
    let archive = engine.list_events(&anna, None, true, None).await.unwrap();
    assert_eq!((active.len(), archive.len()), (1, 1));
    assert_eq!((active[0].source.as_str(), active[0].spec.title.as_str()), ("docs", "Visa"));
    let sources = engine.list_sources().await.unwrap();
    assert!(sources.iter().any(|source| source.name == "docs" && source.events == 2));

    // The open event has no ladder place yet; the next pass gives it one.
    assert_eq!(active[0].reminders.checkpoint, None);
    hado_core::scheduler::drain(&engine).await.unwrap();
    let placed = engine.get_event(&anna, active[0].id).await.unwrap();
    assert_eq!(
        placed.reminders.checkpoint,
        Some(utc("2026-12-07T07:00:00Z")),
        "D−7 at 08:00 Berlin time"
    );
    assert!(
        !placed.reminders.needs_attention(),
        "no reminder for checkpoints that passed before the upgrade"
    );

    engine.close().await;
    database.drop_now().await;
}

/// The last migration before deliveries were paced per receiver.
const BEFORE_PACING: i64 = 20261202000008;

/// Channels made before deliveries were paced per receiver get their
/// receiver when core starts: a webhook's host and port, or Telegram.
async fn channels_made_before_pacing_get_their_receiver(backend: Backend) {
    sqlx::any::install_default_drivers();
    let database = TestDatabase::create(&backend).await;
    Store::migrate_to(&database.url, BEFORE_PACING).await.unwrap();
    execute(
        &database.url,
        &[
            "INSERT INTO users (login, tz, quiet_start, quiet_end, locale, created_at, updated_at) VALUES ('anna', 'UTC', '22:00', '08:00', 'en', 0, 0)",
            "INSERT INTO channels (user_id, kind, target, secret, enabled, created_at, updated_at) \
             VALUES (1, 'webhook', 'https://Hooks.Example.com/anna', 'whsec_x', 1, 0, 0)",
            "INSERT INTO channels (user_id, kind, target, enabled, created_at, updated_at) VALUES (1, 'telegram', '12345', 1, 0, 0)",
        ],
    )
    .await;
    let clock = Arc::new(ManualClock::new(utc("2026-12-01T10:00:00Z")));
    let engine = hado_core::open(&testing::config(&database.url), clock)
        .await
        .expect("the upgrade runs at start");
    let mut connection = sqlx::AnyConnection::connect(&database.url).await.unwrap();
    let receivers: Vec<String> = sqlx::query_scalar("SELECT receiver FROM channels ORDER BY id")
        .fetch_all(&mut connection)
        .await
        .unwrap();
    assert_eq!(receivers, ["hooks.example.com:443", "telegram"]);
    drop(connection);
    engine.close().await;
    database.drop_now().await;
}

hado_testing::on_both_backends!(
    a_first_release_database_upgrades_keeping_every_row,
    channels_made_before_pacing_get_their_receiver
);
