//! Owns core's short memory of which source a token names, so that a
//! source's every call does not read its token from the database: on
//! Postgres that read cost three round trips (the pool pings a connection
//! as it hands it out and as it takes it back), and on SQLite two hand-offs
//! to a reader's thread.
//!
//! What a token names is kept for [`KEPT`] after it was read. Rotating a
//! source's token or deleting the source forgets everything this core
//! knows at once, and a read that began before that is not kept; another
//! core behind the same database goes on taking the old token for at most
//! [`KEPT`]. A token that names no source is never kept, so a caller trying
//! tokens cannot fill this memory, and a new source's token works at once.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::engine::inputs::SourceCaller;

/// How long a token read from the database is taken without reading it
/// again: how long another core may take a rotated or deleted token.
const KEPT: Duration = Duration::from_secs(2);

/// Tokens kept at most; past it, the expired ones go, and if none had, all.
const MOST: usize = 1024;

/// When a read from the database began, as [`SourceTokens::keep`] needs it.
#[derive(Clone, Copy)]
pub(super) struct Reading {
    forgotten: u64,
    at: Instant,
}

#[derive(Default)]
pub(super) struct SourceTokens {
    known: Mutex<Known>,
}

#[derive(Default)]
struct Known {
    /// By the token's hash: the source and when it was read.
    sources: HashMap<String, (SourceCaller, Instant)>,
    /// Counts the times everything was forgotten, so that a read that
    /// began before the last time is not kept.
    forgotten: u64,
}

impl SourceTokens {
    /// The source a token's hash names, if it was read within [`KEPT`].
    pub(super) fn get(&self, hash: &str) -> Option<SourceCaller> {
        let known = self.known.lock().expect("the tokens' lock is never poisoned");
        let (source, read) = known.sources.get(hash)?;
        (read.elapsed() < KEPT).then(|| source.clone())
    }

    /// Marks the start of a read from the database, for [`Self::keep`].
    pub(super) fn reading(&self) -> Reading {
        let forgotten = self.known.lock().expect("the tokens' lock is never poisoned").forgotten;
        Reading { forgotten, at: Instant::now() }
    }

    /// Keeps what a read found, unless everything was forgotten since it
    /// began (a rotation may have ended the token meanwhile). It counts as
    /// read when the read began, so a slow read does not lengthen [`KEPT`].
    pub(super) fn keep(&self, began: Reading, hash: String, source: SourceCaller) {
        let mut known = self.known.lock().expect("the tokens' lock is never poisoned");
        if known.forgotten != began.forgotten {
            return;
        }
        if known.sources.len() >= MOST {
            known.sources.retain(|_, (_, read)| read.elapsed() < KEPT);
            if known.sources.len() >= MOST {
                known.sources.clear();
            }
        }
        known.sources.insert(hash, (source, began.at));
    }

    /// Forgets every token: a source's token was rotated, or a source deleted.
    pub(super) fn forget_all(&self) {
        let mut known = self.known.lock().expect("the tokens' lock is never poisoned");
        known.sources.clear();
        known.forgotten += 1;
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
        let tokens = SourceTokens::default();
        assert!(tokens.get("hash").is_none());
        let began = tokens.reading();
        tokens.keep(began, "hash".into(), docs());
        assert_eq!(tokens.get("hash").map(|source| source.id), Some(2));
        tokens.forget_all();
        assert!(tokens.get("hash").is_none());
    }

    #[test]
    fn a_read_that_began_before_a_rotation_is_not_kept() {
        let tokens = SourceTokens::default();
        let began = tokens.reading();
        tokens.forget_all();
        tokens.keep(began, "old".into(), docs());
        assert!(tokens.get("old").is_none());
    }

    #[test]
    fn a_token_read_longer_ago_than_kept_is_read_again() {
        let tokens = SourceTokens::default();
        tokens.keep(tokens.reading(), "hash".into(), docs());
        let mut known = tokens.known.lock().unwrap();
        let read = Instant::now().checked_sub(KEPT).expect("the clock has run longer than KEPT");
        known.sources.get_mut("hash").unwrap().1 = read;
        drop(known);
        assert!(tokens.get("hash").is_none());
    }

    #[test]
    fn the_memory_stays_bounded() {
        let tokens = SourceTokens::default();
        for index in 0..MOST * 3 {
            tokens.keep(tokens.reading(), format!("hash-{index}"), docs());
        }
        assert!(tokens.known.lock().unwrap().sources.len() <= MOST);
    }
}
