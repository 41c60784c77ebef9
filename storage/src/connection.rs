//! Owns what the engine holds while it reads or writes, and the error
//! storage's functions answer with: names of storage's own, so that no
//! caller above storage names sqlx.

use sqlx::{AnyConnection, Transaction};

/// sqlx's error, which storage's functions answer with. Above storage it is
/// only passed on, as `StoreError::Query`, never looked into.
pub use sqlx::Error as QueryError;

/// What the engine holds while it reads or writes: one of the read pool's
/// connections or a write transaction, handed to storage's functions and
/// otherwise opaque. The engine names this and never the SQL connection
/// inside, which only storage reaches.
pub trait Connection: Send {
    /// The SQL connection inside, for storage's own statements.
    #[doc(hidden)]
    fn sql(&mut self) -> &mut AnyConnection;
}

impl Connection for AnyConnection {
    fn sql(&mut self) -> &mut AnyConnection {
        self
    }
}

impl Connection for sqlx::pool::PoolConnection<sqlx::Any> {
    fn sql(&mut self) -> &mut AnyConnection {
        self
    }
}

impl Connection for Transaction<'_, sqlx::Any> {
    fn sql(&mut self) -> &mut AnyConnection {
        self
    }
}
