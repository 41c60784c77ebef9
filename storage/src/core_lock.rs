//! Owns the lock that makes a SQLite file one core's. Each core keeps in
//! memory who a credential names and forgets it when it makes a change
//! (`hado_engine`'s `kept`); on Postgres the database tells every core of
//! every change, but a SQLite file tells no one. A second core on the file
//! would go on honouring a token revoked, or a source deleted, through the
//! first for up to a minute, and the two would fight over the file's one
//! writer. So core takes this lock before it opens the file and holds it
//! while it serves; a second core is refused at once.
//!
//! The lock is the operating system's (`flock`, through std's
//! [`File::try_lock`]) on a file beside the database, `<file>.core.lock`:
//! it goes with the process, so a core that crashes or is killed leaves no
//! stale lock behind, and the file itself, left in place, means nothing.
//! It is taken on its own open of the file, so two cores in one process
//! (as tests run them) exclude each other too. It costs one open file. It
//! binds cores and `hado restore`, which replaces the file: the `hado`
//! commands that read or back up the file take no lock, and SQLite's own
//! locks keep them safe.

use std::fs::{File, OpenOptions, TryLockError};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use nix::fcntl::OFlag;

use super::{Backend, StoreError, sqlite_files};

/// The held lock on a SQLite file: the file is this core's until dropped.
#[derive(Debug)]
pub struct CoreLock {
    /// Open for as long as the lock is held; closing it lets go.
    _held: File,
    /// The database file's one name ([`one_name`]).
    file: PathBuf,
}

impl CoreLock {
    /// Takes the lock of the SQLite file `url` names, creating its folder
    /// (700) when missing. `None` for Postgres, which several cores share,
    /// and for a database in memory, which no other core can open.
    pub fn take(url: &str) -> Result<Option<Self>, StoreError> {
        if Backend::from_url(url)? != Backend::Sqlite {
            return Ok(None);
        }
        let file = sqlite_files::sqlite_file(url);
        if file.as_os_str().is_empty() || file == Path::new(":memory:") {
            return Ok(None);
        }
        sqlite_files::make_folder(&file)?;
        // Made now if missing (core makes it next anyway), so that a link to
        // a file not made yet is followed to where SQLite will make it.
        OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(&file)
            .map_err(|error| sqlite_files::cannot("create the database", &file, error))?;
        let file = one_name(&file);
        let path = lock_file(&file);
        let cannot = |error: &dyn std::fmt::Display| {
            sqlite_files::cannot("open the lock file", &path, error)
        };
        // Whoever can write the folder could leave a link or a pipe where
        // the lock goes: a link is not followed (core would make the file it
        // points to), and a pipe is not waited on.
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .custom_flags((OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK).bits())
            .open(&path)
            .map_err(|error| cannot(&error))?;
        if !lock.metadata().map_err(|error| cannot(&error))?.file_type().is_file() {
            return Err(cannot(&"it is not a plain file"));
        }
        match lock.try_lock() {
            Ok(()) => Ok(Some(Self { _held: lock, file })),
            Err(TryLockError::WouldBlock) => Err(StoreError::ServedByAnotherCore(file)),
            Err(TryLockError::Error(error)) => Err(StoreError::BadUrl(format!(
                "cannot lock {} (a SQLite file needs a file system with locks): {error}",
                path.display()
            ))),
        }
    }
}

impl CoreLock {
    /// The database file this lock holds, by its one name: every link
    /// followed, so that SQLite's `-wal` and `-shm` files sit beside it.
    pub fn file(&self) -> &Path {
        &self.file
    }
}

/// The one name of the database `file`, whatever name it was given: its
/// folder's links followed, and the file's own when it is a link, so that
/// a core given a linked name takes the same lock as one given the file's.
/// A hard link is two names of one file that nothing can tell apart, and
/// SQLite's own locks do not survive one either: it says not to make them.
/// The file exists when this is asked (`take` makes it first).
fn one_name(file: &Path) -> PathBuf {
    file.canonicalize().unwrap_or_else(|_| file.to_owned())
}

