//! Owns what differs between the two backends at the statement level: which
//! one a URL or a connection is, how a write transaction begins, and how a
//! statement's placeholders are written.

use crate::StoreError;

/// Which database a [`Store`] talks to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    /// Picks the backend from a database URL's scheme.
    pub fn from_url(url: &str) -> Result<Self, StoreError> {
        if url.starts_with("sqlite:") {
            Ok(Self::Sqlite)
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Ok(Self::Postgres)
        } else {
            Err(StoreError::BadUrl("the URL must start with sqlite:// (such as sqlite://hado-data/hado.db) or postgres://".into()))
        }
    }

    /// Whether the database is a server that may not answer yet while core
    /// starts (it starts beside core, or restarts), rather than a file of
    /// this process: worth waiting for.
    pub fn is_a_server(self) -> bool {
        match self {
            Self::Sqlite => false,
            Self::Postgres => true,
        }
    }

    /// Whether one writer takes every write in turn (SQLite, one core to a
    /// file), so that nothing a write reads can change until it commits,
    /// and what its core keeps is as fresh as the database: a change is
    /// forgotten on the core that writes it before anything else writes.
    pub fn has_one_writer(self) -> bool {
        match self {
            Self::Sqlite => true,
            Self::Postgres => false,
        }
    }

    /// The backend a connection talks to.
    pub fn of(connection: &sqlx::AnyConnection) -> Self {
        if connection.backend_name() == <sqlx::Sqlite as sqlx::Database>::NAME {
            Self::Sqlite
        } else {
            Self::Postgres
        }
    }

    /// SQLite allows one writer: a write transaction takes the write lock up
    /// front, so that it never fails half-way when upgrading a read lock.
    pub(super) fn begin_write_statement(self) -> Option<&'static str> {
        match self {
            Self::Sqlite => Some("BEGIN IMMEDIATE"),
            Self::Postgres => None,
        }
    }
}

/// A statement's placeholders, written in the order their values are bound.
/// Postgres takes `$1`, `$2`, …; SQLite gets anonymous `?`s, because it binds
/// a numbered parameter by searching the statement's list of names, which
/// makes a statement of thousands of values cost quadratic time.
pub(crate) struct Placeholders {
    numbered: bool,
    written: usize,
}

impl Placeholders {
    pub(crate) fn for_connection(connection: &sqlx::AnyConnection) -> Self {
        Self { numbered: Backend::of(connection) == Backend::Postgres, written: 0 }
    }

    /// The next placeholder.
    pub(crate) fn next(&mut self) -> String {
        self.written += 1;
        if self.numbered { format!("${}", self.written) } else { "?".to_owned() }
    }

    /// A parenthesised row of `count` placeholders, such as `($4, $5, $6)`.
    pub(crate) fn row(&mut self, count: usize) -> String {
        let row: Vec<String> = (0..count).map(|_| self.next()).collect();
        format!("({})", row.join(", "))
    }

    /// `rows` such rows, separated by commas.
    pub(crate) fn rows(&mut self, rows: usize, count: usize) -> String {
        let rows: Vec<String> = (0..rows).map(|_| self.row(count)).collect();
        rows.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backend_follows_the_url_scheme() {
        assert_eq!(Backend::from_url("sqlite://hado-data/hado.db").unwrap(), Backend::Sqlite);
        assert_eq!(
            Backend::from_url("postgres://postgres@127.0.0.1/test").unwrap(),
            Backend::Postgres
        );
        assert_eq!(Backend::from_url("postgresql://x/y").unwrap(), Backend::Postgres);
        assert!(
            Backend::from_url("mysql://x/y")
                .unwrap_err()
                .to_string()
                .contains("must start with sqlite://")
        );
    }

    #[test]
    fn placeholders_follow_the_order_values_are_bound_in() {
        let mut numbered = Placeholders { numbered: true, written: 0 };
        assert_eq!(
            (numbered.next(), numbered.rows(2, 2)),
            ("$1".to_owned(), "($2, $3), ($4, $5)".to_owned())
        );
        let mut anonymous = Placeholders { numbered: false, written: 0 };
        assert_eq!((anonymous.next(), anonymous.row(3)), ("?".to_owned(), "(?, ?, ?)".to_owned()));
    }
}
