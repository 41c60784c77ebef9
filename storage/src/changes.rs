//! Owns how a core hears that another changed what it may keep in memory:
//! the database's triggers `NOTIFY` [`CHANNEL`] inside the writing
//! transaction (`migrations/postgres/…_kept.sql`), and each core `LISTEN`s
//! on a connection of its own, named [`LISTENER_NAME`] among the
//! database's sessions. Postgres only; one SQLite file has one core.

use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgListener, PgPoolOptions};

use crate::{QueryError, StoreError};

/// The channel the triggers notify on.
pub const CHANNEL: &str = "hado_kept";

/// The name the listening connection goes by in `pg_stat_activity`.
pub const LISTENER_NAME: &str = "hado-core-kept";

/// Where a core listens from.
pub struct ChangeFeed {
    options: PgConnectOptions,
}

/// What a listening connection heard.
#[derive(Debug)]
pub enum Heard {
    /// A change was announced, with the table that changed.
    Change(String),
    /// A heartbeat sent with [`Listening::beat`], by this core or another.
    Beat(String),
    /// The connection was lost, with the error when there was one; what
    /// changes until a new listener listens is not heard.
    Lost(Option<QueryError>),
}

impl ChangeFeed {
    /// A feed from the Postgres at `url`; it connects when first listened to.
    pub fn at(url: &str) -> Result<Self, StoreError> {
        let options: PgConnectOptions =
            url.parse().map_err(|error: QueryError| StoreError::BadUrl(error.to_string()))?;
        Ok(Self::with(options))
    }

    pub(crate) fn with(options: PgConnectOptions) -> Self {
        Self { options: options.application_name(LISTENER_NAME) }
    }

    /// A connection listening on [`CHANNEL`]. Each comes from a pool of one
    /// of its own: a connection lost without a word may stay stuck in the
    /// listener's last words (its `UNLISTEN`) until the system gives up on
    /// it, and a shared pool would wait for it.
    pub async fn listen(&self) -> Result<Listening, QueryError> {
        let pool = PgPoolOptions::new()
            .max_connections(1)
            .acquire_timeout(Duration::from_secs(2))
            .max_lifetime(None)
            .idle_timeout(None)
            .connect_lazy_with(self.options.clone());
        let mut listener = PgListener::connect_with(&pool).await?;
        // A lost connection is answered at once, never mended inside
        // `try_recv`: a caller that stops waiting on `next` now and then
        // would otherwise leave a reconnection halfway, and the next call
        // would finish it without a word, so what changed meanwhile would
        // go unheard.
        listener.eager_reconnect(false);
        listener.listen(CHANNEL).await?;
        Ok(Listening(listener))
    }
}

/// What a heartbeat's notice starts with; no table is named so.
const BEAT: &str = "beat:";

/// A connection listening for changes.
pub struct Listening(PgListener);

impl Listening {
    /// The next thing heard; waits until there is one.
    pub async fn next(&mut self) -> Heard {
        match self.0.try_recv().await {
            Ok(Some(notice)) => match notice.payload().strip_prefix(BEAT) {
                Some(beat) => Heard::Beat(beat.to_owned()),
                None => Heard::Change(notice.payload().to_owned()),
            },
            Ok(None) => Heard::Lost(None),
            Err(error) => Heard::Lost(Some(error)),
        }
    }

    /// Sends a heartbeat named `name` on [`CHANNEL`] through this very
    /// connection. Hearing it back from [`Listening::next`] shows that the
    /// connection still carries notices both ways: one that died without a
    /// word (a half-open TCP connection, a NAT that forgot it, a pooler that
    /// took LISTEN and delivers nothing) never brings it back.
    pub async fn beat(&mut self, name: &str) -> Result<(), QueryError> {
        sqlx::query("SELECT pg_notify($1, $2)")
            .bind(CHANNEL)
            .bind(format!("{BEAT}{name}"))
            .execute(&mut self.0)
            .await?;
        Ok(())
    }
}