/// The lock file beside the database `file`.
fn lock_file(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".core.lock");
    PathBuf::from(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sqlite_file_is_locked_for_one_core_until_it_lets_go() {
        let folder = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}/new/hado.db", folder.path().display());
        let first = CoreLock::take(&url).unwrap().expect("a SQLite file is locked");
        let refused = CoreLock::take(&url).unwrap_err();
        assert!(matches!(refused, StoreError::ServedByAnotherCore(_)), "{refused:?}");
        drop(first);
        CoreLock::take(&url).unwrap().expect("the file is free again");
        assert!(folder.path().join("new/hado.db.core.lock").exists());
    }

    #[test]
    fn a_link_or_a_pipe_left_where_the_lock_goes_is_refused_not_followed() {
        let folder = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}/hado.db", folder.path().display());
        let lock = folder.path().join("hado.db.core.lock");
        let target = folder.path().join("made-by-core");
        std::os::unix::fs::symlink(&target, &lock).unwrap();
        let refused = CoreLock::take(&url).unwrap_err().to_string();
        assert!(refused.contains("cannot open the lock file"), "{refused}");
        assert!(!target.exists(), "the link was followed");
        std::fs::remove_file(&lock).unwrap();
        // A pipe with no reader is refused as it is opened, not waited on.
        nix::unistd::mkfifo(&lock, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let refused = CoreLock::take(&url).unwrap_err().to_string();
        assert!(refused.contains("cannot open the lock file"), "{refused}");
        // A folder (or any file that is not plain) is named as such.
        std::fs::remove_file(&lock).unwrap();
        std::fs::create_dir(&lock).unwrap();
        let refused = CoreLock::take(&url).unwrap_err().to_string();
        assert!(refused.contains("cannot open the lock file"), "{refused}");
    }

    #[test]
    fn a_linked_name_of_the_file_or_its_folder_takes_the_same_lock() {
        let folder = tempfile::tempdir().unwrap();
        let data = folder.path().join("data");
        std::fs::create_dir(&data).unwrap();
        std::fs::write(data.join("hado.db"), b"").unwrap();
        std::os::unix::fs::symlink(&data, folder.path().join("linked-folder")).unwrap();
        std::os::unix::fs::symlink(data.join("hado.db"), folder.path().join("linked.db")).unwrap();
        let held = CoreLock::take(&format!("sqlite://{}/hado.db", data.display())).unwrap();
        for name in ["linked-folder/hado.db", "linked.db", "data/../data/hado.db"] {
            let url = format!("sqlite://{}/{name}", folder.path().display());
            let refused = CoreLock::take(&url).unwrap_err();
            assert!(matches!(refused, StoreError::ServedByAnotherCore(_)), "{name}: {refused:?}");
        }
        drop(held);
        // A file not made yet, in a linked folder, is named by the folder's link followed.
        let url = format!("sqlite://{}/linked-folder/new.db", folder.path().display());
        let new = CoreLock::take(&url).unwrap().unwrap();
        assert_eq!(new.file(), data.canonicalize().unwrap().join("new.db"));
        assert!(data.join("new.db.core.lock").exists());
        let refused = CoreLock::take(&format!("sqlite://{}/new.db", data.display())).unwrap_err();
        assert!(matches!(refused, StoreError::ServedByAnotherCore(_)), "{refused:?}");
        // A link to a file not made yet is followed to where it will be.
        std::os::unix::fs::symlink(data.join("later.db"), folder.path().join("dangling.db"))
            .unwrap();
        let _later = CoreLock::take(&format!("sqlite://{}/dangling.db", folder.path().display()));
        let refused = CoreLock::take(&format!("sqlite://{}/later.db", data.display())).unwrap_err();
        assert!(matches!(refused, StoreError::ServedByAnotherCore(_)), "{refused:?}");
    }

    #[test]
    fn postgres_and_memory_take_no_lock() {
        assert!(CoreLock::take("postgres://localhost/hado").unwrap().is_none());
        assert!(CoreLock::take("sqlite::memory:").unwrap().is_none());
    }
}
