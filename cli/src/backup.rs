//! Owns `hado backup` and `hado restore`. SQLite: a consistent copy taken
//! while Hado runs (`VACUUM INTO`), and a restore that replaces the database
//! file while Hado is stopped. Postgres: `pg_dump` and `pg_restore` (the
//! client tools of the server's major version). A backup leaves the
//! database as it finds it (a newer `hado` never migrates an older core's
//! file); the restored database is brought up to this release's migrations.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, bail};

use hado_storage::{Backend, Store};

use crate::settings::Settings;

fn run_tool(program: &str, arguments: &[&str]) -> anyhow::Result<()> {
    let output = std::process::Command::new(program).args(arguments).output().map_err(|error| match error.kind() {
        std::io::ErrorKind::NotFound => anyhow::anyhow!("{program} is not installed; install the PostgreSQL client tools of your server's major version"),
        _ => anyhow::anyhow!("{program} could not run: {error}"),
    })?;
    if !output.status.success() {
        bail!("{program} failed: {}", String::from_utf8_lossy(&output.stderr).trim());
    }
    Ok(())
}

fn path_text(path: &Path) -> anyhow::Result<&str> {
    path.to_str().with_context(|| format!("{} is not a UTF-8 path", path.display()))
}

pub(crate) async fn backup(settings: &Settings, file: &Path) -> anyhow::Result<ExitCode> {
    if file.exists() {
        bail!(
            "{} already exists; name a new file, so that no backup is overwritten",
            file.display()
        );
    }
    let url = settings.database_url();
    match Backend::from_url(&url)? {
        Backend::Sqlite => {
            Store::backup_sqlite(&url, file).await.context("the backup failed")?;
        }
        Backend::Postgres => run_tool(
            "pg_dump",
            &["--format=custom", "--no-owner", "--file", path_text(file)?, "--dbname", &url],
        )?,
    }
    let size = std::fs::metadata(file).map(|metadata| metadata.len()).unwrap_or(0);
    println!("Backed up the database to {} ({size} bytes).", file.display());
    Ok(ExitCode::SUCCESS)
}

/// Whether a core answers at the configured address.
async fn core_is_running(settings: &Settings) -> bool {
    let Ok(endpoint) = tonic::transport::Endpoint::from_shared(settings.core_url()) else {
        return false;
    };
    let Ok(channel) = endpoint.connect_timeout(std::time::Duration::from_secs(1)).connect().await
    else {
        return false;
    };
    let mut health = tonic_health::pb::health_client::HealthClient::new(channel);
    health.check(tonic_health::pb::HealthCheckRequest { service: String::new() }).await.is_ok()
}

pub(crate) async fn restore(
    settings: &Settings,
    file: &Path,
    confirmed: bool,
) -> anyhow::Result<ExitCode> {
    let url = settings.database_url();
    if !confirmed {
        bail!(
            "restoring replaces the whole database ({}) with {}; run again with --yes to confirm",
            settings.database_display(),
            file.display()
        );
    }
    if !file.is_file() {
        bail!("{} is not a backup file", file.display());
    }
    if core_is_running(settings).await {
        bail!(
            "Hado is running (core answers at {}); stop it first, then restore",
            settings.core_url()
        );
    }
    // The SQLite file's lock, held until the restored file is migrated.
    let mut held = None;
    match Backend::from_url(&url)? {
        Backend::Sqlite => {
            // Check that the file is a Hado database before anything is replaced.
            if !Store::is_hado_sqlite(file)
                .await
                .with_context(|| format!("cannot read {}", file.display()))?
            {
                bail!("{} is not a Hado database", file.display());
            }
            let named = hado_storage::sqlite_file(&url);
            // A core that answers at another address still holds its file:
            // held here until the restored file is migrated, so that none
            // starts on it meanwhile either.
            held = hado_storage::CoreLock::take(&url).map_err(|error| match error {
                hado_storage::StoreError::ServedByAnotherCore(_) => anyhow::anyhow!(
                    "Hado is running on {} (a core holds it); stop it first, then restore",
                    named.display()
                ),
                other => other.into(),
            })?;
            // The file itself, every link followed: SQLite keeps its log
            // beside it, not beside a link.
            let target = held.as_ref().map_or(named, |held| held.file().to_owned());
            for suffix in ["-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{}{suffix}", target.display()));
            }
            std::fs::copy(file, &target)
                .with_context(|| format!("cannot write {}", target.display()))?;
        }
        Backend::Postgres => run_tool(
            "pg_restore",
            &["--clean", "--if-exists", "--no-owner", "--dbname", &url, path_text(file)?],
        )?,
    }
    // A backup from an earlier release is brought up to this one.
    Store::connect(&url).await.context("the restored database cannot be opened")?.close().await;
    drop(held);
    println!("Restored {} into the database; start Hado again.", file.display());
    Ok(ExitCode::SUCCESS)
}
