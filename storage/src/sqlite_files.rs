//! Owns the files of a SQLite database: where a `sqlite://` URL puts them,
//! and that they are their owner's alone. The database, its write-ahead log
//! and its shared-memory file hold every event and each webhook's signing
//! secret, so a folder core makes is 700 and the files are 600 (SQLite gives
//! the `-wal` and `-shm` files the database file's permissions, so creating
//! that one private is what keeps the others so).

use std::fs::{DirBuilder, OpenOptions, Permissions};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

use percent_encoding::percent_decode_str;

use super::StoreError;

/// The file, as written (percent-encoded), and the query of a
/// `sqlite://FILE?…` URL, split as sqlx splits it.
fn sqlite_parts(url: &str) -> (&str, &str) {
    let rest = url.trim_start_matches("sqlite://").trim_start_matches("sqlite:");
    rest.split_once('?').unwrap_or((rest, ""))
}

/// The database file a `sqlite://` URL names, decoded as sqlx decodes it
/// (`%20` a space, `%3F` a `?`): the file core opens is the file its lock,
/// its permissions and a backup name.
pub fn sqlite_file(url: &str) -> std::path::PathBuf {
    let written = sqlite_parts(url).0;
    std::path::PathBuf::from(percent_decode_str(written).decode_utf8_lossy().into_owned())
}

/// Adds `mode=rwc` (create when missing) to a SQLite URL, and for a URL
/// that may create its file: makes the database's folder (700) and the
/// file (600) when missing, and makes the database's files that exist
/// private.
pub(super) fn prepare_sqlite_url(url: &str) -> Result<String, StoreError> {
    let (path, query) = sqlite_parts(url);
    if path.is_empty() {
        return Err(StoreError::BadUrl(
            "the SQLite URL names no file, such as sqlite://hado-data/hado.db".into(),
        ));
    }
    let mode = query.split('&').find_map(|pair| pair.strip_prefix("mode="));
    if path != ":memory:" && mode.is_none_or(|mode| mode == "rwc") {
        make_private(&sqlite_file(url))?;
    }
    let query = match (mode, query.is_empty()) {
        (Some(_), _) => query.to_owned(),
        (None, true) => "mode=rwc".to_owned(),
        (None, false) => format!("{query}&mode=rwc"),
    };
    Ok(format!("sqlite://{path}?{query}"))
}

/// Creates the database's folder (700) and file (600) when missing, and
/// takes away everyone else's access to the files that exist (a database an
/// earlier release made with the umask's permissions). An existing folder
/// is the operator's and is left as it is, with a warning when others can
/// read it.
fn make_private(file: &Path) -> Result<(), StoreError> {
    if let Some(folder) = file.parent().filter(|folder| folder.is_dir())
        && folder.metadata().is_ok_and(|metadata| metadata.permissions().mode() & 0o077 != 0)
    {
        tracing::warn!(folder = %folder.display(), "the database's folder can be read by others; `chmod 700` it");
    }
    make_folder(file)?;
    OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(file)
        .map_err(|error| cannot("create the database", file, error))?;
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let path = format!("{}{suffix}", file.display());
        let path = Path::new(&path);
        if let Ok(metadata) = path.metadata()
            && metadata.permissions().mode() & 0o077 != 0
        {
            std::fs::set_permissions(path, Permissions::from_mode(0o600))
                .map_err(|error| cannot("make private", path, error))?;
        }
    }
    Ok(())
}

/// Creates the folder of the database `file` (700) when missing.
pub(super) fn make_folder(file: &Path) -> Result<(), StoreError> {
    match file.parent().filter(|folder| !folder.as_os_str().is_empty() && !folder.is_dir()) {
        Some(folder) => DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(folder)
            .map_err(|error| cannot("create the database folder", folder, error)),
        None => Ok(()),
    }
}

pub(super) fn cannot(what: &str, path: &Path, error: impl std::fmt::Display) -> StoreError {
    StoreError::BadUrl(format!("cannot {what} {}: {error}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_urls_create_their_file_privately() {
        let folder = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}/nested/hado.db", folder.path().display());
        assert_eq!(prepare_sqlite_url(&url).unwrap(), format!("{url}?mode=rwc"));
        let nested = folder.path().join("nested");
        assert_eq!(nested.metadata().unwrap().permissions().mode() & 0o777, 0o700);
        assert_eq!(nested.join("hado.db").metadata().unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(
            prepare_sqlite_url("sqlite::memory:?cache=shared").unwrap(),
            "sqlite://:memory:?cache=shared&mode=rwc"
        );
        assert_eq!(prepare_sqlite_url("sqlite://x.db?mode=ro").unwrap(), "sqlite://x.db?mode=ro");
        assert!(!Path::new("x.db").exists(), "a read-only URL creates nothing");
    }

    #[test]
    fn the_file_is_the_one_sqlx_opens() {
        assert_eq!(sqlite_file("sqlite://hado-data/hado.db"), Path::new("hado-data/hado.db"));
        assert_eq!(sqlite_file("sqlite:hado.db?mode=rwc"), Path::new("hado.db"));
        assert_eq!(sqlite_file("sqlite:///srv/hado.db"), Path::new("/srv/hado.db"));
        assert_eq!(sqlite_file("sqlite:////srv/hado.db"), Path::new("//srv/hado.db"));
        assert_eq!(
            sqlite_file("sqlite://my%20data/h%3Fdo.db?mode=rwc"),
            Path::new("my data/h?do.db")
        );
        // The folder and the file made are the decoded ones.
        let folder = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}/my%20data/hado.db", folder.path().display());
        prepare_sqlite_url(&url).unwrap();
        assert!(folder.path().join("my data/hado.db").is_file());
        assert!(!folder.path().join("my%20data").exists());
    }

    #[test]
    fn an_earlier_releases_readable_files_are_made_private() {
        let folder = tempfile::tempdir().unwrap();
        let file = folder.path().join("hado.db");
        for suffix in ["", "-wal", "-shm"] {
            let path = format!("{}{suffix}", file.display());
            std::fs::write(&path, b"").unwrap();
            std::fs::set_permissions(&path, Permissions::from_mode(0o644)).unwrap();
        }
        prepare_sqlite_url(&format!("sqlite://{}", file.display())).unwrap();
        for suffix in ["", "-wal", "-shm"] {
            let mode = Path::new(&format!("{}{suffix}", file.display()))
                .metadata()
                .unwrap()
                .permissions()
                .mode()
                & 0o777;
            assert_eq!(mode, 0o600, "hado.db{suffix}");
        }
    }
}
