//! Owns what core keeps in memory of who a credential names, so that a
//! call does not read it from the database every time: which person an
//! agent token names, which person a gateway's login is, and which source
//! a source token names. On Postgres that read cost three round trips (the
//! pool pings a connection as it hands it out and as it takes it back),
//! and on SQLite two hand-offs to a reader's thread.
//!
//! What is kept is forgotten, all of it at once, whenever a token, a
//! source or a person changes:
//! - on the core that made the change, at once;
//! - on Postgres, on every core: the database's triggers `NOTIFY` the
//!   change in the writing transaction (`migrations/postgres/…_kept.sql`),
//!   and each core `LISTEN`s on a connection of its own, named
//!   [`LISTENER_NAME`] among the database's sessions. A core keeps nothing
//!   while that connection is down, and forgets everything when it is back,
//!   since changes made meanwhile were not heard;
//! - on SQLite one core owns the file, so the first way is all there is.
//!
//! A read that began before a change is not kept, and nothing is kept
//! longer than [`KEPT`], a bound for a change made past the triggers (by
//! hand in the database). A credential that names no one is never kept,
//! so a caller trying tokens cannot fill this memory, and a new token
//! works at once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use sqlx::postgres::{PgConnectOptions, PgListener, PgPoolOptions};

use crate::domain::user::UserRecord;
use crate::engine::inputs::SourceCaller;

/// The longest anything is kept without reading it again.
const KEPT: Duration = Duration::from_secs(60);

/// Entries kept at most in each map; past it, the expired ones go, and if
/// none had, all.
const MOST: usize = 4096;

/// The channel the database's triggers notify a change on.
pub(crate) const CHANNEL: &str = "hado_kept";

/// The `application_name` of each core's listening connection, so that an
/// operator (and a test) can tell it among the database's sessions.
pub(crate) const LISTENER_NAME: &str = "hado-core-kept";

/// How long a core waits before it tries to listen again.
const RETRY: Duration = Duration::from_millis(250);

/// When a read from the database began, as the `keep_*` methods need it.
#[derive(Clone, Copy)]
pub(super) struct Reading {
    forgotten: u64,
    at: Instant,
}

/// A person an agent token names, and when the token's use was last written.
#[derive(Clone, Debug)]
pub(super) struct AgentTokenUser {
    pub(super) user: UserRecord,
    pub(super) last_used_at: Option<DateTime<Utc>>,
}

#[derive(Default)]
pub(crate) struct Kept {
    known: Mutex<Known>,
}

#[derive(Default)]
struct Known {
    /// Whether anything may be kept: always on SQLite; on Postgres only
    /// while this core is listening for changes.
    keeping: bool,
    /// By the token's hash.
    agent_tokens: HashMap<String, (AgentTokenUser, Instant)>,
    /// By the login.
    logins: HashMap<String, (UserRecord, Instant)>,
    /// By the token's hash.
    sources: HashMap<String, (SourceCaller, Instant)>,
    /// Counts the times everything was forgotten, so that a read that
    /// began before the last time is not kept.
    forgotten: u64,
}

impl Known {
    fn forget_all(&mut self) {
        self.agent_tokens.clear();
        self.logins.clear();
        self.sources.clear();
        self.forgotten += 1;
    }
}

fn fresh<T: Clone>(entry: Option<&(T, Instant)>) -> Option<T> {
    let (value, read) = entry?;
    (read.elapsed() < KEPT).then(|| value.clone())
}

fn insert<T>(map: &mut HashMap<String, (T, Instant)>, key: String, value: T, at: Instant) {
    if map.len() >= MOST {
        map.retain(|_, (_, read)| read.elapsed() < KEPT);
        if map.len() >= MOST {
            map.clear();
        }
    }
    map.insert(key, (value, at));
}

impl Kept {
    /// Memory that keeps from the start: one core owns the database.
    pub(super) fn keeping() -> Self {
        let kept = Self::default();
        kept.lock().keeping = true;
        kept
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Known> {
        self.known.lock().expect("the kept credentials' lock is never poisoned")
    }

    pub(super) fn agent_token(&self, hash: &str) -> Option<AgentTokenUser> {
        fresh(self.lock().agent_tokens.get(hash))
    }

    pub(super) fn login(&self, login: &str) -> Option<UserRecord> {
        fresh(self.lock().logins.get(login))
    }

    pub(super) fn source(&self, hash: &str) -> Option<SourceCaller> {
        fresh(self.lock().sources.get(hash))
    }

    /// Marks the start of a read from the database, for the `keep_*` methods.
    pub(super) fn reading(&self) -> Reading {
        Reading { forgotten: self.lock().forgotten, at: Instant::now() }
    }

    /// The memory, if what a read that began at `began` found may be kept:
    /// nothing was forgotten since (a change may have ended it meanwhile).
    /// It counts as read when the read began, so a slow read does not
    /// lengthen [`KEPT`].
    fn may_keep(&self, began: Reading) -> Option<std::sync::MutexGuard<'_, Known>> {
        let known = self.lock();
        (known.keeping && known.forgotten == began.forgotten).then_some(known)
    }

    pub(super) fn keep_agent_token(&self, began: Reading, hash: String, found: AgentTokenUser) {
        if let Some(mut known) = self.may_keep(began) {
            insert(&mut known.agent_tokens, hash, found, began.at);
        }
    }

    pub(super) fn keep_login(&self, began: Reading, user: UserRecord) {
        if let Some(mut known) = self.may_keep(began) {
            insert(&mut known.logins, user.login.as_str().to_owned(), user, began.at);
        }
    }

