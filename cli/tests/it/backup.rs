//! `hado backup` and `hado restore` as a person runs them: a backup taken
//! while Hado runs, the data lost, the backup restored, Hado started again
//! with everything there. On SQLite always, on Postgres (with pg_dump and
//! pg_restore) when its URL is set.

#![cfg(target_os = "linux")]

use crate::common;

use std::io::Write as _;
use std::path::Path;
use std::process::Command;

use common::{Ports, Signal, free_ports, hado, signal, start_on, wait_with_timeout};

fn run(folder: &Path, ports: Ports, database: Option<&str>, arguments: &[&str]) -> (bool, String) {
    let mut command = hado(folder, ports);
    if let Some(url) = database {
        command.env("HADO_DATABASE_URL", url);
    }
    let output = command.args(arguments).output().unwrap();
    (
        output.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ),
    )
}

/// Starts `hado up` (on `database`, or its SQLite default), runs `during`, stops it.
fn with_hado_up(folder: &Path, ports: Ports, database: Option<&str>, during: impl FnOnce()) {
    let (mut up, _) = start_on(folder, ports, database);
    during();
    signal(up.id(), Signal::SIGTERM);
    assert!(wait_with_timeout(&mut up).success());
}

fn round_trip(database: Option<&str>, fresh: Option<&str>) {
    let folder = tempfile::tempdir().unwrap();
    let ports = free_ports();
    let backup = folder.path().join("hado-backup.bin");
    let backup_text = backup.to_str().unwrap().to_owned();

    with_hado_up(folder.path(), ports, database, || {
        let (created, output) = run(folder.path(), ports, database, &["source", "create", "docs"]);
        assert!(created, "{output}");
        let (backed_up, output) = run(folder.path(), ports, database, &["backup", &backup_text]);
        assert!(backed_up, "a backup while Hado runs: {output}");
        assert!(output.contains("Backed up the database to"), "{output}");
        let (again, output) = run(folder.path(), ports, database, &["backup", &backup_text]);
        assert!(!again && output.contains("already exists"), "a backup never overwrites: {output}");
        let (refused, output) =
            run(folder.path(), ports, database, &["restore", &backup_text, "--yes"]);
        assert!(
            !refused && output.contains("stop it first"),
            "no restore under a running Hado: {output}"
        );
        if database.is_none() {
            // Asked of another address, where no core answers: the file
            // is still held by the core serving it.
            let (refused, output) =
                run(folder.path(), free_ports(), database, &["restore", &backup_text, "--yes"]);
            assert!(
                !refused && output.contains("a core holds it"),
                "no restore under a core that answers elsewhere: {output}"
            );
        }
    });

    // The data is lost: a new SQLite file, or a fresh Postgres database.
    let target = fresh.or(database);
    if database.is_none() {
        for file in ["hado.db", "hado.db-wal", "hado.db-shm"] {
            let _ = std::fs::remove_file(folder.path().join("hado-data").join(file));
        }
    }
    let (unconfirmed, output) = run(folder.path(), ports, target, &["restore", &backup_text]);
    assert!(!unconfirmed && output.contains("--yes"), "{output}");
    let (not_a_backup, output) =
        run(folder.path(), ports, target, &["restore", "Cargo.toml", "--yes"]);
    assert!(!not_a_backup, "{output}");
    let (restored, output) = run(folder.path(), ports, target, &["restore", &backup_text, "--yes"]);
    assert!(restored, "{output}");

    with_hado_up(folder.path(), ports, target, || {
        let (listed, output) = run(folder.path(), ports, target, &["source", "list"]);
        assert!(
            listed && output.contains("docs"),
            "the restored database has the source: {output}"
        );
    });
}

#[test]
fn a_sqlite_backup_restores_after_the_data_is_lost() {
    round_trip(None, None);
}

/// The first release's only migration: a file an older core left behind.
const FIRST_RELEASE: i64 = 20261130000001;

/// A newer `hado` backing up an older core's file copies it and changes
/// nothing in it: migrating it would change the tables under that core.
/// A backup where there is no database says so and creates none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_leaves_the_database_as_it_found_it() {
    let folder = tempfile::tempdir().unwrap();
    let ports = free_ports();
    // The URL names its folder as sqlx reads it, percent-encoded.
    let file = folder.path().join("older data").join("hado.db");
    let url = format!("sqlite://{}/older%20data/hado.db", folder.path().display());
    hado_storage::Store::migrate_to(&url, FIRST_RELEASE).await.unwrap();
    let before = std::fs::read(&file).unwrap();

    let backup = folder.path().join("older.bin");
    let (backed_up, output) =
        run(folder.path(), ports, Some(&url), &["backup", backup.to_str().unwrap()]);
    assert!(backed_up, "{output}");
    assert!(std::fs::read(&file).unwrap() == before, "the backup changed the file it copied");
    assert!(!Path::new(&format!("{}-wal", file.display())).exists(), "nothing is left to write");
    let copy = std::fs::read(&backup).unwrap();
    assert!(
        copy.windows(16).any(|window| window == b"_sqlx_migrations"),
        "the backup holds the database's tables ({} bytes)",
        copy.len()
    );
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(backup.metadata().unwrap().permissions().mode() & 0o777, 0o600);

    let missing = folder.path().join("nowhere").join("hado.db");
    let missing_url = format!("sqlite://{}", missing.display());
    let elsewhere = folder.path().join("nowhere.bin");
    let (refused, output) =
        run(folder.path(), ports, Some(&missing_url), &["backup", elsewhere.to_str().unwrap()]);
    assert!(!refused && output.contains("there is no database at"), "{output}");
    assert!(!missing.exists() && !elsewhere.exists(), "a backup of nothing creates nothing");
}

