//! Owns the SQL that tests run behind core's back, as an operator would
//! with `psql` (the `testing` feature, for `hado-testing`): a fresh
//! Postgres database and its removal, a value read from one, a trigger
//! that refuses a row, and a lock that holds every write. Storage keeps
//! it, so that no other crate needs sqlx.

use sqlx::{AnyConnection, Connection as _, PgConnection, Row};

use crate::{Store, Tx};

/// Makes the database `name` on the Postgres server at `admin_url`.
pub async fn create_database(admin_url: &str, name: &str) {
    let mut connection = PgConnection::connect(admin_url).await.expect("Postgres is reachable");
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&mut connection)
        .await
        .expect("a test database can be created");
    let _ = connection.close().await;
}

/// Drops the database `name`, whoever is still connected to it.
pub async fn drop_database(admin_url: &str, name: &str) {
    match PgConnection::connect(admin_url).await {
        Ok(mut connection) => {
            let _ = sqlx::query(sqlx::AssertSqlSafe(format!(
                "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
            )))
            .execute(&mut connection)
            .await;
        }
        Err(error) => eprintln!("the test database {name} was left behind: {error}"),
    }
}

/// The value of a SQL expression in the Postgres database at `url`, as
/// text (empty for none).
pub async fn postgres_text(url: &str, expression: &str) -> String {
    let mut connection = PgConnection::connect(url).await.expect("Postgres is reachable");
    let text: Option<String> =
        sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT ({expression})::text")))
            .fetch_one(&mut connection)
            .await
            .unwrap_or_else(|error| panic!("{expression}: {error}"));
    let _ = connection.close().await;
    text.unwrap_or_default()
}

/// Makes the database itself refuse to insert an event with this title (a
/// trigger), as it would refuse a row that breaks one of its rules.
pub async fn refuse_events_titled(store: &Store, title: &str) {
    let quoted = title.replace('\'', "''");
    let statement = match store.backend() {
        crate::Backend::Postgres => format!(
            "CREATE FUNCTION refuse_title() RETURNS trigger LANGUAGE plpgsql AS $$ \
             BEGIN IF NEW.title = '{quoted}' THEN RAISE EXCEPTION 'refused by the test'; END IF; \
             RETURN NEW; END $$; \
             CREATE TRIGGER refuse_title BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION refuse_title();"
        ),
        crate::Backend::Sqlite => format!(
            "CREATE TRIGGER refuse_title BEFORE INSERT ON events WHEN NEW.title = '{quoted}' \
             BEGIN SELECT RAISE(ABORT, 'refused by the test'); END;"
        ),
    };
    sqlx::raw_sql(sqlx::AssertSqlSafe(statement))
        .execute(store.writer())
        .await
        .expect("the refusing trigger is made");
}

/// Holds every write to events until the returned transaction ends:
/// SQLite's one writer connection is taken, and on Postgres the events
/// table is locked.
pub async fn hold_writes(store: &Store) -> Tx {
    let mut held = store.writer().begin().await.expect("the writer is taken");
    if store.backend() == crate::Backend::Postgres {
        sqlx::query("LOCK TABLE events IN ACCESS EXCLUSIVE MODE")
            .execute(&mut *held)
            .await
            .expect("the events table is locked");
    }
    held
}

/// How many authorization codes the database holds, exchanged or not.
pub async fn authorization_codes(store: &Store) -> i64 {
    let mut connection = store.reader().acquire().await.expect("a read connection");
    sqlx::query_scalar("SELECT COUNT(*) FROM oauth_codes")
        .fetch_one(&mut *connection)
        .await
        .expect("the codes are counted")
}

/// An event's owner, revision and creation in milliseconds, read from the
/// database at `url` (what an action link binds of it).
pub async fn event_binding(url: &str, event_id: i64) -> (i64, i64, i64) {
    sqlx::any::install_default_drivers();
    let mut connection: AnyConnection =
        AnyConnection::connect(url).await.expect("the test database opens");
    let row = sqlx::query("SELECT user_id, revision, created_at FROM events WHERE id = $1")
        .bind(event_id)
        .fetch_one(&mut connection)
        .await
        .expect("the event is stored");
    let _ = connection.close().await;
    (row.get("user_id"), row.get("revision"), row.get("created_at"))
}

/// What group commit's connections hold on Postgres: each one's
/// `plan_cache_mode`, and the statements it keeps prepared (named), by
/// their text. Every connection the pool may hold is taken at once, so
/// none is missed.
pub async fn grouped_connections(store: &Store) -> (Vec<String>, Vec<String>) {
    let mut held = Vec::new();
    for _ in 0..crate::pools::POSTGRES_GROUPED_CONNECTIONS {
        held.push(store.grouped_writer.acquire().await.expect("a grouped connection"));
    }
    let (mut modes, mut statements) = (Vec::new(), Vec::new());
    for connection in &mut held {
        modes.push(
            sqlx::query_scalar("SHOW plan_cache_mode")
                .persistent(false)
                .fetch_one(&mut **connection)
                .await
                .expect("the mode is read"),
        );
        // Named statements only: sqlx names every statement it keeps.
        let kept: Vec<String> =
            sqlx::query_scalar("SELECT statement FROM pg_prepared_statements WHERE name <> ''")
                .persistent(false)
                .fetch_all(&mut **connection)
                .await
                .expect("the kept statements are read");
        statements.extend(kept);
    }
    (modes, statements)
}