    pub(super) fn keep_source(&self, began: Reading, hash: String, source: SourceCaller) {
        if let Some(mut known) = self.may_keep(began) {
            insert(&mut known.sources, hash, source, began.at);
        }
    }

    /// Notes that a kept token's use was just written at `now`.
    pub(super) fn agent_token_used(&self, hash: &str, now: DateTime<Utc>) {
        if let Some((found, _)) = self.lock().agent_tokens.get_mut(hash) {
            found.last_used_at = Some(now);
        }
    }

    /// Forgets everything: a token, a source or a person changed.
    pub(crate) fn forget_all(&self) {
        self.lock().forget_all();
    }

    /// Forgets everything, and keeps from now on only if `keeping`.
    fn set_keeping(&self, keeping: bool) {
        let mut known = self.lock();
        known.forget_all();
        known.keeping = keeping;
    }
}

/// Listens for changes on Postgres for as long as `kept` lives: keeps
/// nothing until it listens, forgets everything on each change, and keeps
/// nothing again from the moment its connection is lost until it listens
/// anew.
pub(super) fn listen(options: PgConnectOptions, kept: &Arc<Kept>) {
    let kept = Arc::downgrade(kept);
    let options = options.application_name(LISTENER_NAME);
    // A pool of one, only to hand the listener its connection (again).
    let pool = PgPoolOptions::new()
        .max_connections(1)
        .acquire_timeout(Duration::from_secs(2))
        .max_lifetime(None)
        .idle_timeout(None)
        .connect_lazy_with(options);
    tokio::spawn(async move {
        while let Some(listener) = connected(&pool, &kept).await {
            follow(listener, &kept).await;
        }
        pool.close().await;
    });
}

/// A listener on [`CHANNEL`], tried until one listens; none once the memory
/// is gone (its engine was dropped). Memory starts keeping once it listens.
async fn connected(pool: &sqlx::PgPool, kept: &Weak<Kept>) -> Option<PgListener> {
    loop {
        let listening = async {
            let mut listener = PgListener::connect_with(pool).await?;
            listener.listen(CHANNEL).await?;
            Ok::<_, sqlx::Error>(listener)
        };
        let result = listening.await;
        let kept = kept.upgrade()?;
        match result {
            Ok(listener) => {
                kept.set_keeping(true);
                return Some(listener);
            }
            Err(error) => {
                tracing::warn!(%error, "cannot listen for changes to credentials; keeping none");
                drop(kept);
                tokio::time::sleep(RETRY).await;
            }
        }
    }
}

/// Forgets everything on each change heard, until the connection is lost
/// (then keeps nothing, and returns) or the memory is gone.
async fn follow(mut listener: PgListener, kept: &Weak<Kept>) {
    loop {
        // Wakes now and then to see whether the engine is gone.
        let heard = tokio::time::timeout(Duration::from_secs(5), listener.try_recv()).await;
        let Some(kept) = kept.upgrade() else { return };
        match heard {
            Err(_) => {}
            Ok(Ok(Some(_))) => kept.forget_all(),
            // The connection was lost: what changed meanwhile was not heard.
            // The listener listens again on a new connection before it
            // answers this (or fails, below), so keep from a clean slate.
            Ok(Ok(None)) => {
                tracing::warn!(
                    "the connection listening for changes was lost; forgot every kept credential"
                );
                kept.set_keeping(true);
            }
            Ok(Err(error)) => {
                tracing::warn!(%error, "lost the connection listening for changes; keeping none until it is back");
                kept.set_keeping(false);
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::fields::SourceName;

    fn docs() -> SourceCaller {
        SourceCaller { id: 2, name: SourceName::from_stored("docs".to_owned()) }
    }

    #[test]
    fn a_token_is_kept_until_everything_is_forgotten() {
        let kept = Kept::keeping();
        assert!(kept.source("hash").is_none());
        let began = kept.reading();
        kept.keep_source(began, "hash".into(), docs());
        assert_eq!(kept.source("hash").map(|source| source.id), Some(2));
        kept.forget_all();
        assert!(kept.source("hash").is_none());
    }

    #[test]
    fn a_read_that_began_before_a_change_is_not_kept() {
        let kept = Kept::keeping();
        let began = kept.reading();
        kept.forget_all();
        kept.keep_source(began, "old".into(), docs());
        assert!(kept.source("old").is_none());
    }

    #[test]
    fn nothing_is_kept_while_not_listening() {
        let kept = Kept::default();
        kept.keep_source(kept.reading(), "hash".into(), docs());
        assert!(kept.source("hash").is_none());
        kept.set_keeping(true);
        kept.keep_source(kept.reading(), "hash".into(), docs());
        assert!(kept.source("hash").is_some());
        kept.set_keeping(false);
        assert!(kept.source("hash").is_none(), "a lost listener forgets what was kept");
        kept.keep_source(kept.reading(), "hash".into(), docs());
        assert!(kept.source("hash").is_none());
    }

    #[test]
    fn a_token_read_longer_ago_than_kept_is_read_again() {
        let kept = Kept::keeping();
        kept.keep_source(kept.reading(), "hash".into(), docs());
        let read = Instant::now().checked_sub(KEPT).expect("the clock has run longer than KEPT");
        kept.lock().sources.get_mut("hash").unwrap().1 = read;
        assert!(kept.source("hash").is_none());
    }

    #[test]
    fn the_memory_stays_bounded() {
        let kept = Kept::keeping();
        for index in 0..MOST * 3 {
            kept.keep_source(kept.reading(), format!("hash-{index}"), docs());
        }
        assert!(kept.lock().sources.len() <= MOST);
    }
}