/// A restore through a linked name replaces the file the link names, and
/// removes that file's write-ahead log: SQLite keeps the log beside the
/// file, and an old log left there would be replayed onto the backup.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restore_through_a_link_replaces_the_file_and_its_log() {
    const TEST: &str = "backup::a_restore_through_a_link_replaces_the_file_and_its_log";
    let here = hado_testing::runs("python3", &["-c", "import sqlite3"]);
    if !hado_testing::tool_available(TEST, here, "python3 with its sqlite3 module") {
        return;
    }
    let folder = tempfile::tempdir().unwrap();
    let ports = free_ports();
    let data = folder.path().join("data");
    let real = format!("sqlite://{}/hado.db", data.display());
    hado_storage::Store::migrate_to(&real, FIRST_RELEASE).await.unwrap();
    let backup = folder.path().join("first.bin");
    let (backed_up, output) =
        run(folder.path(), ports, Some(&real), &["backup", backup.to_str().unwrap()]);
    assert!(backed_up, "{output}");

    // A source written after the backup, and its log kept as a core killed
    // before a checkpoint leaves it (Python's sqlite3, a SQLite of its own).
    let database = data.join("hado.db");
    let stale_log = folder.path().join("stale-wal");
    let sqlite = |script: &str| {
        let output = Command::new("python3")
            .args(["-c", script, database.to_str().unwrap(), stale_log.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8_lossy(&output.stdout).trim().to_owned()
    };
    sqlite(
        "import shutil, sqlite3, sys; db = sqlite3.connect(sys.argv[1]); \
         db.execute('PRAGMA wal_autocheckpoint = 0'); \
         db.execute(\"INSERT INTO sources (name, token_hash, created_at, updated_at) VALUES ('stale', 'x', 0, 0)\"); \
         db.commit(); shutil.copy(sys.argv[1] + '-wal', sys.argv[2]); db.close()",
    );
    std::fs::copy(&stale_log, data.join("hado.db-wal")).unwrap();

    std::os::unix::fs::symlink(&database, folder.path().join("linked.db")).unwrap();
    let linked = format!("sqlite://{}/linked.db", folder.path().display());
    let (restored, output) =
        run(folder.path(), ports, Some(&linked), &["restore", backup.to_str().unwrap(), "--yes"]);
    assert!(restored, "{output}");
    let stale = sqlite(
        "import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); \
         print(db.execute(\"SELECT count(*) FROM sources WHERE name = 'stale'\").fetchone()[0])",
    );
    assert_eq!(stale, "0", "the old log was replayed onto the restored file");
    assert!(folder.path().join("linked.db").is_symlink(), "the link stays a link");
}

#[test]
fn a_postgres_backup_restores_into_a_fresh_database() {
    let Ok(admin) = std::env::var("HADO_TEST_POSTGRES_URL")
        .map(|url| url.trim().to_owned())
        .and_then(|url| if url.is_empty() { Err(std::env::VarError::NotPresent) } else { Ok(url) })
    else {
        assert!(std::env::var("CI").is_err(), "HADO_TEST_POSTGRES_URL must be set under CI");
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED the Postgres backup test: HADO_TEST_POSTGRES_URL is not set"
        );
        return;
    };
    let base = admin.rsplit_once('/').map(|(base, _)| base).unwrap().to_owned();
    let suffix = std::process::id();
    let names = [format!("hado_backup_{suffix}_a"), format!("hado_backup_{suffix}_b")];
    for name in &names {
        let created = Command::new("psql")
            .args([admin.as_str(), "-q", "-c", &format!("CREATE DATABASE {name}")])
            .output()
            .unwrap();
        assert!(created.status.success(), "{}", String::from_utf8_lossy(&created.stderr));
    }
    let (first, second) = (format!("{base}/{}", names[0]), format!("{base}/{}", names[1]));
    round_trip(Some(&first), Some(&second));
    for name in &names {
        let _ = Command::new("psql")
            .args([
                admin.as_str(),
                "-q",
                "-c",
                &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
            ])
            .output();
    }
}
