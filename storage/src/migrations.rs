//! Each backend's migrations, embedded in the binary from `migrations/`.
//!
//! They are listed here by name rather than found by sqlx's `migrate!`
//! macro: the macro compiles both database drivers a second time for the
//! build machine, about a tenth of a cold build. A test checks that this
//! list and the folders agree, so a migration added to `migrations/` and
//! not here fails it. A migration is built exactly as sqlx would read it
//! from its file (version, description, checksum), so databases migrated
//! by earlier versions open unchanged.

use std::borrow::Cow;
use std::sync::LazyLock;

use sqlx::SqlStr;
use sqlx::migrate::{Migration, MigrationType, Migrator};

use super::Backend;

macro_rules! migrations {
    ($($name:literal),* $(,)?) => {
        /// `(file name without .sql, its text)` for SQLite.
        const SQLITE: &[(&str, &str)] = &[$(($name, include_str!(concat!("../../migrations/sqlite/", $name, ".sql")))),*];
        /// `(file name without .sql, its text)` for Postgres.
        const POSTGRES: &[(&str, &str)] = &[$(($name, include_str!(concat!("../../migrations/postgres/", $name, ".sql")))),*];
    };
}

migrations![
    "20261130000001_init",
    "20261130000002_reminders",
    "20261130000003_channels",
    "20261130000004_calendar",
    "20261130000005_telegram",
    "20261201000006_button_chat",
    "20261201000007_attention_index",
    "20261202000008_oauth",
    "20261203000009_receivers",
    "20261204000010_liveness",
    "20261204000011_event_revision",
    "20261204000012_channel_error_time",
    "20261205000013_email",
    "20261206000014_ids_never_reused",
    "20261207000015_refresh_grace",
    "20261208000016_push",
    "20261209000017_zone_chosen",
    "20261210000018_kept",
    "20261211000019_kept_rows",
    "20261212000020_attention_due",
    "20261213000021_kept_access_tokens",
    "20261214000022_kept_grants",
    "20261215000023_kept_agent_tokens",
    "20261216000024_person_gate",
];

static SQLITE_MIGRATOR: LazyLock<Migrator> = LazyLock::new(|| migrator(SQLITE));
static POSTGRES_MIGRATOR: LazyLock<Migrator> = LazyLock::new(|| migrator(POSTGRES));

/// The migrator of `backend`.
pub(super) fn of(backend: Backend) -> &'static Migrator {
    match backend {
        Backend::Sqlite => &SQLITE_MIGRATOR,
        Backend::Postgres => &POSTGRES_MIGRATOR,
    }
}

fn migrator(files: &'static [(&'static str, &'static str)]) -> Migrator {
    Migrator::with_migrations(files.iter().map(|&(name, sql)| migration(name, sql)).collect())
}

/// What sqlx's file source makes of `<version>_<description>.sql`.
fn migration(name: &str, sql: &'static str) -> Migration {
    let (version, description) =
        name.split_once('_').expect("a migration is named <version>_<description>");
    let version = version.parse().expect("a migration's version is a number");
    Migration::new(
        version,
        Cow::Owned(description.replace('_', " ")),
        MigrationType::Simple,
        SqlStr::from_static(sql),
        sql.starts_with("-- no-transaction"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(backend: &str) -> Vec<String> {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../migrations").join(backend);
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .map(|name| {
                name.strip_suffix(".sql")
                    .unwrap_or_else(|| panic!("{name} in migrations/{backend} is not a .sql file"))
                    .to_owned()
            })
            .collect();
        names.sort();
        names
    }

    fn listed(files: &[(&str, &str)]) -> Vec<String> {
        files.iter().map(|(name, _)| name.to_string()).collect()
    }

    #[test]
    fn every_migration_in_the_folders_is_embedded() {
        assert_eq!(
            listed(SQLITE),
            folder("sqlite"),
            "migrations/sqlite and storage/migrations.rs disagree"
        );
        assert_eq!(
            listed(POSTGRES),
            folder("postgres"),
            "migrations/postgres and storage/migrations.rs disagree"
        );
    }

    #[test]
    fn migrations_read_as_sqlx_reads_their_files() {
        let first = &of(Backend::Sqlite).migrations[0];
        assert_eq!(first.version, 20261130000001);
        assert_eq!(first.description, "init");
        assert!(!first.no_tx);
        let versions: Vec<i64> =
            of(Backend::Postgres).migrations.iter().map(|migration| migration.version).collect();
        assert!(versions.is_sorted() && versions.len() == POSTGRES.len());
    }
}
